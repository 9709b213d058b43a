"""Concats in place: the operands of a concat are written straight into their parts of its
result, and the concat's launch is dropped (lower-graph).

A concat along axis `a` whose result has extent 1 in every dimension before `a` (batch 1,
channels: every concat of the zoo's models) lays each operand out as one contiguous run of the
result's elements, starting where the operands before it end. So each operand can be a view of
that run of the concat's buffer (`loop.view %buffer[offset]`): the kernel computing the operand
writes it there, later kernels read it there, and the copy never runs. Concats nest (a concat of
a concat, DenseNet's chains): the offsets add up, and every value of the tree is a view of the
outermost concat's buffer, which lives from the first write of any of them to the last read.

An operand is written in place only if it is an intermediate of the entry (computed by one of
its launches; not an argument, a bound constant or a returned value, which have buffers of
their own), appears once among the concat's operands, and is not already part of another
concat. A concat keeps its launch unless all its operands qualify. Parts of one buffer never
overlap, and the buffer holds nothing else while any of them lives, so a kernel still never
writes a buffer that overlaps one it reads (kernel arguments stay `noalias`).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.ir import SSAValue

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.graph import CallLoopOp
from fusion_compiler.dialects.loop.attributes import CONCAT_AXIS_ATTR


@dataclass(frozen=True)
class Part:
    """Where a value lives inside another one's buffer."""

    whole: SSAValue
    """The concat result whose buffer holds the value."""
    offset: int
    """Elements from the start of that buffer."""


@dataclass(frozen=True)
class InPlaceConcats:
    parts: dict[SSAValue, Part]
    """Every operand written into its concat's buffer."""
    dropped: frozenset[CallLoopOp]
    """The concat launches that no longer run."""

    def root(self, value: SSAValue) -> tuple[SSAValue, int]:
        """The value whose buffer holds `value` (itself if it is no part), and the offset."""
        offset = 0
        while value in self.parts:
            part = self.parts[value]
            value, offset = part.whole, offset + part.offset
        return value, offset


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def _contiguous_offsets(call: CallLoopOp, axis: int) -> list[int] | None:
    """The element offset of each operand's run in the result, or None when the runs are not
    contiguous (a dimension before `axis` is not 1)."""
    shape = _shape(call.outputs[0])
    if any(extent != 1 for extent in shape[:axis]):
        return None
    trailing = 1
    for extent in shape[axis + 1 :]:
        trailing *= extent
    offsets, start = [], 0
    for operand in call.inputs:
        offsets.append(start)
        start += _shape(operand)[axis] * trailing
    return offsets


def in_place_concats(
    calls: Iterable[CallLoopOp],
    own_buffers: Container[SSAValue],
    kernels: Mapping[str, loop.FuncOp],
) -> InPlaceConcats:
    """The concats among `calls` (an entry's launches, in order) whose operands can all be
    written in place; `own_buffers` are the values that have buffers of their own (arguments,
    bound values, returned values)."""
    parts: dict[SSAValue, Part] = {}
    dropped: set[CallLoopOp] = set()
    for call in calls:
        kernel = kernels.get(call.callee.string_value())
        axis = None if kernel is None else kernel.attributes.get(CONCAT_AXIS_ATTR)
        if not isinstance(axis, IntegerAttr) or len(call.outputs) != 1:
            continue
        offsets = _contiguous_offsets(call, axis.value.data)
        operands = list(call.inputs)
        if offsets is None or any(
            value in own_buffers or value in parts or operands.count(value) != 1
            for value in operands
        ):
            continue
        for value, offset in zip(operands, offsets, strict=True):
            parts[value] = Part(call.outputs[0], offset)
        dropped.add(call)
    return InPlaceConcats(parts, frozenset(dropped))
