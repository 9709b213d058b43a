"""tile-transposes end to end: transposes of the shapes it tiles compute numpy's result, bit
for bit, through the whole pipeline (and the same with the stage off)."""

from __future__ import annotations

import numpy as np
import pytest

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.driver import DEFAULT_PIPELINE, PassManager, compile_module

HEADS = """
func.func @main(%k: tensor<128x256xf32>) -> tensor<4x64x128xf32> {
  %r = graph.reshape %k : (tensor<128x256xf32>) -> tensor<128x4x64xf32>
  %t = graph.transpose %r {perm = array<i64: 1, 2, 0>} : (tensor<128x4x64xf32>) -> tensor<4x64x128xf32>
  func.return %t : tensor<4x64x128xf32>
}
"""

PLAIN = """
func.func @main(%x: tensor<48x80xf32>) -> tensor<80x48xf32> {
  %t = graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<48x80xf32>) -> tensor<80x48xf32>
  func.return %t : tensor<80x48xf32>
}
"""


def _scheduled(text: str, pipeline: str) -> str:
    module = parse_source(make_context(), text, "t.mlir")
    PassManager(pipeline).run(module)
    return str(module)


@pytest.mark.parametrize(
    "text, shape, reference",
    [
        (HEADS, (128, 256), lambda k: k.reshape(128, 4, 64).transpose(1, 2, 0)),
        (PLAIN, (48, 80), lambda x: x.T),
    ],
    ids=["attention_heads", "plain"],
)
def test_tiled_transposes_compute_numpys_result(text, shape, reference):
    off = DEFAULT_PIPELINE.replace("schedule-kernels", "schedule-kernels{tile-transposes=false}")
    assert "step %c16" in _scheduled(text, DEFAULT_PIPELINE)
    assert "step %c16" not in _scheduled(text, off)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    want = reference(x)
    for pipeline in (DEFAULT_PIPELINE, off):
        module = parse_source(make_context(), text, "t.mlir")
        (got,) = compile_module(module, pipeline, cache=False).run("main", x)
        np.testing.assert_array_equal(got, want)
