"""The xDSL context every tool of the project parses with: our dialects plus the upstream ones
the pipeline produces (func, arith, math, memref, cf, llvm)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.ir import Dialect

from fusion_compiler.dialects.graph import Graph
from fusion_compiler.dialects.loop import Loop

DIALECTS = (Builtin, Func, Graph, Loop)
"""The dialects every context holds from the start: graph-level IR's, and the loop dialect's
(kernels), whose bodies' scalar and memory ops are `LATE_DIALECTS`'."""


def _late(module: str, name: str) -> Callable[[], Dialect]:
    """A factory of the dialect `name` of `module`, imported when first asked for."""
    return lambda: getattr(import_module(module), name)


LATE_DIALECTS: dict[str, Callable[[], Dialect]] = {
    "arith": _late("xdsl.dialects.arith", "Arith"),
    "math": _late("xdsl.dialects.math", "Math"),
    "memref": _late("xdsl.dialects.memref", "MemRef"),
    "cf": _late("xdsl.dialects.cf", "Cf"),
    "llvm": _late("xdsl.dialects.llvm", "LLVM"),
}
"""The dialects of kernel bodies and of lowered IR, loaded when a parse first meets one of
their ops or attributes. A graph-level file (what `fusion-import` writes, what `fusion-run`
reads) never does: `python -X importtime` puts the `llvm` dialect at 20-23 ms and `arith` at
12-22 ms (Zen 5, two runs), of a `fusion-run --help` that took 0.44 s before these and the
tools' other imports were made late, 0.29 s after (paired, five rounds)."""


def make_context() -> Context:
    """A fresh context with every dialect of the pipeline loaded or registered."""
    ctx = Context()
    for dialect in DIALECTS:
        ctx.load_dialect(dialect)
    for name, factory in LATE_DIALECTS.items():
        ctx.register_dialect(name, factory)
    return ctx


def load_every_dialect() -> None:
    """Imports every dialect a parse or a compile may need (`LATE_DIALECTS` included), as a
    long-lived process or a benchmark that times the compiler's work alone would."""
    for factory in LATE_DIALECTS.values():
        factory()
