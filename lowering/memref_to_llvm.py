"""`memref.load` / `memref.store` / `loop.alloc` → pointer arithmetic and memory calls.

A buffer is a bare `!llvm.ptr` to its first element. An access `%m[%i, %j]` to a statically
shaped, row-major memref is one GEP over the array type of its rows, whose indices LLVM
scales itself:

    %p = llvm.getelementptr inbounds %ptr[%i, %j] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<53 x f32>

and an access to a static `strided<...>` layout is linearised with its strides into one
element offset:

    %off = i * stride_0 + j * stride_1 (+ offset)        (index arithmetic, `nsw`)
    %p   = llvm.getelementptr inbounds %ptr[%off] : (!llvm.ptr, i64) -> !llvm.ptr, f32

Either way LLVM sees a simple affine address per access, which its loop vectoriser handles
(xDSL's `ptr` route casts pointers to integers and back, which defeats vectorisation). The
first form is a quarter of the ops to build (the pass's main cost: squeezenet's units convert
in 30% less time, and LLVM translates and optimises them in 18% less), and LLVM keeps its
`inbounds` through optimisation.

*Window loads.* In a `vectorized` loop over `x`, the loads `%m[..., x]`, `%m[..., x + 1]`,
`%m[..., x + 2]` of a window (a depthwise convolution's taps, a pooling window) read in
iteration `x + 1` what the load at the next offset read in iteration `x`. LLVM's GVN sees
that (its load PRE translates the address around the back edge) and carries the values from
one iteration to the next; the vectoriser then builds each shifted vector from two earlier
ones, which on AVX2 is three or four shuffles (`vperm2f128`, `vshufps`) where an unaligned
load is one instruction on a load port. So the taps of a window (`window_loads`: loads of
one buffer at `x + T + c` for one `x + T` and constants `c` one apart) address from the
buffer shifted by `c - c_min` steps of its last dimension, at `x + T + c_min`:
`gep inbounds (gep inbounds %ptr[c - c_min]), [..., x + T + c_min]`, the same address, which
GVN does not translate into another tap's: each tap stays a load. On a Zen 3 (1 thread,
`bench/layers.py` shapes, two processes of 30 rounds each) the depthwise conv3x3 136x28x28
took 0.109-0.110 ms with the carried values and 0.056 ms with loads.

A `loop.alloc` becomes, at the start of the kernel's entry block (so that it is allocated
once per kernel call even if it appears inside a loop):

- `llvm.alloca` (64-byte aligned) if the buffer is at most `stack_limit` bytes
  (default `DEFAULT_STACK_LIMIT` = 4 KiB: small enough that a kernel's stack frame stays
  far below the smallest thread stacks the parallel runtime will use);
- otherwise `aligned_alloc(64, size rounded up to 64)`, with a `free` before every return;
- an entry's slot kept between calls (`fusion.kept`) above that size: taken from its global
  and given back before every return (`kept_buffers.py`).

A `loop.prefetch` becomes the address of its element and a call of `llvm.prefetch`.

Memref values that are still needed as memrefs meet their pointers through
`builtin.unrealized_conversion_cast`, which the pass reconciles at the end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from math import prod

from xdsl.dialects import arith, llvm, memref
from xdsl.dialects.builtin import (
    IntAttr,
    IntegerAttr,
    MemRefType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.loop.attributes import KEPT_BUFFER_ATTR, LoopKind
from fusion_compiler.dialects.loop.op_builders import index_constant
from fusion_compiler.dialects.loop.queries import constant_index, digit_runs
from fusion_compiler.lowering.jit import BUFFER_ALIGNMENT
from fusion_compiler.lowering.kept_buffers import GIVE_BUFFER, KEPT_PREFIX, TAKE_BUFFER
from fusion_compiler.lowering.llvm_builders import (
    add_symbol,
    call_function,
    constant,
    conversion_cast,
    converted,
    element_pointer,
    enclosing_module,
    find_symbol,
    intrinsic,
    load,
    offset_pointer,
    replace_op,
    store,
)
from fusion_compiler.lowering.llvm_types import POINTER, llvm_type, memory_type, storage_bytes
from fusion_compiler.passes.analysis.ir_walk import walk_ops
from fusion_compiler.passes.analysis.linear_index import IndexBuilder, LinearForm, linear_form

DEFAULT_STACK_LIMIT = 4096
"""Local buffers of at most this many bytes live on the stack."""


# ---------------------------------------------------------------------------------------------
# Addressing
# ---------------------------------------------------------------------------------------------


def static_layout(buffer_type: MemRefType) -> tuple[tuple[int, ...], int]:
    """The static strides and offset of `buffer_type`, in elements."""
    if any(dim < 0 for dim in buffer_type.get_shape()):
        raise DiagnosticException(f"dynamic shapes are not supported yet, got {buffer_type}")
    strides = buffer_type.get_strides()
    offset = buffer_type.get_offset()
    if strides is None or offset is None or any(s is None for s in strides):
        raise DiagnosticException(f"the layout of {buffer_type} has no static strides")
    return tuple(s for s in strides if s is not None), offset


def element_extent(buffer_type: MemRefType) -> int:
    """How many elements a buffer spans: one past its last element's linear offset."""
    shape = buffer_type.get_shape()
    if prod(shape) == 0:
        return 0
    strides, offset = static_layout(buffer_type)
    return (
        offset + sum((size - 1) * stride for size, stride in zip(shape, strides, strict=True)) + 1
    )


def linearize(
    indices: Sequence[SSAValue | int], buffer_type: MemRefType
) -> tuple[list[Operation], SSAValue]:
    """The element offset `sum(index_d * stride_d) + offset`, as `index` arithmetic (a constant
    index, given as an int, joins the offset)."""
    strides, offset = static_layout(buffer_type)
    nsw = arith.IntegerOverflowAttr([arith.IntegerOverflowFlag.NSW])
    ops: list[Operation] = []
    terms: list[SSAValue] = []
    for index, stride in zip(indices, strides, strict=True):
        if stride == 0:
            continue
        if isinstance(index, int):
            offset += index * stride
            continue
        if stride == 1:
            terms.append(index)
            continue
        factor = index_constant(stride)
        product = arith.MuliOp(index, factor, overflow=nsw)
        ops += [factor, product]
        terms.append(product.result)
    if offset != 0 or not terms:
        start = index_constant(offset)
        ops.append(start)
        terms.append(start.result)
    total = terms[0]
    for term in terms[1:]:
        add = arith.AddiOp(total, term, overflow=nsw)
        ops.append(add)
        total = add.result
    return ops, total


def undo_delinearization(
    indices: tuple[SSAValue, ...], buffer_type: MemRefType
) -> tuple[SSAValue | int, ...]:
    """`indices` with every run of subscripts that are the digits of one value `e` over their
    dimensions (`(e / n, e % n)` over a row of `n`; `(e / 9, e / 3 % 3, e % 3)` over 3 x 3,
    each stride the next one times its size; `queries.digit_runs`) replaced by
    `(0, ..., 0, e)`: the same element (`e / n * n + e % n = e` for the unsigned `e`),
    addressed as one affine term. A loop nest collapsed over several dimensions (the pixels of
    a 1x1 convolution, `p = h * W + w`; the window of a 3x3 one, `k = (c * 3 + kh) * 3 + kw`;
    an elementwise nest, collapse-nests) then reads and writes consecutive elements where LLVM
    would otherwise see gathers, scatters and divisions. The zeros are ints: constant
    subscripts of the address."""
    strides, _ = static_layout(buffer_type)
    result: list[SSAValue | int] = list(indices)
    for first, last, value in digit_runs(indices, buffer_type.get_shape(), strides):
        result[first:last] = [0] * (last - first)
        result[last] = value
    return tuple(result)


def row_major(buffer_type: MemRefType) -> bool:
    """Whether `buffer_type` is laid out densely in row-major order from its first element."""
    strides, offset = static_layout(buffer_type)
    shape = buffer_type.get_shape()
    dense = tuple(prod(shape[d + 1 :]) for d in range(len(shape)))
    return offset == 0 and strides == dense


@cache
def _rows(shape: tuple[int, ...], element: Attribute) -> Attribute:
    """The nested LLVM array type of a row-major buffer's dimensions after the first."""
    rows = element
    for size in reversed(shape):
        rows = llvm.LLVMArrayType(IntAttr(size), rows)
    return rows


def window_loads(module: Operation) -> dict[memref.LoadOp, int]:
    """The window loads of `module` (module docstring), with their shifts. In each
    `vectorized` loop over `x`, the loads of one buffer whose last subscripts are one form
    `x + T` (`linear_index`: `T` any other terms, the same for all) plus constants `c` are a
    window; each whose `c - 1` is among them (what GVN's load PRE would carry from the
    iteration before) gets the last subscript `x + T + c_min`, `c_min` the least of them
    (built before it: LLVM finds it equal to the others), and the shift `c - c_min`. Loads a
    row apart (a softmax's unrolled steps, 32 elements apart) are left alone. The subscripts
    are rewritten here, before the loops are lowered; `LowerLoadPattern` applies the shifts."""
    shifts: dict[memref.LoadOp, int] = {}
    for op in walk_ops(module):
        if not isinstance(op, loop.ForOp) or op.loop_kind != LoopKind.VECTORIZED:
            continue
        windows: dict[tuple, list[tuple[memref.LoadOp, LinearForm]]] = {}
        for access in op.body.block.ops:
            if not isinstance(access, memref.LoadOp) or not access.indices:
                continue  # (a scalar buffer's element has no subscript to shift)
            form = linear_form(access.indices[-1])
            if form.coefficient(op.induction_var) != 1:
                continue
            key = (access.memref, frozenset(form.terms.items()))
            windows.setdefault(key, []).append((access, form))
        for taps in windows.values():
            constants = {form.constant for _, form in taps}
            least = min(constants)
            for access, form in taps:
                if form.constant - 1 in constants:  # (what GVN would carry: one step apart)
                    base = LinearForm(form.terms, least)
                    access.operands = (*access.operands[:-1], IndexBuilder(access).form(base))
                    shifts[access] = form.constant - least
    return shifts


def element_address(
    buffer: SSAValue, indices: tuple[SSAValue, ...], shift: int = 0
) -> tuple[list[Operation], SSAValue]:
    """`getelementptr inbounds` to the element `buffer[indices]`: over the nested array type
    of a row-major buffer (one op, whose indices LLVM scales itself), else at the linearised
    element offset; from the buffer shifted by `shift` steps of its last dimension when given
    (a window load: then `indices` are those of the element `shift` steps before)."""
    buffer_type = buffer.type
    assert isinstance(buffer_type, MemRefType)
    subscripts = undo_delinearization(indices, buffer_type)
    pointer_ops, pointer = converted(buffer, POINTER)
    ops = [*pointer_ops]
    element = memory_type(buffer_type.element_type)  # i1 elements are bytes
    if shift:
        strides, _ = static_layout(buffer_type)
        shifted = offset_pointer(pointer, shift * strides[-1], element)
        ops.append(shifted)
        pointer = shifted.result
    if len(subscripts) > 1 and row_major(buffer_type):
        operands: list[SSAValue | int] = []
        for index in subscripts:
            if not isinstance(index, int) and (value := constant_index(index)) is not None:
                index = value
            if isinstance(index, int) and abs(index) < 2**31:  # (an i32 constant of the GEP)
                operands.append(index)
                continue
            if isinstance(index, int):
                constant_op = index_constant(index)
                ops.append(constant_op)
                index = constant_op.result
            cast_ops, subscript = converted(index, i64)
            ops += cast_ops
            operands.append(subscript)
        address = element_pointer(pointer, operands, _rows(buffer_type.get_shape()[1:], element))
        return [*ops, address], address.result
    offset_ops, offset = linearize(subscripts, buffer_type)
    offset64 = arith.IndexCastOp(offset, i64)
    address = element_pointer(pointer, [offset64.result], element)
    return [*ops, *offset_ops, offset64, address], address.result


@dataclass(frozen=True)
class LowerLoadPattern(RewritePattern):
    """`memref.load %m[%i, ...]` → `llvm.getelementptr` + `llvm.load`; a window load
    (`window_offsets`, from `window_loads` before the loops were lowered) from its buffer
    shifted by its offset along the last dimension."""

    window_offsets: Mapping[memref.LoadOp, int] = field(default_factory=dict)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter, /) -> None:
        shift = self.window_offsets.get(op, 0)
        address_ops, address = element_address(op.memref, tuple(op.indices), shift)
        element_type = op.res.type
        stored = memory_type(element_type)
        load_op = load(address, stored, storage_bytes(element_type))
        if stored == llvm_type(element_type):
            replace_op(rewriter, op, [*address_ops, load_op], [load_op.dereferenced_value])
            return
        narrow = llvm.TruncOp(load_op.dereferenced_value, llvm_type(element_type))
        replace_op(rewriter, op, [*address_ops, load_op, narrow], [narrow.res])


class LowerStorePattern(RewritePattern):
    """`memref.store %v, %m[%i, ...]` → `llvm.getelementptr` + `llvm.store`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter, /) -> None:
        address_ops, address = element_address(op.memref, tuple(op.indices))
        value, widen = op.value, []
        stored = memory_type(value.type)
        if stored != llvm_type(value.type):
            widen = [llvm.ZExtOp(value, stored)]
            value = widen[0].res
        store_op = store(value, address, storage_bytes(op.value.type))
        replace_op(rewriter, op, [*address_ops, *widen, store_op], [])


PREFETCH_FLAGS = (0, 3, 1)
"""`llvm.prefetch`'s operands after the address: a read (0), kept in every cache level
(locality 3), of data (1)."""


class LowerPrefetchPattern(RewritePattern):
    """`loop.prefetch %m[%i, ...]` → `llvm.getelementptr` + `llvm.prefetch` (`PREFETCH_FLAGS`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.PrefetchOp, rewriter: PatternRewriter, /) -> None:
        address_ops, address = element_address(op.buffer, tuple(op.indices))
        flags = [constant(flag, i32) for flag in PREFETCH_FLAGS]
        call = intrinsic(
            "prefetch", [address, *(f.result for f in flags)], None, overload_types=[POINTER]
        )
        replace_op(rewriter, op, [*address_ops, *flags, call], [])


# ---------------------------------------------------------------------------------------------
# Local buffers
# ---------------------------------------------------------------------------------------------


def _kernel_of(op: Operation) -> loop.FuncOp | llvm.FuncOp:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, loop.FuncOp | llvm.FuncOp):
        parent = parent.parent_op()
    if parent is None:
        raise DiagnosticException("'loop.alloc' outside a kernel")
    return parent


def _returns(kernel: Operation) -> list[Operation]:
    return [op for op in walk_ops(kernel) if isinstance(op, loop.ReturnOp | llvm.ReturnOp)]


def _round_up(value: int, multiple: int) -> int:
    return (value + multiple - 1) // multiple * multiple


@dataclass(frozen=True)
class LowerAllocPattern(RewritePattern):
    """`loop.alloc` → `llvm.alloca` (small) or `aligned_alloc` + `free` (large)."""

    stack_limit: int = DEFAULT_STACK_LIMIT

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.AllocOp, rewriter: PatternRewriter, /) -> None:
        buffer_type = op.result.type
        assert isinstance(buffer_type, MemRefType)
        kernel = _kernel_of(op)
        entry = kernel.body.blocks.first
        assert entry is not None
        count = element_extent(buffer_type)
        size = count * storage_bytes(buffer_type.element_type)
        if size <= self.stack_limit:
            ops, pointer = _stack_buffer(count, buffer_type)
        elif KEPT_BUFFER_ATTR in op.attributes:
            ops, pointer = _kept_buffer(rewriter, kernel, size)
        else:
            ops, pointer = self._heap_buffer(rewriter, kernel, size)
        cast = conversion_cast(pointer, buffer_type)
        rewriter.insert([*ops, cast], InsertPoint.at_start(entry))
        rewriter.replace(op, [], [cast.results[0]])

    @staticmethod
    def _heap_buffer(
        rewriter: PatternRewriter, kernel: Operation, size: int
    ) -> tuple[list[Operation], SSAValue]:
        alignment = constant(BUFFER_ALIGNMENT, i64)
        padded = constant(_round_up(size, BUFFER_ALIGNMENT), i64)
        pointer_type = POINTER
        allocate = call_function(
            rewriter, kernel, "aligned_alloc", [alignment.result, padded.result], pointer_type
        )
        assert allocate.returned is not None
        for ret in _returns(kernel):
            release = call_function(rewriter, kernel, "free", [allocate.returned])
            rewriter.insert(release, InsertPoint.before(ret))
        return [alignment, padded, allocate], allocate.returned


def _kept_buffer(
    rewriter: PatternRewriter, kernel: Operation, size: int
) -> tuple[list[Operation], SSAValue]:
    """The buffer of a kept slot: taken from a global of its own (`@__fusion_kept_<entry>_<n>`,
    numbered in the order the slots are lowered) and given back before every return."""
    module = enclosing_module(kernel)
    prefix = f"{KEPT_PREFIX}{_symbol(kernel)}_"
    taken = 0
    while find_symbol(module, f"{prefix}{taken}") is not None:
        taken += 1
    holder = llvm.GlobalOp(
        i64, f"{prefix}{taken}", "external", value=IntegerAttr(0, i64), alignment=8
    )
    rewriter.insert(holder, InsertPoint.at_end(module.body.block))
    add_symbol(module, holder)
    slot = llvm.AddressOfOp(holder.sym_name.data, POINTER)
    padded = constant(_round_up(size, BUFFER_ALIGNMENT), i64)
    take = call_function(rewriter, kernel, TAKE_BUFFER, [slot.result, padded.result], POINTER)
    assert take.returned is not None
    for ret in _returns(kernel):
        give = call_function(rewriter, kernel, GIVE_BUFFER, [slot.result, take.returned])
        rewriter.insert(give, InsertPoint.before(ret))
    return [slot, padded, take], take.returned


def _symbol(kernel: Operation) -> str:
    assert isinstance(kernel, loop.FuncOp | llvm.FuncOp)
    return kernel.sym_name.data


def _stack_buffer(count: int, buffer_type: MemRefType) -> tuple[list[Operation], SSAValue]:
    length = constant(count, i64)
    alloca = llvm.AllocaOp(
        length, memory_type(buffer_type.element_type), alignment=BUFFER_ALIGNMENT
    )
    return [length, alloca], alloca.results[0]
