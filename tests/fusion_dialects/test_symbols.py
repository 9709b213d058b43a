"""`symbols.lookup_symbol`: the op xDSL's lookup finds, whatever changed in the table since the
last lookup."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.rewriter import Rewriter
from xdsl.traits import SymbolTable

from fusion_compiler.dialects.symbols import lookup_symbol


def _function(name: str) -> func.FuncOp:
    return func.FuncOp(name, ((), ()))


def test_lookup_follows_additions_removals_renames_and_replacements():
    first, second = _function("f"), _function("g")
    module = ModuleOp([first, second])
    anchor = second
    assert lookup_symbol(anchor, "f") is first
    assert lookup_symbol(anchor, SymbolRefAttr("g")) is second
    assert lookup_symbol(anchor, StringAttr("h")) is None

    added = _function("h")
    module.body.block.add_op(added)
    assert lookup_symbol(anchor, "h") is added

    replacement = _function("f")
    Rewriter.replace_op(first, replacement)
    assert lookup_symbol(anchor, "f") is replacement

    added.sym_name = StringAttr("k")
    assert lookup_symbol(anchor, "h") is None
    assert lookup_symbol(anchor, "k") is added

    Rewriter.erase_op(added)
    assert lookup_symbol(anchor, "k") is None
    for name in ("f", "g", "h", "k"):
        assert lookup_symbol(anchor, name) is SymbolTable.lookup_symbol(anchor, name)
