"""Profiling builds: a timer around every kernel launch of an entry, and its counters.

`lower-graph{profile=true}` calls `instrument_entry` on each entry it builds. The entry then
owns a module global, its *counters* (`@__fusion_profile_<entry>`, `counters_symbol`): one
row of `ROW` i64 cells per launch site (`loop.call`), in launch order, then one row for the
whole run:

    row k < N (launch k):  [nanoseconds, launches, FLOPs, compulsory bytes]
    row N (the run):       [nanoseconds, runs, start of the current run, 0]

FLOPs and bytes are those of one launch, computed when the model is compiled
(`fusion_dialects.loop.costs`; -1 when unknown); the runtime adds to the first two cells. Every profiled
`loop.call` carries `loop.profile_slot = k` and `loop.profile_counters = @<global>`;
`profile_to_llvm` brackets its `llvm.call` with two reads of `CLOCK_MONOTONIC` (wall time,
which for a launch on a thread team is the time until the team joins) and adds the
difference to row k. A run is timed from the start of its first launch to the end of its
last. A model compiled without profiling has none of this: no attribute, no global, no clock.

The counters live in the module, so the calls of one entry must not overlap in time (the
profiler runs an entry from one thread).
"""

from __future__ import annotations

import ctypes

import numpy as np
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    ModuleOp,
    SymbolRefAttr,
    TensorType,
    i64,
)
from xdsl.traits import SymbolTable

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.loop.costs import kernel_cost
from fusion_compiler.lowering.jit import JitModule

PROFILE_SLOT_ATTR = "loop.profile_slot"
"""On a profiled `loop.call`: its row in the counters."""

PROFILE_COUNTERS_ATTR = "loop.profile_counters"
"""On a profiled `loop.call` (and its entry): the symbol of the counters global."""

ROW = 4
"""The i64 cells of one row of the counters."""

NANOSECONDS, CALLS, FLOPS, BYTES = range(ROW)
"""The cells of a launch row."""

RUN_START = 2
"""The cell of the run row that holds the start of the current run."""

UNKNOWN = -1
"""The FLOPs cell of a kernel whose FLOPs are unknown."""


def counters_symbol(entry: str) -> str:
    """The name of the counters global of the entry `entry`."""
    return f"__fusion_profile_{entry}"


def instrument_entry(entry: loop.FuncOp, module: ModuleOp) -> None:
    """Marks every `loop.call` of `entry` for timing and adds its counters to `module`,
    initialised with each launch's static cost."""
    name = counters_symbol(entry.sym_name.data)
    symbol = SymbolRefAttr(name)
    calls = [op for op in entry.body.block.ops if isinstance(op, loop.CallOp)]
    cells: list[int] = []
    for slot, call in enumerate(calls):
        call.attributes[PROFILE_SLOT_ATTR] = IntegerAttr(slot, i64)
        call.attributes[PROFILE_COUNTERS_ATTR] = symbol
        kernel = SymbolTable.lookup_symbol(module, call.callee)
        assert isinstance(kernel, loop.FuncOp)
        cost = kernel_cost(kernel)
        cells += [0, 0, UNKNOWN if cost.flops is None else cost.flops, cost.bytes]
    cells += [0] * ROW
    entry.attributes[PROFILE_COUNTERS_ATTR] = symbol
    counters = llvm.GlobalOp(
        llvm.LLVMArrayType(len(cells), i64),
        name,
        "external",
        value=DenseIntOrFPElementsAttr.from_list(TensorType(i64, [len(cells)]), cells),
        alignment=8,
    )
    module.body.block.add_op(counters)


def launch_count(counters: llvm.GlobalOp) -> int:
    """The number of launch rows of a counters global (its run row excluded)."""
    array = counters.global_type
    assert isinstance(array, llvm.LLVMArrayType)
    return array.size.data // ROW - 1


def counters_of(jit: JitModule, entry: str, launches: int) -> np.ndarray | None:
    """The counters of `entry` (which launches `launches` kernels) as a writable
    `(launches + 1, ROW)` int64 array over the module's global, or None when the entry was
    compiled without profiling."""
    address = jit.global_address(counters_symbol(entry))
    if not address:
        return None
    cells = (ctypes.c_int64 * ((launches + 1) * ROW)).from_address(address)
    return np.ctypeslib.as_array(cells).reshape(launches + 1, ROW)
