"""Constants of the graph level as numpy arrays, and numpy arrays as constants.

`constant_of(value)` is the dense attribute of a `graph.constant` result (None for anything
else, an unresolved `dense_resource` included); `array_of` reads its elements through the
reference evaluator's `constant_array` (the one reading of a dense attribute); `dense_of`
builds the attribute of a folded result straight from the array's bytes (never through
text), as a splat when every element has the same bits.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, Float32Type, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.loop.queries import numpy_dtype
from fusion_compiler.dialects.reference.evaluator import constant_array

__all__ = ["array_of", "constant_of", "dense_of", "element_count", "holds", "new_constant"]


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


def dense_of(array: np.ndarray, typ: TensorType) -> DenseIntOrFPElementsAttr:
    """The elements of `array` (a value of `typ`, see `holds`) as a dense attribute of `typ`:
    little-endian raw bytes in row-major order (an `i1` as a byte, -1 for true, as xDSL
    stores it), one element when all are bitwise equal."""
    storage = np.dtype(typ.element_type.format)
    if array.dtype == np.bool_:  # xDSL stores an i1 `true` as the byte -1
        array = np.negative(array.astype(storage))
    data = np.ascontiguousarray(array).astype(storage, copy=False)
    if data.size > 1 and _uniform(data):
        data = data.reshape(-1)[:1]
    return DenseIntOrFPElementsAttr(typ, BytesAttr(data.tobytes()))


def _uniform(data: np.ndarray) -> bool:
    """Whether every element has the bits of the first (a few probes reject most arrays)."""
    bits = data.reshape(-1).view(f"u{data.itemsize}")
    probes = np.linspace(0, bits.size - 1, num=min(bits.size, 16), dtype=np.int64)
    if np.any(bits[probes] != bits[0]):
        return False
    return bool(np.all(bits == bits[0]))


def new_constant(
    array: np.ndarray, typ: Attribute, near: Operation, name: str | None = None
) -> graph.ConstantOp:
    """A `graph.constant` of `array` (a value of tensor type `typ`) with the location of
    `near` (the op it replaces) and the SSA name hint `name`."""
    assert isinstance(typ, TensorType)
    op = graph.ConstantOp(dense_of(array, typ))
    op.location = near.location
    op.results[0].name_hint = name
    return op
