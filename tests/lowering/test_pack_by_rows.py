"""An im2col panel packed row by row (`contraction_pack_schedule`) is vector code that computes
the same bits as the unscheduled convolution, on every plane: no LLVM diagnostic that a
`vectorized` loop was left scalar. Rows of two vectors or more copy the window's rows in one
loop (`PackedBuilder._unrolled_window`); copies along the row in one loop would be turned into
values carried across iterations by LLVM's load PRE and left scalar, with a warning, where
the tile's bounds are constants (the remainder tiles of these planes)."""

from __future__ import annotations

import numpy as np
import pytest

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.driver import compile_module

FUSION = "legalize-ops,annotate-pattern,fuse-ops,fuse-tir"
SCHEDULE = f"{FUSION},schedule-contractions{{vector-width=8 registers=16 cores=1}}"
"""A fixed host model: the same plan (pixels as columns, the panel packed by rows) and tiles on
every host."""


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


@pytest.mark.parametrize(
    ("channels", "plane", "out", "window"),
    [(5, 20, 12, 3), (8, 29, 24, 3), (4, 17, 20, 5), (3, 23, 16, 7), (5, 9, 12, 3)],
    ids=["5x20-3x3", "8x29-3x3", "4x17-5x5", "3x23-7x7", "5x9-3x3"],
)
def test_packed_by_rows_is_vector_code_with_the_same_bits(capfd, channels, plane, out, window):
    text = _conv(channels, plane, out, window)
    scheduled = compile_module(
        parse_source(make_context(), text, "conv.mlir"), SCHEDULE, cache=False
    )
    plain = compile_module(parse_source(make_context(), text, "conv.mlir"), FUSION, cache=False)
    assert "not vectorized" not in capfd.readouterr().err
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, channels, plane, plane)).astype(np.float32)
    w = rng.standard_normal((out, channels, window, window)).astype(np.float32)
    (got,) = scheduled.run("main", x, w)
    (want,) = plain.run("main", x, w)
    assert got.tobytes() == want.tobytes()
