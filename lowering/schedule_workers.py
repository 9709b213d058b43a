"""Kernels scheduled and compiled ahead, by worker processes: schedule-kernels on all cores.

schedule-kernels schedules each kernel on its own: what it makes of a kernel depends on the
kernel, on which of its inputs every launch passes a constant for, on the host and on the
options, nothing else (the schedule memo rests on this, `schedule_memo`). So when a compile
has enough kernels to schedule, the memo's `replay` hands them to `ScheduleWorkers` once the
fusion passes have run. It forks worker processes (they inherit the module: nothing is
serialised but what they return), which take the kernels one at a time, the largest first,
and for each:

1. move the kernel into a module of its own with one graph function that launches it, on
   function arguments but where every launch passes a constant: there, a copy of the first
   launch's constant (`launch_module`; prepack-weights packs it);
2. run schedule-kernels on that module (verified as the compile verifies), and note what it
   made of the kernel as the memo notes it (`ScheduleMemo.capture`): its record;
3. prepare the units of the scheduled kernel and of its packing kernels (convert-loop-to-llvm
   and LLVM IR, `native_units.prepare_one`), named by content as `native_units.name_by_content`
   names them after lower-graph, but not those the compile cache holds (`has_unit`: this
   process loads them);

and return the record and the prepared units. All of them are then compiled by LLVM
together (`native_units.compile_prepared`, in worker processes again), so that kernels of
one family (`kernel_families`) are compiled once. A kernel whose base name fewer than
`FAMILY_MIN_MEMBERS` kernels bear can join no family: its worker compiles its units through,
and a module with no such name forks no second round (shufflenet's compile from the parsed
module had become 3.52 -> 3.70 s, medians of four paired runs). The memo then stubs each of these kernels as it stubs a
kernel it replays from the cache; schedule-kernels, lower-graph and the entry units run in
this process as on a compile whose kernels all came from the memo; `compile_cache` takes the
units from here (`units`, by digest) and stores them with the records. The native code is
the same, unit for unit, as a compile in one process (tested).

A compile with few kernels to schedule (fewer than `SCHEDULE_PARALLEL_MIN_OPS` ops, at least
`BACKGROUND_MIN_OPS`: an op edit's new kernel) forks one worker instead, in the background
(`_in_background`): it sends each kernel's record (and its units' digests, `promised`) as
soon as the kernel is scheduled, then compiles the units, which `collect` receives once this
process has done the rest (the stubs, lower-graph, the entry units); LLVM's time on the new
kernel overlaps this process's.

Concats that lower-graph writes in place (`lower_graph.in_place_kernels`) do not go: they
never run, so nothing schedules or compiles them. A kernel a worker
could not schedule (a pass raised, or its launch could not be recorded) is left to this
process's schedule-kernels, which reports the error as a serial compile would.
Profiling builds do not use the memo, and so schedule in this process.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import TypeVar

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue

from fusion_compiler.dialects import graph, loop
from fusion_compiler.host import compile_jobs
from fusion_compiler.lowering.ir_hash import module_hash
from fusion_compiler.lowering.jit import NativeUnit
from fusion_compiler.lowering.llvm_codegen import StageTimings, merged_timings
from fusion_compiler.lowering.native_units import (
    FAMILY_MIN_MEMBERS,
    LowerToLLVMDialect,
    PreparedUnit,
    WorkerFailure,
    base_name,
    can_fork,
    compile_one,
    compile_prepared,
    families_enabled,
    name_by_content,
    op_count,
    prepare_one,
    run_in_workers,
    split_units,
    stub_digest,
)
from fusion_compiler.lowering.schedule_memo import Record, ScheduleMemo
from fusion_compiler.passes.analysis.launches import constant_inputs, kernel_launches

SCHEDULE_PARALLEL_MIN_OPS = 1000
"""The fewest ops (in the kernels to schedule, before scheduling) for which worker processes
pay for their fork: below, one worker in the background (`BACKGROUND_MIN_OPS`) or none."""

BACKGROUND_MIN_OPS = 48
"""The fewest ops (in the kernels to schedule) for which one background worker pays for its
fork: it schedules them, and compiles them while this process goes on (an op edit's new
kernels, `_an_edit`); below, schedule-kernels runs in this process and their units are
compiled with the rest."""

HasUnit = Callable[[str], bool]
"""Whether the compile cache holds the unit of a content digest (`compile_cache`'s)."""

ScheduleModule = Callable[[ModuleOp], None]
"""Runs schedule-kernels (with the compile's options and verification) on a module, in place
(the driver passes it)."""

_Unit = TypeVar("_Unit")

WORKER_STAGE = "schedule-kernels (workers)"
"""The stage name of the seconds the workers spent scheduling, summed over kernels."""


def launch_module(kernel: loop.FuncOp, calls: list[graph.CallLoopOp]) -> ModuleOp:
    """`kernel`, moved out of its module, and a graph function `@launch` that launches it once:
    on its arguments, but on a copy of the first launch's constant for each input every launch
    passes a constant for (`launches.constant_inputs`). Scheduled alone, the kernel becomes
    what it becomes in its module."""
    constants = constant_inputs(kernel, {kernel.sym_name.data: calls})
    first = calls[0]
    argument_types = [v.type for i, v in enumerate(first.inputs) if i not in constants]
    block = Block(arg_types=argument_types)
    arguments = iter(block.args)
    inputs: list[SSAValue] = []
    for index, value in enumerate(first.inputs):
        if index in constants:
            assert isinstance(value.owner, graph.ConstantOp)
            copy = value.owner.clone()
            block.add_op(copy)
            inputs.append(copy.results[0])
        else:
            inputs.append(next(arguments))
    result_types = [r.type for r in first.outputs]
    launch = graph.CallLoopOp(kernel.sym_name.data, inputs, result_types)
    block.add_ops([launch, func.ReturnOp(*launch.outputs)])
    function_type = FunctionType.from_lists(argument_types, result_types)
    function = func.FuncOp("launch", function_type, Region(block))
    kernel.detach()
    return ModuleOp([kernel, function])


@dataclass
class Scheduled:
    """What a worker made of one kernel."""

    record: Record | None
    units: dict[str, PreparedUnit | NativeUnit]
    """The units of the kernel and its packing kernels, by content digest: compiled, or
    prepared when they may join a kernel family."""
    timings: StageTimings


def schedule_alone(
    kernel: loop.FuncOp,
    calls: list[graph.CallLoopOp],
    schedule: str,
    schedule_module: ScheduleModule,
) -> tuple[Record | None, dict[str, ModuleOp], StageTimings]:
    """`kernel` scheduled alone (`launch_module`): its record (None when its launch could not
    be recorded), the units of it and its packing kernels by content digest, the seconds."""
    module = launch_module(kernel, calls)
    memo = ScheduleMemo(schedule, lambda key: None, lambda digest: False)
    memo.replay(module)
    start = time.perf_counter()
    schedule_module(module)
    timings: StageTimings = [(WORKER_STAGE, time.perf_counter() - start)]
    memo.capture(module)
    for op in list(module.ops):  # (the launch, with its constants, is not compiled)
        if not isinstance(op, loop.FuncOp):
            op.detach()
    units, digests, by_name = name_by_content(split_units(module), module_hash)
    records = list(memo.records(by_name).values())
    record = records[0] if len(records) == 1 else None
    return record, dict(zip(digests, units, strict=True)), timings


def schedule_and_compile(
    kernel: loop.FuncOp,
    calls: list[graph.CallLoopOp],
    schedule: str,
    schedule_module: ScheduleModule,
    lower: LowerToLLVMDialect,
    family: bool = True,
    has_unit: HasUnit | None = None,
) -> Scheduled:
    """`kernel` scheduled alone (`schedule_alone`) and its units prepared, for `family`
    (enough kernels of its base name for a kernel family), else compiled (in a worker); not
    those the cache holds (`has_unit`)."""
    record, units, timings = schedule_alone(kernel, calls, schedule, schedule_module)
    units = _not_held(units, has_unit)
    made: dict[str, PreparedUnit | NativeUnit] = {}
    for digest, unit in units.items():
        if family:
            made[digest] = prepare_one(unit, lower)
        else:
            made[digest], stages = compile_one(unit, lower)
            timings += stages
    return Scheduled(record, made, timings)


@dataclass
class ScheduleWorkers:
    """The memo's `ahead` (`ScheduleMemo.ahead`): kernels scheduled and compiled by worker
    processes when there are enough of them; the units made, by digest, and the seconds of
    each stage summed over kernels (with the wall time of the workers) are kept."""

    schedule: str
    schedule_module: ScheduleModule
    lower: LowerToLLVMDialect
    jobs: int | None = None
    units: dict[str, NativeUnit] = field(default_factory=dict)
    timings: StageTimings = field(default_factory=list)
    promised: set[str] = field(default_factory=set)
    """The digests of the units a background worker is compiling (`collect` waits for them)."""
    has_unit: HasUnit | None = None
    """Whether the cache holds a unit: the workers do not compile those (an edited kernel's
    packing kernel, unchanged: vgg19's op edit waited 0.05 s for its worker to compile it
    again), this process loads them."""
    _background: _Background | None = None

    def __call__(self, module: Operation, pending: Collection[str]) -> dict[str, Record]:
        jobs = compile_jobs() if self.jobs is None else self.jobs
        kernels = [
            op
            for op in module.ops  # type: ignore[attr-defined]
            if isinstance(op, loop.FuncOp) and op.sym_name.data in pending
        ]
        sizes = [op_count(kernel) for kernel in kernels]
        if jobs < 2 or not kernels or not can_fork():
            return {}
        launches = kernel_launches(module)  # type: ignore[arg-type]
        if len(kernels) < 2 or sum(sizes) < SCHEDULE_PARALLEL_MIN_OPS:
            if _an_edit(module, kernels, sizes):
                return self._in_background(kernels, launches)
            return {}
        bases = Counter(base_name(kernel.sym_name.data) for kernel in kernels)

        def task(index: int) -> Scheduled:
            kernel = kernels[index]
            calls = launches[kernel.sym_name.data]
            family = families_enabled() and (
                bases[base_name(kernel.sym_name.data)] >= FAMILY_MIN_MEMBERS
            )
            return schedule_and_compile(
                kernel,
                calls,
                self.schedule,
                self.schedule_module,
                self.lower,
                family,
                self.has_unit,
            )

        start = time.perf_counter()
        results = run_in_workers(task, sizes, jobs)
        made: dict[str, Record] = {}
        stages: StageTimings = []
        prepared: dict[str, PreparedUnit] = {}
        for kernel, result in zip(kernels, results, strict=True):
            if isinstance(result, WorkerFailure) or result.record is None:
                continue  # (scheduled again in this process, which reports any error)
            made[kernel.sym_name.data] = result.record
            for digest, unit in result.units.items():
                if isinstance(unit, NativeUnit):
                    self.units[digest] = unit
                else:
                    prepared[digest] = unit
            stages += result.timings
        compiled = compile_prepared(list(prepared.values()), jobs, stages)
        self.units.update(zip(prepared, compiled, strict=True))
        self.timings += merged_timings(stages)
        self.timings.append((f"kernel workers ({jobs} jobs, wall)", time.perf_counter() - start))
        return made

    # --- a few kernels: one worker in the background (an op edit's new kernel) ---

    def _in_background(
        self, kernels: list[loop.FuncOp], launches: dict[str, list[graph.CallLoopOp]]
    ) -> dict[str, Record]:
        """Forks one worker that schedules `kernels`, sends their records at once and then
        compiles their units, which `collect` receives: LLVM's time on them overlaps this
        process's (the stubs, the schedule of the others, lower-graph, the entry units)."""
        context = multiprocessing.get_context("fork")
        reader, writer = context.Pipe(duplex=False)
        arguments = (
            writer,
            kernels,
            launches,
            self.schedule,
            self.schedule_module,
            self.lower,
            self.has_unit,
        )
        start = time.perf_counter()
        process = context.Process(target=_background_work, args=arguments, daemon=True)
        process.start()
        writer.close()
        self._background = _Background(process, reader)
        made: dict[str, Record] = {}
        stages: StageTimings = []
        try:
            for _ in kernels:
                message = reader.recv()
                if message[0] != "record":
                    raise EOFError(message)
                _, name, record, digests, timings = message
                if record is not None:
                    made[name] = record
                    self.promised.update(digests)
                stages += timings
        except (EOFError, OSError):
            self.close()
            self.promised.clear()
            return {}
        self.timings += merged_timings(stages)
        self.timings.append(("kernel worker (background, records)", time.perf_counter() - start))
        return made

    def collect(self, timings: StageTimings | None = None) -> None:
        """Waits for the units the background worker compiles (those of `promised`) and keeps
        them in `units`; a unit it could not make stays missing. Their stages' seconds are
        appended to `timings` when given."""
        background = self._background
        if background is None:
            return
        start = time.perf_counter()
        stages: StageTimings = []
        try:
            while True:
                message = background.reader.recv()
                if message[0] != "unit":
                    break
                _, digest, unit, unit_stages = message
                self.units[digest] = unit
                stages += unit_stages
        except (EOFError, OSError):
            pass
        self.close()
        if timings is not None:
            timings += merged_timings(stages)
            timings.append(("kernel worker (background, wait)", time.perf_counter() - start))

    def close(self) -> None:
        """Ends the background worker (if any) and its pipe: one that has sent everything exits
        at once; one still at work (a compile that fell back, `MemoMiss`) is killed."""
        background, self._background = self._background, None
        if background is None:
            return
        background.reader.close()
        background.process.join(timeout=0.1)
        if background.process.is_alive():
            background.process.kill()
            background.process.join()


def _an_edit(module: Operation, kernels: list[loop.FuncOp], sizes: list[int]) -> bool:
    """Whether `kernels` (to schedule, of `sizes` ops) are an edit's few new kernels, for
    one background worker: fewer than a kernel family needs (compiled alone, they lose
    nothing), `BACKGROUND_MIN_OPS` or more in all, beside kernels the memo replayed (stubs)."""
    if len(kernels) >= FAMILY_MIN_MEMBERS or sum(sizes) < BACKGROUND_MIN_OPS:
        return False
    ops = module.ops  # type: ignore[attr-defined]
    return any(isinstance(op, loop.FuncOp) and stub_digest(op) is not None for op in ops)


def _background_work(
    writer: Connection,
    kernels: list[loop.FuncOp],
    launches: dict[str, list[graph.CallLoopOp]],
    schedule: str,
    schedule_module: ScheduleModule,
    lower: LowerToLLVMDialect,
    has_unit: HasUnit | None = None,
) -> None:
    """The background worker (a forked process): each kernel's record (with the digests of
    its units the cache does not hold) sent as soon as it is scheduled, then each of those
    units as it is compiled, then `done`; `failed` if anything raised."""
    try:
        made = []
        for kernel in kernels:
            name = kernel.sym_name.data
            try:
                record, units, timings = schedule_alone(
                    kernel, launches[name], schedule, schedule_module
                )
            except Exception:  # noqa: BLE001 - scheduled (and reported) by the parent
                record, units, timings = None, {}, []
            units = _not_held(units, has_unit) if record is not None else {}
            writer.send(("record", name, record, list(units), timings))
            made.append(units)
        for units in made:
            for digest, unit in units.items():
                writer.send(("unit", digest, *compile_one(unit, lower)))
        writer.send(("done",))
    except BaseException as err:  # noqa: BLE001 - the parent compiles without the memo
        with contextlib.suppress(BaseException):
            writer.send(("failed", f"{type(err).__name__}: {err}"))
    finally:
        os._exit(0)  # (nothing of the parent's to clean up or flush)


def _not_held(units: dict[str, _Unit], has_unit: HasUnit | None) -> dict[str, _Unit]:
    """`units` (by digest) but those the cache holds."""
    if has_unit is None:
        return units
    return {digest: unit for digest, unit in units.items() if not has_unit(digest)}


@dataclass
class _Background:
    process: multiprocessing.process.BaseProcess
    reader: Connection
