"""Large constants as `dense_resource` blobs: the weights file `fusion-import -o` writes, MLIR's
`dialect_resources` section, and clear errors when a blob is missing or damaged."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, TensorType, f32
from xdsl.printer import Printer

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import CompileError, parse_source, verify_module
from fusion_compiler.dialects.reference.evaluator import constant_array, evaluate
from fusion_compiler.dialects.resources import (
    EXTERNAL_MIN_BYTES,
    WEIGHTS_ATTR,
    WEIGHTS_MAGIC_1,
    WEIGHTS_TAG_ATTR,
    WeightsFile,
)
from fusion_compiler.dialects.weights_writer import (
    WeightsWriter,
    externalize_constants,
    write_weights,
)
from fusion_compiler.lowering.ir_hash import module_hash

WEIGHTS = np.linspace(-1, 1, 32 * 64, dtype=np.float32).reshape(32, 64)
SMALL = np.arange(8, dtype=np.float32).reshape(8, 1)


def _dense(array: np.ndarray) -> str:
    rows = ", ".join("[" + ", ".join(repr(float(v)) for v in row) + "]" for row in array)
    return f"dense<[{rows}]>"


SOURCE = f"""
func.func @main(%x: tensor<8x32xf32>) -> tensor<8x64xf32> {{
  %w = graph.constant {_dense(WEIGHTS)} : tensor<32x64xf32>
  %b = graph.constant {_dense(SMALL)} : tensor<8x1xf32>
  %m = graph.matmul %x, %w : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %y = graph.add %m, %b : (tensor<8x64xf32>, tensor<8x1xf32>) -> tensor<8x64xf32>
  func.return %y : tensor<8x64xf32>
}}
"""


def _externalized(tmp_path) -> tuple[str, object]:
    """(path of the written IR, the inline module) with the large constant in model.weights."""
    module = parse_source(make_context(), SOURCE, "inline.mlir")
    inline = module.clone()
    externalize_constants(module, tmp_path / "model.weights")
    path = tmp_path / "model.mlir"
    path.write_text(str(module))
    return str(path), inline


def test_large_constants_go_to_the_weights_file_small_ones_stay_inline(tmp_path):
    path, inline = _externalized(tmp_path)
    text = Path(path).read_text()
    assert WEIGHTS.nbytes >= EXTERNAL_MIN_BYTES > SMALL.nbytes
    assert f'{WEIGHTS_ATTR} = "model.weights"' in text
    assert "graph.constant dense_resource<w> : tensor<32x64xf32>" in text
    assert "dense<[[0.000000e+00], [1.000000e+00]" in text and len(text) < 2500
    assert (tmp_path / "model.weights").stat().st_size < WEIGHTS.nbytes + 256


def test_the_weights_file_parses_to_the_same_module(tmp_path):
    path, inline = _externalized(tmp_path)
    for _ in range(2):  # xDSL renames handles it has seen before; each parse is isolated
        module = parse_source(make_context(), Path(path).read_text(), path)
        verify_module(module)
        assert WEIGHTS_ATTR not in module.attributes
        assert module_hash(module) == module_hash(inline)
    x = np.random.default_rng(0).standard_normal((8, 32)).astype(np.float32)
    assert np.array_equal(evaluate(module, "main", [x])[0], evaluate(inline, "main", [x])[0])


def test_the_weights_file_is_found_beside_the_ir_file(tmp_path, monkeypatch):
    path, _ = _externalized(tmp_path)
    monkeypatch.chdir("/")
    module = parse_source(make_context(), Path(path).read_text(), path)
    (constant, *_) = [op for op in module.walk() if isinstance(op, graph.ConstantOp)]
    assert np.array_equal(constant_array(constant.value), WEIGHTS)


def test_weights_are_views_of_the_mapped_file_and_outlive_its_replacement(tmp_path):
    """The parse maps the weights file: a constant's bytes are a read-only view of it, not a
    copy; a new import renames another file into place, which leaves them as they were."""
    path, inline = _externalized(tmp_path)
    module = parse_source(make_context(), Path(path).read_text(), path)
    (constant, *_) = [op for op in module.walk() if isinstance(op, graph.ConstantOp)]
    data = constant.value.data.data
    assert isinstance(data, memoryview) and data.readonly
    write_weights(tmp_path / "new.weights", [("w", (WEIGHTS * 2).tobytes())], "other")
    (tmp_path / "new.weights").replace(tmp_path / "model.weights")
    assert np.array_equal(constant_array(constant.value), WEIGHTS)
    x = np.ones((8, 32), np.float32)
    assert np.array_equal(evaluate(module, "main", [x])[0], evaluate(inline, "main", [x])[0])


def test_a_weights_file_that_cannot_be_mapped_is_read(tmp_path, monkeypatch):
    from fusion_compiler.dialects import resources

    def unmappable(*args, **kwargs):
        raise OSError(19, "No such device")

    path, _ = _externalized(tmp_path)
    monkeypatch.setattr(resources.mmap, "mmap", unmappable)
    module = parse_source(make_context(), Path(path).read_text(), path)
    (constant, *_) = [op for op in module.walk() if isinstance(op, graph.ConstantOp)]
    assert isinstance(constant.value.data.data.obj, bytes)  # (read, not mapped)
    assert np.array_equal(constant_array(constant.value), WEIGHTS)


def test_mlir_dialect_resources_blobs_parse():
    data = np.arange(6, dtype=np.float32)
    blob = "0x04000000" + data.tobytes().hex()
    source = f"""
func.func @main() -> tensor<2x3xf32> {{
  %c = graph.constant dense_resource<blob1> : tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}}
{{-#
  dialect_resources: {{
    builtin: {{
      blob1: "{blob}"
    }}
  }}
#-}}
"""
    for _ in range(2):
        module = parse_source(make_context(), source, "blob.mlir")
        assert np.array_equal(evaluate(module, "main", [])[0], data.reshape(2, 3))


def _damage_index(path: Path, old: bytes, new: bytes) -> None:
    """One entry of the index changed (an offset of the same length: the blobs stay where they
    are); found by damaging weights files' bytes, session 63: a fractional offset was a
    TypeError slicing the mapped file, an internal error."""
    data = path.read_bytes()
    assert data.count(old) == 1
    path.write_bytes(data.replace(old, new))


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda p: p.unlink(), "cannot read the weights file"),
        (lambda p: p.write_bytes(p.read_bytes()[:200]), "is truncated"),
        (lambda p: p.write_bytes(b"garbage" * 100), "is not a weights file"),
        (lambda p: p.write_bytes(b""), "is not a weights file"),
        (lambda p: _damage_index(p, b'"w":[0,', b'"w":[0.5,'), r"damaged \(blob 'w' at 0.5"),
        (lambda p: _damage_index(p, b'"w":[0,', b'"w":[-9,'), r"damaged \(blob 'w' at -9"),
    ],
    ids=["missing", "truncated", "garbage", "empty", "fractional offset", "negative offset"],
)
def test_a_missing_or_damaged_weights_file_is_a_clear_error(tmp_path, damage, message):
    path, _ = _externalized(tmp_path)
    damage(tmp_path / "model.weights")
    with pytest.raises(CompileError, match=message):
        parse_source(make_context(), Path(path).read_text(), path)


def test_a_handle_without_a_blob_is_an_error_at_its_constant(tmp_path):
    path, _ = _externalized(tmp_path)
    text = Path(path).read_text().replace("dense_resource<w>", "dense_resource<nothing>")
    with pytest.raises(CompileError, match="dense_resource<nothing> has no blob") as caught:
        parse_source(make_context(), text, path)
    assert caught.value.position is not None and caught.value.position.line == 3


def _tag(path: str) -> str:
    (line,) = [line for line in Path(path).read_text().splitlines() if WEIGHTS_TAG_ATTR in line]
    return line.split(f'{WEIGHTS_TAG_ATTR} = "')[1].split('"')[0]


def test_a_blob_of_the_wrong_size_is_an_error(tmp_path):
    path, _ = _externalized(tmp_path)
    write_weights(tmp_path / "model.weights", [("w", bytes(100))], _tag(path))
    with pytest.raises(CompileError, match="holds 100 bytes, but tensor<32x64xf32> needs 8192"):
        parse_source(make_context(), Path(path).read_text(), path)


def test_an_unresolved_resource_does_not_verify():
    typ = TensorType(f32, [4])
    op = graph.ConstantOp(DenseResourceAttr.from_params("w", typ))  # type: ignore[arg-type]
    with pytest.raises(Exception, match=r"dense_resource<w> has no data"):
        op.verify()
    assert isinstance(
        graph.ConstantOp(DenseIntOrFPElementsAttr.from_list(typ, [1.0] * 4)).value,
        DenseIntOrFPElementsAttr,
    )


def test_the_ir_and_its_weights_file_are_a_pair(tmp_path):
    """The weights file of another import (here: of other IR, with the same handle and size)
    is refused, not read as this model's weights: an import interrupted between its two
    files, or files copied from two imports, never give a model with the wrong weights."""
    path, _ = _externalized(tmp_path)
    other = parse_source(make_context(), SOURCE.replace("graph.add", "graph.sub"), "other.mlir")
    externalize_constants(other, tmp_path / "model.weights")  # the same handle, other IR
    with pytest.raises(CompileError, match="does not belong to .*model.mlir.*import the model"):
        parse_source(make_context(), Path(path).read_text(), path)


@pytest.mark.parametrize("generic", [False, True], ids=["custom", "generic"])
def test_the_module_is_printed_once_with_its_tag_written_in(tmp_path, monkeypatch, generic):
    """The tag hashes the module's text, so the text that is written is that print with the
    tag put in (a second print of the whole module would double the import's printing)."""
    import fusion_compiler.dialects.weights_writer as weights_writer

    module = parse_source(make_context(), SOURCE, "inline.mlir")
    prints = []
    original = weights_writer.ModulePrinter.print_op

    def counted(printer, op, *args, **kwargs):
        if op is module:
            prints.append(op)
        return original(printer, op, *args, **kwargs)

    monkeypatch.setattr(weights_writer.ModulePrinter, "print_op", counted)
    text = externalize_constants(module, tmp_path / "model.weights", generic)
    monkeypatch.undo()
    assert text is not None and len(prints) == 1
    tag = module.attributes[WEIGHTS_TAG_ATTR].data
    assert f'{WEIGHTS_TAG_ATTR} = "{tag}"' in text and tag != "0" * len(tag)
    again = StringIO()
    Printer(stream=again, print_generic_format=generic).print_op(module)
    assert text == again.getvalue() + "\n"  # the module itself holds the tag too
    path = tmp_path / "model.mlir"
    path.write_text(text)
    verify_module(parse_source(make_context(), text, str(path)))  # the file's tag matches


def test_importing_the_same_model_twice_gives_the_same_tag(tmp_path):
    first, _ = _externalized(tmp_path)
    (tmp_path / "again").mkdir()
    second, _ = _externalized(tmp_path / "again")
    assert _tag(first) == _tag(second)
    assert Path(first).read_bytes() == Path(second).read_bytes()


def test_a_version_1_weights_file_is_still_read(tmp_path):
    path, inline = _externalized(tmp_path)
    text = Path(path).read_text()
    text = text.replace(f', {WEIGHTS_TAG_ATTR} = "{_tag(path)}"', "")
    assert WEIGHTS_TAG_ATTR not in text
    header = WEIGHTS_MAGIC_1 + b'{"w":[0,8192]}\n'
    start = -(-len(header) // 64) * 64
    data = header + bytes(start - len(header)) + WEIGHTS.astype("<f4").tobytes()
    (tmp_path / "model.weights").write_bytes(data)
    module = parse_source(make_context(), text, path)
    x = np.ones((8, 32), np.float32)
    np.testing.assert_array_equal(
        evaluate(module, "main", [x])[0], evaluate(inline, "main", [x])[0]
    )


def test_a_header_too_large_for_its_room_moves_the_blobs(tmp_path):
    """`WeightsWriter` leaves room for the header before the first blob; a header that
    outgrows it moves the blobs once (then the file is as `write_weights` makes it)."""
    blobs = [(f"weight_with_a_long_name_{i}", bytes([i]) * (100 + i)) for i in range(40)]
    with WeightsWriter(tmp_path / "small.weights", header_room=64) as writer:
        for handle, data in blobs:
            writer.add(handle, [data[:50], data[50:]], len(data))
        writer.commit("t" * 32)
    write_weights(tmp_path / "exact.weights", blobs, "t" * 32)
    small = WeightsFile(tmp_path / "small.weights")
    exact = WeightsFile(tmp_path / "exact.weights")
    assert small.tag == exact.tag == "t" * 32
    assert all(small.blob(h, None) == data == exact.blob(h, None) for h, data in blobs)
    assert not [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"]


def test_a_discarded_writer_leaves_nothing(tmp_path):
    with WeightsWriter(tmp_path / "model.weights") as writer:
        writer.add("w", [bytes(256)], 256)
    assert list(tmp_path.iterdir()) == []
    with (
        pytest.raises(ValueError, match="has 10 bytes, not 12"),
        WeightsWriter(tmp_path / "model.weights") as writer,
    ):
        writer.add("w", [bytes(10)], 12)
    assert list(tmp_path.iterdir()) == []


def test_blob_place_finds_a_blob_of_a_mapped_weights_file(tmp_path):
    """`blob_place` (the load memo's `weight_names`): the whole bytes of a blob, viewed, are
    found with the file's identity; a copy, a part, or a view of a file no longer mapped
    are not."""
    import gc
    import weakref

    from fusion_compiler.dialects.resources import blob_place
    from fusion_compiler.host import file_identity

    path = tmp_path / "model.weights"
    write_weights(path, [("a", WEIGHTS.tobytes()), ("b", (2 * WEIGHTS).tobytes())], "t" * 32)
    weights = WeightsFile(path)
    view = np.frombuffer(weights.blob("b", None), np.float32).reshape(WEIGHTS.shape)
    place = blob_place(view)
    assert place is not None
    assert (place.path, place.identity) == (path.resolve(), file_identity(path.stat()))
    assert (place.offset, place.size) == tuple(weights.index["b"])
    assert blob_place(view.copy()) is None
    assert blob_place(view[1:]) is None
    assert blob_place(view.reshape(-1)) == place
    mapped = weakref.ref(weights.blob("a", None).obj)  # (the map: the registry forgets it with it)
    weights.close()
    del view, place, weights
    gc.collect()
    assert mapped() is None
