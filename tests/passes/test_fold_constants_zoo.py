"""fold-constants on the real models of the onnx wheel (random weights, `bench/zoo.py`).

ShuffleNet has a batch norm after each of its 49 convolutions, weight reshapes and channel
shuffles: every batch norm folds into its convolution, and the folded native build matches
the reference evaluation of the *unfolded* graph at the zoo's tolerance (zoo.RTOL = 1e-4 of
the logits' scale; measured 1e-6, the same as without folding: folding adds float32
rounding of the weights only). FUSION_TEST_LARGE_MODELS=1 adds resnet50.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import zoo  # noqa: E402

from fusion_compiler.dialects.context import make_context  # noqa: E402
from fusion_compiler.dialects.diagnostics import parse_source  # noqa: E402
from fusion_compiler.dialects.reference.evaluator import evaluate  # noqa: E402
from fusion_compiler.dialects.weights_writer import externalize_constants  # noqa: E402
from fusion_compiler.driver import DEFAULT_PIPELINE, PassManager, compile_module  # noqa: E402
from fusion_compiler.frontend.onnx_importer import import_model  # noqa: E402

MODELS = (
    ("shufflenet", "resnet50")
    if os.environ.get("FUSION_TEST_LARGE_MODELS") == "1"
    else ("shufflenet",)
)


@pytest.fixture(scope="module", autouse=True)
def _compile_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FUSION_CACHE_DIR", str(tmp_path_factory.mktemp("fusion-cache")))
        yield


def _ops(module) -> Counter[str]:
    return Counter(op.name for op in module.walk() if op.name.startswith("graph."))


def _folded(module):
    folded = module.clone()
    PassManager("fold-constants").run(folded)
    return folded


@pytest.mark.parametrize("name", MODELS)
def test_every_batch_norm_folds_into_its_convolution(name):
    module = import_model(zoo.random_model(name))
    before, after = _ops(module), _ops(_folded(module))
    assert before["graph.batch_norm"] > 0
    assert after["graph.batch_norm"] == 0
    assert after["graph.mul"] == before["graph.mul"]  # folded into weights, not decomposed
    assert after["graph.conv2d"] == before["graph.conv2d"]
    assert after["graph.constant"] < before["graph.constant"]


@pytest.mark.parametrize("name", MODELS)
def test_folded_native_matches_the_unfolded_reference(name):
    model = zoo.random_model(name)
    module = import_model(model)
    inputs = zoo.random_inputs(model)
    (expected,) = evaluate(module, "main", inputs)
    compiled = compile_module(module, DEFAULT_PIPELINE)
    assert not any("batch_norm" in kernel for kernel in compiled.kernels("main"))
    (logits,) = compiled.run("main", *inputs)
    scale = float(np.max(np.abs(expected)))
    assert np.std(expected) > 1e-3 * scale  # the logits differ: not a vacuous comparison
    np.testing.assert_allclose(logits, expected, rtol=0, atol=zoo.RTOL * scale)


def test_weights_file_constants_fold_as_inline_ones(tmp_path):
    """The model written by `fusion-import -o` (weights as dense_resource blobs in a weights
    file) folds to the same graph as the model in memory."""
    module = import_model(zoo.random_model("shufflenet"))
    path = tmp_path / "shufflenet.mlir"
    external = module.clone()
    externalize_constants(external, tmp_path / "shufflenet.weights")
    path.write_text(str(external))
    parsed = parse_source(make_context(), path.read_text(), str(path))
    assert str(_folded(parsed)) == str(_folded(module))
