"""The loop-nest builder that every legalization of `legalize-ops` is written with.

A `KernelBuilder` grows one `loop.func` kernel, top to bottom, following the kernel conventions
shared with annotate-pattern, fuse-tir and the LLVM lowering:

- the kernel takes one `memref<shape x T>` per operand, then one per result, `T` the tensor's
  element type (`f32`, `i64`, `i32` or `i1`);
- the kernel body opens with its prologue: every index or float constant, created once per
  kernel, and every kernel-local buffer (`loop.alloc`);
- loop nests are `loop.for %i = %c0 to %cN step %c1`, one loop per dimension, outermost first;
- a compute block stores at the plain induction variables of its nest; a reduction is an init
  store, then the reduction loops holding a load / combine / store of the same element;
- a load that could leave its buffer (padding, concat) clamps its subscripts into range with
  `arith.maxsi`/`arith.minsi` and picks the real or the fill value with `arith.select`, so the
  code inside loops is straight-line and every access is in bounds;
- a broadcasting load indexes a unit dimension with `%c0` and drops missing leading dimensions.

```python
kb = KernelBuilder("relu", [(4, 8)], [(4, 8)])
with kb.nest((4, 8)) as ivs:
    x = kb.load(kb.inputs[0], ivs)
    kb.store(kb.arith(arith.MaximumfOp, x, kb.f32(0.0)), kb.outputs[0], ivs)
kernel = kb.finish()
```
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    TensorType,
    UnitAttr,
    f32,
)
from xdsl.ir import Attribute, Operation, OpResult, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.loop import op_builders
from fusion_compiler.dialects.loop.attributes import EXP_NO_OVERFLOW_ATTR
from fusion_compiler.dialects.shape_rules import Shape

Indices = Sequence[SSAValue]
"""The subscripts of one buffer access (empty for a rank-0 buffer)."""

Combine = (
    type[arith.AddfOp]
    | type[arith.MaximumfOp]
    | type[arith.MaxnumfOp]
    | Callable[["KernelBuilder", SSAValue, SSAValue], SSAValue]
)
"""What folds a reduction term into its accumulator: a scalar op class, `op(accumulator,
term)`, or a function `f(builder, accumulator, term)` that emits several (`nan_max`)."""

CONTRACT = arith.FastMathFlagsAttr([arith.FastMathFlag.ALLOW_CONTRACT])
"""The fast-math flags of a multiply-accumulate's `mulf` and `addf` (see `reduce`)."""


def _contract_product(value: SSAValue) -> bool:
    """Mark `value`'s `mulf` (if it is one) contractible; whether it was one."""
    if isinstance(value, OpResult) and isinstance(value.op, arith.MulfOp):
        value.op.fastmath = CONTRACT
        return True
    return False


Legalization = Callable[[Any, "KernelBuilder"], None]
"""Writes the body of the kernel of one graph op (its buffers are already the arguments)."""

NEG_INF = float("-inf")


def buffer_type(shape: Sequence[int] | MemRefType) -> MemRefType:
    """`memref<shape x f32>`: the buffer of an f32 tensor of that shape (a buffer type is
    returned as it is)."""
    if isinstance(shape, MemRefType):
        return shape
    return MemRefType(f32, list(shape))


@lru_cache(maxsize=4096)
def tensor_buffer_type(tensor: TensorType) -> MemRefType:
    """The buffer that holds a tensor of this type (its element type and shape). Kept per
    tensor type: xDSL takes about 50 us to make a memref type, and legalize-ops and
    lower-graph ask for the same few again and again."""
    return MemRefType(tensor.element_type, tensor.get_shape())


def buffer_shape(buffer: SSAValue) -> Shape:
    """The static shape of a kernel buffer."""
    typ = buffer.type
    assert isinstance(typ, MemRefType)
    return tuple(typ.get_shape())


def broadcast_indices(
    source: Shape, target: Shape, indices: Indices, zero: SSAValue
) -> list[SSAValue]:
    """Subscripts into a buffer of shape `source` that numpy-broadcasts to `target`, given the
    subscripts `indices` of the `target` element: missing leading dimensions are dropped and a
    unit dimension that is stretched is indexed by `zero`."""
    offset = len(target) - len(source)
    return [
        zero if size == 1 and target[offset + d] != 1 else indices[offset + d]
        for d, size in enumerate(source)
    ]


QUIET_NAN = struct.unpack("<f", struct.pack("<I", 0x7FC00000))[0]
"""The NaN `nan_max` returns (bits 0x7FC00000, whatever NaN came in)."""


def nan_max_ops(accumulator: SSAValue, term: SSAValue, quiet_nan: SSAValue) -> list[Operation]:
    """The four ops of `nan_max(accumulator, term)`, its result last (`cmpf ogt`, `select`,
    `cmpf uno`, `select` of `quiet_nan`, an `f32` constant holding `QUIET_NAN`: the shape
    `passes/schedule/max_chains.py` matches)."""
    greater = arith.CmpfOp(term, accumulator, "ogt")
    larger = arith.SelectOp(greater.result, term, accumulator)
    nan = arith.CmpfOp(term, term, "uno")
    return [greater, larger, nan, arith.SelectOp(nan.result, quiet_nan, larger.result)]


def nan_max(kb: KernelBuilder, accumulator: SSAValue, term: SSAValue) -> SSAValue:
    """`QUIET_NAN` if `term` is NaN, else `term` if it is greater than `accumulator`, else
    `accumulator`: from a `-inf` (or any non-NaN) start, a maximum that propagates NaN (a
    NaN term makes the result the canonical quiet NaN, which then stays) and keeps the
    earlier value on ties, so -0.0 and +0.0 are not ordered (as numpy's `maximum.reduce`,
    unlike `arith.maximumf`). Every NaN comes out as the same bits, whichever came in:
    balance-max-chains can then test a window for NaN apart from its maximum
    (`passes/schedule/max_chains.py`). max_pool2d's combine."""
    ops = nan_max_ops(accumulator, term, kb.f32(QUIET_NAN))
    for op in ops:
        kb.emit(op)
    return ops[-1].results[0]


class KernelBuilder:
    """Builds one `loop.func` kernel; see the module docstring for the shape of its body."""

    def __init__(
        self,
        name: str,
        input_shapes: Sequence[Shape | MemRefType],
        output_shapes: Sequence[Shape | MemRefType],
    ):
        """Buffers are given by shape (f32 elements) or by their `memref` type."""
        self.func = loop.FuncOp(
            name,
            [buffer_type(s) for s in input_shapes],
            [buffer_type(s) for s in output_shapes],
        )
        self.inputs = self.func.input_args
        self.outputs = self.func.output_args
        for prefix, args in (("in", self.inputs), ("out", self.outputs)):
            for position, arg in enumerate(args):
                arg.name_hint = f"{prefix}{position}"
        self._block = self.func.body.block
        terminator = self._block.last_op
        assert isinstance(terminator, loop.ReturnOp)
        self._point = InsertPoint.before(terminator)
        self._prologue_end: Operation | None = None
        self._last_alloc: Operation | None = None
        self._index_constants: dict[int, SSAValue] = {}
        self._float_constants: dict[bytes, SSAValue] = {}
        self._integer_constants: dict[tuple[int, Attribute], SSAValue] = {}

    def finish(self) -> loop.FuncOp:
        """Hand over the finished kernel (it ends with the `loop.return` it was created with)."""
        return self.func

    # -----------------------------------------------------------------------------------------
    # Emitting ops
    # -----------------------------------------------------------------------------------------

    def emit(self, op: Operation) -> Operation:
        """Insert `op` at the current point."""
        Rewriter.insert_op(op, self._point)
        return op

    def _emit_in_prologue(self, op: Operation, hint: str) -> SSAValue:
        """Insert `op` at the end of the prologue (constants) or, for `loop.alloc`, after the
        allocations that open it."""
        is_alloc = isinstance(op, loop.AllocOp)
        anchor = self._last_alloc if is_alloc else self._prologue_end
        point = InsertPoint.at_start(self._block) if anchor is None else InsertPoint.after(anchor)
        Rewriter.insert_op(op, point)
        if is_alloc:
            if self._prologue_end is self._last_alloc:
                self._prologue_end = op
            self._last_alloc = op
        else:
            self._prologue_end = op
        op.results[0].name_hint = hint
        return op.results[0]

    def index(self, value: int) -> SSAValue:
        """The `index` constant `value` (one op per kernel)."""
        if value not in self._index_constants:
            constant = op_builders.index_constant(value)
            self._index_constants[value] = self._emit_in_prologue(constant, f"c{value}")
        return self._index_constants[value]

    def f32(self, value: float) -> SSAValue:
        """The `f32` constant `value`, rounded to f32 (one op per kernel and bit pattern)."""
        key = struct.pack("<f", value)
        if key not in self._float_constants:
            constant = arith.ConstantOp(FloatAttr(struct.unpack("<f", key)[0], f32))
            self._float_constants[key] = self._emit_in_prologue(constant, "cst")
        return self._float_constants[key]

    def integer(self, value: int, element_type: Attribute) -> SSAValue:
        """The integer (or `i1`) constant `value` of `element_type` (one op per kernel)."""
        assert isinstance(element_type, IntegerType)
        key = (value, element_type)
        if key not in self._integer_constants:
            constant = arith.ConstantOp(IntegerAttr(value, element_type))
            self._integer_constants[key] = self._emit_in_prologue(constant, "cst")
        return self._integer_constants[key]

    def zero(self, element_type: Attribute) -> SSAValue:
        """The zero of a float or integer element type."""
        if isinstance(element_type, IntegerType):
            return self.integer(0, element_type)
        return self.f32(0.0)

    def alloc(self, shape: Sequence[int] | MemRefType, hint: str) -> SSAValue:
        """A kernel-local buffer of `shape` (f32 elements) or of a `memref` type, allocated in
        the prologue."""
        return self._emit_in_prologue(loop.AllocOp(buffer_type(shape)), hint)

    def arith(self, op_type: Callable[..., Operation], *operands: SSAValue | str) -> SSAValue:
        """The result of a scalar `arith`/`math` op: `kb.arith(arith.AddfOp, a, b)`,
        `kb.arith(arith.CmpiOp, a, b, "slt")`."""
        return self.emit(op_type(*operands)).results[0]

    def exp_no_overflow(self, x: SSAValue) -> SSAValue:
        """`math.exp` of an argument that is at most 43 or NaN by construction, marked so
        (`EXP_NO_OVERFLOW_ATTR`): its expansion then skips the overflow handling."""
        op = self.emit(math.ExpOp(x))
        op.attributes[EXP_NO_OVERFLOW_ATTR] = UnitAttr()
        return op.results[0]

    def load(self, buffer: SSAValue, indices: Indices) -> SSAValue:
        return self.emit(op_builders.load(buffer, list(indices))).results[0]

    def store(self, value: SSAValue, buffer: SSAValue, indices: Indices) -> None:
        self.emit(op_builders.store(value, buffer, list(indices)))

    def load_broadcast(self, buffer: SSAValue, target: Shape, indices: Indices) -> SSAValue:
        """Load the element of `buffer` that numpy-broadcasts to `target[indices]`."""
        subscripts = broadcast_indices(buffer_shape(buffer), target, indices, self.index(0))
        return self.load(buffer, subscripts)

    # -----------------------------------------------------------------------------------------
    # Index arithmetic
    # -----------------------------------------------------------------------------------------

    def affine(self, terms: Sequence[tuple[SSAValue, int]], offset: int = 0) -> SSAValue:
        """`sum(coefficient * value) + offset`, emitted with as few ops as possible: positive
        terms and offset first, negative ones subtracted last, so that no intermediate value is
        below the (non-negative) result."""
        positive = [(v, c) for v, c in terms if c > 0]
        negative = [(v, -c) for v, c in terms if c < 0]
        total: SSAValue | None = None
        for value, coefficient in positive:
            total = self._accumulate(total, self._scaled(value, coefficient))
        if offset > 0 or total is None:
            total = self._accumulate(total, self.index(max(offset, 0)))
        for value, coefficient in negative:
            total = self.arith(arith.SubiOp, total, self._scaled(value, coefficient))
        if offset < 0:
            total = self.arith(arith.SubiOp, total, self.index(-offset))
        return total

    def _scaled(self, value: SSAValue, coefficient: int) -> SSAValue:
        return (
            value if coefficient == 1 else self.arith(arith.MuliOp, value, self.index(coefficient))
        )

    def _accumulate(self, total: SSAValue | None, term: SSAValue) -> SSAValue:
        return term if total is None else self.arith(arith.AddiOp, total, term)

    def divide(self, value: SSAValue, divisor: int) -> SSAValue:
        """`value / divisor` on non-negative indices."""
        return value if divisor == 1 else self.arith(arith.DivUIOp, value, self.index(divisor))

    def clamp(self, raw: SSAValue, lo: int, hi: int, extent: int) -> SSAValue:
        """`raw` (in `[0, extent)`) clamped into `[lo, hi)`, then shifted down by `lo`: the
        in-bounds subscript of a buffer of `hi - lo` elements starting at `raw == lo`."""
        if lo == 0 and hi >= extent:
            return raw
        if hi - lo == 1:
            return self.index(0)
        index = raw
        if lo > 0:
            index = self.arith(arith.MaxSIOp, index, self.index(lo))
        if hi < extent:
            index = self.arith(arith.MinSIOp, index, self.index(hi - 1))
        if lo > 0:
            index = self.arith(arith.SubiOp, index, self.index(lo))
        return index

    def in_range(self, raw: SSAValue, lo: int, hi: int, extent: int) -> list[SSAValue]:
        """The `i1` conditions (none when always true) that `raw`, in `[0, extent)`, lies in
        `[lo, hi)`."""
        conditions = []
        if lo > 0:
            conditions.append(self.arith(arith.CmpiOp, raw, self.index(lo), "sge"))
        if hi < extent:
            conditions.append(self.arith(arith.CmpiOp, raw, self.index(hi), "slt"))
        return conditions

    def guard(self, value: SSAValue, conditions: Sequence[SSAValue], fill: float) -> SSAValue:
        """`value` where every condition holds, otherwise `fill` (one `arith.select` each)."""
        for condition in conditions:
            value = self.arith(arith.SelectOp, condition, value, self.f32(fill))
        return value

    # -----------------------------------------------------------------------------------------
    # Loop nests and blocks
    # -----------------------------------------------------------------------------------------

    @contextmanager
    def nest(self, extents: Sequence[int], hint: str = "i") -> Iterator[list[SSAValue]]:
        """A perfect nest of `loop.for`s over `extents` (outermost first); the body of the
        innermost loop is the insertion point inside the `with`. Yields the induction
        variables; an empty `extents` yields no loop and no variable."""
        saved = self._point
        ivs: list[SSAValue] = []
        for extent in extents:
            for_op = op_builders.for_loop(
                self.index(0), self.index(extent), self.index(1), loop.LoopKind.SERIAL
            )
            self.emit(for_op)
            for_op.induction_var.name_hint = hint
            ivs.append(for_op.induction_var)
            terminator = for_op.body.block.last_op
            assert terminator is not None
            self._point = InsertPoint.before(terminator)
        try:
            yield ivs
        finally:
            self._point = saved

    @contextmanager
    def nest_indices(self, shape: Shape, unit_axes: Sequence[int] = ()) -> Iterator[list[SSAValue]]:
        """Like `nest` over `shape`, except that the axes in `unit_axes` (unit axes, e.g. the
        axes a keepdims reduction kept) get no loop; yields one subscript per axis of `shape`,
        `%c0` for those axes."""
        looped = [d for d in range(len(shape)) if d not in unit_axes]
        with self.nest([shape[d] for d in looped]) as ivs:
            by_axis = dict(zip(looped, ivs, strict=True))
            yield [by_axis.get(d, self.index(0)) for d in range(len(shape))]

    def reduce(
        self,
        accumulator: SSAValue,
        indices: Indices,
        init: float,
        extents: Sequence[int],
        term: Callable[[list[SSAValue]], SSAValue],
        combine: Combine,
    ) -> None:
        """`acc[indices] = init`, then for every point `k` of `extents` (the reduction loops):
        `acc[indices] = combine(acc[indices], term(k))`.

        A sum of products (matmul, convolution, sum of squares) is a multiply-accumulate: its
        `mulf` and `addf` carry the `contract` fast-math flag, and convert-loop-to-llvm makes
        each such pair one fused multiply-add (one rounding instead of two: twice the
        arithmetic throughput). Every build of a kernel, fused or not, scheduled or not, has
        the same pairs, so they all compute the same bits (`lowering/contraction.py`)."""
        self.store(self.f32(init), accumulator, indices)
        with self.nest(extents, hint="k") as ks:
            self.accumulate(accumulator, indices, term(ks), combine)

    def accumulate(
        self, accumulator: SSAValue, indices: Indices, value: SSAValue, combine: Combine
    ) -> None:
        """One reduction update `acc[indices] = combine(acc[indices], value)`; a product
        added is a multiply-accumulate (`contract`, see `reduce`)."""
        old = self.load(accumulator, indices)
        if not isinstance(combine, type):
            self.store(combine(self, old, value), accumulator, indices)
            return
        update = self.emit(combine(old, value))
        if isinstance(update, arith.AddfOp) and _contract_product(value):
            update.fastmath = CONTRACT
        self.store(update.results[0], accumulator, indices)

    def pad(
        self, source: SSAValue, pads: Sequence[tuple[int, int]], fill: float, hint: str = "pad"
    ) -> SSAValue:
        """A pad block: a local buffer holding `source` with `pads[d] = (before, after)` extra
        elements along each axis `d`, filled with `fill`."""
        shape = buffer_shape(source)
        padded = [size + lo + hi for size, (lo, hi) in zip(shape, pads, strict=True)]
        buffer = self.alloc(padded, hint)
        with self.nest(padded) as ivs:
            indices, conditions = [], []
            for iv, size, extent, (lo, _) in zip(ivs, shape, padded, pads, strict=True):
                conditions += self.in_range(iv, lo, lo + size, extent)
                indices.append(self.clamp(iv, lo, lo + size, extent))
            value = self.guard(self.load(source, indices), conditions, fill)
            self.store(value, buffer, ivs)
        return buffer
