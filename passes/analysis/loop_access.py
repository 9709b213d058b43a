"""Which buffer elements the iterations of a `loop.for` touch: the legality facts of scheduling.

Read-only analyses of kernel loop nests for the scheduling passes (`passes/schedule/`):

- `loop_range(loop)`: constant `(lb, ub, step)` of a loop, or None.
- `accesses_by_buffer(ops)`: every `memref.load`/`memref.store` nested in `ops`, by buffer,
  in program order.
- `sliced_dimension(accesses)`: a dimension that every access subscripts with its own loop's
  induction variable plus a common loop-invariant part (`C[%i, %jo + %ji]` is sliced by `%ji`).
  Iteration `i` of such loops then touches only slice `i` of the buffer, which no other
  iteration touches.
- `is_parallel(loop)`: no iteration of the loop touches an element another iteration writes
  (every buffer stored in its body is sliced by it), so its iterations may run in any order,
  interleaved, or at once. This licenses loop distribution, interchange, unroll-and-jam and a
  `parallel` loop kind.
- `blocked_dimension(accesses, loop)`: a dimension every access subscripts with `k * iv` plus
  a common loop-invariant part plus terms of inner loops that spread over less than `k`
  (`out[g * Fg + fl]`, `fl < Fg`): iteration `iv` touches only its own block of `k` elements
  (`is_parallel` asks it when no dimension is sliced).
- `enclosing_loops(op)`: the loops around an op, innermost first.
- `stride(value, iv)`: how an `index` value changes when `iv` grows by one (1 for `iv + k`, 0
  when independent of `iv`), or None when it is not affine in `iv` (`linear_index.py`).

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
from math import prod
from typing import cast

from xdsl.dialects import math, memref
from xdsl.dialects.builtin import MemRefType, NoneAttr
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from fusion_compiler.dialects.loop import AllocOp, ForOp
from fusion_compiler.dialects.loop.queries import (  # noqa: F401 - the loop facts, re-exported
    constant_index,
    defined_outside,
    digit_runs,
    loop_range,
    same_subscripts,
    trip_count,
)
from fusion_compiler.passes.analysis.ir_walk import walk_ops
from fusion_compiler.passes.analysis.kernel_blocks import KERNEL_OPS
from fusion_compiler.passes.analysis.linear_index import LinearForm, linear_form

MemoryAccess = memref.LoadOp | memref.StoreOp


def same_range(a: ForOp, b: ForOp) -> bool:
    """Whether two loops run the same constant iterations."""
    range_a = loop_range(a)
    return range_a is not None and range_a == loop_range(b)


def memory_accesses(ops: Iterable[Operation]) -> list[MemoryAccess]:
    """The loads and stores nested in `ops` (the ops themselves included), in program order."""
    return [
        inner
        for op in ops
        for inner in walk_ops(op)
        if isinstance(inner, memref.LoadOp | memref.StoreOp)
    ]


def accesses_by_buffer(ops: Iterable[Operation]) -> dict[SSAValue, list[MemoryAccess]]:
    """The accesses nested in `ops`, grouped by buffer (in order of first access)."""
    grouped: dict[SSAValue, list[MemoryAccess]] = {}
    for access in memory_accesses(ops):
        grouped.setdefault(access.memref, []).append(access)
    return grouped


def only_accesses(buffer: SSAValue) -> list[MemoryAccess] | None:
    """The loads and stores of `buffer`, if they are all its uses (it is never stored as a
    value, passed to a call or viewed): then its layout is invisible outside them."""
    accesses: list[MemoryAccess] = []
    for use in buffer.uses:
        user = use.operation
        if not isinstance(user, MemoryAccess) or user.memref is not buffer:
            return None  # (a store of the buffer as a value has another memref)
        accesses.append(user)
    return accesses


def writes_buffer(op: Operation, buffer: SSAValue) -> bool:
    """Whether `op` is, or contains, a store to `buffer`."""
    return any(
        isinstance(inner, memref.StoreOp) and inner.memref is buffer for inner in walk_ops(op)
    )


def only_kernel_ops(ops: Iterable[Operation]) -> bool:
    """Whether `ops` hold nothing but loops, loads, stores and scalar ops (no local buffers)."""
    return all(
        type(inner) in KERNEL_OPS and not isinstance(inner, AllocOp)
        for op in ops
        for inner in walk_ops(op)
    )


def _kernel_accesses_by_buffer(
    ops: Iterable[Operation],
) -> dict[SSAValue, list[MemoryAccess]] | None:
    """`accesses_by_buffer(ops)` if `only_kernel_ops(ops)`, else None (one walk for both)."""
    grouped: dict[SSAValue, list[MemoryAccess]] = {}
    for op in ops:
        for inner in walk_ops(op):
            kind = type(inner)
            if kind not in KERNEL_OPS or isinstance(inner, AllocOp):
                return None
            # (no subclass of a load or a store is a kernel op: the type says which it is)
            if kind is memref.LoadOp or kind is memref.StoreOp:
                access = cast(MemoryAccess, inner)
                grouped.setdefault(access.memref, []).append(access)
    return grouped


def slice_form(index: SSAValue, loop: ForOp, scope: ForOp | None = None) -> LinearForm | None:
    """The rest of `index` if it is `iv + rest` for the induction variable `iv` of `loop` and
    `rest` is the same in every iteration of `scope` (default: of `loop`), else None."""
    return _slice_form(index, loop.induction_var, scope or loop)


def _slice_form(index: SSAValue, iv: SSAValue, scope: ForOp) -> LinearForm | None:
    """`slice_form` of the loop with induction variable `iv`, its `scope` given."""
    form = linear_form(index)
    if form.coefficient(iv) != 1:
        return None
    rest = form.without(iv)
    if not all(defined_outside(atom, scope) for atom in rest.terms):
        return None
    return rest


def sliced_dimension(
    accesses: Sequence[tuple[MemoryAccess, ForOp]], scope: ForOp | None = None
) -> int | None:
    """A dimension that every access subscripts with `iv + rest + c` for the induction variable
    `iv` of the loop paired with it, one loop-invariant `rest` common to all and constants `c`
    that spread over less than the loops' step; or None. Iteration `iv` of those loops then
    touches only elements `rest + iv + c` of that dimension, which no other iteration does.
    Rank-0 buffers are never sliced. With a `scope` (a loop around the accesses' loops), the
    common part must be the same in every iteration of `scope`, so the slices are disjoint
    across all iterations of the loops between `scope` and the paired loops too."""
    if not accesses:
        return None
    # Each access's subscripts, and each loop's range and induction variable, read once:
    # xDSL's accessors are dear, and the accesses are few loops' (one or two).
    subscripts = [tuple(access.indices) for access, _ in accesses]
    rank = len(subscripts[0])
    loops = {id(loop): loop for _, loop in accesses}
    steps = [loop_range(loop) for loop in loops.values()]
    if rank == 0 or any(step is None for step in steps):
        return None
    least_step = min(step[2] for step in steps if step is not None)
    if any(len(indices) != rank for indices in subscripts):
        return None
    ivs = {key: loop.induction_var for key, loop in loops.items()}
    pairs = [
        (indices, ivs[id(loop)], scope or loop)
        for indices, (_, loop) in zip(subscripts, accesses, strict=True)
    ]
    for dim in range(rank):
        forms: list[LinearForm] = []
        for indices, iv, within in pairs:
            form = _slice_form(indices[dim], iv, within)
            if form is None:
                break
            forms.append(form)
        else:
            first = forms[0]
            if not all(form.same_terms(first) for form in forms):
                continue
            offsets = [form.constant for form in forms]
            if max(offsets) - min(offsets) < least_step:
                return dim
    return None


def access_digit_runs(access: MemoryAccess) -> list[tuple[int, int, SSAValue]]:
    """`queries.digit_runs` of `access`'s subscripts (none unless its buffer is dense
    row-major)."""
    buffer_type = access.memref.type
    assert isinstance(buffer_type, MemRefType)
    if not isinstance(buffer_type.layout, NoneAttr) or not buffer_type.has_static_shape():
        return []
    shape = buffer_type.get_shape()
    dense = [prod(shape[d + 1 :]) for d in range(len(shape))]
    return digit_runs(access.indices, shape, dense)


def digit_sliced(accesses: Sequence[MemoryAccess], loop: ForOp, scope: ForOp | None = None) -> bool:
    """Whether every access subscripts the same dimensions with the digits of one value `f +
    rest` of `loop`'s induction variable `f` (a collapsed nest: `(f / W, f % W)`, or a tile of
    one at `rest`: `((t + f) / W, (t + f) % W)`, `queries.digit_runs`) and its other
    dimensions with the same linear forms, `rest` and those forms the same in every iteration
    of `scope` (default: of `loop`): iteration `f` then touches only its own element, which no
    other one does."""
    runs = []
    for access in accesses:
        found = [(a, b, slice_form(e, loop, scope)) for a, b, e in access_digit_runs(access)]
        runs.append([(a, b, form) for a, b, form in found if form is not None])
    if not runs or any(len(run) != 1 for run in runs):
        return False
    first, last, rest = runs[0][0]
    if any(
        (a, b) != (first, last) or not form.same_terms(rest) or form.constant != rest.constant
        for ((a, b, form),) in runs
    ):
        return False
    others = [
        [linear_form(i) for d, i in enumerate(access.indices) if not first <= d <= last]
        for access in accesses
    ]
    return all(
        form.same_terms(other) and form.constant == other.constant
        for row in others[1:]
        for form, other in zip(row, others[0], strict=True)
    ) and all(defined_outside(atom, scope or loop) for form in others[0] for atom in form.terms)


def body_ops(loop: ForOp) -> list[Operation]:
    """The ops of a loop body, without its terminator."""
    block = loop.body.block
    terminator = block.last_op
    return [op for op in block.ops if op is not terminator]


def is_parallel(loop: ForOp, scope: ForOp | None = None) -> bool:
    """Whether the iterations of `loop` are independent: every buffer stored in its body is
    sliced by its induction variable (or, without a `scope`, blocked by it:
    `blocked_dimension`), and the body holds only kernel ops. With a `scope` (a
    loop around `loop`), iterations of `loop` in different iterations of the loops from
    `scope` down are independent too (see `sliced_dimension`)."""
    if loop_range(loop) is None:
        return False
    by_buffer = _kernel_accesses_by_buffer(body_ops(loop))
    if by_buffer is None:
        return False
    for accesses in by_buffer.values():
        if not any(isinstance(access, memref.StoreOp) for access in accesses):
            continue
        if sliced_dimension([(access, loop) for access in accesses], scope) is not None:
            continue
        if digit_sliced(accesses, loop, scope):
            continue
        if scope is not None or blocked_dimension(accesses, loop) is None:
            return False
    return True


def _nested_loop(atom: SSAValue, loop: ForOp) -> ForOp | None:
    """The loop nested in `loop` (strictly) whose induction variable `atom` is, if any."""
    if not isinstance(atom, BlockArgument):
        return None
    owner = atom.owner.parent_op()
    if not isinstance(owner, ForOp) or owner is loop or atom is not owner.induction_var:
        return None
    return owner if loop.is_ancestor(owner) else None


def _blocked_part(index: SSAValue, loop: ForOp) -> tuple[int, LinearForm, int, int] | None:
    """`index` as `k * iv + rest + inner`: `k`, the loop-invariant `rest`, and the least and
    greatest value of `inner` (the terms of induction variables of constant loops nested in
    `loop`, plus the constant); None if it has any other term."""
    form = linear_form(index)
    iv = loop.induction_var
    rest: dict[SSAValue, int] = {}
    low = high = form.constant
    for atom, coefficient in form.without(iv).terms.items():
        inner = _nested_loop(atom, loop)
        bounds = loop_range(inner) if inner is not None else None
        if inner is None and defined_outside(atom, loop):
            rest[atom] = coefficient
            continue
        if bounds is None or bounds[1] <= bounds[0]:
            return None
        first, last = bounds[0], bounds[0] + (bounds[1] - bounds[0] - 1) // bounds[2] * bounds[2]
        low += min(coefficient * first, coefficient * last)
        high += max(coefficient * first, coefficient * last)
    return form.coefficient(iv), LinearForm(rest), low, high


def blocked_dimension(accesses: Sequence[MemoryAccess], loop: ForOp) -> int | None:
    """A dimension that every access subscripts with `k * iv + rest + inner` for the
    induction variable `iv` of `loop`: one `k > 0` and one loop-invariant `rest` common to
    all, and `inner` (loops nested in `loop`, constants) spreading over less than `k` times
    the loop's step; or None. Iteration `iv` then touches only elements of that dimension
    in its own block `k * iv + rest + [low, high]`: a grouped convolution's output channel
    `g * Fg + fl` (`fl < Fg`) is blocked by the group loop `g`."""
    bounds = loop_range(loop)
    rank = len(accesses[0].indices) if accesses else 0
    if bounds is None or rank == 0:
        return None
    for dim in range(rank):
        parts = [_blocked_part(access.indices[dim], loop) for access in accesses]
        if any(part is None for part in parts):
            continue
        known = [part for part in parts if part is not None]
        scale, rest = known[0][0], known[0][1]
        if scale <= 0 or any(k != scale or not r.same_terms(rest) for k, r, _, _ in known):
            continue
        if max(p[3] for p in known) - min(p[2] for p in known) < scale * bounds[2]:
            return dim
    return None


def enclosing_loops(op: Operation) -> list[ForOp]:
    """The loops around `op` in its kernel, innermost first."""
    loops: list[ForOp] = []
    parent = op.parent_op()
    while isinstance(parent, ForOp):
        loops.append(parent)
        parent = parent.parent_op()
    return loops


def is_innermost(loop: ForOp) -> bool:
    """Whether no loop is nested in `loop`."""
    return not any(isinstance(op, ForOp) for op in body_ops(loop))


def has_math_ops(op: Operation) -> bool:
    """Whether `op` is or holds a `math` op (a transcendental function: dozens of instructions
    once expanded)."""
    return any(inner.dialect_name() == math.Math.name for inner in walk_ops(op))


def has_constant_bounds(op: Operation) -> bool:
    """Whether every loop nested in `op` (or `op` itself) has constant bounds."""
    return all(loop_range(inner) is not None for inner in walk_ops(op) if isinstance(inner, ForOp))


# ---------------------------------------------------------------------------------------------
# Strides
# ---------------------------------------------------------------------------------------------


def stride(value: SSAValue, iv: SSAValue) -> int | None:
    """How much `value` grows when `iv` grows by one, if `value` is affine in `iv`: the
    coefficient of `iv` in its linear form, provided no other atom depends on `iv`."""
    form = linear_form(value)
    if any(atom is not iv and depends_on(atom, iv) for atom in form.terms):
        return None
    return form.coefficient(iv)


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
    """The stride in `iv` of each subscript of `access`, unit (size-1) dimensions left out. A
    run of subscripts that are the digits of one value (a collapsed nest's `(f / W, f % W)`,
    `queries.digit_runs`) counts as that value in its last dimension and 0 in the others: the
    elements it addresses (`memref_to_llvm.undo_delinearization`)."""
    buffer_type = access.memref.type
    assert isinstance(buffer_type, MemRefType)
    steps = [stride(index, iv) for index in access.indices]
    for first, last, value in access_digit_runs(access):
        steps[first:last] = [0] * (last - first)
        steps[last] = stride(value, iv)
    shape = buffer_type.get_shape()
    return tuple(step for size, step in zip(shape, steps, strict=True) if size != 1)


def element_stride(access: MemoryAccess, iv: SSAValue) -> int | None:
    """Elements of a row-major buffer between the elements `access` touches in consecutive
    iterations of `iv`, if every subscript is affine in it."""
    buffer_type = access.memref.type
    assert isinstance(buffer_type, MemRefType)
    if not isinstance(buffer_type.layout, NoneAttr) or not buffer_type.has_static_shape():
        return None
    total, size = 0, 1
    for extent, index in reversed(list(zip(buffer_type.get_shape(), access.indices, strict=True))):
        step = stride(index, iv)
        if step is None:
            return None
        total += step * size
        size *= extent
    return total


def is_unit_stride(access: MemoryAccess, iv: SSAValue) -> bool:
    """Whether consecutive `iv`s access consecutive elements (innermost non-unit subscript
    `iv + c`, every other subscript independent of `iv`)."""
    return _is_unit(access_strides(access, iv))


def _is_unit(strides: tuple[int | None, ...]) -> bool:
    """Whether `access_strides` are those of a unit-stride access (`is_unit_stride`)."""
    return bool(strides) and strides[-1] == 1 and all(s == 0 for s in strides[:-1])


def _is_interleaved_read(strides: tuple[int | None, ...]) -> bool:
    """Whether a load's `access_strides` are those of a read with stride
    `INTERLEAVED_READ_STRIDE` (`is_vector_access`)."""
    return (
        bool(strides)
        and strides[-1] == INTERLEAVED_READ_STRIDE
        and all(s == 0 for s in strides[:-1])
    )


def has_strided_access(loop: ForOp) -> bool:
    """Whether a load or store in `loop` is neither contiguous nor invariant in its iterations."""
    iv = loop.induction_var
    return not all(
        is_invariant(access, iv) or is_unit_stride(access, iv) for access in memory_accesses([loop])
    )


def is_invariant(access: MemoryAccess, iv: SSAValue) -> bool:
    """Whether `access` touches the same element in every iteration of `iv`."""
    return not any(depends_on(index, iv) for index in access.indices)


INTERLEAVED_READ_STRIDE = 2
"""Reads with this innermost stride vectorise as wide loads and shuffles (`is_vector_access`)."""


def is_vector_access(access: MemoryAccess, iv: SSAValue) -> bool:
    """Whether one vector iteration of `iv` makes `access` whole-vector memory operations (or
    one scalar): invariant, contiguous, or a read with stride `INTERLEAVED_READ_STRIDE` (a
    pooling window with stride 2: LLVM's vectoriser loads two vectors and keeps every other
    lane, an interleaved group, rather than gathering)."""
    return is_invariant(access, iv) or _vector_strides(access, access_strides(access, iv))


def _vector_strides(access: MemoryAccess, strides: tuple[int | None, ...]) -> bool:
    """Whether `access` with these `access_strides` is contiguous or an interleaved read."""
    return _is_unit(strides) or (
        isinstance(access, memref.LoadOp) and _is_interleaved_read(strides)
    )


def is_vector_loop_body(accesses: Sequence[MemoryAccess], iv: SSAValue) -> bool:
    """Whether a loop over `iv` with these accesses vectorises into whole-vector memory
    operations: every access `is_vector_access`, at least one contiguous."""
    strides: dict[int, tuple[int | None, ...]] = {}  # (the IR does not change meanwhile)

    def strides_of(access: MemoryAccess) -> tuple[int | None, ...]:
        key = id(access)
        if key not in strides:
            strides[key] = access_strides(access, iv)
        return strides[key]

    for access in accesses:
        if is_invariant(access, iv):
            continue
        if not _vector_strides(access, strides_of(access)):
            return False
    return any(_is_unit(strides_of(a)) for a in accesses)
