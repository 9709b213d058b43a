"""Grouped convolutions under schedule-contractions (`contraction_groups.py`): split at their
groups, each group packed and register-tiled, natively, on hosts of 8 and of 16 f32 lanes
(the host model pinned by the pass options, so the tiles do not depend on this machine).

Per shape and vector width: the kernel is register-tiled (before the split, a grouped
convolution had no packed plan); the scheduled build computes the same bits as the
unscheduled one, fused and unfused (the bias, residual and relu applied to the register tile
are the same ops in the same order as in their own kernels); and the result is within the
float32 error bound of the float64 reference: `n` FMAs into each accumulator and one bias add
err by at most `(n + 2) * 2^-24 * (sum |x * w| + |b| + |r|)` per element (`n` = input channels
per group x kernel height x width).
"""

from __future__ import annotations

import numpy as np
import pytest

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.dialects.loop.attributes import REGISTER_TILED_ATTR
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import (
    FUSION_PIPELINE,
    UNFUSED_FUSION_PIPELINE,
    PassManager,
    compile_module,
)

HOSTS = {"avx2": "vector-width=8 registers=16", "avx512": "vector-width=16 registers=32"}
"""The host models the schedule is pinned to: 8 lanes and 16 registers, 16 and 32."""


def _schedule(host: str) -> str:
    """schedule-kernels' stages up to schedule-contractions, then it, pinned to `host`."""
    stages = "contractions=false reorder=false unroll-reductions=0 unroll-jam=0 loop-kinds=false"
    return f"schedule-kernels{{{stages}}},schedule-contractions{{{HOSTS[host]}}}"


def _conv(c, hw, k, o, groups, strides=1, pad=0, residual=False) -> str:
    """conv2d (input `c` x `hw` x `hw`, kernel `k` x `k`) + bias (+ a residual) + relu."""
    out = (hw + 2 * pad - k) // strides + 1
    xt, wt = f"tensor<1x{c}x{hw}x{hw}xf32>", f"tensor<{o}x{c // groups}x{k}x{k}xf32>"
    yt, bt = f"tensor<1x{o}x{out}x{out}xf32>", f"tensor<1x{o}x1x1xf32>"
    attributes = (
        f"strides = array<i64: {strides}, {strides}>, "
        f"padding = array<i64: {pad}, {pad}, {pad}, {pad}>, "
        f"dilation = array<i64: 1, 1>, groups = {groups} : i64"
    )
    arguments = f"%x: {xt}, %w: {wt}, %b: {bt}" + (f", %res: {yt}" if residual else "")
    added = f"  %s = graph.add %a, %res : ({yt}, {yt}) -> {yt}\n" if residual else ""
    return f"""
func.func @main({arguments}) -> {yt} {{
  %c = graph.conv2d %x, %w {{{attributes}}} : ({xt}, {wt}) -> {yt}
  %a = graph.add %c, %b : ({yt}, {bt}) -> {yt}
{added}  %r = graph.relu %{"s" if residual else "a"} : {yt}
  func.return %r : {yt}
}}"""


GRAPHS = {
    # shufflenet's 1x1 group convolutions, scaled down: 5 filters and 4 channels per group
    "g4_1x1": (_conv(16, 6, 1, 20, 4), 4),
    # filters along the vectors: 20 per group, a remainder column tile at both widths
    "g2_1x1_wide_groups": (_conv(24, 5, 1, 40, 2), 12),
    "g2_3x3_padded": (_conv(6, 7, 3, 10, 2, pad=1), 27),
    "g3_3x3_strided": (_conv(9, 9, 3, 12, 3, strides=2), 27),
    "g4_1x1_small_plane_residual": (_conv(8, 3, 1, 16, 4, residual=True), 2),
}


def _module(text: str):
    return parse_source(make_context(), text, "grouped.mlir")


def _inputs(text: str) -> list[np.ndarray]:
    main = next(op for op in _module(text).ops if op.sym_name.data == "main")
    rng = np.random.default_rng(3)
    return [
        rng.uniform(-1.0, 1.0, tuple(t.get_shape())).astype(np.float32)
        for t in main.function_type.inputs.data
    ]


def _run(text: str, pipeline: str, inputs: list[np.ndarray]) -> np.ndarray:
    (result,) = compile_module(_module(text), pipeline, cache=False).run("main", *inputs)
    return result


@pytest.mark.parametrize("host", sorted(HOSTS))
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_grouped_convolution_is_register_tiled(name, host):
    module = _module(GRAPHS[name][0])
    PassManager(f"{FUSION_PIPELINE},{_schedule(host)}").run(module)
    kernels = [op for op in module.ops if isinstance(op, FuncOp)]
    assert [REGISTER_TILED_ATTR in kernel.attributes for kernel in kernels] == [True]


@pytest.mark.parametrize("host", sorted(HOSTS))
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_grouped_convolution_bits_and_error(name, host):
    text, terms = GRAPHS[name]
    inputs = _inputs(text)
    unscheduled = _run(text, FUSION_PIPELINE, inputs)
    fused = _run(text, f"{FUSION_PIPELINE},{_schedule(host)}", inputs)
    unfused = _run(text, f"{UNFUSED_FUSION_PIPELINE},{_schedule(host)}", inputs)
    np.testing.assert_array_equal(fused, unscheduled)
    np.testing.assert_array_equal(unfused, fused)
    (reference,) = evaluate(_module(text), "main", inputs)
    (magnitude,) = evaluate(_module(text), "main", [np.abs(x) for x in inputs])
    bound = (terms + 2) * 2.0**-24 * magnitude.astype(np.float64)
    error = np.abs(fused.astype(np.float64) - reference.astype(np.float64))
    assert np.all(error <= bound), float(np.max(error - bound))
