"""Grouped convolutions as one contraction per group: the output-channel loop split at the
group boundaries, so that the packed-panel schedule (`contraction_pack_schedule.py`) applies.

legalize-ops writes a convolution of `G` groups (`F` filters, `Fg = F / G` per group, `Cg`
input channels per group) as one nest over the output channels `f`, whose input channel is
`(f / Fg) * Cg + c`: the input depends on `f`, so no spatial loop has one operand varying
and the other a broadcast, and no packed candidate exists. Split at the groups,

```
loop.for %f = 0 to F {                        loop.for %g = 0 to G {
  loop.for %oh { loop.for %ow {                 loop.for %fl = 0 to Fg {
    ...                                  ==>      loop.for %oh { loop.for %ow {
    %q = arith.divui %f, Fg                         %f' = %g * Fg + %fl
    x[%q * Cg + %c, ...] * w[%f, %c, ...]           ... x[%g * Cg + %c, ...] * w[%f', %c, ...]
```

each group is an ordinary contraction: the weights vary along `%fl` and the input does not
(a broadcast), so the packed-panel schedule applies per group, vectorised along the pixels
of a row (the row of the group's input packed, the weights broadcast: shufflenet's 1x1
layers of 4 groups), along a small plane of pixels (the group's input packed once), or along
the filters of the group (its weights packed once), whichever the tile model prices lowest
(`contraction_schedule._grouped_plan`). `%g` is parallel: each of its iterations writes its
own block of `Fg` output channels (`loop_access.blocked_dimension`).

Legality: `%f` takes the same values in the same order (`%g * Fg + %fl`, `Fg` dividing `F`),
and `f / Fg` is `%g` for every one of them; nothing else changes. Depthwise convolutions
(`Fg = 1`) have no quotient (legalize-ops folds the division by one) and are not split.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.ir import Operation

from fusion_compiler.dialects.loop import ForOp
from fusion_compiler.passes.analysis.ir_walk import walk_ops
from fusion_compiler.passes.analysis.loop_access import (
    accesses_by_buffer,
    body_ops,
    constant_index,
    loop_range,
)
from fusion_compiler.passes.schedule.contraction_match import Nest
from fusion_compiler.passes.schedule.loop_transforms import index_constant


@dataclass(frozen=True)
class GroupSplit:
    """A spatial loop of a contraction nest to split at groups of `size` iterations."""

    loop: ForOp
    size: int
    quotients: tuple[arith.DivUIOp, ...]
    """The ops `divui %iv, size`, which become the group loop's induction variable."""
    innermost: ForOp
    """The innermost spatial loop of the nest."""


def _quotients(nest: Nest, loop: ForOp) -> list[arith.DivUIOp]:
    return [
        op
        for op in walk_ops(nest.spatial[0])
        if isinstance(op, arith.DivUIOp) and op.lhs is loop.induction_var
    ]


def group_split(nest: Nest) -> GroupSplit | None:
    """The first spatial loop of `nest` counting from 0 whose induction variable is divided,
    everywhere by the same constant `size`, with `1 < size < extent` dividing the extent."""
    for loop in nest.spatial:
        bounds = loop_range(loop)
        quotients = _quotients(nest, loop)
        if bounds is None or bounds[0] != 0 or bounds[2] != 1 or not quotients:
            continue
        sizes = {constant_index(op.rhs) for op in quotients}
        size = sizes.pop() if len(sizes) == 1 else None
        if size is None or not 1 < size < bounds[1] or bounds[1] % size:
            continue
        return GroupSplit(loop, size, tuple(quotients), nest.spatial[-1])
    return None


def _loop(extent: int, name: str, anchor: Operation) -> ForOp:
    new = ForOp(
        index_constant(0, anchor), index_constant(extent, anchor), index_constant(1, anchor)
    )
    new.induction_var.name_hint = name
    return new


def _read_only_loads(loop: ForOp) -> set[Operation]:
    """The loads in `loop` of buffers nothing in `loop` stores to."""
    accesses = accesses_by_buffer([loop])
    return {
        access
        for group in accesses.values()
        if not any(isinstance(a, memref.StoreOp) for a in group)
        for access in group
    }


def _move_body(source: ForOp, target: ForOp) -> None:
    """The ops of `source`'s body (its terminator kept) to the end of `target`'s body."""
    terminator = target.body.block.last_op
    assert terminator is not None
    for op in body_ops(source):
        op.detach()
        target.body.block.insert_op_before(op, terminator)


def split_groups(split: GroupSplit) -> ForOp:
    """Split `split.loop` into a group loop and a loop within the group (module docstring);
    the group loop, which takes the split loop's place."""
    loop = split.loop
    bounds = loop_range(loop)
    assert bounds is not None
    groups = _loop(bounds[1] // split.size, "g", loop)
    within = _loop(split.size, (loop.induction_var.name_hint or "f") + "l", loop)
    groups.body.block.insert_op_before(within, groups.body.block.last_op)  # type: ignore[arg-type]
    parent = loop.parent_block()
    assert parent is not None
    parent.insert_op_before(groups, loop)
    read_only = _read_only_loads(loop)
    _move_body(loop, within)
    for quotient in split.quotients:
        quotient.result.replace_all_uses_with(groups.induction_var)
        quotient.detach()
        quotient.erase()
    size = index_constant(split.size, loop)

    def channel() -> list[Operation]:
        scaled = arith.MuliOp(groups.induction_var, size)
        value = arith.AddiOp(scaled, within.induction_var)
        value.result.name_hint = loop.induction_var.name_hint
        return [scaled, value]

    shared = channel()
    for use in list(loop.induction_var.uses):
        user = use.operation
        ops = channel() if user in read_only else shared
        if user in read_only:  # its own copy: the packing clones it with the load
            user.parent_block().insert_ops_before(ops, user)  # type: ignore[union-attr]
        user.operands = tuple(
            ops[1].results[0] if position == use.index else operand
            for position, operand in enumerate(user.operands)
        )
    innermost = within if split.innermost is loop else split.innermost
    innermost.body.block.insert_ops_before(shared, innermost.body.block.first_op)  # type: ignore[arg-type]
    loop.detach()
    loop.erase()
    return groups
