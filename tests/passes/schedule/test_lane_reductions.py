"""Row reductions in the lane order of legalize-ops (`reduction.lane_reduce`), end to end.

Every build of a graph — fused or not, scheduled or not — computes its reductions in the order
the legalization fixes (32 partial results along the last axis, a fixed tree), so natively they
all agree bit for bit; the loop interpreter (float64 sums) and the float64 reference agree with
them within the tolerance the legalization documents. Lengths straddle the lane count (1, 7,
16, 17: no or one chunk; 1027: many chunks and a remainder), axes are the last, a middle
one and keepdims. NaN and infinities propagate through max and sum as in the reference.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.reference.evaluator import evaluate

LENGTHS = (1, 7, 16, 17, 1027)

RTOL = 1e-5
"""Against float64: a lane sum of n terms errs by at most (n/32 + 5) * 2^-24 * sum |x| (2e-6
relative for n = 1027 and positive terms); softmax and layer_norm add an exp (1 ulp) and a
reciprocal (1 ulp) rounding. The absolute tolerance is RTOL times the output's magnitude
(layer_norm's outputs cross zero)."""


def graph(n: int) -> str:
    """A sum of exps (its exp fuses into the sum), a keepdims max, a middle-axis mean, a
    softmax, a layer_norm and a global average pooling over rows of `n` elements."""
    x, y, v = f"tensor<3x{n}xf32>", f"tensor<2x{n}x5xf32>", f"tensor<{n}xf32>"
    z, pooled = f"tensor<1x2x3x{n}xf32>", "tensor<1x2x1x1xf32>"
    results = f"tensor<3xf32>, tensor<3x1xf32>, tensor<2x1x5xf32>, {x}, {x}, {pooled}"
    return f"""
func.func @main(%x: {x}, %y: {y}, %g: {v}, %b: {v}, %z: {z}) -> ({results}) {{
  %e = graph.exp %x : {x}
  %s = graph.reduce_sum %e {{axes = array<i64: 1>, keepdims = false}} : ({x}) -> tensor<3xf32>
  %m = graph.reduce_max %x {{axes = array<i64: -1>, keepdims = true}} : ({x}) -> tensor<3x1xf32>
  %a = graph.reduce_mean %y {{axes = array<i64: 1>, keepdims = true}} : ({y}) -> tensor<2x1x5xf32>
  %p = graph.softmax %x {{axis = -1 : i64}} : ({x}) -> {x}
  %l = graph.layer_norm %x, %g, %b {{axis = -1 : i64, epsilon = 1.0e-05 : f32}} : ({x}, {v}, {v}) -> {x}
  %q = graph.global_avg_pool2d %z : ({z}) -> {pooled}
  func.return %s, %m, %a, %p, %l, %q : {results}
}}"""


def inputs(n: int, seed: int = 7) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shapes = [(3, n), (2, n, 5), (n,), (n,), (1, 2, 3, n)]
    return [rng.uniform(-2.0, 2.0, shape).astype(np.float32) for shape in shapes]


def reference(text: str, arrays: list[np.ndarray]) -> list[np.ndarray]:
    return evaluate(parse_source(make_context(), text, "reference.mlir"), "main", arrays)


def assert_close(actual, expected) -> None:
    for got, want in zip(actual, expected, strict=True):
        scale = float(np.max(np.abs(want))) if want.size else 1.0
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * (scale or 1.0))


def assert_identical(actual, expected, label) -> None:
    for position, (got, want) in enumerate(zip(actual, expected, strict=True)):
        assert got.tobytes() == want.tobytes(), f"{label}: result #{position} differs"


@pytest.fixture(scope="module", params=LENGTHS, ids=[f"n{n}" for n in LENGTHS])
def builds(request, build):
    """The four builds of `graph(n)`: (fused, scheduled) -> Build."""
    text = graph(request.param)
    return request.param, {
        (fused, scheduled): build(
            text, f"lanes{request.param}.mlir", "" if scheduled else None, fused
        )
        for fused in (True, False)
        for scheduled in (True, False)
    }


def test_every_build_bit_identical(builds):
    n, by_kind = builds
    arrays = inputs(n)
    baseline = by_kind[(False, False)].native(arrays)
    for (fused, scheduled), built in by_kind.items():
        label = f"fused={fused} scheduled={scheduled} vs unfused unscheduled"
        assert_identical(built.native(arrays), baseline, label)


def test_native_matches_reference(builds):
    n, by_kind = builds
    arrays = inputs(n)
    assert_close(by_kind[(True, True)].native(arrays), reference(graph(n), arrays))


def test_interpreter_matches_native(builds):
    n, by_kind = builds
    arrays = inputs(n)
    native = by_kind[(True, False)].native(arrays)
    assert_close(by_kind[(True, False)].interpret(arrays), native)


def test_lane_kernels_keep_their_kinds(builds):
    """The unfused build has one kernel per op: the lane split changes no pattern kind."""
    n, by_kind = builds
    text = by_kind[(False, False)].text
    for kernel, kind in (
        ("reduce_sum", "comm_reduce"),
        ("reduce_max", "comm_reduce"),
        ("reduce_mean", "out_ewise_fusable"),
        ("softmax", "out_ewise_fusable"),
        ("layer_norm", "out_ewise_fusable"),
        ("global_avg_pool2d", "out_ewise_fusable"),
    ):
        header = next(line for line in text.splitlines() if f"loop.func @{kernel}(" in line)
        assert header.endswith(f"pattern {kind} {{"), header
    assert ("memref<3x32xf32>" in text) == (n >= 32)


def special_inputs(n: int) -> list[np.ndarray]:
    """Row 0: a NaN; row 1: +inf; row 2: +inf and -inf (near the end: the remainder lanes)."""
    x, y, g, b, z = inputs(n)
    x[0, n // 2] = np.nan
    x[1, 0] = np.inf
    x[2, n - 1] = -np.inf
    x[2, n // 3] = np.inf if n > 1 else -np.inf
    z[0, 1, 2, n - 1] = np.nan
    return [x, y, g, b, z]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("n", (7, 1027))
def test_nan_and_inf_propagate_like_the_reference(build, n):
    text = graph(n)
    arrays = special_inputs(n)
    expected = reference(text, arrays)
    for fused in (True, False):
        actual = build(text, f"special{n}.mlir", "", fused).native(arrays)
        for got, want in zip(actual, expected, strict=True):
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))
            np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
