"""Integer and boolean tensors compiled to native code: fused == unfused == the reference,
bit for bit (integer ops are exact, comparisons of NaN are false as in numpy, casts saturate,
gather indices wrap once and are clamped), whatever the host's vector width (the shapes have
odd sizes, so every vector loop has a scalar tail); and the argument checks name the dtype."""

from __future__ import annotations

import numpy as np
import pytest

import fusion_compiler as fc
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import DEFAULT_PIPELINE, UNFUSED_PIPELINE, compile_module

MASKED_EMBEDDING = """
func.func @main(%ids: tensor<2x37xi64>, %table: tensor<50x16xf32>, %x: tensor<2x37x16xf32>)
    -> (tensor<2x37x16xf32>, tensor<2x37xi1>, tensor<2x37xi32>) {
  %zero = graph.constant dense<0> : tensor<i64>
  %pad = graph.equal %ids, %zero : (tensor<2x37xi64>, tensor<i64>) -> tensor<2x37xi1>
  %keep = graph.not %pad : tensor<2x37xi1>
  %e = graph.gather %table, %ids {axis = 0 : i64} : (tensor<50x16xf32>, tensor<2x37xi64>) -> tensor<2x37x16xf32>
  %s = graph.add %e, %x : (tensor<2x37x16xf32>, tensor<2x37x16xf32>) -> tensor<2x37x16xf32>
  %pos = graph.greater_equal %s, %x : (tensor<2x37x16xf32>, tensor<2x37x16xf32>) -> tensor<2x37x16xi1>
  %k = graph.reshape %keep : (tensor<2x37xi1>) -> tensor<2x37x1xi1>
  %both = graph.and %pos, %k : (tensor<2x37x16xi1>, tensor<2x37x1xi1>) -> tensor<2x37x16xi1>
  %big = graph.constant dense<-1.0e9> : tensor<f32>
  %y = graph.where %both, %s, %big : (tensor<2x37x16xi1>, tensor<2x37x16xf32>, tensor<f32>) -> tensor<2x37x16xf32>
  %wide = graph.mul %ids, %ids : (tensor<2x37xi64>, tensor<2x37xi64>) -> tensor<2x37xi64>
  %n = graph.cast %wide : (tensor<2x37xi64>) -> tensor<2x37xi32>
  func.return %y, %keep, %n : tensor<2x37x16xf32>, tensor<2x37xi1>, tensor<2x37xi32>
}
"""

CASTS = """
func.func @main(%x: tensor<45xf32>, %i: tensor<45xi32>, %b: tensor<45xi1>)
    -> (tensor<45xi32>, tensor<45xi64>, tensor<45xi1>, tensor<45xf32>, tensor<45xi32>, tensor<45xi1>) {
  %0 = graph.cast %x : (tensor<45xf32>) -> tensor<45xi32>
  %1 = graph.cast %x : (tensor<45xf32>) -> tensor<45xi64>
  %2 = graph.cast %x : (tensor<45xf32>) -> tensor<45xi1>
  %3 = graph.cast %i : (tensor<45xi32>) -> tensor<45xf32>
  %s = graph.add %i, %i : (tensor<45xi32>, tensor<45xi32>) -> tensor<45xi32>
  %4 = graph.abs %s : tensor<45xi32>
  %o = graph.or %b, %2 : (tensor<45xi1>, tensor<45xi1>) -> tensor<45xi1>
  %l = graph.less %x, %3 : (tensor<45xf32>, tensor<45xf32>) -> tensor<45xi1>
  %5 = graph.equal %o, %l : (tensor<45xi1>, tensor<45xi1>) -> tensor<45xi1>
  func.return %0, %1, %2, %3, %4, %5 : tensor<45xi32>, tensor<45xi64>, tensor<45xi1>, tensor<45xf32>, tensor<45xi32>, tensor<45xi1>
}
"""


INTEGER_DIVISION = """
func.func @main(%a: tensor<45xi64>, %b: tensor<45xi64>, %c: tensor<45xi32>)
    -> (tensor<45xi64>, tensor<45xi32>, tensor<45xi32>) {
  %d = graph.div %a, %b : (tensor<45xi64>, tensor<45xi64>) -> tensor<45xi64>
  %q = graph.add %d, %a : (tensor<45xi64>, tensor<45xi64>) -> tensor<45xi64>
  %minus_two = graph.constant dense<-2> : tensor<i32>
  %r = graph.div %c, %minus_two : (tensor<45xi32>, tensor<i32>) -> tensor<45xi32>
  %zero = graph.constant dense<0> : tensor<i32>
  %z = graph.div %c, %zero : (tensor<45xi32>, tensor<i32>) -> tensor<45xi32>
  func.return %q, %r, %z : tensor<45xi64>, tensor<45xi32>, tensor<45xi32>
}
"""


def _division_inputs(rng: np.random.Generator) -> list[np.ndarray]:
    """Quotients rounded toward zero of every sign; divisors 0 and -1 (whose division traps
    on x86: the kernel gives 0 and the wrapped negation without dividing)."""
    a = rng.integers(-1000, 1000, 45).astype(np.int64)
    b = rng.integers(-9, 10, 45).astype(np.int64)
    a[:6] = [7, -7, 7, -7, np.iinfo(np.int64).min, 5]
    b[:6] = [2, 2, -2, -2, -1, 0]
    c = rng.integers(-1000, 1000, 45).astype(np.int32)
    c[:3] = [np.iinfo(np.int32).min, -1, 1]
    return [a, b, c]


def _masked_embedding_inputs(rng: np.random.Generator) -> list[np.ndarray]:
    ids = rng.integers(-60, 60, (2, 37)).astype(np.int64)  # out of range both ways, and 0s
    ids[0, :5] = [0, -1, -50, 49, 50]
    table = rng.standard_normal((50, 16)).astype(np.float32)
    x = rng.standard_normal((2, 37, 16)).astype(np.float32)
    x[0, 0, :3] = [np.nan, np.inf, -np.inf]
    return [ids, table, x]


def _cast_inputs(rng: np.random.Generator) -> list[np.ndarray]:
    x = (rng.standard_normal(45) * 4).astype(np.float32)
    x[:8] = [np.nan, np.inf, -np.inf, 3e9, -3e9, -0.0, 2.5, -2.5]
    i = rng.integers(-100, 100, 45).astype(np.int32)
    i[:3] = [2**31 - 1, -(2**31), 2**30]  # i + i wraps
    return [x, i, rng.random(45) < 0.5]


@pytest.mark.parametrize(
    ("source", "make_inputs"),
    [
        (MASKED_EMBEDDING, _masked_embedding_inputs),
        (CASTS, _cast_inputs),
        (INTEGER_DIVISION, _division_inputs),
    ],
    ids=["masked-embedding", "casts", "integer-division"],
)
def test_fused_equals_unfused_equals_reference(source, make_inputs):
    inputs = make_inputs(np.random.default_rng(0))
    reference = evaluate(fc.parse(source), "main", inputs)
    builds = [compile_module(fc.parse(source), p) for p in (DEFAULT_PIPELINE, UNFUSED_PIPELINE)]
    fused, unfused = (build.run("main", *inputs) for build in builds)
    assert len(builds[0].kernels("main")) < len(builds[1].kernels("main"))
    for got_fused, got_unfused, want in zip(fused, unfused, reference, strict=True):
        assert got_fused.dtype == got_unfused.dtype == want.dtype
        np.testing.assert_array_equal(got_fused, want)
        assert got_fused.tobytes() == got_unfused.tobytes()


def test_masked_embedding_fuses_across_element_types():
    model = compile_module(fc.parse(MASKED_EMBEDDING), DEFAULT_PIPELINE)
    kernels = model.kernels("main")
    # the gather, the add and the masks (i64 -> i1 -> f32) in one kernel
    assert any("gather" in k and "where" in k for k in kernels), kernels


def test_arguments_are_checked_for_their_dtype():
    model = fc.compile(fc.parse(MASKED_EMBEDDING))
    ids, table, x = _masked_embedding_inputs(np.random.default_rng(1))
    with pytest.raises(fc.ArgumentError, match=r"argument #0 \(%ids\).*int64.*int32"):
        model(ids.astype(np.int32), table, x)
    y, keep, n = model(ids, table, x)
    assert (y.dtype, keep.dtype, n.dtype) == (np.float32, np.bool_, np.int32)
