"""The positional graph ops (`is_nan`, `gather_nd`, `trilu`, `cumsum`, `arg_max`, `arg_min`)
compiled to native code: fused == unfused bit for bit and == the reference (NaN == NaN,
signed zeros compared too), on odd sizes (every
vector loop has a scalar tail), with NaNs, infinities, signed zeros, ties and out-of-range
indices in the inputs; and each also through the loop interpreter (legalize-ops only)."""

from __future__ import annotations

import numpy as np
import pytest

import fusion_compiler as fc
from fusion_compiler.dialects.reference import numpy_ops as ref
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import DEFAULT_PIPELINE, UNFUSED_PIPELINE, compile_module

MASKS = """
func.func @main(%x: tensor<3x37xf32>, %m: tensor<2x9xi1>, %ids: tensor<2x9x2xi64>,
                %n: tensor<5x7xi64>, %s: tensor<2x3x5xf32>)
    -> (tensor<3x37xf32>, tensor<3x37xi1>, tensor<2x9xi1>, tensor<5x7xi64>,
        tensor<2x3x5xf32>, tensor<9x9xi1>) {
  %a = graph.trilu %x {upper = false, k = -1 : i64} : (tensor<3x37xf32>) -> tensor<3x37xf32>
  %nan = graph.is_nan %x : (tensor<3x37xf32>) -> tensor<3x37xi1>
  %g = graph.gather_nd %m, %ids {batch_dims = 0 : i64} : (tensor<2x9xi1>, tensor<2x9x2xi64>) -> tensor<2x9xi1>
  %not = graph.not %g : tensor<2x9xi1>
  %u = graph.trilu %n {upper = true, k = 2 : i64} : (tensor<5x7xi64>) -> tensor<5x7xi64>
  %t = graph.trilu %s {upper = true, k = -1 : i64} : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %ones = graph.constant dense<true> : tensor<9x9xi1>
  %causal = graph.trilu %ones {upper = false, k = 0 : i64} : (tensor<9x9xi1>) -> tensor<9x9xi1>
  func.return %a, %nan, %not, %u, %t, %causal
      : tensor<3x37xf32>, tensor<3x37xi1>, tensor<2x9xi1>, tensor<5x7xi64>,
        tensor<2x3x5xf32>, tensor<9x9xi1>
}
"""

SCANS = """
func.func @main(%x: tensor<3x37xf32>, %n: tensor<5x7xi64>, %i: tensor<4x33xi32>)
    -> (tensor<3x37xf32>, tensor<3x37xf32>, tensor<5x7xi64>, tensor<5x7xi64>, tensor<4x33xi32>,
        tensor<3xi64>, tensor<1x37xi64>, tensor<3x1xi64>, tensor<37xi64>, tensor<5xi64>,
        tensor<33xi64>) {
  %e = graph.mul %x, %x : (tensor<3x37xf32>, tensor<3x37xf32>) -> tensor<3x37xf32>
  %c0 = graph.cumsum %e {axis = 1 : i64, exclusive = false, reverse = false} : (tensor<3x37xf32>) -> tensor<3x37xf32>
  %c1 = graph.cumsum %x {axis = -1 : i64, exclusive = true, reverse = true} : (tensor<3x37xf32>) -> tensor<3x37xf32>
  %c2 = graph.cumsum %n {axis = 0 : i64, exclusive = true, reverse = false} : (tensor<5x7xi64>) -> tensor<5x7xi64>
  %c3 = graph.cumsum %n {axis = 1 : i64, exclusive = false, reverse = true} : (tensor<5x7xi64>) -> tensor<5x7xi64>
  %c4 = graph.cumsum %i {axis = 1 : i64, exclusive = false, reverse = false} : (tensor<4x33xi32>) -> tensor<4x33xi32>
  %a0 = graph.arg_max %x {axis = 1 : i64, keepdims = false, select_last_index = false} : (tensor<3x37xf32>) -> tensor<3xi64>
  %a1 = graph.arg_min %x {axis = 0 : i64, keepdims = true, select_last_index = true} : (tensor<3x37xf32>) -> tensor<1x37xi64>
  %a2 = graph.arg_max %x {axis = 1 : i64, keepdims = true, select_last_index = true} : (tensor<3x37xf32>) -> tensor<3x1xi64>
  %a3 = graph.arg_min %x {axis = 0 : i64, keepdims = false, select_last_index = false} : (tensor<3x37xf32>) -> tensor<37xi64>
  %a4 = graph.arg_max %n {axis = 1 : i64, keepdims = false, select_last_index = true} : (tensor<5x7xi64>) -> tensor<5xi64>
  %a5 = graph.arg_min %i {axis = 0 : i64, keepdims = false, select_last_index = false} : (tensor<4x33xi32>) -> tensor<33xi64>
  func.return %c0, %c1, %c2, %c3, %c4, %a0, %a1, %a2, %a3, %a4, %a5
      : tensor<3x37xf32>, tensor<3x37xf32>, tensor<5x7xi64>, tensor<5x7xi64>, tensor<4x33xi32>,
        tensor<3xi64>, tensor<1x37xi64>, tensor<3x1xi64>, tensor<37xi64>, tensor<5xi64>,
        tensor<33xi64>
}
"""


def _floats(rng: np.random.Generator) -> np.ndarray:
    x = rng.standard_normal((3, 37)).astype(np.float32)
    x[0, :6] = [np.nan, 1.0, np.nan, -0.0, np.inf, -np.inf]  # NaNs win arg_max/arg_min
    x[1, 3:9] = [5.0, 5.0, -7.0, 5.0, -7.0, -0.0]  # ties: first or last index
    x[2, :] = -0.0  # a row of negative zeros: cumsum's sign of zero
    x[2, 10] = 2.0**-20
    return x


def _mask_inputs(rng: np.random.Generator) -> list[np.ndarray]:
    ids = rng.integers(-12, 12, (2, 9, 2)).astype(np.int64)  # wrap and clamp both ways
    s = rng.standard_normal((2, 3, 5)).astype(np.float32)
    n = rng.integers(-50, 50, (5, 7)).astype(np.int64)
    return [_floats(rng), rng.random((2, 9)) < 0.5, ids, n, s]


def _scan_inputs(rng: np.random.Generator) -> list[np.ndarray]:
    n = rng.integers(-5, 5, (5, 7)).astype(np.int64)  # many ties
    n[0, 0] = 2**62  # wraps in the sums
    n[1, 0] = 2**62
    i = rng.integers(-(2**30), 2**30, (4, 33)).astype(np.int32)  # i32 sums wrap
    return [_floats(rng), n, i]


@pytest.mark.parametrize(
    ("source", "make_inputs"),
    [(MASKS, _mask_inputs), (SCANS, _scan_inputs)],
    ids=["masks", "scans"],
)
def test_fused_equals_unfused_equals_reference(source, make_inputs):
    inputs = make_inputs(np.random.default_rng(13))
    reference = evaluate(fc.parse(source), "main", inputs)
    interpreted = evaluate(fc.PassManager("legalize-ops").run(fc.parse(source)), "main", inputs)
    builds = [compile_module(fc.parse(source), p) for p in (DEFAULT_PIPELINE, UNFUSED_PIPELINE)]
    fused, unfused = (build.run("main", *inputs) for build in builds)
    for index, want in enumerate(reference):
        for got in (fused[index], unfused[index], interpreted[index]):
            assert got.dtype == want.dtype, index
            np.testing.assert_array_equal(got, want, err_msg=f"result #{index}")
            if want.dtype.kind == "f":  # zeros of the same sign (NaNs' sign bits aside)
                numbers = ~np.isnan(want)
                assert (np.signbit(got[numbers]) == np.signbit(want[numbers])).all(), index
        assert fused[index].tobytes() == unfused[index].tobytes(), index


def test_reference_matches_numpy_and_onnx_rules():
    x = _floats(np.random.default_rng(0))
    assert ref.arg_max(x, 1, False, False)[0] == 0  # the first NaN
    assert ref.arg_max(x, 1, False, True)[0] == 2  # the last NaN
    assert ref.arg_max(x, 1, False, False)[1] == 3 and ref.arg_max(x, 1, False, True)[1] == 6
    assert ref.arg_min(x[1:2, 3:9], 1, False, True)[0] == 4
    np.testing.assert_array_equal(ref.cumsum(np.arange(5), 0, True, False), [0, 0, 1, 3, 6])
    np.testing.assert_array_equal(ref.cumsum(np.arange(5), 0, False, True), [10, 10, 9, 7, 4])
    np.testing.assert_array_equal(ref.cumsum(np.arange(5), 0, True, True), [10, 9, 7, 4, 0])
    zeros = ref.cumsum(np.full(3, -0.0, np.float32), 0, False, False)
    assert not np.signbit(zeros).any()  # sums start from +0.0, as the kernels' do
    data = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(ref.gather_nd(data, [[1, -1], [0, 7]], 0), data[[1, 0], [2, 2]])
    np.testing.assert_array_equal(ref.gather_nd(data, [[1], [0]], 1), [data[0, 1], data[1, 0]])


def test_gather_nd_fuses_with_its_consumer():
    model = compile_module(fc.parse(MASKS), DEFAULT_PIPELINE)
    kernels = model.kernels("main")
    assert any("gather_nd" in k and "not" in k for k in kernels), kernels
