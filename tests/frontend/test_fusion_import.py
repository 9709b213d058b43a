"""The `fusion-import` command line: output, --input-shape, and errors without tracebacks."""

import os
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402

from fusion_compiler.dialects.context import make_context  # noqa: E402
from fusion_compiler.dialects.diagnostics import parse_source  # noqa: E402
from fusion_compiler.dialects.reference.evaluator import evaluate  # noqa: E402
from fusion_compiler.tools import fusion_import  # noqa: E402
from fusion_compiler.tools.fusion_import import main, parse_input_shape  # noqa: E402


@pytest.fixture
def conv_model(make_model, tmp_path):
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    inits = {
        "w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
        "b": np.zeros(4, np.float32),
    }
    path = tmp_path / "conv.onnx"
    onnx.save(make_model(nodes, {"x": ["batch", 3, 8, 8]}, ["y"], inits), str(path))
    return path


def test_prints_a_module_that_parses_and_runs(conv_model, tmp_path, capsys):
    out = tmp_path / "conv.mlir"
    assert main([str(conv_model), "-o", str(out), "--input-shape", "x=2x3x8x8"]) == 0
    text = out.read_text()
    assert "func.func @main(%x: tensor<2x3x8x8xf32>) -> tensor<2x4x8x8xf32>" in text
    assert (tmp_path / "conv.weights").exists()  # (the conv's 108 weights are not inline)
    module = parse_source(make_context(), text, str(out))
    module.verify()
    (y,) = evaluate(module, "main", [np.ones((2, 3, 8, 8), np.float32)])
    assert y.shape == (2, 4, 8, 8)
    inline = tmp_path / "inline.mlir"
    shape = ["--input-shape", "x=2x3x8x8"]
    assert main([str(conv_model), "-o", str(inline), "--inline-weights", *shape]) == 0
    assert not (tmp_path / "inline.weights").exists()
    (same,) = evaluate(
        parse_source(make_context(), inline.read_text(), str(inline)),
        "main",
        [np.ones((2, 3, 8, 8), np.float32)],
    )
    np.testing.assert_array_equal(same, y)
    assert main([str(conv_model), *shape]) == 0
    assert capsys.readouterr().out == inline.read_text()


def test_infinities_and_nans_survive_the_printed_module(make_model, tmp_path):
    """A -inf or NaN constant is printed as its bits (`dense<0xff800000>`) and read back as
    them: a scalar -inf that masks scores came back as 4.3e9 (found by `bench/fuzz.py
    onnx-graphs`, seed 54720)."""
    from onnx import numpy_helper

    nodes = [
        helper.make_node("Greater", ["x", "zero"], ["positive"]),
        helper.make_node("Where", ["positive", "x", "masked"], ["y"]),
        helper.make_node("Add", ["y", "nan_or_zero"], ["z"]),
    ]
    model = make_model(nodes, {"x": [4]}, ["z"])
    for name, value in {"zero": 0.0, "masked": -np.inf}.items():
        model.graph.initializer.append(numpy_helper.from_array(np.array(value, np.float32), name))
    bias = np.array([0.0, np.nan, 0.0, 0.0], np.float32)
    model.graph.initializer.append(numpy_helper.from_array(bias, "nan_or_zero"))
    source, out = tmp_path / "mask.onnx", tmp_path / "mask.mlir"
    source.write_bytes(model.SerializeToString())
    assert main([str(source), "-o", str(out)]) == 0
    module = parse_source(make_context(), out.read_text(), str(out))
    (z,) = evaluate(module, "main", [np.array([-1.0, 2.0, -3.0, 4.0], np.float32)])
    np.testing.assert_array_equal(z, [-np.inf, np.nan, -np.inf, 4.0])


def test_dynamic_dimension_stays_dynamic(conv_model, capsys):
    assert main([str(conv_model)]) == 0
    text = capsys.readouterr().out
    assert "func.func @main(%x: tensor<?x3x8x8xf32>) -> tensor<?x4x8x8xf32>" in text
    module = parse_source(make_context(), text, "conv.mlir")
    module.verify()
    for batch in (1, 3):
        (y,) = evaluate(module, "main", [np.ones((batch, 3, 8, 8), np.float32)])
        assert y.shape == (batch, 4, 8, 8)


def test_unsupported_nodes_error_through_the_console_script(make_model, tmp_path):
    nodes = [
        helper.make_node("Hardmax", ["x"], ["a"], name="h1"),
        helper.make_node("Compress", ["x", "x"], ["y"], name="c1"),
    ]
    path = tmp_path / "unsupported.onnx"
    onnx.save(make_model(nodes, {"x": [2]}, ["y", "a"]), str(path))
    result = subprocess.run(
        [sys.executable, "-m", "fusion_compiler.tools.fusion_import", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"{path}: error: cannot import the model (2 problems)",
        "  node 'h1' (Hardmax, #0): unsupported op type",
        "  node 'c1' (Compress, #1): unsupported op type",
    ]


def test_not_a_model_and_missing_file(tmp_path, capsys):
    junk = tmp_path / "junk.onnx"
    junk.write_text("this is not protobuf")
    assert main([str(junk)]) == 1
    assert capsys.readouterr().err.startswith(f"{junk}: error: not a valid ONNX model")
    assert main([str(tmp_path / "absent.onnx")]) == 1
    assert "No such file or directory" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x=1x3x224x224", ("x", (1, 3, 224, 224))),
        ("a=b=4", ("a=b", (4,))),
        ("s=", ("s", ())),
        ("past=1x2x0x4", ("past", (1, 2, 0, 4))),  # (an empty key/value cache)
    ],
)
def test_parse_input_shape(text, expected):
    assert parse_input_shape(text) == expected


@pytest.mark.parametrize("bad", ["x", "x=1xa", "=3", "x=-1", "x=2x-3"])
def test_bad_input_shape_is_a_usage_error(bad, conv_model, capsys):
    with pytest.raises(SystemExit) as info:
        main([str(conv_model), "--input-shape", bad])
    assert info.value.code == 2
    assert "--input-shape" in capsys.readouterr().err


def test_an_empty_file_or_an_unknown_opset_is_an_error(make_model, tmp_path, capsys):
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    assert main([str(empty)]) == 1
    assert capsys.readouterr().err.startswith(f"{empty}: error: not an ONNX model: it has no graph")
    model = make_model([onnx.helper.make_node("Relu", ["x"], ["y"])], {"x": [2]}, ["y"])
    del model.opset_import[:]
    model.opset_import.append(onnx.helper.make_opsetid("", 99))
    future = tmp_path / "future.onnx"
    onnx.save(model, str(future))
    out = tmp_path / "future.mlir"
    assert main([str(future), "-o", str(out)]) == 1
    assert "declares ONNX opset 99" in capsys.readouterr().err
    assert not out.exists()


def test_an_interrupted_import_leaves_no_partial_output(conv_model, tmp_path, monkeypatch):
    out = tmp_path / "model.mlir"
    out.write_text("the previous import\n")

    def interrupted(module, stream, generic):
        stream.write("builtin.module {")
        raise KeyboardInterrupt

    monkeypatch.setattr(fusion_import, "_print_module", interrupted)
    arguments = [str(conv_model), "--input-shape", "x=1x3x8x8", "--inline-weights", "-o", str(out)]
    assert main(arguments) == 130
    assert out.read_text() == "the previous import\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conv.onnx", "model.mlir"]


def test_generic_form(conv_model, tmp_path):
    out = tmp_path / "generic.mlir"
    assert (
        main([str(conv_model), "--input-shape", "x=1x3x8x8", "--print-op-generic", "-o", str(out)])
        == 0
    )
    text = out.read_text()
    assert '"graph.conv2d"(%x, %w) <{' in text
    parse_source(make_context(), text, str(out)).verify()


@pytest.fixture
def gemm_model(make_model, tmp_path):
    """A Gemm with transB (its weight is transposed at import) after a conv."""
    rng = np.random.default_rng(1)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"]),
        helper.make_node("Flatten", ["c"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fb"], ["y"], transB=1),
    ]
    inits = {
        "w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
        "fc": rng.standard_normal((10, 144)).astype(np.float32),
        "fb": rng.standard_normal(10).astype(np.float32),
    }
    path = tmp_path / "gemm.onnx"
    onnx.save(make_model(nodes, {"x": [1, 3, 8, 8]}, ["y"], inits), str(path))
    return path


def test_weights_written_while_importing_are_those_of_the_inline_import(gemm_model, tmp_path):
    """`-o` writes each weight as the import makes it (the transposed Gemm weight in bands);
    the files are those of the inline import with its constants moved out afterwards."""
    from fusion_compiler.dialects.resources import WeightsFile
    from fusion_compiler.dialects.weights_writer import externalize_constants

    out = tmp_path / "direct" / "gemm.mlir"
    out.parent.mkdir()
    assert main([str(gemm_model), "-o", str(out)]) == 0
    inline = tmp_path / "after" / "gemm.mlir"
    inline.parent.mkdir()
    assert main([str(gemm_model), "-o", str(inline), "--inline-weights"]) == 0
    module = parse_source(make_context(), inline.read_text(), str(inline))
    text = externalize_constants(module, inline.with_suffix(".weights"))
    assert text == out.read_text()
    direct, after = (WeightsFile(p.with_suffix(".weights")) for p in (out, inline))
    assert list(direct.index) == list(after.index) and len(direct.index) == 2
    assert all(direct.blob(h, None) == after.blob(h, None) for h in direct.index)
    x = np.random.default_rng(2).standard_normal((1, 3, 8, 8)).astype(np.float32)
    (want,) = evaluate(parse_source(make_context(), inline.read_text(), str(inline)), "main", [x])
    (got,) = evaluate(parse_source(make_context(), out.read_text(), str(out)), "main", [x])
    np.testing.assert_array_equal(got, want)


def test_an_import_that_fails_after_writing_weights_leaves_no_file(
    gemm_model, tmp_path, monkeypatch
):
    out = tmp_path / "model.mlir"

    def failing(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(fusion_import, "externalize_constants", failing)
    assert main([str(gemm_model), "-o", str(out)]) == 130
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gemm.onnx"]


@pytest.mark.parametrize("again", [False, True], ids=["new file", "update in place"])
def test_a_full_disk_names_the_weights_file_and_leaves_it_as_it_was(
    gemm_model, tmp_path, monkeypatch, capsys, again
):
    """`pwrite` on a full disk raises `ENOSPC` naming no file: the tool says which file it
    was writing (it printed `'None'`), exits 1, and leaves no temporary file; an update in
    place leaves the old weights file as it was."""
    import errno

    from fusion_compiler.dialects import weights_writer

    out = tmp_path / "model.mlir"
    weights = tmp_path / "model.weights"
    if again:
        assert main([str(gemm_model), "-o", str(out)]) == 0
        edited, _ = _with_fc_edited(gemm_model, tmp_path / "edited.onnx")
        before = weights.read_bytes()
    capsys.readouterr()

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(weights_writer, "write_at", full_disk)
    source = edited if again else gemm_model
    assert main([str(source), "-o", str(out)]) == 1
    message = capsys.readouterr().err
    assert message == f"fusion-import: error: No space left on device: '{weights}'\n"
    left = sorted(p.name for p in tmp_path.iterdir())
    if again:
        assert left == ["edited.onnx", "gemm.onnx", "model.mlir", "model.weights"]
        assert weights.read_bytes() == before
    else:
        assert left == ["gemm.onnx"]


def _with_fc_edited(model_path, edited):
    """The Gemm model with one element of its weight `fc` changed, saved at `edited`; and
    that weight."""
    model = onnx.load(str(model_path))
    (fc,) = [i for i in model.graph.initializer if i.name == "fc"]
    array = onnx.numpy_helper.to_array(fc).copy()
    array[3, 100] += 1.0
    fc.CopyFrom(onnx.numpy_helper.from_array(array, "fc"))
    onnx.save(model, str(edited))
    return edited, array


def test_a_reimport_writes_only_the_weights_that_changed(gemm_model, tmp_path, monkeypatch):
    """Importing again over the same output updates its weights file in place: the same model
    writes no weight, an edited one appends the edited weight (the transposed Gemm weight);
    a model compiled from the first import keeps computing with the weights it was given,
    and compiling the new IR computes with the new ones."""
    from fusion_compiler.driver import compile_file
    from fusion_compiler.lowering import compile_cache

    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path / "cache"))
    out = tmp_path / "gemm.mlir"
    weights = out.with_suffix(".weights")
    assert main([str(gemm_model), "-o", str(out)]) == 0
    first = os.stat(weights)
    x = np.random.default_rng(2).standard_normal((1, 3, 8, 8)).astype(np.float32)
    compiled = compile_file(out)
    (before,) = compiled.run("main", x)
    assert main([str(gemm_model), "-o", str(out)]) == 0
    assert (os.stat(weights).st_ino, os.stat(weights).st_size) == (first.st_ino, first.st_size)

    edited, array = _with_fc_edited(gemm_model, tmp_path / "edited.onnx")
    assert main([str(edited), "-o", str(out)]) == 0
    assert os.stat(weights).st_ino == first.st_ino
    assert os.stat(weights).st_size == first.st_size + array.nbytes  # (5760: 64-byte aligned)
    assert main([str(edited), "-o", str(out), "--new-weights-file"]) == 0
    assert os.stat(weights).st_ino != first.st_ino  # (written anew, without the old blob)
    assert os.stat(weights).st_size == first.st_size
    assert np.array_equal(compiled.run("main", x)[0], before)
    inline = tmp_path / "inline.mlir"
    assert main([str(edited), "-o", str(inline), "--inline-weights"]) == 0
    (want,) = evaluate(parse_source(make_context(), inline.read_text(), str(inline)), "main", [x])
    (got,) = compile_file(out).run("main", x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)  # (sums of 144 float32 products)
    assert not np.allclose(got, before)


def _hashed_sizes(monkeypatch) -> list[int]:
    """The sizes of the load entry's inputs hashed from here on (`content_names`)."""
    from fusion_compiler.lowering import load_memo

    hashed: list[int] = []
    original = load_memo.content_names

    def spy(raws):
        hashed.extend(raw.nbytes for raw in raws)
        return original(raws)

    monkeypatch.setattr(load_memo, "content_names", spy)
    return hashed


def test_a_recompile_after_a_reimport_hashes_only_the_weights_that_changed(
    gemm_model, tmp_path, monkeypatch
):
    """The load memo names a weight of a weights file from the cache's record of its blobs
    (`weight_names`) while the file is unchanged, and the re-import carries the names of the
    blobs it kept to the file's new identity: a recompile hashes only the edited weight."""
    from fusion_compiler.dialects.context import make_context
    from fusion_compiler.driver import DEFAULT_PIPELINE, compile_module
    from fusion_compiler.lowering import compile_cache

    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path / "cache"))
    out = tmp_path / "gemm.mlir"
    x = np.random.default_rng(2).standard_normal((1, 3, 8, 8)).astype(np.float32)

    def compiled():  # (from the parsed module: the cache's file level would skip the load entry)
        module = parse_source(make_context(), out.read_text(), str(out))
        return compile_module(module, DEFAULT_PIPELINE)

    assert main([str(gemm_model), "-o", str(out)]) == 0
    hashed = _hashed_sizes(monkeypatch)
    (want,) = compiled().run("main", x)
    # (the weights the load entry packs: here the conv's and the Gemm's, 432 and 5760 bytes;
    # which ones a schedule packs may depend on the host, so the test takes what it finds)
    packed = sorted(hashed)
    assert packed and set(packed) <= {432, 5760}
    hashed.clear()
    np.testing.assert_array_equal(compiled().run("main", x)[0], want)
    assert hashed == []
    out.with_suffix(".weights").touch()  # (a file written since: its record is not trusted)
    compiled()
    assert sorted(hashed) == packed
    hashed.clear()

    edited, array = _with_fc_edited(gemm_model, tmp_path / "edited.onnx")
    assert main([str(edited), "-o", str(out)]) == 0
    (got,) = compiled().run("main", x)
    assert hashed == [size for size in packed if size == array.nbytes]  # (the edited one alone)
    inline = tmp_path / "inline.mlir"
    assert main([str(edited), "-o", str(inline), "--inline-weights"]) == 0
    (reference,) = evaluate(
        parse_source(make_context(), inline.read_text(), str(inline)), "main", [x]
    )
    np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-5)  # (sums of 144 products)
