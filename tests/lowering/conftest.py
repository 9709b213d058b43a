"""Fixtures for the lowering tests: parse `loop.func` kernels, lower them, JIT them."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, llvm, math, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from fusion_compiler.dialects.loop import Loop
from fusion_compiler.lowering import ConvertLoopToLLVMPass, JitModule, compile_llvm_module


@pytest.fixture(scope="session")
def ctx() -> Context:
    context = Context()
    for dialect in (
        builtin.Builtin,
        arith.Arith,
        math.Math,
        memref.MemRef,
        func.Func,
        llvm.LLVM,
        Loop,
    ):
        context.load_dialect(dialect)
    return context


@pytest.fixture(scope="session")
def lower(ctx: Context) -> Callable[..., ModuleOp]:
    """`lower(text, **options)`: parses kernels, runs `convert-loop-to-llvm`, verifies."""

    def run(text: str, **options: object) -> ModuleOp:
        module = Parser(ctx, text).parse_module()
        module.verify()
        ConvertLoopToLLVMPass(**options).apply(ctx, module)  # type: ignore[arg-type]
        module.verify()
        return module

    return run


@pytest.fixture(scope="session")
def jit(lower: Callable[..., ModuleOp]) -> Callable[..., JitModule]:
    """`jit(text, **options)`: lowers kernels and compiles them for the host."""

    def run(text: str, **options: object) -> JitModule:
        return compile_llvm_module(lower(text, **options))

    return run


def elementwise_kernel(
    name: str, shape: tuple[int, ...], arity: int, body: str, inner_kind: str = ""
) -> str:
    """A kernel `out[i..] = body(%x0[i..], %x1[i..], ...)`; `body` computes `%r` from `%x<k>`;
    `inner_kind` is the kind of the innermost loop (`vectorized`; default serial)."""
    memref_type = f"memref<{'x'.join(map(str, shape))}xf32>"
    inputs = ", ".join(f"%in{k}: {memref_type}" for k in range(arity))
    ivs = [f"%i{d}" for d in range(len(shape))]
    subscript = ", ".join(ivs)
    loads = "\n".join(
        f"%x{k} = memref.load %in{k}[{subscript}] : {memref_type}" for k in range(arity)
    )
    inner = f"{loads}\n{body}\nmemref.store %r, %out[{subscript}] : {memref_type}"
    for d in reversed(range(len(shape))):
        kind = f" {inner_kind}" if inner_kind and d == len(shape) - 1 else ""
        inner = f"loop.for {ivs[d]} = %c0 to %n{d} step %c1{kind} {{\n{inner}\n}}"
    bounds = "\n".join(f"%n{d} = arith.constant {n} : index" for d, n in enumerate(shape))
    return f"""
loop.func @{name}({inputs}) outs(%out: {memref_type}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  {bounds}
  {inner}
  loop.return
}}
"""


@pytest.fixture(scope="session")
def elementwise() -> Callable[..., str]:
    return elementwise_kernel


@pytest.fixture(scope="session")
def parse_random_weights() -> Callable[..., ModuleOp]:
    """`parse_random_weights(text, seed=0)`: a graph-level module whose `graph.constant`s get
    random weights (N(0, 0.1²), float32) instead of the fills the text gives them."""
    import numpy as np

    from fusion_compiler.dialects import graph
    from fusion_compiler.dialects.context import make_context
    from fusion_compiler.dialects.diagnostics import parse_source
    from fusion_compiler.passes.fold_constants.elements import dense_of

    def parse(text: str, seed: int = 0) -> ModuleOp:
        module = parse_source(make_context(), text, "model.mlir")
        rng = np.random.default_rng(seed)
        for op in module.walk():
            if isinstance(op, graph.ConstantOp):
                shape = op.result.type.get_shape()
                array = rng.standard_normal(shape).astype(np.float32) * 0.1
                op.properties["value"] = dense_of(array, op.result.type)
        return module

    return parse


@pytest.fixture
def fixed_tile_host(monkeypatch) -> None:
    """schedule-contractions plans tiles for a fixed host (Zen 5: 16 f32 lanes, 32 registers,
    48 KiB L1), whatever the machine: the same plans, so the same units, in every process."""
    from fusion_compiler.passes.schedule import contraction_schedule
    from fusion_compiler.passes.schedule.contraction_tiles import HostModel

    zen5 = HostModel(vector_width=16, registers=32, l1_bytes=48 * 1024, l1_ways=12)
    monkeypatch.setattr(contraction_schedule, "host_model", lambda: zen5)
