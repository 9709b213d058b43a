"""Which buffer elements the iterations of a `loop.for` touch: the legality facts of scheduling.

Read-only analyses of kernel loop nests for the scheduling passes (`passes/schedule/`):

- `loop_range(loop)`: constant `(lb, ub, step)` of a loop, or None.
- `accesses_by_buffer(ops)`: every `memref.load`/`memref.store` nested in `ops`, by buffer,
  in program order.
- `sliced_dimension(accesses, ivs)`: a dimension that every access subscripts with its own
  loop's plain induction variable. Iteration `i` of such loops then touches only slice `i` of
  the buffer, which no other iteration touches.
- `is_parallel(loop)`: no iteration of the loop touches an element another iteration writes
  (every buffer stored in its body is sliced by it), so its iterations may run in any order,
  interleaved, or at once. This licenses loop distribution, interchange, unroll-and-jam and a
  `parallel` loop kind.
- `stride(value, iv)`: how an `index` value changes when `iv` grows by one (1 for `iv + k`, 0
  when independent of `iv`), or None when it is not affine in `iv`.

Everything is conservative: a fact that cannot be shown is reported as false (or None).

```
loop.for %i {                          is_parallel(%i): %acc and %c are sliced by %i
  memref.store %z, %acc[%i]            (dimension 0 of every access is %i)
  loop.for %k {                        is_parallel(%k): false, %acc[%i] is written in
    ... %acc[%i] = %acc[%i] + %x[%i, %k]   every iteration of %k
  }
  memref.store (%acc[%i]), %c[%i]
}
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from fusion_dialects.loop import AllocOp, ForOp
from passes.analysis.kernel_blocks import KERNEL_OPS

MemoryAccess = memref.LoadOp | memref.StoreOp


def constant_index(value: SSAValue) -> int | None:
    """The value of an integer `arith.constant`, or None."""
    if isinstance(value, OpResult) and isinstance(value.op, arith.ConstantOp):
        attr = value.op.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def loop_range(loop: ForOp) -> tuple[int, int, int] | None:
    """The constant `(lb, ub, step)` of `loop` (step > 0), or None."""
    bounds = (constant_index(loop.lb), constant_index(loop.ub), constant_index(loop.step))
    lb, ub, step = bounds
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return lb, ub, step


def trip_count(loop: ForOp) -> int | None:
    bounds = loop_range(loop)
    if bounds is None:
        return None
    lb, ub, step = bounds
    return max(0, -(-(ub - lb) // step))


def same_range(a: ForOp, b: ForOp) -> bool:
    """Whether two loops run the same constant iterations."""
    range_a = loop_range(a)
    return range_a is not None and range_a == loop_range(b)


def same_subscripts(a: Sequence[SSAValue], b: Sequence[SSAValue]) -> bool:
    """Whether two subscript lists are the same values (SSA identity or equal constants)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x is y:
            continue
        constant = constant_index(x)
        if constant is None or constant != constant_index(y):
            return False
    return True


def memory_accesses(ops: Iterable[Operation]) -> list[MemoryAccess]:
    """The loads and stores nested in `ops` (the ops themselves included), in program order."""
    return [
        inner
        for op in ops
        for inner in op.walk()
        if isinstance(inner, memref.LoadOp | memref.StoreOp)
    ]


def accesses_by_buffer(ops: Iterable[Operation]) -> dict[SSAValue, list[MemoryAccess]]:
    """The accesses nested in `ops`, grouped by buffer (in order of first access)."""
    grouped: dict[SSAValue, list[MemoryAccess]] = {}
    for access in memory_accesses(ops):
        grouped.setdefault(access.memref, []).append(access)
    return grouped


def writes_buffer(op: Operation, buffer: SSAValue) -> bool:
    """Whether `op` is, or contains, a store to `buffer`."""
    return any(isinstance(inner, memref.StoreOp) and inner.memref is buffer for inner in op.walk())


def only_kernel_ops(ops: Iterable[Operation]) -> bool:
    """Whether `ops` hold nothing but loops, loads, stores and scalar ops (no local buffers)."""
    return all(
        type(inner) in KERNEL_OPS and not isinstance(inner, AllocOp)
        for op in ops
        for inner in op.walk()
    )


def slice_offset(index: SSAValue, loop: ForOp) -> int | None:
    """`c` if `index` is `iv + c` for the induction variable `iv` of `loop` and `0 <= c <
    step` (so iteration `iv` only touches `[iv, iv + step)`), else None."""
    iv = loop.induction_var
    if index is iv:
        return 0
    if not isinstance(index, OpResult) or not isinstance(index.op, arith.AddiOp):
        return None
    lhs, rhs = index.op.operands
    offset = constant_index(rhs) if lhs is iv else constant_index(lhs) if rhs is iv else None
    bounds = loop_range(loop)
    if offset is None or bounds is None or not 0 <= offset < bounds[2]:
        return None
    return offset


def sliced_dimension(accesses: Sequence[tuple[MemoryAccess, ForOp]]) -> int | None:
    """A dimension that every access subscripts with the induction variable of the loop paired
    with it (plus an offset below the loop's step), or None. Iteration `iv` of those loops then
    touches only the slice `[iv, iv + step)` of that dimension. Rank-0 buffers are never sliced."""
    if not accesses:
        return None
    rank = len(accesses[0][0].indices)
    for dim in range(rank):
        if all(
            len(access.indices) == rank and slice_offset(access.indices[dim], loop) is not None
            for access, loop in accesses
        ):
            return dim
    return None


def body_ops(loop: ForOp) -> list[Operation]:
    """The ops of a loop body, without its terminator."""
    return [op for op in loop.body.block.ops if op is not loop.body.block.last_op]


def is_parallel(loop: ForOp) -> bool:
    """Whether the iterations of `loop` are independent: every buffer stored in its body is
    sliced by its induction variable, and the body holds only kernel ops."""
    if loop_range(loop) is None:
        return False
    ops = body_ops(loop)
    if not only_kernel_ops(ops):
        return False
    for accesses in accesses_by_buffer(ops).values():
        if not any(isinstance(access, memref.StoreOp) for access in accesses):
            continue
        if sliced_dimension([(access, loop) for access in accesses]) is None:
            return False
    return True


def has_constant_bounds(op: Operation) -> bool:
    """Whether every loop nested in `op` (or `op` itself) has constant bounds."""
    return all(loop_range(inner) is not None for inner in op.walk() if isinstance(inner, ForOp))


# ---------------------------------------------------------------------------------------------
# Strides
# ---------------------------------------------------------------------------------------------

_ADDITIVE: dict[type[Operation], int] = {arith.AddiOp: 1, arith.SubiOp: -1}


def stride(value: SSAValue, iv: SSAValue, depth: int = 0) -> int | None:
    """How much `value` grows when `iv` grows by one, if `value` is affine in `iv`.

    Understood: `iv` itself (1), constants and values that do not depend on `iv` (0), and
    `addi`/`subi`/`muli` by a constant of those. Anything else that depends on `iv` is None.
    """
    if value is iv:
        return 1
    if not depends_on(value, iv) or depth > 32:
        return 0 if not depends_on(value, iv) else None
    if not isinstance(value, OpResult):
        return None
    op = value.op
    sign = _ADDITIVE.get(type(op))
    if sign is not None:
        lhs, rhs = (stride(operand, iv, depth + 1) for operand in op.operands)
        return None if lhs is None or rhs is None else lhs + sign * rhs
    if isinstance(op, arith.MuliOp):
        return _scaled_stride(op, iv, depth)
    return None


def _scaled_stride(op: arith.MuliOp, iv: SSAValue, depth: int) -> int | None:
    for varying, scale in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        factor = constant_index(scale)
        if factor is not None:
            inner = stride(varying, iv, depth + 1)
            return None if inner is None else inner * factor
    return None


def depends_on(value: SSAValue, iv: SSAValue) -> bool:
    """Whether `value` is computed from `iv` (through any ops, load subscripts included)."""
    stack = [value]
    seen: set[SSAValue] = set()
    while stack:
        current = stack.pop()
        if current is iv:
            return True
        if current in seen or isinstance(current, BlockArgument):
            continue
        seen.add(current)
        assert isinstance(current, OpResult)
        stack.extend(current.op.operands)
    return False


def access_strides(access: MemoryAccess, iv: SSAValue) -> tuple[int | None, ...]:
    """The stride in `iv` of each subscript of `access`, unit (size-1) dimensions left out."""
    buffer_type = access.memref.type
    assert isinstance(buffer_type, MemRefType)
    return tuple(
        stride(index, iv)
        for size, index in zip(buffer_type.get_shape(), access.indices, strict=True)
        if size != 1
    )


def is_unit_stride(access: MemoryAccess, iv: SSAValue) -> bool:
    """Whether consecutive `iv`s access consecutive elements (innermost non-unit subscript
    `iv + c`, every other subscript independent of `iv`)."""
    strides = access_strides(access, iv)
    return bool(strides) and strides[-1] == 1 and all(s == 0 for s in strides[:-1])


def is_invariant(access: MemoryAccess, iv: SSAValue) -> bool:
    """Whether `access` touches the same element in every iteration of `iv`."""
    return not any(depends_on(index, iv) for index in access.indices)
