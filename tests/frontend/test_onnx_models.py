"""The real models shipped in the onnx wheel (`onnx/backend/test/data/light/`): each imports,
verifies and has a known number of graph ops; with random weights, `evaluate` agrees with
onnxruntime on the logits.

The light models build their weights with `ConstantOfShape`, so every weight is a splat and
every class gets the same logit; the numeric test replaces those weights by random ones (He
scaling) so the comparison means something. The three models with large fully connected layers
(AlexNet, ZFNet, VGG19: 0.2 to 0.6 GB of random weights) are compared only when
FUSION_TEST_LARGE_MODELS=1.
"""

import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from fusion_compiler.frontend.onnx_importer import import_model  # noqa: E402

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import zoo  # noqa: E402  (the zoo's weight randomisation lives with the zoo benchmark)

from fusion_compiler.dialects.reference.evaluator import evaluate  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"

EXPECTED = {
    # model: (ONNX nodes, graph ops, graph ops that are not constants)
    "bvlc_alexnet": (40, 46, 30),
    "densenet121": (1746, 1517, 669),
    "inception_v1": (237, 316, 200),
    "inception_v2": (916, 857, 372),
    "resnet50": (415, 444, 177),
    "shufflenet": (446, 453, 205),
    "squeezenet": (105, 145, 93),
    "vgg19": (82, 101, 63),
    "zfnet512": (38, 46, 30),
}
LARGE = {"bvlc_alexnet", "zfnet512", "vgg19"}


def _load(name: str):
    path = LIGHT / f"light_{name}.onnx"
    if not path.exists():
        pytest.skip(f"{path.name} is not in this onnx wheel")
    return onnx.load(str(path))


def _input_name(model) -> str:
    initializers = {i.name for i in model.graph.initializer}
    return next(i.name for i in model.graph.input if i.name not in initializers)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_light_model_imports_and_verifies(name):
    model = _load(name)
    start = time.perf_counter()
    module = import_model(model, filename=f"light_{name}.onnx")
    seconds = time.perf_counter() - start
    module.verify()
    function = next(iter(module.body.block.ops))
    ops = Counter(op.name for op in function.body.block.ops if op.name != "func.return")
    total = sum(ops.values())
    compute = total - ops["graph.constant"]
    print(
        f"{name}: {len(model.graph.node)} nodes -> {total} graph ops ({compute} compute) in {seconds:.2f}s"
    )
    assert (len(model.graph.node), total, compute) == EXPECTED[name]
    assert [str(t) for t in function.function_type.inputs] == ["tensor<1x3x224x224xf32>"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_light_model_matches_onnxruntime(name):
    if name in LARGE and os.environ.get("FUSION_TEST_LARGE_MODELS") != "1":
        pytest.skip("large fully connected weights; set FUSION_TEST_LARGE_MODELS=1")
    ort = pytest.importorskip("onnxruntime")
    model = zoo.output_logits(zoo.randomise_weights(_load(name)))
    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {_input_name(model): x})
    start = time.perf_counter()
    (logits,) = evaluate(import_model(model), "main", [x])
    print(f"{name}: evaluate took {time.perf_counter() - start:.1f}s")
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-5 * scale)
    assert np.std(expected) > 1e-3 * scale  # the logits differ: the comparison is not vacuous
