"""Deinterleaved buffers: a local buffer read only with a stride `s` along its last dimension
is laid out as `s` phase planes, so that every read walks consecutive elements.

A convolution or pooling window with stride 2 reads its padded input at columns `2c + kw`: a
vector of output columns loads every other element, which LLVM makes from two vector loads and
shuffles per tap (after unrolling a small plane, a tangle of scalar loads and stack traffic).
Stored as even and odd columns, `pad[y, x]` at `pad'[y, x % 2, x / 2]`, the same reads are
`pad'[y, kw % 2, c + kw / 2]`: contiguous. The writes change instead:

```
loop.for %x = 1 to 15 {                        loop.for %p = 1 to 8 {         (x = 2p: even)
  %v = load %in[%y - 1, %x - 1]          ->      %v = load %in[%y - 1, 2p - 1]
  store %v, %pad[%y, %x]                         store %v, %pad'[%y, 0, %p] }
}                                              loop.for %p = 0 to 7 {         (x = 2p + 1: odd)
                                                 %v = load %in[%y - 1, 2p]
... load %pad[%y, 2 * %c + 2] ...                store %v, %pad'[%y, 1, %p] }
                                               ... load %pad'[%y, 0, %c + 1] ...
```

Each writing loop runs as one loop per phase, over the iterations whose column falls in it
(the strided reads move to the writes, which read each input element once where the window
read it up to three times).

A read's subscript may also be `s * A + B`: `A` a sum of values with positive coefficients
(the vector loop's variable among them, with coefficient 1), `B` a sum of non-negative terms
of known range, as in an im2col panel of a stride-2 convolution packed by a loop over the
window's columns `kw` (`pad[..., 2 * (jt + jj) + kw]`); it reads `pad'[..., B % s, A + B / s]`,
the phase and the offset computed outside the vector loop when `B` is (`kw % 2`, `kw / 2`).

Legal when the buffer is a `loop.alloc` used only by loads and stores (its layout is invisible
outside them); every load subscripts the last dimension `s * a + k` (one value `a`, constants
`s >= 2` the same for all and `k >= 0`), `s * A + B` as above, or a constant; and every store
subscripts it with a constant, or with `iv + c` where `iv` is the variable of the loop
directly around the store, a loop of constant bounds and step 1 whose body holds no other
store, no loop and no load of the buffer. Such a loop's iterations write distinct elements
and read nothing another writes, so running them phase by phase stores the same values:
every read finds the value it found before, and the results are the same bits.

Profitable when some load's `a` (or a term of its `A`) is the variable of its innermost loop
(the loop that is vectorised); other buffers are left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, MemRefType, NoneAttr
from xdsl.ir import Block, Operation, Region, SSAValue

from fusion_compiler.dialects.loop import AllocOp, ForOp, FuncOp, YieldOp
from fusion_compiler.dialects.loop.queries import constant_index, loop_range
from fusion_compiler.passes.analysis.ir_walk import walk_ops
from fusion_compiler.passes.analysis.linear_index import IndexBuilder, LinearForm, linear_form
from fusion_compiler.passes.analysis.loop_access import (
    MemoryAccess,
    is_innermost,
    only_accesses,
)
from fusion_compiler.passes.schedule.loop_transforms import alloc_like, index_constant
from fusion_compiler.passes.schedule.normalize import hoist_constants
from fusion_compiler.passes.schedule.quotient_folding import form_range

Constant = Callable[[int], SSAValue]
"""An `index` constant of the kernel, by value."""

MAX_PHASES = 4
"""The largest stride deinterleaved (the buffer grows by up to `s - 1` elements per row)."""


@dataclass(frozen=True)
class _Read:
    load: memref.LoadOp
    quotient: LinearForm
    """`A` of the subscript `s * A + B` (`a` of `s * a + k`; empty for a constant subscript)."""
    remainder: LinearForm
    """`B` (the constant `k`, or the constant subscript)."""


@dataclass(frozen=True)
class _Write:
    store: memref.StoreOp
    loop: ForOp | None
    """The loop whose variable `iv` subscripts the store as `iv + offset`; None for a constant
    subscript (`offset`)."""
    offset: int


@dataclass(frozen=True)
class Deinterleaving:
    """How one buffer is deinterleaved: its stride, reads and writes."""

    alloc: AllocOp
    stride: int
    reads: tuple[_Read, ...]
    writes: tuple[_Write, ...]


def _read(load: memref.LoadOp) -> tuple[int, _Read] | None:
    """The stride and form of `load`'s last subscript (stride 0 for a constant): `s * a + k`,
    or `s * A + B` with `s` the coefficient of the variable of the vector loop around it."""
    form = linear_form(load.indices[-1])
    if not form.terms:
        return (0, _Read(load, LinearForm(), form)) if form.constant >= 0 else None
    if len(form.terms) == 1:
        ((atom, stride),) = form.terms.items()
    else:
        loop = load.parent_op()
        if not isinstance(loop, ForOp) or not is_innermost(loop):
            return None
        stride = form.coefficient(loop.induction_var)
    if stride < 2:
        return None
    quotient = {a: c // stride for a, c in form.terms.items() if c % stride == 0}
    remainder = LinearForm({a: c for a, c in form.terms.items() if c % stride}, form.constant)
    if any(c <= 0 for c in quotient.values()) or form_range(remainder) is None:
        return None
    return stride, _Read(load, LinearForm(quotient), remainder)


def _write(store: memref.StoreOp, buffer: SSAValue) -> _Write | None:
    """The form of `store`'s last subscript, if its loop may run phase by phase."""
    index = store.indices[-1]
    constant = constant_index(index)
    if constant is not None:
        return _Write(store, None, constant)
    loop = store.parent_op()
    if not isinstance(loop, ForOp):
        return None
    bounds = loop_range(loop)
    form = linear_form(index)
    if bounds is None or bounds[2] != 1 or form.terms != {loop.induction_var: 1}:
        return None
    for op in loop.body.block.ops:
        if isinstance(op, ForOp) or (isinstance(op, memref.StoreOp) and op is not store):
            return None
        if isinstance(op, memref.LoadOp) and op.memref is buffer:
            return None
    return _Write(store, loop, form.constant)


def deinterleaving(alloc: AllocOp) -> Deinterleaving | None:
    """How `alloc`'s buffer is deinterleaved, or None (module docstring)."""
    buffer = alloc.result
    buffer_type = buffer.type
    if (
        not isinstance(buffer_type, MemRefType)
        or not buffer_type.get_shape()
        or not buffer_type.has_static_shape()
        or not isinstance(buffer_type.layout, NoneAttr)
    ):
        return None
    accesses = only_accesses(buffer)
    if accesses is None:
        return None
    strides: set[int] = set()
    reads: list[_Read] = []
    writes: list[_Write] = []
    for access in accesses:
        if isinstance(access, memref.LoadOp):
            found = _read(access)
            if found is None:
                return None
            strides.add(found[0])
            reads.append(found[1])
        else:
            write = _write(access, buffer)
            if write is None:
                return None
            writes.append(write)
    strides.discard(0)
    if len(strides) != 1 or not 2 <= (stride := strides.pop()) <= MAX_PHASES:
        return None
    if not any(_vectorised(read) for read in reads):
        return None
    return Deinterleaving(alloc, stride, tuple(reads), tuple(writes))


def _vectorised(read: _Read) -> bool:
    """Whether `read` walks the variable of its innermost loop (the vector loop)."""
    loop = read.load.parent_op()
    return (
        isinstance(loop, ForOp)
        and is_innermost(loop)
        and read.quotient.coefficient(loop.induction_var) == 1
    )


def deinterleave(plan: Deinterleaving) -> None:
    """Lay out `plan`'s buffer as phase planes: new buffer, reads and writes (module docstring)."""
    alloc, stride = plan.alloc, plan.stride
    buffer_type = alloc.result.type
    assert isinstance(buffer_type, MemRefType)
    *lead, extent = buffer_type.get_shape()
    shape = [*lead, stride, -(-extent // stride)]
    planes = alloc_like(alloc, MemRefType(buffer_type.element_type, shape))

    def const(value: int) -> SSAValue:  # duplicates merge in `deinterleave_buffers`
        return index_constant(value, planes)

    for read in plan.reads:
        _redirect_read(read, planes.result, stride, const)
    for write in plan.writes:
        if write.loop is None:
            last = const(write.offset % stride), const(write.offset // stride)
            _redirect(write.store, 1, planes.result, last)
        else:
            _split_by_phase(write, planes.result, stride, const)
    alloc.detach()
    alloc.erase()


def _redirect(
    access: MemoryAccess, at: int, planes: SSAValue, last: tuple[SSAValue, SSAValue]
) -> None:
    """Point `access` (its buffer operand at `at`) at `planes`, its last subscript replaced by
    the (phase, position) pair `last`."""
    operands = list(access.operands)
    operands[at] = planes
    access.operands = (*operands[:-1], *last)


def _redirect_read(read: _Read, planes: SSAValue, stride: int, const: Constant) -> None:
    """Point `read` at `planes`: `s * A + B` becomes `(B % s, A + B / s)`."""
    build = IndexBuilder(read.load)
    remainder = read.remainder
    if remainder.terms:
        value = build.form(remainder)
        phase = build.emit(arith.RemUIOp(value, const(stride)))
        carry = LinearForm({build.emit(arith.DivUIOp(value, const(stride))): 1})
    else:
        phase = const(remainder.constant % stride)
        carry = LinearForm({}, remainder.constant // stride)
    quotient = read.quotient.plus(carry)
    if not quotient.terms:
        _redirect(read.load, 0, planes, (phase, const(quotient.constant)))
        return
    _redirect(read.load, 0, planes, (phase, build.form(quotient)))


def _split_by_phase(write: _Write, planes: SSAValue, stride: int, const: Constant) -> None:
    """Replace the loop of `write` by one loop per phase `b` over the positions `p` whose column
    `s p + b` it writes (as `iv = s p + b - offset`), in phase order."""
    loop = write.loop
    assert loop is not None
    bounds = loop_range(loop)
    assert bounds is not None
    lb, ub, _ = bounds
    block = loop.parent_block()
    assert block is not None
    for phase in range(stride):
        shift = phase - write.offset  # iv = stride * p + shift
        first, end = -(-(lb - shift) // stride), -(-(ub - shift) // stride)
        if first >= end:
            continue
        body = Block(arg_types=[IndexType()])
        position = body.args[0]
        position.name_hint = "p"
        column: Operation = arith.MuliOp(position, const(stride))
        body.add_op(column)
        if shift:
            column = arith.AddiOp(column.results[0], const(shift))
            body.add_op(column)
        mapping: dict[SSAValue, SSAValue] = {loop.induction_var: column.results[0]}
        for op in loop.body.block.ops:
            if isinstance(op, YieldOp):
                continue
            clone = op.clone(value_mapper=mapping)
            body.add_op(clone)
            mapping.update(zip(op.results, clone.results, strict=True))
            if op is write.store:
                assert isinstance(clone, memref.StoreOp)
                _redirect(clone, 1, planes, (const(phase), position))
        body.add_op(YieldOp())
        new = ForOp(const(first), const(end), const(1), Region(body), loop.loop_kind)
        block.insert_op_before(new, loop)
    loop.detach()
    loop.erase()


def deinterleave_buffers(kernel: FuncOp) -> int:
    """Deinterleave every buffer of `kernel` that may be; returns how many. Each buffer is
    analysed just before its rewrite: an earlier buffer's writing loops may have held reads
    of it, which their phase loops cloned."""
    count = 0
    for alloc in [op for op in walk_ops(kernel) if isinstance(op, AllocOp)]:
        if (plan := deinterleaving(alloc)) is not None:
            deinterleave(plan)
            count += 1
    if count:
        hoist_constants(kernel)  # one constant per value
    return count
