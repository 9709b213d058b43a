"""What an ONNX value becomes at import: a graph tensor or a numpy constant.

Every ONNX value name is bound to a `Value`:

- an `SSAValue` of type `tensor<...xf32>` (or `xi64`, `xi32`, `xi1`): a tensor computed at run
  time by graph ops;
- a numpy array (any dtype): a value known at import time (an initializer, a `Constant`, or
  the folded result of a shape computation). It turns into a `graph.constant` only where a
  graph op consumes it: int64, int32 and bool arrays as `i64`, `i32` and `i1` tensors, any
  other array cast to f32 if that is exact;
- `Missing`: an output the importer could not produce (the reason is reported where it is used).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, IntegerType, TensorType, f32
from xdsl.ir import Attribute, SSAValue

from fusion_compiler.dialects.element_dtypes import element_type
from fusion_compiler.dialects.filled_bytes import bytes_to_fill, filled_bytes
from fusion_compiler.dialects.graph.base import ELEMENT_TYPES
from fusion_compiler.dialects.shape_rules import fmt, is_static
from fusion_compiler.dialects.weights_writer import same_bytes
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.host import usable_cores


@dataclass(frozen=True)
class Missing:
    """An output that was not produced. `reason` (where, message) is reported when something
    uses it; it is None when the producing node already reported its problem."""

    reason: tuple[str, str] | None = None


Value = SSAValue | np.ndarray
"""A converted ONNX value: a run-time graph tensor or an import-time constant."""

_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_$.-]")


def ssa_name(onnx_name: str) -> str | None:
    """`onnx_name` as a valid SSA name hint (`gpu_0/data_0` → `gpu_0_data_0`), or None."""
    name = _INVALID_NAME_CHARS.sub("_", onnx_name)
    if not name:
        return None
    return f"v{name}" if name[0].isdigit() else name


def dims_of_value(value: Value) -> tuple[int, ...]:
    """The shape of a graph tensor or a constant; a dynamic dimension is `shape_rules.DYN`."""
    if isinstance(value, np.ndarray):
        return tuple(value.shape)
    typ = value.type
    assert isinstance(typ, TensorType)
    return tuple(typ.get_shape())


def shape_of_value(value: Value) -> tuple[int, ...]:
    """The static shape of a graph tensor or a constant: a converter that computes with the
    sizes of a tensor with a dynamic dimension (`?`) gets `Unsupported` (rather than a `?`
    in its arithmetic), which names the dynamic shape."""
    dims = dims_of_value(value)
    if not is_static(dims):
        raise Unsupported(
            f"needs the static shape of an input that has the dynamic shape {fmt(dims)} (give "
            "its dimensions with --input-shape / input_shapes=)"
        )
    return dims


def exact_f32(array: np.ndarray, what: str) -> np.ndarray:
    """`array` as float32, if every element converts exactly; `Unsupported` otherwise."""
    if array.dtype == np.float32:
        return array
    if array.dtype == np.bool_ or not (
        np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)
    ):
        raise Unsupported(f"{what} has element type {array.dtype}, which has no f32 equivalent")
    converted = array.astype(np.float32)
    back = converted.astype(array.dtype)
    same = back == array
    if np.issubdtype(array.dtype, np.floating):
        same |= np.isnan(array) & np.isnan(converted)
    if not np.all(same):
        raise Unsupported(
            f"{what} is a {array.dtype} constant whose values are not all exactly representable in f32"
        )
    return converted


def exact_integers(array: np.ndarray, dtype: np.dtype, what: str) -> np.ndarray:
    """`array` as int64, int32 or bool `dtype`, if every element converts exactly (a bool
    from 0 and 1 only); `Unsupported` otherwise."""
    if array.dtype == dtype:
        return array
    if not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
        raise Unsupported(f"{what} has element type {array.dtype}, which has no {dtype} equivalent")
    with np.errstate(invalid="ignore", over="ignore"):
        converted = array.astype(dtype)
        exact = bool(np.all(converted.astype(array.dtype) == array))
    if dtype == np.bool_:
        exact = exact and bool(np.all((array == 0) | (array == 1)))
    if not exact:
        raise Unsupported(
            f"{what} is a {array.dtype} constant whose values are not all exactly representable "
            f"as {dtype}"
        )
    return converted


INTEGER_DTYPES = frozenset(np.dtype(t) for t in (np.int64, np.int32, np.bool_))
"""The numpy dtypes that stay integer (or boolean) tensors: `i64`, `i32`, `i1`."""


def element_type_of_dtype(dtype: np.dtype) -> Attribute | None:
    """The graph element type of a numpy dtype the importer supports at run time (float32,
    int64, int32, bool), or None."""
    try:
        typ = element_type(np.dtype(dtype))
    except TypeError:
        return None
    return typ if typ in ELEMENT_TYPES else None


def dense_integers(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    """An int64, int32 or bool array as a dense attribute (`i1` true as the byte -1, as xDSL
    stores it)."""
    element = element_type(array.dtype)
    assert isinstance(element, IntegerType)
    typ = TensorType(element, list(array.shape))
    storage = np.dtype(element.format)
    data = _row_major(array)
    data = np.negative(data.astype(storage)) if array.dtype == np.bool_ else data
    return DenseIntOrFPElementsAttr(typ, BytesAttr(data.astype(storage, copy=False).tobytes()))


def _whole_bytes(array: np.ndarray) -> bytes | None:
    """The `bytes` object that `array` views all of, in order, if there is one (an initializer
    of a model in memory: `onnx_reader.TensorData.array`). A C-contiguous view as long as the
    bytes starts where they start, so it holds exactly their elements."""
    base = array.base
    while isinstance(base, np.ndarray):
        base = base.base
    whole = isinstance(base, bytes) and array.nbytes == len(base)
    if whole and array.dtype == np.dtype("<f4") and array.flags.c_contiguous:
        return base
    return None


def is_splat(array: np.ndarray) -> bool:
    """Whether `dense_f32` stores `array` as a splat (more than one element, all the same)."""
    return array.size > 1 and _is_uniform(array)


BAND_BYTES = 16 << 20
"""The size of the bands in which `row_major_chunks` copies a transposed matrix (64 MB bands,
which `_copy_tiled` copies on two cores, made vgg19's import no faster than these, on one:
1.56-2.99 against 1.72-2.67 s, four rounds, the disk's writes dominate; and its peak 33 MB
higher)."""


def row_major_chunks(array: np.ndarray) -> Iterator[memoryview]:
    """The bytes of a float32 array in C order, little-endian, as consecutive chunks: a
    C-contiguous array's own memory (a weight mapped from its `.onnx` file: no copy), a
    transposed matrix (a folded Gemm weight) copied in bands of about `BAND_BYTES`
    (`_copy_tiled`), any other array copied whole. A chunk is valid until the next one is
    asked for. The bands take turns in two buffers: while the caller writes one band, a
    thread copies the next into the other buffer (numpy and the write both let go of the
    interpreter lock). Copying and writing a transposed weight to a file, bands in turn
    against overlapped (one process, nine alternating rounds, medians, Zen 5): zfnet512's
    4096 x 18432 0.168 -> 0.132 s, vgg19's 4096 x 25088 0.259 -> 0.193 s, bvlc_alexnet's
    4096 x 9216 0.092 -> 0.071 s; 16 MB more memory."""
    array = array.astype("<f4", copy=False)
    if array.flags.c_contiguous:
        yield array.reshape(-1).view(np.uint8).data
        return
    if array.ndim != 2:
        yield np.ascontiguousarray(array).reshape(-1).view(np.uint8).data
        return
    total = array.shape[0]
    rows = max(1, BAND_BYTES // max(1, array.shape[1] * 4))
    starts = range(0, total, rows)
    buffers = [np.empty((min(rows, total), array.shape[1]), "<f4") for _ in starts[:2]]

    def band(index: int) -> np.ndarray:
        start = starts[index]
        part = buffers[index % 2][: min(rows, total - start)]
        _copy_tiled(part, array[start : start + rows])
        return part

    with ThreadPoolExecutor(1) as pool:
        ahead = pool.submit(band, 0)
        for index in range(len(starts)):
            part = ahead.result()
            if index + 1 < len(starts):  # (into the buffer the caller has given back)
                ahead = pool.submit(band, index + 1)
            yield part.reshape(-1).view(np.uint8).data


def row_major_equals(array: np.ndarray, data: memoryview) -> bool:
    """Whether `data` holds exactly the bytes `row_major_chunks(array)` gives (bit for bit:
    -0.0 is not 0.0), without making them all: a transposed matrix is compared a band of rows
    at a time, copied in tiles into a strip and compared whole, on every core (the re-import of
    bvlc_alexnet spent 0.42 of its 0.58 s, in a profiled run, copying its Gemm weights in
    bands only to compare them). The first band to find a difference stops the others: an
    edited weight differs in its first tiles, and its comparison then costs next to nothing
    (vgg19's re-import with its classifier's first element changed: 1.11 → 0.13 s comparing,
    in two profiled runs; the other core had compared its half after the first had stopped)."""
    array = array.astype("<f4", copy=False)
    if array.ndim != 2 or array.flags.c_contiguous:
        return same_bytes(np.ascontiguousarray(array).reshape(-1).view(np.uint8).data, data)
    if len(data) != array.nbytes:
        return False
    bits = array.view(np.uint32)
    old = np.frombuffer(data, np.uint32).reshape(array.shape)
    differs = threading.Event()  # (set by the band that finds a difference: the others stop)

    def band_equal(start: int, stop: int) -> bool:
        strip = np.empty((_TILE, array.shape[1]), np.uint32)  # (rows copied in tiles, compared)
        for i in range(start, stop, _TILE):
            if differs.is_set():
                return False
            count = min(_TILE, stop - i)
            _copy_band(strip, bits[i : i + count], 0, count)
            if not np.array_equal(strip[:count], old[i : i + count]):
                differs.set()
                return False
        return True

    rows = array.shape[0]
    bands = min(usable_cores(), max(1, array.nbytes // PARALLEL_COPY_BYTES))
    if bands < 2:
        return band_equal(0, rows)
    step = -(-rows // bands // _TILE) * _TILE
    with ThreadPoolExecutor(bands) as pool:  # (numpy lets go of the interpreter lock)
        found = pool.map(
            lambda start: band_equal(start, min(start + step, rows)), range(0, rows, step)
        )
        return all(list(found))


def dense_f32(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    """The elements of a float32 array as a dense attribute.

    An array whose elements are all the same (such as the result of `ConstantOfShape`) is stored
    as a splat: one element of data for the whole shape, which `constant_array` expands; this
    keeps large uniform weights out of memory and prints as `dense<0.02>`.
    """
    assert array.dtype == np.float32
    typ = TensorType(f32, list(array.shape))
    if is_splat(array):
        data = np.array(array.flat[0], dtype="<f4").tobytes()
    else:
        data = _whole_bytes(array) or _row_major_bytes(array.astype("<f4", copy=False))
    return DenseIntOrFPElementsAttr(typ, BytesAttr(data))


def _is_uniform(array: np.ndarray) -> bool:
    """Whether every element has the same bits as the first (broadcast views: at no cost)."""
    if all(stride == 0 for stride in array.strides):
        return True
    first = array.flat[0]
    probes = np.linspace(0, array.size - 1, num=min(array.size, 16), dtype=np.int64)
    if any(array.flat[int(i)] != first for i in probes):
        return False
    bits = _row_major(array).view(np.uint32)
    return bool(np.all(bits == bits.flat[0]))


_TILE = 256
"""Rows of the strips `row_major_equals` copies and compares, and the multiple the bands of a
parallel copy start at."""

_COPY_ROWS, _COPY_COLS = 1024, 16
"""The tiles `_copy_band` copies a transposed matrix in: 16 columns of the target (one 64-byte
line of each of its rows) from 16 rows of the source, read as runs of 1024 contiguous
elements. Square tiles of 256 read 256 source rows at once, one element of each per target
row. The transpose of zfnet512's 4096 x 18432 classifier weight, into memory written before
(medians of five, Zen 5, two runs): 0.19 s on one core and 0.10 s on two in square tiles,
0.08 and 0.05-0.06 s in these; bvlc_alexnet's 4096 x 9216 0.09 / 0.05 -> 0.04 / 0.02 s;
vgg19's 4096 x 25088 0.14-0.16 / 0.07-0.08 -> 0.10-0.13 / 0.07-0.09 s."""

_SHORT_TILE_ROWS, _SHORT_TILE_COLS = 256, 128
"""A tile of fewer rows (a band of a matrix with many columns: `BAND_BYTES` hold 83 rows of a
50257-column one) copies this many columns at once, unless its source rows lie a multiple of
4 KiB apart: 16 columns of so few rows are mostly numpy's overhead per call, and 128 source
rows that far apart share the same L1 sets. One core, row_major_chunks of the transpose,
medians of seven (Zen 5): 50257 x 768 0.089 s in 16 columns, 0.047 s in 128 (square tiles
0.049); 30000 x 256 0.014 -> 0.009 s; 32000 x 2048 (8 KiB apart) 0.082 s in 16, 0.168 in
128; 50257 x 4096 (16 KiB apart) 0.355 and 0.527 s. A second run, this rule against 16 columns
everywhere and square tiles: 50257 x 768 0.044 / 0.067 / 0.043 s, 30000 x 256 0.008 /
0.013 / 0.008 s, 32000 x 2048 0.082 / 0.081 / 0.160 s, zfnet512's 4096 x 18432 0.064 /
0.063 / 0.183 s."""


def _row_major(array: np.ndarray) -> np.ndarray:
    """`array` if it is C-contiguous, else a C-contiguous copy (`_copy_tiled`)."""
    if array.flags.c_contiguous:
        return array
    if array.ndim != 2:
        return np.ascontiguousarray(array)
    result = np.empty(array.shape, array.dtype)
    _copy_tiled(result, array)
    return result


def _copy_tiled(target: np.ndarray, matrix: np.ndarray) -> None:
    """Copies a matrix (a transposed one: a folded Gemm weight) in tiles, several times faster
    than numpy's element-by-element strided copy; a large one in bands of rows on every core
    (numpy lets go of the interpreter lock while it copies a tile)."""
    rows = matrix.shape[0]
    bands = min(usable_cores(), max(1, matrix.nbytes // PARALLEL_COPY_BYTES))
    if bands < 2:
        _copy_band(target, matrix, 0, rows)
        return
    step = -(-rows // bands // _TILE) * _TILE
    with ThreadPoolExecutor(bands) as pool:
        copies = [
            pool.submit(_copy_band, target, matrix, start, min(start + step, rows))
            for start in range(0, rows, step)
        ]
        for copy in copies:
            copy.result()


PARALLEL_COPY_BYTES = 16 << 20
"""A transposed matrix of at least this many bytes per core is copied on several cores: vgg19's
411 MB classifier weight took 0.48 s on one core, 0.25-0.28 s on two (into new pages:
`_row_major_bytes`, three runs each, Zen 4)."""


def _copy_band(target: np.ndarray, matrix: np.ndarray, start: int, stop: int) -> None:
    cols = matrix.shape[1]
    width = _COPY_COLS
    if stop - start < _SHORT_TILE_ROWS and matrix.strides[1] % 4096:
        width = _SHORT_TILE_COLS
    for i in range(start, stop, _COPY_ROWS):
        end = min(i + _COPY_ROWS, stop)
        for j in range(0, cols, width):
            target[i:end, j : j + width] = matrix[i:end, j : j + width]


def _row_major_bytes(array: np.ndarray) -> bytes:
    """The elements of `array` in C order, as a new `bytes` object. A transposed matrix is
    copied in tiles straight into the object's storage (`filled_bytes`): a tiled copy and
    then `tobytes` would write every byte twice into fresh memory (vgg19's 411 MB classifier
    weight: 0.5 s more, and 411 MB more at the import's peak)."""
    if array.flags.c_contiguous or array.ndim != 2 or array.nbytes == 0:
        return array.tobytes()
    target = bytes_to_fill(array.nbytes).view(array.dtype).reshape(array.shape)
    _copy_tiled(target, array)
    data = filled_bytes(target)
    assert data is not None
    return data
