"""A profiled `loop.call` → the kernel's `llvm.call` between two clock reads (`profiling.py`).

    loop.call @k(%x, %y) {loop.profile_slot = 3, loop.profile_counters = @__fusion_profile_main}

becomes

    %t0 = llvm.call @__fusion_profile_clock() : () -> i64
    llvm.call @k(%x, %y)
    %t1 = llvm.call @__fusion_profile_clock() : () -> i64
    counters[3][ns] += %t1 - %t0;  counters[3][calls] += 1
    (first launch: counters[N][start] = %t0; last launch: counters[N][ns] += %t1 - start,
     counters[N][runs] += 1)

`@__fusion_profile_clock` (internal, defined once per module) returns libc's
`clock_gettime(CLOCK_MONOTONIC)` in nanoseconds. Plain `loop.call`s are left to
`loop_to_llvm.LowerCallPattern`.
"""

from __future__ import annotations

import time

from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, SymbolRefAttr, i32, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.lowering.llvm_builders import (
    add_symbol,
    conversion_cast,
    declare_function,
    enclosing_module,
    find_symbol,
)
from fusion_compiler.lowering.llvm_types import POINTER
from fusion_compiler.lowering.profiling import (
    CALLS,
    NANOSECONDS,
    PROFILE_COUNTERS_ATTR,
    PROFILE_SLOT_ATTR,
    ROW,
    RUN_START,
    launch_count,
)

CLOCK_FUNCTION = "__fusion_profile_clock"

NANOSECONDS_PER_SECOND = 1_000_000_000


def _constant(value: int, typ=i64) -> llvm.ConstantOp:
    return llvm.ConstantOp(IntegerAttr(value, typ), typ)


def _clock_body() -> Region:
    """`clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1e9 + ts.tv_nsec`."""
    one = _constant(1)
    timespec = llvm.AllocaOp(one, llvm.LLVMArrayType(2, i64), alignment=8)
    clock_id = _constant(time.CLOCK_MONOTONIC, i32)
    call = llvm.CallOp("clock_gettime", clock_id, timespec, return_type=i32)
    seconds = llvm.LoadOp(timespec, i64, alignment=8)
    field = llvm.GEPOp(timespec, [1], i64)
    fraction = llvm.LoadOp(field, i64, alignment=8)
    scale = _constant(NANOSECONDS_PER_SECOND)
    scaled = llvm.MulOp(seconds.dereferenced_value, scale.result)
    total = llvm.AddOp(scaled.res, fraction.dereferenced_value)
    ops = [one, timespec, clock_id, call, seconds, field, fraction, scale, scaled, total]
    return Region(Block([*ops, llvm.ReturnOp(total.res)]))


def _define_clock(rewriter: PatternRewriter, anchor: Operation) -> None:
    module = enclosing_module(anchor)
    if find_symbol(module, CLOCK_FUNCTION) is not None:
        return
    declare_function(rewriter, anchor, "clock_gettime", [i32, POINTER], i32)
    clock = llvm.FuncOp(
        CLOCK_FUNCTION,
        llvm.LLVMFunctionType([], i64),
        linkage=llvm.LinkageAttr("internal"),
        body=_clock_body(),
    )
    rewriter.insert(clock, InsertPoint.at_end(module.body.block))
    add_symbol(module, clock)


class _Counters:
    """Ops that add to cells of a counters global (collected in `ops`)."""

    def __init__(self, symbol: SymbolRefAttr):
        self.address = llvm.AddressOfOp(symbol.root_reference.data, POINTER)
        self.ops: list[Operation] = [self.address]

    def cell(self, index: int) -> SSAValue:
        pointer = llvm.GEPOp(self.address, [index], i64)
        self.ops.append(pointer)
        return pointer.result

    def load(self, index: int) -> SSAValue:
        value = llvm.LoadOp(self.cell(index), i64, alignment=8)
        self.ops.append(value)
        return value.dereferenced_value

    def store(self, value: SSAValue, index: int) -> None:
        self.ops.append(llvm.StoreOp(value, self.cell(index), alignment=8))

    def add(self, index: int, amount: SSAValue) -> None:
        total = llvm.AddOp(self.load(index), amount)
        self.ops.append(total)
        self.store(total.res, index)

    def count(self, index: int) -> None:
        one = _constant(1)
        self.ops.append(one)
        self.add(index, one.result)

    def elapsed(self, end: SSAValue, start: SSAValue) -> SSAValue:
        difference = llvm.SubOp(end, start)
        self.ops.append(difference)
        return difference.res


class LowerProfiledCallPattern(RewritePattern):
    """A `loop.call` marked by `profiling.instrument_entry` → a timed `llvm.call`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.CallOp, rewriter: PatternRewriter, /) -> None:
        slot = op.attributes.get(PROFILE_SLOT_ATTR)
        symbol = op.attributes.get(PROFILE_COUNTERS_ATTR)
        if not isinstance(slot, IntegerAttr) or not isinstance(symbol, SymbolRefAttr):
            return
        global_op = find_symbol(enclosing_module(op), symbol.root_reference.data)
        if not isinstance(global_op, llvm.GlobalOp):  # (lower-graph{profile} defines it)
            raise CompileError(
                f"{op.name}: its profile counters {symbol} are not an llvm.mlir.global of "
                "this module",
                op,
            )
        run_row = launch_count(global_op) * ROW
        _define_clock(rewriter, op)
        start = llvm.CallOp(CLOCK_FUNCTION, return_type=i64)
        pointer = POINTER
        casts = [conversion_cast(buffer, pointer) for buffer in op.buffers]
        call = llvm.CallOp(op.callee, *(cast.results[0] for cast in casts))
        end = llvm.CallOp(CLOCK_FUNCTION, return_type=i64)
        counters = _Counters(symbol)
        row = slot.value.data * ROW
        counters.add(row + NANOSECONDS, counters.elapsed(end.returned, start.returned))
        counters.count(row + CALLS)
        if row == 0:
            counters.store(start.returned, run_row + RUN_START)
        if row + ROW == run_row:
            began = counters.load(run_row + RUN_START)
            counters.add(run_row + NANOSECONDS, counters.elapsed(end.returned, began))
            counters.count(run_row + CALLS)
        rewriter.replace(op, [start, *casts, call, end, *counters.ops], [])
