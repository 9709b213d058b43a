"""The dynamic-axis exports of `tests/models/` (`*_dynamic.onnx`: tiny BERT, GPT-2 and ViT with
symbolic batch and sequence axes, made by `bench/export_transformers.py`) import without
`--input-shape`, specialise on the shapes they are called with and match onnxruntime at two
batch sizes and sequence lengths (max |ours - ort| <= 1e-4 * max |ort| on every output), from
the Python API and from `fusion-run`. Skipped where the exports are absent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from fusion_compiler.driver import compile_module  # noqa: E402
from fusion_compiler.frontend.onnx_importer import import_model  # noqa: E402
from fusion_compiler.specializing import SpecializingModel  # noqa: E402
from fusion_compiler.tools import fusion_import, fusion_run  # noqa: E402

MODELS = Path(__file__).resolve().parents[1] / "models"
SHAPES = [(2, 8), (1, 13)]  # (batch, sequence); ViT's sequence is fixed by its image size


@pytest.fixture(scope="module", autouse=True)
def _compile_cache(tmp_path_factory):
    """A compile cache of this module's own, so nothing is read from or left in the user's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FUSION_CACHE_DIR", str(tmp_path_factory.mktemp("fusion-cache")))
        yield


def _load(name: str):
    path = MODELS / f"{name}_dynamic.onnx"
    if not path.exists():
        pytest.skip(f"{path.name} is not there (bench/export_transformers.py makes it)")
    return path, onnx.load(str(path))


def _vocabulary(model) -> int:
    """The rows of the first embedding table (token ids are drawn below it)."""
    tables = [i for i in model.graph.initializer if len(i.dims) == 2]
    return min(int(t.dims[0]) for t in tables)


def _feeds(model, batch: int, sequence: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(batch * 100 + sequence)
    feeds = {}
    for info in model.graph.input:
        sizes = {"batch": batch, "sequence": sequence}
        dims = [sizes.get(d.dim_param, d.dim_value) for d in info.type.tensor_type.shape.dim]
        if info.name == "input_ids":
            feeds[info.name] = rng.integers(0, _vocabulary(model), dims).astype(np.int64)
        elif info.name == "token_type_ids":
            feeds[info.name] = rng.integers(0, 2, dims).astype(np.int64)
        elif info.name == "attention_mask":
            mask = np.ones(dims, np.int64)
            mask[-1, max(1, sequence - 3) :] = 0  # the last sequence is padded
            feeds[info.name] = mask
        else:
            feeds[info.name] = rng.standard_normal(dims).astype(np.float32)
    return feeds


def _expected(model, feeds) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return session.run(None, feeds)


def _assert_close(ours, theirs) -> None:
    assert len(ours) == len(theirs)
    for got, want in zip(ours, theirs, strict=True):
        assert got.shape == want.shape
        scale = float(np.max(np.abs(want)))
        assert np.std(want) > 1e-3 * scale  # outputs that differ: not a vacuous comparison
        assert np.max(np.abs(got - want)) <= 1e-4 * scale


@pytest.mark.parametrize("name", ["bert", "gpt2", "vit"])
def test_dynamic_export_specialises_and_matches_onnxruntime(name):
    _, model = _load(name)
    module = import_model(model)  # no input_shapes: the batch and sequence axes stay `?`
    assert "tensor<?x" in str(module).split("\n")[1]
    compiled = compile_module(module)
    assert isinstance(compiled, SpecializingModel)
    for batch, sequence in [*SHAPES, SHAPES[0]]:
        feeds = _feeds(model, batch, sequence)
        _assert_close(compiled.run("main", *feeds.values()), _expected(model, feeds))
    assert len(compiled.specializations) == len(SHAPES)


def test_fusion_run_on_an_imported_dynamic_export(tmp_path):
    path, model = _load("bert")
    ir = tmp_path / "bert.mlir"
    assert fusion_import.main([str(path), "-o", str(ir)]) == 0
    feeds = _feeds(model, *SHAPES[1])
    np.savez(tmp_path / "in.npz", **{f"arg{i}": a for i, a in enumerate(feeds.values())})
    out = tmp_path / "out.npz"
    argv = [str(ir), "--inputs", str(tmp_path / "in.npz"), "--outputs", str(out), "--check"]
    assert fusion_run.main(argv) == 0
    with np.load(out) as results:
        ours = [results[f"out{i}"] for i in range(len(results.files))]
    _assert_close(ours, _expected(model, feeds))


@pytest.mark.parametrize("name", ["bert", "gpt2"])
def test_public_api_calls_a_dynamic_export_by_input_name(name):
    """`fc.compile(path)` of a dynamic export, called with keyword arguments named like the
    ONNX inputs, at two sequence lengths."""
    import fusion_compiler as fc

    path, model = _load(name)
    compiled = fc.compile(str(path))
    assert compiled.input_names == tuple(i.name for i in model.graph.input)
    for batch, sequence in SHAPES:
        feeds = _feeds(model, batch, sequence)
        outputs = compiled.run(**feeds)
        assert list(outputs) == list(compiled.output_names)
        _assert_close(list(outputs.values()), _expected(model, feeds))
