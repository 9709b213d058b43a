"""The real models of the onnx wheel (`onnx/backend/test/data/light/`) compiled natively through
the ONNX backend (`fusion_compiler.frontend.backend`): on the input onnx's backend test runner generates they
reproduce the stored expected outputs at the runner's tolerances, and with seeded random
weights they match onnxruntime (or onnx's ReferenceEvaluator) on the logits.

Compiling a whole model takes seconds (LLVM dominates) and our conv kernels are still naive, so
the suite runs the fastest models; FUSION_TEST_LARGE_MODELS=1 runs all nine (minutes each for
the large ones), and `bench/zoo.py` tabulates them. The helpers are shared with that script.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import zoo  # noqa: E402

from fusion_compiler.frontend.backend import FusionBackend  # noqa: E402

FAST = ("squeezenet", "shufflenet")
"""Compiled in the default suite: the cheapest to compile and run (about 15 s of CPU each,
both checks); between them they use every op type of the nine but Add, Mul, Unsqueeze and
LRN (covered by the conformance suite)."""

LARGE = os.environ.get("FUSION_TEST_LARGE_MODELS") == "1"
MODELS = zoo.MODELS if LARGE else FAST


@pytest.fixture(scope="module", autouse=True)
def _compile_cache(tmp_path_factory):
    """A compile cache of this module's own, so nothing is read from or left in the user's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FUSION_CACHE_DIR", str(tmp_path_factory.mktemp("fusion-cache")))
        yield


@pytest.mark.parametrize("name", MODELS)
def test_stored_output(name):
    model = zoo.load(name)
    rep = FusionBackend.prepare(model, filename=f"light_{name}.onnx")
    outputs = rep.run(zoo.runner_inputs(model))
    zoo.check_stored(name, list(outputs))  # the runner's own comparison and tolerances
    assert 0 < len(rep.kernels) < len(model.graph.node)


@pytest.mark.parametrize("name", MODELS)
def test_random_weights_match_oracle(name):
    model = zoo.random_model(name)
    rep = FusionBackend.prepare(model, filename=f"light_{name}.onnx")
    inputs = zoo.random_inputs(model)
    (logits,) = rep.run(inputs)
    oracle, (expected,) = zoo.oracle_outputs(model, inputs)
    scale = float(np.max(np.abs(expected)))
    np.testing.assert_allclose(
        logits, expected, rtol=0, atol=zoo.RTOL * scale, err_msg=f"against {oracle}"
    )
    assert np.std(expected) > 1e-3 * scale  # the logits differ: the comparison is not vacuous


def test_random_weights_are_fan_in_scaled():
    """The randomised model keeps the graph but no ConstantOfShape weights, and a kernel's
    values have variance 2 / fan-in."""
    shipped = zoo.load("squeezenet")
    model = zoo.randomise_weights(shipped, seed=3)
    assert not any(n.op_type == "ConstantOfShape" for n in model.graph.node)
    assert any(n.op_type == "ConstantOfShape" for n in shipped.graph.node)
    from onnx import numpy_helper

    kernels = [numpy_helper.to_array(i) for i in model.graph.initializer if len(i.dims) == 4]
    largest = max(kernels, key=lambda k: k.size)
    fan_in = largest[0].size
    assert np.var(largest) == pytest.approx(2.0 / fan_in, rel=0.1)
