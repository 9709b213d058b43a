"""The xDSL context every tool of the project parses with: our dialects plus the upstream ones
the pipeline produces (func, arith, math, memref, llvm)."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.cf import Cf
from xdsl.dialects.func import Func
from xdsl.dialects.llvm import LLVM
from xdsl.dialects.math import Math
from xdsl.dialects.memref import MemRef

from fusion_compiler.dialects.graph import Graph
from fusion_compiler.dialects.loop import Loop

DIALECTS = (Builtin, Func, Arith, Math, MemRef, Cf, LLVM, Graph, Loop)


def make_context() -> Context:
    """A fresh context with every dialect of the pipeline loaded."""
    ctx = Context()
    for dialect in DIALECTS:
        ctx.load_dialect(dialect)
    return ctx
