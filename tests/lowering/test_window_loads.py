"""Window loads (`memref_to_llvm.window_loads`): the taps of a window read along a
`vectorized` loop stay loads in LLVM's optimised IR, rather than values carried from one
iteration to the next (GVN's load PRE, which the vectoriser turns into shuffles), with the
same results. The code is for one fixed CPU that every x86-64 machine runs (SSE 4.2: 4-lane
vectors), so what LLVM makes of it does not depend on the machine the test runs on."""

from __future__ import annotations

import platform

import numpy as np
import pytest

from fusion_compiler.api import parse
from fusion_compiler.driver import DEFAULT_PIPELINE
from fusion_compiler.lowering import convert_loop_to_llvm
from fusion_compiler.lowering.compiled_model import compile_module
from fusion_compiler.lowering.jit import TARGET_CPU_VARIABLE, TARGET_FEATURES_VARIABLE

pytestmark = pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64"), reason="an x86 CPU name and features"
)

SSE = ("x86-64-v2", "+sse4.2,+popcnt,-avx,-avx2,-fma,-avx512f")

POOL = """
func.func @main(%x: tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32> {
  %y = "graph.max_pool2d"(%x) <{kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  func.return %y : tensor<1x4x16x16xf32>
}
"""


def _reference(x: np.ndarray) -> np.ndarray:
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    windows = [padded[:, :, i : i + 16, j : j + 16] for i in range(3) for j in range(3)]
    return np.max(windows, axis=0)


def test_window_taps_stay_loads_with_the_same_results(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TARGET_CPU_VARIABLE, SSE[0])
    monkeypatch.setenv(TARGET_FEATURES_VARIABLE, SSE[1])
    x = np.random.default_rng(0).standard_normal((1, 4, 16, 16), dtype=np.float32)
    model = compile_module(parse(POOL), DEFAULT_PIPELINE, cache=False)
    assert "vector.recur" not in model.llvm_ir
    (result,) = model.run("main", x)
    np.testing.assert_array_equal(result, _reference(x))

    # Without the shifted bases, GVN carries the window (so the test above is not vacuous),
    # and the results are the same bits.
    monkeypatch.setattr(convert_loop_to_llvm, "window_loads", lambda module: {})
    carried = compile_module(parse(POOL), DEFAULT_PIPELINE, cache=False)
    assert "vector.recur" in carried.llvm_ir
    (result_carried,) = carried.run("main", x)
    np.testing.assert_array_equal(result_carried, result)
