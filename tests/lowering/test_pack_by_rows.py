"""An im2col panel packed row by row (`contraction_pack_schedule`) is vector code that computes
the same bits as the unscheduled convolution, on every plane: no LLVM diagnostic that a
`vectorized` loop was left scalar, for AVX2, SSE-only and AVX-512 CPUs alike (code generated,
not run) and on this host. Rows of two vectors or more copy the window's rows in one loop
(`PackedBuilder._unrolled_window`); copies along the row in one loop would be turned into
values carried across iterations by LLVM's load PRE and left scalar, with a warning, where
the tile's bounds are constants (the remainder tiles of these planes)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.driver import compile_module, lower_to_entries
from fusion_compiler.lowering.convert_loop_to_llvm import ConvertLoopToLLVMPass
from fusion_compiler.lowering.jit import CodegenTarget
from fusion_compiler.lowering.llvm_codegen import optimized_llvm_module
from fusion_compiler.lowering.native_units import is_entry

FUSION = "legalize-ops,annotate-pattern,fuse-ops,fuse-tir"
SCHEDULE = f"{FUSION},schedule-contractions{{vector-width=8 registers=16 cores=1 costs=default}}"
"""A fixed host model: the same plan (pixels as columns, the panel packed by rows) and tiles on
every host (`costs=default`: not the costs measured on this host's CPU)."""

TARGETS = [
    CodegenTarget("znver3", "+avx,+avx2,+fma"),
    CodegenTarget("x86-64-v2", "+sse4.2"),
    CodegenTarget("skylake-avx512", "+avx,+avx2,+fma,+avx512f"),
]

PLANES = pytest.mark.parametrize(
    ("channels", "plane", "out", "window"),
    [(5, 20, 12, 3), (8, 29, 24, 3), (4, 17, 20, 5), (3, 23, 16, 7), (5, 9, 12, 3)],
    ids=["5x20-3x3", "8x29-3x3", "4x17-5x5", "3x23-7x7", "5x9-3x3"],
)


def _conv(channels: int, plane: int, out: int, window: int) -> str:
    pad = window // 2
    x = f"tensor<1x{channels}x{plane}x{plane}xf32>"
    w = f"tensor<{out}x{channels}x{window}x{window}xf32>"
    y = f"tensor<1x{out}x{plane}x{plane}xf32>"
    attributes = (
        f"strides = array<i64: 1, 1>, padding = array<i64: {pad}, {pad}, {pad}, {pad}>, "
        "dilation = array<i64: 1, 1>, groups = 1 : i64"
    )
    return f"""
func.func @main(%x: {x}, %w: {w}) -> {y} {{
  %c = graph.conv2d %x, %w {{{attributes}}} : ({x}, {w}) -> {y}
  func.return %c : {y}
}}"""


def _parse(text: str) -> ModuleOp:
    return parse_source(make_context(), text, "conv.mlir")


@PLANES
def test_packed_by_rows_is_vector_code_on_every_target(capfd, channels, plane, out, window):
    lowered, _ = lower_to_entries(_parse(_conv(channels, plane, out, window)), SCHEDULE)
    kernels = [op for op in lowered.ops if isinstance(op, loop.FuncOp) and not is_entry(op)]
    assert any("loop.for %q" in str(kernel) for kernel in kernels)  # packed by rows
    for kernel in kernels:
        for target in TARGETS:  # (lowered anew: a clone of the llvm dialect loses block names)
            unit = ModuleOp([kernel.clone()])
            ConvertLoopToLLVMPass(ldexp="off").apply(make_context(), unit)
            optimized_llvm_module(unit, target, target.machine())
    assert "not vectorized" not in capfd.readouterr().err


@PLANES
def test_packed_by_rows_has_the_same_bits(channels, plane, out, window):
    text = _conv(channels, plane, out, window)
    scheduled = compile_module(_parse(text), SCHEDULE, cache=False)
    plain = compile_module(_parse(text), FUSION, cache=False)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, channels, plane, plane)).astype(np.float32)
    w = rng.standard_normal((out, channels, window, window)).astype(np.float32)
    (got,) = scheduled.run("main", x, w)
    (want,) = plain.run("main", x, w)
    assert got.tobytes() == want.tobytes()
