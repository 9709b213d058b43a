"""The tiny BERT, GPT-2 and ViT exports of `tests/models/` (made by
`bench/export_transformers.py` from `transformers` configs with random weights; torch's
dynamo exporter, opset 18): each static export imports, compiles and matches onnxruntime on
random valid inputs (token ids in the vocabulary, padding masks of 0/1) at
max |ours - ort| <= 1e-4 * max |ort| on every output, and the fused build computes the same
bits as the unfused one; a wrong dtype or shape of an input is an argument error. The
dynamic-axis exports are only checked to be valid ONNX here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import transformer_zoo as zoo  # noqa: E402

import fusion_compiler as fc  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _compile_cache(tmp_path_factory):
    """A compile cache of this module's own, so nothing is read from or left in the user's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FUSION_CACHE_DIR", str(tmp_path_factory.mktemp("fusion-cache")))
        yield


@pytest.mark.parametrize("name", zoo.MODELS)
def test_static_export_matches_onnxruntime_and_unfused(name):
    pytest.importorskip("onnxruntime")
    model = zoo.load(name)
    feeds = zoo.random_inputs(model, seed=7)
    fused = fc.compile(zoo.path_of(name))
    unfused = fc.compile(zoo.path_of(name), pipeline=fc.UNFUSED_PIPELINE)
    got, got_unfused = fused.run(**feeds), unfused.run(**feeds)
    session = zoo.onnxruntime_session(model, threads=1)
    expected = session.run(None, feeds)
    for output, want in zip(zoo.output_names(model), expected, strict=True):
        scale = float(np.max(np.abs(want)))
        assert np.std(want) > 1e-3 * scale, output  # the outputs differ: not a vacuous check
        np.testing.assert_allclose(got[output], want, rtol=0, atol=1e-4 * scale, err_msg=output)
        assert got[output].tobytes() == got_unfused[output].tobytes(), output
    assert len(fused.kernels) < len(unfused.kernels)
    _bad_inputs_are_argument_errors(fused, feeds)


def _bad_inputs_are_argument_errors(model, feeds):
    """A wrong dtype or shape of an input is an `fc.ArgumentError` naming it."""
    name, array = next(iter(feeds.items()))
    wrong_dtype = np.int32 if array.dtype == np.int64 else np.float64
    with pytest.raises(fc.ArgumentError, match=f"'{name}' has dtype"):
        model.run(**{**feeds, name: array.astype(wrong_dtype)})
    with pytest.raises(fc.ArgumentError, match=f"'{name}' has shape"):
        model.run(**{**feeds, name: array[:1]})


def test_inputs_are_valid_for_the_models():
    bert = zoo.load("bert")
    feeds = zoo.random_inputs(bert, seed=3)
    assert set(feeds) == {"input_ids", "token_type_ids", "attention_mask"}
    assert feeds["input_ids"].max() < zoo.embedding_rows(bert, "input_ids") == 256
    assert set(np.unique(feeds["token_type_ids"])) <= {0, 1}
    mask = feeds["attention_mask"]
    assert mask[:, 0].all() and mask[0].all() and not mask.all()  # a padded sequence
    assert (np.diff(mask, axis=1) <= 0).all()  # a prefix kept, the rest padding


@pytest.mark.parametrize("name", zoo.MODELS)
def test_dynamic_export_is_valid_onnx(name):
    model = zoo.load(name, "dynamic")
    onnx.checker.check_model(model, full_check=True)
    dims = [d for x in model.graph.input for d in x.type.tensor_type.shape.dim]
    assert any(d.dim_param for d in dims)  # at least one named dynamic axis


def test_the_models_fit_the_size_budget():
    files = sorted(zoo.MODELS_DIR.glob("*.onnx"))
    assert len(files) == 6
    assert sum(f.stat().st_size for f in files) <= 3 * 2**20
