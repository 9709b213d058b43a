"""Loop distribution and interchange: the structural moves behind the reduction reorder.

- `statement_groups(loop)`: the body split into statements: each nested loop alone, and each
  maximal run of other ops (stores with the scalar code computing their values).
- `distribute(loop)`: one copy of the loop per statement, in order:

  ```
  loop.for %x {                      loop.for %x { store 0, %acc[%x] }
    store 0, %acc[%x]          ==>   loop.for %x { loop.for %k { ... %acc[%x] ... } }
    loop.for %k { ... }              loop.for %x { ... load %acc[%x] ... }
    ... load %acc[%x] ...
  }
  ```

- `sink(loop)`: a loop whose body is a perfect nest of loops moves below the nest's innermost
  loop: `for x { for c { for k { S } } }` becomes `for c { for k { for x { S } } }`.

Legality, checked by the callers: both moves are legal for a *parallel* loop (its iterations
are independent, `loop_access.is_parallel`), as long as no SSA value crosses statements
(`groups_are_independent`) and the nest's bounds do not depend on the moved loop (constant
bounds). Each iteration's own statements keep their order; only independent statement
instances of different iterations are reordered.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType
from xdsl.ir import Block, Operation, Region, SSAValue

from fusion_compiler.dialects.loop import AllocOp, ForOp, FuncOp, YieldOp
from fusion_compiler.passes.analysis.loop_access import body_ops

Group = list[Operation]


def statement_groups(loop: ForOp) -> list[Group]:
    """The loop body as statements: nested loops alone, runs of other ops together."""
    groups: list[Group] = []
    run: Group = []
    for op in body_ops(loop):
        if isinstance(op, ForOp):
            if run:
                groups.append(run)
                run = []
            groups.append([op])
        else:
            run.append(op)
    if run:
        groups.append(run)
    return groups


def _contains(group: Group, op: Operation) -> bool:
    return any(member.is_ancestor(op) for member in group)


def groups_are_independent(groups: Sequence[Group]) -> bool:
    """Whether no value defined in one statement is used in another."""
    for group in groups:
        for member in group:
            for result in member.results:
                if any(not _contains(group, use.operation) for use in result.uses):
                    return False
    return True


def empty_loop_like(loop: ForOp) -> ForOp:
    """A loop with the bounds and kind of `loop` and an empty body."""
    body = Region(Block([YieldOp()], arg_types=[IndexType()]))
    new = ForOp(loop.lb, loop.ub, loop.step, body, loop.loop_kind)
    new.induction_var.name_hint = loop.induction_var.name_hint
    return new


def alloc_like(alloc: AllocOp, buffer_type: MemRefType) -> AllocOp:
    """A `loop.alloc` of `buffer_type` right before `alloc`, with its attributes and name (a
    buffer laid out anew; the caller moves the uses and erases `alloc`)."""
    new = AllocOp(buffer_type)
    new.attributes.update(alloc.attributes)
    new.result.name_hint = alloc.result.name_hint
    block = alloc.parent_block()
    assert block is not None
    block.insert_op_before(new, alloc)
    return new


def index_constant(value: int, inside: Operation) -> SSAValue:
    """An `index` constant (`%c<value>`) at the top of the kernel that holds `inside`."""
    return kernel_index_constant(value, enclosing_kernel(inside))


def enclosing_kernel(op: Operation) -> FuncOp:
    """The kernel that holds `op` (or `op`, a kernel)."""
    kernel = op
    while not isinstance(kernel, FuncOp):
        parent = kernel.parent_op()
        assert parent is not None
        kernel = parent
    return kernel


def kernel_index_constant(value: int, kernel: FuncOp) -> SSAValue:
    """An `index` constant (`%c<value>`) at the top of `kernel` (`index_constant` for a
    caller that knows the kernel: the scheduler of a contraction makes thousands)."""
    # `create` with the properties `ConstantOp(attr)` would give makes the same op, without
    # the checks of the generic constructor (a third of the time); attributes are immutable
    # values, so one per value is shared by all its constants.
    constant = arith.ConstantOp.create(
        result_types=[_INDEX], properties={"value": _index_attr(value)}
    )
    constant.result.name_hint = f"c{value}"
    block = kernel.body.block
    block.insert_op_before(constant, block.first_op)  # type: ignore[arg-type]
    return constant.result


_INDEX = IndexType()


@functools.lru_cache(maxsize=4096)
def _index_attr(value: int) -> IntegerAttr:
    """The attribute of the `index` constant `value`."""
    return IntegerAttr(value, _INDEX)


def compute_at_uses(value: SSAValue, make: Callable[[], Operation]) -> None:
    """Give every user of `value` its own `make()` (an op with one result), inserted right
    before the user, in place of `value`: the statements stay independent of each other (loop
    distribution and jamming move them apart)."""
    for use in list(value.uses):
        user = use.operation
        local = make()
        block = user.parent_block()
        assert block is not None
        block.insert_op_before(local, user)
        user.operands = tuple(
            local.results[0] if position == use.index else operand
            for position, operand in enumerate(user.operands)
        )


def move_into(ops: Sequence[Operation], loop: ForOp) -> None:
    """Move `ops` to the end of `loop`'s body (before its terminator)."""
    terminator = loop.body.block.last_op
    assert terminator is not None
    for op in ops:
        op.detach()
        loop.body.block.insert_op_before(op, terminator)


def distribute(loop: ForOp) -> list[ForOp]:
    """Split `loop` into one loop per statement group; returns the new loops in order."""
    block = loop.parent_block()
    assert block is not None
    loops: list[ForOp] = []
    for group in statement_groups(loop):
        new = empty_loop_like(loop)
        block.insert_op_before(new, loop)
        loop.induction_var.replace_uses_with_if(
            new.induction_var, lambda use, group=group: _contains(group, use.operation)
        )
        move_into(group, new)
        loops.append(new)
    loop.detach()
    loop.erase()
    return loops


def perfect_nest(loop: ForOp) -> list[ForOp]:
    """The loops nested perfectly in `loop` (each the only op of its parent's body)."""
    chain: list[ForOp] = []
    current = loop
    while True:
        ops = body_ops(current)
        if len(ops) != 1 or not isinstance(ops[0], ForOp):
            return chain
        current = ops[0]
        chain.append(current)


def sink(loop: ForOp) -> ForOp:
    """Move `loop` below the innermost loop of its perfect nest; returns the moved loop."""
    chain = perfect_nest(loop)
    assert chain, "sink needs a loop whose body is a loop"
    innermost = chain[-1]
    moved = empty_loop_like(loop)
    ops = body_ops(innermost)
    loop.induction_var.replace_all_uses_with(moved.induction_var)
    move_into(ops, moved)
    innermost.body.block.insert_op_before(moved, innermost.body.block.last_op)  # type: ignore[arg-type]
    outer = chain[0]
    outer.detach()
    block = loop.parent_block()
    assert block is not None
    block.insert_op_before(outer, loop)
    loop.detach()
    loop.erase()
    return moved
