"""The xDSL context every tool of the project parses with: our dialects plus the upstream ones
the pipeline produces (func, arith, math, memref, llvm)."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.math import Math
from xdsl.dialects.memref import MemRef
from xdsl.ir import Dialect

from fusion_compiler.dialects.graph import Graph
from fusion_compiler.dialects.loop import Loop

DIALECTS = (Builtin, Func, Arith, Math, MemRef, Graph, Loop)
"""The dialects every context holds from the start: those of graph-level and loop-level IR."""


def _cf() -> Dialect:
    from xdsl.dialects.cf import Cf

    return Cf


def _llvm() -> Dialect:
    from xdsl.dialects.llvm import LLVM

    return LLVM


LATE_DIALECTS = {"cf": _cf, "llvm": _llvm}
"""The dialects of lowered IR, loaded when a parse first meets one of their ops or attributes:
importing xDSL's `llvm` dialect takes 20 ms, a tenth of `fusion-run`'s start, and a graph-level
file never needs it."""


def make_context() -> Context:
    """A fresh context with every dialect of the pipeline loaded or registered."""
    ctx = Context()
    for dialect in DIALECTS:
        ctx.load_dialect(dialect)
    for name, factory in LATE_DIALECTS.items():
        ctx.register_dialect(name, factory)
    return ctx
