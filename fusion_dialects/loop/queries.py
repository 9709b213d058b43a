"""Facts about loop-level IR that every stage asks: the one home of each.

The scheduling passes (`passes/analysis/loop_access.py` builds its legality analyses on these),
the LLVM lowering and the reference loop interpreter all ask here:

- `constant_index`: the value of an integer `arith.constant`;
- `loop_range`, `trip_count`: a `loop.for`'s constant bounds and how often it runs;
- `defined_outside`: whether a value is the same in every iteration of a loop;
- `same_subscripts`: whether two accesses touch the same element;
- `top_level_op`: the op of a kernel's body that holds a nested op;
- `digit_runs`: the runs of subscripts that are the mixed-radix digits of one value (a loop
  collapsed over several dimensions), which address consecutive elements as that value does;
- `KERNEL_OPS`, `SCALAR_OPS`: the kernel-body vocabulary (loops, buffers, loads, stores and
  scalar `arith`/`math` ops) and its scalar part;

The numpy dtype of an element type, and back, is `fusion_compiler.dialects.element_dtypes`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, math, memref
from xdsl.dialects.builtin import (
    IntegerAttr,
)
from xdsl.ir import Block, Operation, OpResult, SSAValue

from fusion_compiler.dialects.loop.buffers import AllocOp
from fusion_compiler.dialects.loop.kernel import ReturnOp
from fusion_compiler.dialects.loop.loops import ForOp, YieldOp

SCALAR_OPS: frozenset[type[Operation]] = frozenset({*arith.Arith.operations, *math.Math.operations})
"""Ops without memory effects: scalar and index arithmetic."""

KERNEL_OPS: frozenset[type[Operation]] = frozenset(
    {ForOp, YieldOp, ReturnOp, AllocOp, memref.LoadOp, memref.StoreOp, *SCALAR_OPS}
)
"""The ops a kernel body may contain; anything else makes the kernel opaque to the analyses."""


def constant_index(value: SSAValue) -> int | None:
    """The value of an integer `arith.constant`, or None."""
    if isinstance(value, OpResult) and isinstance(value.op, arith.ConstantOp):
        attr = value.op.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def loop_range(loop: ForOp) -> tuple[int, int, int] | None:
    """The constant `(lb, ub, step)` of `loop` (step > 0), or None."""
    bounds = loop.operands  # (lb, ub, step: the generic operands cost half the named ones)
    lb, ub, step = (constant_index(bounds[0]), constant_index(bounds[1]), constant_index(bounds[2]))
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return lb, ub, step


def digit_of(value: SSAValue) -> tuple[SSAValue, int, int | None] | None:
    """`(e, s, n)` if `value` is `(e / s) % n` (`s` = 1: `e % n`; `n` None: `e / s`), with
    constant `s` and `n`: one digit of `e` in a mixed-radix number."""
    owner = value.owner
    modulus = None
    if isinstance(owner, arith.RemUIOp):
        modulus = constant_index(owner.rhs)
        if modulus is None:
            return None
        value, owner = owner.lhs, owner.lhs.owner
    if isinstance(owner, arith.DivUIOp):
        divisor = constant_index(owner.rhs)
        return None if divisor is None else (owner.lhs, divisor, modulus)
    return None if modulus is None else (value, 1, modulus)


def _run_start(digits, shape, strides, last: int) -> int | None:
    """The first dimension of the run `first..last` whose subscripts are all the digits of
    one value over those dimensions (row-major), the most significant one `e / s` without a
    remainder (so that the run spans all of `e`: a subscript `(e / s) % n` may wrap), or None."""
    tail = digits[last]
    if tail is None or tail[1] != 1 or tail[2] != shape[last]:
        return None
    value, scale = tail[0], shape[last]
    for d in range(last - 1, -1, -1):
        digit = digits[d]
        if digit is None or digit[0] != value or digit[1] != scale:
            return None
        if strides[d] != shape[d + 1] * strides[d + 1]:
            return None
        if digit[2] is None:
            return d
        if digit[2] != shape[d]:
            return None
        scale *= shape[d]
    return None


def digit_runs(
    indices: Sequence[SSAValue], shape: Sequence[int], strides: Sequence[int]
) -> list[tuple[int, int, SSAValue]]:
    """`(first, last, e)` for every run of subscripts `indices[first..last]` that are the
    digits of one `index` value `e` over those dimensions of a buffer of `shape` and `strides`
    (`(e / n, e % n)` over a row of `n`, `(e / 9, e / 3 % 3, e % 3)` over 3 x 3): those
    subscripts address the same element as `(0, ..., 0, e)`. Innermost run first."""
    digits = [digit_of(index) for index in indices]
    runs = []
    last = len(indices) - 1
    while last > 0:
        first = _run_start(digits, shape, strides, last)
        if first is None:
            last -= 1
            continue
        runs.append((first, last, digits[last][0]))  # type: ignore[index]
        last = first - 1
    return runs


def top_level_op(op: Operation, kernel: Operation) -> Operation:
    """The op of `kernel`'s body (the top level) that holds `op` (or is `op`)."""
    while op.parent_op() is not kernel:
        parent = op.parent_op()
        assert parent is not None, "the op is not inside the kernel"
        op = parent
    return op


def trip_count(loop: ForOp) -> int | None:
    """How many iterations `loop` runs, when its bounds are constants."""
    bounds = loop_range(loop)
    if bounds is None:
        return None
    lb, ub, step = bounds
    return max(0, -(-(ub - lb) // step))


def parallel_work(loop: ForOp) -> int | None:
    """The innermost iterations one execution of `loop` runs: its trip count times the
    iterations of the loops in its body (added up; a loop of unknown trip count counts as
    one), or None when `loop`'s own trip count is not a constant. What a launch of `loop` on
    a team of threads must reach to be worth one (`lowering/parallel_to_llvm.py`)."""
    trips = trip_count(loop)
    if trips is None:
        return None
    inner = [op for op in loop.body.block.ops if isinstance(op, ForOp)]
    return trips * max(1, sum(parallel_work(op) or 1 for op in inner))


def defined_outside(value: SSAValue, loop: ForOp) -> bool:
    """Whether `value` is defined outside `loop` (so it is the same in all its iterations)."""
    owner = value.owner
    op = owner.parent_op() if isinstance(owner, Block) else owner
    return op is None or not loop.is_ancestor(op)


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
