"""`onnx_reader`: a model read with its large weights left in the file, mapped when imported."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from fusion_compiler.frontend.errors import ModelImportError  # noqa: E402
from fusion_compiler.frontend.onnx_importer import import_model, load_model  # noqa: E402
from fusion_compiler.frontend.onnx_reader import (  # noqa: E402
    MIN_MAPPED_BYTES,
    TensorData,
    read_model,
)

RNG = np.random.default_rng(7)
LARGE = RNG.standard_normal((16, 32)).astype(np.float32)  # 2 KiB: left in the file


def _model(make_model):
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["y0"]),
        helper.make_node("Gemm", ["y0", "w"], ["y1"], transB=1),
        helper.make_node("Add", ["y1", "b"], ["y2"]),
        helper.make_node("Gather", ["y2", "i"], ["y"], axis=1),
    ]
    weights = {
        "w": LARGE[:, :16].copy(),  # 1 KiB: left in the file
        "b": LARGE[0, :1].copy(),  # parsed by protobuf
        "i": np.arange(600, dtype=np.int64).reshape(20, 30) % 16,  # 4.8 KiB of int64
    }
    return make_model(nodes, {"x": [2, 16]}, ["y"], weights)


def test_large_raw_weights_stay_in_the_file(make_model, tmp_path):
    model = _model(make_model)
    path = tmp_path / "net.onnx"
    onnx.save(model, str(path))
    read = read_model(path)
    by_name = {t.name: t for t in read.graph.initializer}
    assert by_name["w"].data_location == TensorProto.EXTERNAL
    assert by_name["i"].data_location == TensorProto.EXTERNAL
    assert by_name["b"].data_location == TensorProto.DEFAULT
    assert not by_name["w"].HasField("raw_data")
    location = {e.key: e.value for e in by_name["w"].external_data}
    assert location["location"] == "net.onnx"
    raw = path.read_bytes()
    offset, length = int(location["offset"]), int(location["length"])
    assert (
        raw[offset : offset + length]
        == numpy_helper.from_array(numpy_helper.to_array(model.graph.initializer[0])).raw_data
    )
    # Everything but the weights' bytes is what onnx.load reads.
    assert read.graph.node == onnx.load(str(path)).graph.node
    assert read.opset_import == model.opset_import
    tensors = TensorData(path)
    for tensor in model.graph.initializer:
        array = tensors.array(by_name[tensor.name])
        expected = numpy_helper.to_array(tensor)
        assert array.dtype == expected.dtype and array.shape == expected.shape
        np.testing.assert_array_equal(array, expected)
        assert not array.flags.writeable


def test_a_mapped_import_is_the_in_memory_import(make_model, tmp_path):
    model = _model(make_model)
    path = tmp_path / "net.onnx"
    onnx.save(model, str(path))
    mapped = import_model(load_model(str(path)), filename=str(path))
    in_memory = import_model(onnx.load(str(path)), filename=str(path))
    assert str(mapped) == str(in_memory)


def test_external_data_files_are_mapped(make_model, tmp_path):
    model = _model(make_model)
    expected = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    path = tmp_path / "net.onnx"
    onnx.save(model, str(path), save_as_external_data=True, location="net.data", size_threshold=0)
    tensors = TensorData(path)
    for tensor in read_model(path).graph.initializer:
        assert {e.key: e.value for e in tensor.external_data}["location"] == "net.data"
        np.testing.assert_array_equal(tensors.array(tensor), expected[tensor.name])


def _external(name: str, location: str, offset: int = 0, length: int | None = None):
    tensor = numpy_helper.from_array(LARGE, name)
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    entries = {"location": location, "offset": str(offset)}
    if length is not None:
        entries["length"] = str(length)
    for key, value in entries.items():
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


@pytest.mark.parametrize(
    ("location", "offset", "length", "message"),
    [
        ("../outside.bin", 0, None, "outside the model's folder"),
        ("/etc/passwd", 0, None, "must be a path relative to the model's folder"),
        ("short.bin", 0, None, "needs bytes 0 to 2048 of short.bin, which has 100"),
        ("whole.bin", 0, 100, "has 100 bytes of external data, but its 512 elements"),
        ("absent.bin", 0, None, "cannot read external data"),
    ],
)
def test_bad_external_data_is_an_error(tmp_path, location, offset, length, message):
    (tmp_path / "short.bin").write_bytes(bytes(100))
    (tmp_path / "whole.bin").write_bytes(LARGE.tobytes())
    (tmp_path / "outside.bin").write_bytes(LARGE.tobytes())
    folder = tmp_path / "model"
    folder.mkdir()
    for name in ("short.bin", "whole.bin"):
        (folder / name).write_bytes((tmp_path / name).read_bytes())
    tensors = TensorData(folder / "net.onnx")
    with pytest.raises(ModelImportError, match=message) as info:
        tensors.array(_external("w", location, offset, length))
    assert info.value.format().startswith(f"{folder / 'net.onnx'}: error: ")


def test_text_formats_and_damaged_files_go_through_onnx(make_model, tmp_path):
    model = _model(make_model)
    text = tmp_path / "net.textproto"
    onnx.save(model, str(text), format="textproto")
    assert read_model(text) == onnx.load(str(text))
    # A graph field that does not hold a graph: onnx.load decides (here: an error).
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x3a\x03\xff\xff\xff")
    with pytest.raises(ModelImportError, match="not a valid ONNX model"):
        load_model(str(junk))


def test_small_weights_stay_in_the_message(make_model, tmp_path):
    tiny = np.ones(MIN_MAPPED_BYTES // 4 - 1, np.float32)
    node = helper.make_node("Add", ["x", "t"], ["y"])
    path = tmp_path / "tiny.onnx"
    onnx.save(make_model([node], {"x": [tiny.size]}, ["y"], {"t": tiny}), str(path))
    (tensor,) = read_model(path).graph.initializer
    assert tensor.data_location == TensorProto.DEFAULT
    np.testing.assert_array_equal(TensorData(path).array(tensor), tiny)


@pytest.mark.parametrize("shape", [(300, 517), (1, 7), (0, 5)])
def test_a_transposed_weight_is_copied_into_its_bytes_in_order(shape):
    """A folded Gemm weight (a transposed view of the file's bytes) becomes a dense attribute
    holding its elements in C order, copied once into the attribute's bytes."""
    from fusion_compiler.frontend.values import dense_f32

    weight = RNG.standard_normal(shape).astype(np.float32)
    attribute = dense_f32(weight.T)
    assert attribute.data.data == np.ascontiguousarray(weight.T).tobytes()
    assert attribute.type.get_shape() == (shape[1], shape[0])


@pytest.mark.parametrize("cores", [2, 3])
def test_a_large_transposed_weight_is_copied_in_bands_on_several_cores(monkeypatch, cores):
    """Bands of whole tiles (the last one shorter), each on a core of its own: the same bytes."""
    from fusion_compiler.frontend import values

    monkeypatch.setattr(values, "PARALLEL_COPY_BYTES", 1 << 10)
    monkeypatch.setattr(values, "usable_cores", lambda: cores)
    bands = []
    copy_band = values._copy_band
    monkeypatch.setattr(
        values, "_copy_band", lambda *args: bands.append(args[2:]) or copy_band(*args)
    )
    weight = RNG.standard_normal((517, 1000)).astype(np.float32)
    attribute = values.dense_f32(weight.T)
    assert attribute.data.data == np.ascontiguousarray(weight.T).tobytes()
    assert sorted(bands) == [(0, 512), (512, 1000)]
