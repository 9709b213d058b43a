"""balance-max-chains: max_pool2d's window maxima as a tree compute the same bits as the chain,
NaN, signed zeros and infinities included, on every window shape the pools use."""

from __future__ import annotations

import numpy as np
import pytest

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import DEFAULT_PIPELINE, compile_module
from fusion_compiler.lowering.jit import aligned_empty

CHAINS_KEPT = DEFAULT_PIPELINE.replace(
    "schedule-kernels", "schedule-kernels{balance-max-chains=false}"
)


def _pool(channels: int, size: int, kernel: int, stride: int, pad: int) -> str:
    out = (size + 2 * pad - kernel) // stride + 1
    x, y = f"tensor<1x{channels}x{size}x{size}xf32>", f"tensor<1x{channels}x{out}x{out}xf32>"
    return f"""func.func @main(%x: {x}) -> {y} {{
  %y = graph.max_pool2d %x {{kernel = array<i64: {kernel}, {kernel}>, strides = array<i64: {stride}, {stride}>, padding = array<i64: {pad}, {pad}, {pad}, {pad}>}} : ({x}) -> {y}
  func.return %y : {y}
}}"""


@pytest.mark.parametrize(
    "channels,size,kernel,stride,pad",
    [(4, 23, 3, 2, 0), (3, 20, 3, 1, 1), (2, 17, 2, 2, 0), (2, 19, 5, 2, 2)],
)
def test_tree_and_chain_compute_the_same_bits(channels, size, kernel, stride, pad):
    module = parse_source(make_context(), _pool(channels, size, kernel, stride, pad), "p.mlir")
    x = aligned_empty((1, channels, size, size))
    x[...] = np.random.default_rng(size).standard_normal(x.shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[::29] = np.nan
    flat[3::31] = -0.0
    flat[4::37] = 0.0
    flat[6::41] = -np.inf
    flat[8::43] = np.inf
    tree = compile_module(module, cache=False).run("main", x)[0]
    chain = compile_module(module, CHAINS_KEPT, cache=False).run("main", x)[0]
    assert np.array_equal(tree.view(np.uint32), chain.view(np.uint32))
    (reference,) = evaluate(module, "main", [x])
    assert np.array_equal(np.isnan(tree), np.isnan(reference))
    np.testing.assert_array_equal(np.nan_to_num(tree), np.nan_to_num(reference))
