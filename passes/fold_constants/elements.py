"""Constants of the graph level as numpy arrays, and numpy arrays as constants.

`constant_of(value)` is the dense attribute of a `graph.constant` result (None for anything
else, an unresolved `dense_resource` included); `array_of` reads its elements through the
reference evaluator's `constant_array` (the one reading of a dense attribute); `dense_of`
builds the attribute of a folded result straight from the array's bytes (never through
text), as a splat when every element has the same bits.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, Float32Type, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.element_dtypes import numpy_dtype
from fusion_compiler.dialects.filled_bytes import bytes_to_fill, filled_bytes
from fusion_compiler.dialects.reference.evaluator import constant_array

__all__ = [
    "array_of",
    "constant_of",
    "dense_of",
    "element_count",
    "held_array",
    "holds",
    "new_constant",
]


def constant_of(value: SSAValue) -> DenseIntOrFPElementsAttr | None:
    """The dense elements `value` is defined by, when it is the result of a `graph.constant`."""
    owner = value.owner
    if not isinstance(owner, graph.ConstantOp):
        return None
    attr = owner.value
    return attr if isinstance(attr, DenseIntOrFPElementsAttr) else None


def array_of(value: SSAValue) -> np.ndarray:
    """The elements of a constant value (`constant_of` must hold) as a numpy array: a
    read-only view of the attribute's bytes for float32 elements (no copy of a weight),
    else `constant_array`'s fresh array (splats expanded, integers widened)."""
    attr = constant_of(value)
    assert attr is not None
    shape = tuple(attr.get_shape())
    if isinstance(attr.get_element_type(), Float32Type) and len(attr.data.data) == 4 * int(
        np.prod(shape, dtype=np.int64)
    ):
        return np.frombuffer(attr.data.data, dtype="<f4").reshape(shape)
    return constant_array(attr)


def element_count(value: SSAValue) -> int:
    """The number of elements of a statically shaped tensor value."""
    assert isinstance(value.type, TensorType)
    return int(np.prod(value.type.get_shape(), dtype=np.int64))


def holds(array: np.ndarray, typ: Attribute) -> bool:
    """Whether `array` is a value of tensor type `typ`: its shape, and the numpy dtype the
    reference semantics give the element type."""
    if not isinstance(typ, TensorType) or not isinstance(array, np.ndarray):
        return False
    try:
        dtype = numpy_dtype(typ.element_type)
    except ValueError:
        return False
    return array.shape == tuple(typ.get_shape()) and array.dtype == dtype


def held_array(shape: tuple[int, ...], dtype: np.dtype | type = np.float32) -> np.ndarray:
    """A new, uninitialised C-contiguous array for a folded result that its attribute is to
    hold without a copy (`new_constant(..., take=True)`): the storage of a new `bytes`
    object (`filled_bytes`)."""
    typed = np.dtype(dtype)
    return bytes_to_fill(math.prod(shape) * typed.itemsize).view(typed).reshape(shape)


def dense_of(array: np.ndarray, typ: TensorType, take: bool = False) -> DenseIntOrFPElementsAttr:
    """The elements of `array` (a value of `typ`, see `holds`) as a dense attribute of `typ`:
    little-endian raw bytes in row-major order (an `i1` as a byte, -1 for true, as xDSL
    stores it), one element when all are bitwise equal.

    The bytes are a copy, unless the caller hands over (`take`) an array of `held_array`:
    the attribute holds the `bytes` object the array is the storage of, and the array is
    made read-only. resnet50's 53 batch-norm-scaled weights (98 MB) were copied once more."""
    storage = np.dtype(typ.element_type.format)
    if array.dtype == np.bool_:  # xDSL stores an i1 `true` as the byte -1
        array = np.negative(array.astype(storage))
    data = np.ascontiguousarray(array).astype(storage, copy=False)
    if data.size > 1 and _uniform(data):
        return DenseIntOrFPElementsAttr(typ, BytesAttr(data.reshape(-1)[:1].tobytes()))
    held = filled_bytes(data) if take and data is array else None
    if held is not None:
        data.flags.writeable = False
        return DenseIntOrFPElementsAttr(typ, BytesAttr(held))
    return DenseIntOrFPElementsAttr(typ, BytesAttr(data.tobytes()))


def _uniform(data: np.ndarray) -> bool:
    """Whether every element has the bits of the first (a few probes reject most arrays)."""
    bits = data.reshape(-1).view(f"u{data.itemsize}")
    probes = np.linspace(0, bits.size - 1, num=min(bits.size, 16), dtype=np.int64)
    if np.any(bits[probes] != bits[0]):
        return False
    return bool(np.all(bits == bits[0]))


def new_constant(
    array: np.ndarray,
    typ: Attribute,
    near: Operation,
    name: str | None = None,
    take: bool = False,
) -> graph.ConstantOp:
    """A `graph.constant` of `array` (a value of tensor type `typ`) with the location of
    `near` (the op it replaces) and the SSA name hint `name`; with `take`, the caller hands
    over `array`, of `held_array` (`dense_of`)."""
    assert isinstance(typ, TensorType)
    op = graph.ConstantOp(dense_of(array, typ, take))
    op.location = near.location
    op.results[0].name_hint = name
    return op
