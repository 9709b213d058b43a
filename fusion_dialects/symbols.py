"""Symbol lookup in constant time: xDSL's `SymbolTable.lookup_symbol` with a checked index.

xDSL's lookup scans the symbol table's ops for the name, testing each op's traits: on a model
of a few hundred kernels, the passes that look up the callee of every call (fuse-ops'
pattern of each launch, fuse-tir's kernels, the verifier of every `loop.call`) spent a
tenth of their time scanning. `lookup_symbol` keeps, per symbol table, the index from name to
op it built on its last scan, and trusts an entry only while the op is still in the table's
block under that name; a name it does not know, or an entry that went stale (the op was
erased, moved or renamed, or replaced by another of the same name), rescans the table. So
the result is always the op xDSL's lookup returns, at the cost of one scan per change of the
table that a lookup meets rather than one per lookup.
"""

from __future__ import annotations

import weakref

from xdsl.dialects.builtin import StringAttr, SymbolRefAttr
from xdsl.ir import Operation
from xdsl.traits import SymbolTable

_INDEXES: weakref.WeakKeyDictionary[Operation, dict[str, Operation]] = weakref.WeakKeyDictionary()


def _symbol_table_of(op: Operation) -> Operation:
    anchor: Operation | None = op
    while anchor is not None and not anchor.has_trait(SymbolTable):
        anchor = anchor.parent_op()
    if anchor is None:
        raise ValueError(f"Operation {op.name} has no SymbolTable ancestor")
    return anchor


def _scan(table: Operation) -> dict[str, Operation]:
    index: dict[str, Operation] = {}
    for op in table.regions[0].block.ops:
        name = op.get_attr_or_prop("sym_name")
        if isinstance(name, StringAttr):
            index.setdefault(name.data, op)  # the first, as xDSL's scan finds it
    _INDEXES[table] = index
    return index


def _current(op: Operation | None, table: Operation, name: str) -> bool:
    if op is None or op.parent is not table.regions[0].block:
        return False
    sym_name = op.get_attr_or_prop("sym_name")
    return isinstance(sym_name, StringAttr) and sym_name.data == name


def lookup_symbol(op: Operation, name: str | StringAttr | SymbolRefAttr) -> Operation | None:
    """The op named `name` in the symbol table closest to `op` (as
    `SymbolTable.lookup_symbol`; a nested reference is left to it)."""
    if isinstance(name, SymbolRefAttr):
        if name.nested_references.data:
            return SymbolTable.lookup_symbol(op, name)
        name = name.root_reference
    key = name.data if isinstance(name, StringAttr) else name
    table = _symbol_table_of(op)
    index = _INDEXES.get(table)
    found = index.get(key) if index is not None else None
    if _current(found, table, key):
        return found
    return _scan(table).get(key)
