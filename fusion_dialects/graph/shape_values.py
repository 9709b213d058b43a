"""What is known of the values of a shape tensor (a rank-0 or rank-1 `i64` value) before the
module is specialised: each element a number, or `?` (`shape_rules.DYN`).

Exported models build a target shape from pieces: `concat(slice(shape_of(x), 0, 2), [144])`.
Reading through those pieces gives `[?, ?, 144]` for an input `?x?x48`, so a reshape's result
type keeps its static dimensions (`tensor<?x?x144xf32>`) and the converters and rules after it
see them. Only ops that move shape values are read (`shape_of`, `concat`, `slice`, `gather` of
constant indices, `squeeze`, `expand_dims`, `cast`); any other producer gives `?`s.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerType, TensorType
from xdsl.ir import SSAValue

from fusion_compiler.dialects.shape_rules import DYN

MAX_SHAPE_LENGTH = 64
"""Longer tensors are not shapes: their values are not read."""


def known_dims(value: SSAValue) -> tuple[int, ...] | None:
    """The elements of a rank-0 or rank-1 integer tensor of static length (`?` where not
    known), or None for any other value."""
    typ = value.type
    if not isinstance(typ, TensorType) or not isinstance(typ.element_type, IntegerType):
        return None
    shape = typ.get_shape()
    if len(shape) > 1 or (shape and not 0 <= shape[0] <= MAX_SHAPE_LENGTH):
        return None
    length = shape[0] if shape else 1
    found = _read(value)
    return found if found is not None and len(found) == length else (DYN,) * length


def fully_known(value: SSAValue) -> tuple[int, ...] | None:
    """The elements of a shape tensor if every one is known, else None."""
    dims = known_dims(value)
    return None if dims is None or DYN in dims else dims


def _read(value: SSAValue) -> tuple[int, ...] | None:
    from fusion_compiler.dialects import graph

    op = value.owner
    match op:
        case graph.ConstantOp(value=DenseIntOrFPElementsAttr() as attr):
            elements = tuple(int(v) for v in attr.get_values())
            count = attr.get_shape()[0] if attr.get_shape() else 1
            return elements * count if len(elements) == 1 else elements
        case graph.ShapeOfOp():
            return tuple(_shape(op.input))
        case graph.ConcatOp():
            parts = [known_dims(v) for v in op.inputs]
            return tuple(d for part in parts if part is not None for d in part)
        case graph.SliceOp():
            return _slice(op)
        case graph.GatherOp():
            return _gather(op)
        case graph.SqueezeOp() | graph.ExpandDimsOp() | graph.CastOp():
            return known_dims(op.input)
    return None


def _shape(value: SSAValue) -> tuple[int, ...]:
    typ = value.type
    assert isinstance(typ, TensorType)
    return tuple(typ.get_shape())


def _slice(op) -> tuple[int, ...] | None:
    source = known_dims(op.input)
    if source is None or len(_shape(op.input)) != 1:
        return None
    return tuple(source[i] for i in op.axis_ranges()[0])


def _gather(op) -> tuple[int, ...] | None:
    source, indices = known_dims(op.data), known_dims(op.indices)
    if source is None or indices is None or len(_shape(op.data)) != 1 or DYN in indices:
        return None
    size = len(source)
    if any(not -size <= i < size for i in indices):
        return None
    return tuple(source[i % size] for i in indices)
