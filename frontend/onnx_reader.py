"""Reading an `.onnx` file without copying its weights: raw initializers become views of the
file, through ONNX's own external-data convention.

`onnx.load` reads the whole file into memory, and protobuf copies every initializer's
`raw_data` out of it; reading `tensor.raw_data` copies it once more. For vgg19's 548 MB that
is 0.9 s of the import before any graph op exists. `read_model` walks the file's protobuf
encoding itself (it is small: a model is a message of fields, each a tag and a value whose
length is known before it is read) and hands protobuf a copy of the model without the bytes
of its large raw initializers. Each of those says instead, in the words of ONNX's external
data (`data_location = EXTERNAL`, `external_data = {location, offset, length}`), where its
bytes are in the `.onnx` file itself:

```
ModelProto                                   ModelProto (parsed by protobuf: kilobytes)
  graph (7)                                    graph (7)
    node (1) ...                                 node (1) ...
    initializer (5)                 ==>          initializer (5)
      dims (1), data_type (2), name (8)            dims (1), data_type (2), name (8)
      raw_data (9): 411 MB                         external_data (13): location = model.onnx,
                                                     offset = <the raw bytes' offset>, length
                                                   data_location (14): EXTERNAL
```

`TensorData.array` then maps such a tensor's bytes from the file (read-only, shared with the
page cache): the importer copies a weight once, into its dense attribute. Tensors a model
keeps in external files of its own are mapped the same way (`onnx.load` would read them).

Files in a text format (`.textproto`, `.json`, `.onnxtxt`) and files whose encoding the walk
does not understand go through `onnx.load`, which reports a damaged file as it always did.
"""

from __future__ import annotations

import math
import mmap
import os
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx.external_data_helper import ExternalDataInfo, load_external_data_for_tensor

from fusion_compiler.frontend.errors import ModelImportError

__all__ = ["read_model", "TensorData", "MIN_MAPPED_BYTES"]

MIN_MAPPED_BYTES = 1024
"""Raw initializers of at least this many bytes are left in the file and mapped; smaller ones
are parsed by protobuf as they are."""

_MODEL_GRAPH = 7
_GRAPH_INITIALIZER = 5
_TENSOR_RAW_DATA = 9
_TENSOR_EXTERNAL_DATA = 13
_TENSOR_DATA_LOCATION = 14
_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5


class _Malformed(Exception):
    """The file is not a protobuf encoding the walk understands (onnx.load then tells why)."""


def read_model(path: str | os.PathLike) -> onnx.ModelProto:
    """The model in the ONNX file at `path`, its large raw initializers left in the file as
    external data (read them with `TensorData`). Text formats, and files the walk cannot
    read, are loaded by `onnx.load` (external data included)."""
    extension = os.path.splitext(os.fspath(path))[1]
    format_name = onnx.serialization.registry.get_format_from_file_extension(extension)
    if format_name not in (None, "protobuf"):
        return onnx.load(path)
    with open(path, "rb") as stream:
        if os.fstat(stream.fileno()).st_size == 0:
            return onnx.load(path)
        data = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        stripped = b"".join(_model_pieces(data, Path(path).name))
        model = onnx.ModelProto()
        model.ParseFromString(stripped)
    except Exception:  # (_Malformed, protobuf's DecodeError...): onnx.load says what is wrong
        return onnx.load(path)
    finally:
        data.close()
    return model


def _varint(data: mmap.mmap, position: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if position >= end or shift > 63:
            raise _Malformed
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7


def _fields(data: mmap.mmap, start: int, end: int):
    """(field number, wire type, start of the field, start of its value, end) of each field
    of the message encoded in `data[start:end]`."""
    position = start
    while position < end:
        key, value_start = _varint(data, position, end)
        field, wire = key >> 3, key & 7
        if wire == _VARINT:
            _, value_end = _varint(data, value_start, end)
        elif wire == _FIXED64:
            value_end = value_start + 8
        elif wire == _LENGTH:
            length, value_start = _varint(data, value_start, end)
            value_end = value_start + length
        elif wire == _FIXED32:
            value_end = value_start + 4
        else:  # groups (deprecated in proto2, unused by ONNX)
            raise _Malformed
        if field == 0 or value_end > end:
            raise _Malformed
        yield field, wire, position, value_start, value_end
        position = value_end


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _length_field(field: int, payload: bytes) -> bytes:
    return _encode_varint(field << 3 | _LENGTH) + _encode_varint(len(payload)) + payload


def _model_pieces(data: mmap.mmap, location: str) -> list[bytes]:
    pieces = []
    for field, wire, start, value_start, end in _fields(data, 0, len(data)):
        if field == _MODEL_GRAPH and wire == _LENGTH:
            pieces.append(_length_field(field, _graph(data, value_start, end, location)))
        else:
            pieces.append(data[start:end])
    return pieces


def _graph(data: mmap.mmap, start: int, end: int, location: str) -> bytes:
    pieces = []
    for field, wire, field_start, value_start, value_end in _fields(data, start, end):
        if field == _GRAPH_INITIALIZER and wire == _LENGTH:
            tensor = _tensor(data, value_start, value_end, location)
            pieces.append(_length_field(field, tensor))
        else:
            pieces.append(data[field_start:value_end])
    return b"".join(pieces)


def _tensor(data: mmap.mmap, start: int, end: int, location: str) -> bytes:
    """The tensor encoded in `data[start:end]`, its raw data (if large and in the message)
    replaced by a reference to where it is in the file."""
    fields = list(_fields(data, start, end))
    raw = [f for f in fields if f[0] == _TENSOR_RAW_DATA and f[1] == _LENGTH]
    external = any(f[0] in (_TENSOR_EXTERNAL_DATA, _TENSOR_DATA_LOCATION) for f in fields)
    if not raw or external or raw[-1][4] - raw[-1][3] < MIN_MAPPED_BYTES:
        return data[start:end]
    _, _, _, offset, raw_end = raw[-1]  # (protobuf keeps the last of a repeated scalar field)
    kept = [data[f[2] : f[4]] for f in fields if f[0] != _TENSOR_RAW_DATA]
    for key, value in (("location", location), ("offset", offset), ("length", raw_end - offset)):
        entry = _length_field(1, key.encode()) + _length_field(2, str(value).encode())
        kept.append(_length_field(_TENSOR_EXTERNAL_DATA, entry))
    kept.append(_encode_varint(_TENSOR_DATA_LOCATION << 3 | _VARINT) + bytes([1]))
    return b"".join(kept)


def _in_message(tensor: TensorProto) -> np.ndarray:
    if tensor.data_type == TensorProto.FLOAT and tensor.HasField("raw_data"):
        raw = tensor.raw_data
        if len(raw) == 4 * math.prod(tensor.dims):
            return np.frombuffer(raw, dtype="<f4").reshape(tuple(tensor.dims))
    return numpy_helper.to_array(tensor)


class TensorData:
    """The elements of a model's initializers: tensors held in external files (those of
    `read_model` included) are mapped read-only from the file, under the folder of the
    model's file `model_path`; the others come from their message."""

    def __init__(self, model_path: str | os.PathLike):
        self.model_path = os.fspath(model_path)
        self.base_dir = Path(model_path).parent
        self._maps: dict[Path, mmap.mmap | bytes] = {}
        """Each external data file, mapped (an empty one: no bytes, which `mmap` cannot map)."""
        self._resolved: dict[str, Path] = {}
        """Each external data location checked (`_resolve`), and its file: a model names the
        same file for all its initializers (resnet50: 267), and resolving the paths took
        16 ms of the import of its op edit (profiled)."""

    def array(self, tensor: TensorProto) -> np.ndarray:
        """The elements of `tensor`, read-only. A float32 tensor whose raw little-endian bytes
        are in the message (a model in memory) is a view of the protobuf's bytes, not a copy:
        `values.dense_f32` takes those bytes as they are."""
        if tensor.data_location != TensorProto.EXTERNAL:
            return _in_message(tensor)
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type))
        if dtype.kind not in "biufc":  # (bfloat16, float8, strings: onnx's own conversion)
            return self._loaded(tensor)
        info = ExternalDataInfo(tensor)
        path = self._resolve(tensor.name, info.location)
        count = math.prod(tensor.dims)
        size = count * dtype.itemsize
        offset = int(info.offset or 0)
        if info.length is not None and int(info.length) != size:
            raise self._error(
                f"initializer '{tensor.name}' has {info.length} bytes of external data, but "
                f"its {count} elements of {dtype} need {size}"
            )
        data = self._map(path)
        if offset + size > len(data):
            raise self._error(
                f"initializer '{tensor.name}' needs bytes {offset} to {offset + size} of "
                f"{path.name}, which has {len(data)} (a truncated file?)"
            )
        if count == 0:
            return np.empty(tuple(tensor.dims), dtype)
        little = dtype.newbyteorder("<")
        return np.frombuffer(data, little, count, offset).reshape(tuple(tensor.dims))

    def _resolve(self, name: str, location: str) -> Path:
        """The external data file `location`, which must be inside the model's folder."""
        if not location or os.path.isabs(location):
            raise self._error(
                f"initializer '{name}' has external data at {location!r}: it must be a path "
                "relative to the model's folder"
            )
        known = self._resolved.get(location)
        if known is not None:
            return known
        folder = self.base_dir.resolve()
        path = (folder / location).resolve()
        if not path.is_relative_to(folder):
            raise self._error(
                f"initializer '{name}' has external data at {location!r}, outside the "
                "model's folder"
            )
        self._resolved[location] = path
        return path

    def _map(self, path: Path) -> mmap.mmap | bytes:
        if path not in self._maps:
            try:
                with open(path, "rb") as stream:
                    size = os.fstat(stream.fileno()).st_size
                    mapped = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
            except OSError as err:
                raise self._error(f"cannot read external data {path}: {err.strerror}") from None
            self._maps[path] = mapped
        return self._maps[path]

    def _loaded(self, tensor: TensorProto) -> np.ndarray:
        copy = TensorProto()
        copy.CopyFrom(tensor)
        try:
            load_external_data_for_tensor(copy, str(self.base_dir))
        except (OSError, ValueError) as err:
            raise self._error(f"initializer '{tensor.name}': {err}") from None
        return numpy_helper.to_array(copy)

    def _error(self, message: str) -> ModelImportError:
        return ModelImportError(self.model_path, message=message)
