"""LLVM IR text linked into a unit before it is optimised: functions the generated code calls
that nothing else in the process defines (libgomp's serial stand-ins, `threading_runtime`;
the kept-buffer functions, `kept_buffers`)."""

from __future__ import annotations

from collections.abc import Sequence

import llvmlite.binding as llvm


def declares(module: llvm.ModuleRef, name: str) -> bool:
    """Whether `module` declares the function `name` without defining it."""
    try:
        return module.get_function(name).is_declaration
    except NameError:
        return False


def link_internal(module: llvm.ModuleRef, text: str, names: Sequence[str]) -> None:
    """Links the definitions of `text` into `module`, the functions `names` made internal to
    it (so that units linked into one engine do not clash, and calls of them inline)."""
    definitions = llvm.parse_assembly(text)
    definitions.triple = module.triple
    definitions.data_layout = module.data_layout
    module.link_in(definitions)
    for name in names:
        module.get_function(name).linkage = llvm.Linkage.internal
