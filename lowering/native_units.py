"""A lowered model compiled as separate units: one per kernel, one for the entry functions.

After lower-graph a model is its kernels (`loop.func`s over buffers) and its entry functions
(`loop.func`s marked `loop.bound_constants` that `loop.call` the kernels). `split_units` moves
each kernel into a module of its own and the entries into one more; each unit then goes
through convert-loop-to-llvm and LLVM (`llvm_codegen.compile_unit`) on its own, and
`jit.JitModule` links the units' object code into one engine, where the entries' calls
resolve to the kernels' code as a static linker would resolve them. The entry unit declares
the kernels it calls (`declare_callees`); the team size of parallel loops is declared by every
unit and defined once by the engine.

Three things follow:

- **A kernel-level cache.** Each unit is content-addressed by its own loop-level IR
  (`compile_cache`), so a model that shares kernels with one compiled before, or the same
  model with one layer changed, compiles only the units that are new.
- **Parallel compilation.** The dearest stages (convert-loop-to-llvm's rewriting in Python,
  LLVM's optimiser and code generator) run per unit, so units are compiled by worker
  processes, forked from this one once the passes have run (they inherit the lowered
  module: nothing is serialised but what they return, LLVM IR or object code). `FUSION_COMPILE_JOBS`
  sets their number (default: the CPUs this process may run on; 1 compiles in this
  process); small models compile in this process, where forking costs more than it saves.
  Most kernel units are in fact compiled earlier, by the workers that schedule them
  (`schedule_workers`, `run_in_workers`); what is left here is the entry units and the
  kernels those workers did not take.
- **Kernel families.** Units are prepared first (convert-loop-to-llvm, then printed: a
  kernel's as a template, `unit_template`) and given to LLVM together, so that kernels whose
  LLVM IR differs only in integers are compiled once (`kernel_families`, `compile_prepared`).

A kernel's unit is compiled under a symbol made from its content (`name_by_content`): the
name the passes gave it (`fused_conv2d_add_relu_15`) without its numeric suffixes, then a hash
of its IR. The suffixes count the kernels built before it, so editing one op renumbers every
kernel after it; the content name keeps their units (and cache entries) the same, and two
kernels of the same content are compiled once. Entries and reports keep the passes' names.

What LLVM no longer sees is a kernel and the entry that launches it in one module: it cannot
inline a kernel into its entry (kernels are loop nests launched once per call; their
arguments stay `noalias`, so nothing else about their code changes).
"""

from __future__ import annotations

import multiprocessing
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeGuard, TypeVar

from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Operation

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.loop.attributes import UNIT_DIGEST_ATTR
from fusion_compiler.host import compile_jobs
from fusion_compiler.lowering.jit import (
    CodegenTarget,
    KernelSignature,
    NativeUnit,
    kernel_signatures,
)
from fusion_compiler.lowering.kernel_families import family_groups, family_key, family_text
from fusion_compiler.lowering.llvm_codegen import (
    ENTRY_CODEGEN_LEVEL,
    StageTimings,
    compile_text,
    llvm_ir_template,
    llvm_ir_text,
    merged_timings,
)
from fusion_compiler.lowering.unit_template import UnitTemplate, render_plain
from fusion_compiler.passes.analysis.ir_walk import walk_ops

T = TypeVar("T")

PARALLEL_MIN_OPS = 500
"""The fewest ops (in the units to compile, before convert-loop-to-llvm) for which worker
processes pay for their fork. A unit's ops are a rough measure of its work: densenet121's
op edit compiles its new kernel (171 ops) in 0.19 s and its entry unit (435 ops) in 0.18
s; one worker each took 0.27-0.30 s where this process took 0.38-0.40 (three paired
runs)."""

LowerToLLVMDialect = Callable[[ModuleOp], None]
"""Runs convert-loop-to-llvm on a unit, in place (the driver passes it)."""


def is_entry(op: Operation) -> TypeGuard[loop.FuncOp]:
    """Whether `op` is an entry function made by lower-graph (it launches kernels)."""
    return isinstance(op, loop.FuncOp) and "loop.bound_constants" in op.attributes


def split_units(module: ModuleOp) -> list[ModuleOp]:
    """`module`'s kernels, each moved into a module of its own, then each load entry in one
    of its own, then one module with the other entry functions and every other top-level op
    (a profiling build's counters, which only the entries use); the ops are moved, not
    copied: `module` is left empty. (A concat that lower-graph writes in place is no kernel
    of `module` any more: it is neither scheduled nor compiled, `lower_graph.in_place_kernels`.)

    A load entry (`lower_graph.LOAD_ENTRY_ATTR`: it packs the weights once, when the model
    is loaded) is apart from its function's entry because it changes far less often: an
    edited op changes the entry's launches, rarely the packing of the weights (densenet121:
    its load entry's unit takes 0.08 s to compile, the entry's 0.52 s, one quiet run)."""
    from fusion_compiler.lowering.lower_graph import LOAD_ENTRY_ATTR

    ops = list(module.ops)
    kernels = [op for op in ops if isinstance(op, loop.FuncOp) and not is_entry(op)]
    load_names = {
        op.attributes[LOAD_ENTRY_ATTR].data  # type: ignore[attr-defined]
        for op in ops
        if is_entry(op) and LOAD_ENTRY_ATTR in op.attributes
    }
    loads = [op for op in ops if is_entry(op) and op.sym_name.data in load_names]
    apart = {id(op) for op in (*kernels, *loads)}
    rest = [op for op in ops if id(op) not in apart]
    for op in ops:
        op.detach()
    units = [ModuleOp([op]) for op in kernels] + [ModuleOp([op]) for op in loads]
    if rest:
        units.append(ModuleOp(rest))
    return units


NUMERIC_SUFFIX = re.compile(r"_[0-9]+(?=_|$)")
"""The `_<n>` parts of a kernel's name that make it unique in its module
(`legalize_ops.kernels`' fresh names, fuse-ops' group names): not part of its content."""


def base_name(name: str) -> str:
    """A kernel's name without its `NUMERIC_SUFFIX`es."""
    return NUMERIC_SUFFIX.sub("", name)


def stub_digest(kernel: loop.FuncOp) -> str | None:
    """The unit digest a stub kernel carries (`UNIT_DIGEST_ATTR`), None for any other."""
    attr = kernel.attributes.get(UNIT_DIGEST_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


def name_by_content(
    units: list[ModuleOp], digest: Callable[[ModuleOp], str]
) -> tuple[list[ModuleOp], list[str], dict[str, str]]:
    """`units` (from `split_units`) with every kernel renamed to its content symbol, each
    `loop.call` of it following, and kernels of the same content (and base name) kept once;
    the content digest of each unit kept (for a kernel, the digest of its unit while it bore
    its base name: the content symbol is made from it, so it covers the renamed unit); and
    each kernel's digest by the name it had.

    A kernel's content symbol is its base name (`base_name`), `_`, and the first 16 hex
    digits of `digest` of its unit while it bears the base name: the same kernel gets the
    same symbol in every model, whatever was numbered before it. A stub kernel (the schedule
    memo's) is not digested: it carries its digest. The entry unit is digested after the
    renaming."""
    renamed: dict[str, str] = {}
    by_name: dict[str, str] = {}
    kept: list[tuple[ModuleOp, str | None]] = []
    seen: set[str] = set()
    for unit in units:
        kernel = _kernel_of(unit)
        if kernel is None:
            kept.append((unit, None))
            continue
        name = kernel.sym_name.data
        base = base_name(name)
        content = stub_digest(kernel)
        if content is None:
            kernel.sym_name = StringAttr(base)
            content = digest(unit)
        symbol = f"{base}_{content[:16]}"
        kernel.sym_name = StringAttr(symbol)
        renamed[name] = symbol
        by_name[name] = content
        if symbol not in seen:
            seen.add(symbol)
            kept.append((unit, content))
    for unit, _ in kept:
        for op in walk_ops(unit):
            if isinstance(op, loop.CallOp) and op.callee.string_value() in renamed:
                op.callee = SymbolRefAttr(renamed[op.callee.string_value()])
    digests = [digest(unit) if content is None else content for unit, content in kept]
    return [unit for unit, _ in kept], digests, by_name


def is_stub(unit: ModuleOp) -> bool:
    """Whether `unit` holds a stub kernel of the schedule memo (which cannot be compiled)."""
    kernel = _kernel_of(unit)
    return kernel is not None and stub_digest(kernel) is not None


def _kernel_of(unit: ModuleOp) -> loop.FuncOp | None:
    """The kernel a kernel unit holds (None for the entry unit)."""
    ops = list(unit.ops)
    if len(ops) == 1 and isinstance(ops[0], loop.FuncOp) and not is_entry(ops[0]):
        return ops[0]
    return None


def declare_callees(unit: ModuleOp) -> None:
    """Declares (external, C ABI over pointers) every function the unit calls and does not
    define: the kernels an entry unit launches."""
    defined = {op.sym_name.data for op in unit.ops if isinstance(op, llvm.FuncOp)}
    declared: dict[str, llvm.FuncOp] = {}
    for op in walk_ops(unit):
        if not isinstance(op, llvm.CallOp) or op.callee is None:
            continue
        name = op.callee.string_value()
        if name in defined or name in declared:
            continue
        function_type = llvm.LLVMFunctionType([arg.type for arg in op.args], None)
        declared[name] = llvm.FuncOp(name, function_type, linkage=llvm.LinkageAttr("external"))
    for name in sorted(declared):
        unit.body.block.add_op(declared[name])


@dataclass
class PreparedUnit:
    """A unit through convert-loop-to-llvm and printed as LLVM IR, not yet given to LLVM: a
    kernel's as a template (`unit_template`: it may join a family), an entry unit's as text."""

    kernels: dict[str, KernelSignature]
    codegen_level: int
    timings: StageTimings
    text: str | None = None
    template: UnitTemplate | None = None
    family: str | None = None
    """The template's `family_key` (None: it joins no family)."""

    def plain_text(self) -> str:
        if self.text is not None:
            return self.text
        assert self.template is not None
        return render_plain(self.template)


def prepare_one(unit: ModuleOp, lower: LowerToLLVMDialect) -> PreparedUnit:
    """A unit through convert-loop-to-llvm and printed as LLVM IR (`PreparedUnit`); a unit of
    entry functions is to get machine code at `ENTRY_CODEGEN_LEVEL`, a kernel at level 3."""
    timings: StageTimings = []
    start = time.perf_counter()
    entries = any(is_entry(op) for op in unit.ops)
    lower(unit)  # (a PassManager run: Python's collector paused, `fusion_compiler.collector`)
    declare_callees(unit)
    timings.append(("convert-loop-to-llvm", time.perf_counter() - start))
    start = time.perf_counter()
    level = ENTRY_CODEGEN_LEVEL if entries else 3
    target = CodegenTarget.host()
    machine = target.machine(level)
    prepared = PreparedUnit(kernel_signatures(unit), level, timings)
    if entries:
        prepared.text = llvm_ir_text(unit, target, machine)
    else:
        prepared.template = llvm_ir_template(unit, target, machine)
        prepared.family = family_key(prepared.template)
    timings.append(("llvm-translate", time.perf_counter() - start))
    return prepared


FAMILY_MIN_MEMBERS = 4
"""The fewest kernels compiled as a family (`kernel_families`). LLVM takes longer over a
family's function than over one member (it no longer knows trip counts and sizes): on
densenet121 (one process, O3 and machine code), a family of two batch norms + relu took
0.10-0.18 s against 0.05 s for its two members, one of four 1x1 convolutions 0.094 s
against 0.23 s, of 20 0.17 s against 2.07 s."""


@dataclass(frozen=True)
class _Job:
    """One LLVM compile: a prepared unit, or a family of them, and their indices."""

    units: tuple[PreparedUnit, ...]
    members: tuple[int, ...]

    def text(self) -> str:
        if len(self.units) == 1:
            return self.units[0].plain_text()
        return family_text([unit.template for unit in self.units])[0]  # type: ignore[misc]

    def size(self) -> int:
        return sum(len(u.template.lines) if u.template else u.codegen_level for u in self.units)


FAMILIES_VARIABLE = "FUSION_KERNEL_FAMILIES"
"""Set to 0, every kernel is compiled alone (no families): the same results, longer compiles."""


def families_enabled() -> bool:
    return os.environ.get(FAMILIES_VARIABLE, "1").strip() != "0"


def _jobs(prepared: Sequence[PreparedUnit]) -> list[_Job]:
    keys = [p.family if families_enabled() else None for p in prepared]
    jobs = []
    for group in family_groups(keys):
        if len(group) >= FAMILY_MIN_MEMBERS:
            jobs.append(_Job(tuple(prepared[i] for i in group), tuple(group)))
        else:
            jobs += [_Job((prepared[i],), (i,)) for i in group]
    return jobs


def _compile_job(job: _Job) -> tuple[NativeUnit, StageTimings]:
    """The job's LLVM IR (a family's rendered here, in the worker) compiled."""
    timings: StageTimings = []
    start = time.perf_counter()
    text = job.text()
    timings.append(("llvm-translate", time.perf_counter() - start))
    kernels = {name: sig for unit in job.units for name, sig in unit.kernels.items()}
    level = job.units[0].codegen_level
    unit = compile_text(text, kernels, codegen_level=level, timings=timings)
    return unit, timings


def compile_prepared(
    prepared: Sequence[PreparedUnit], jobs: int = 1, timings: StageTimings | None = None
) -> list[NativeUnit]:
    """Each prepared unit's native unit: kernels of one family (`FAMILY_MIN_MEMBERS` or
    more of the same `structure_key`) share one, compiled once; the others are compiled
    alone. The LLVM compiles run in `jobs` worker processes when there are several; their
    stages' seconds (and the preparations') are appended to `timings`."""
    work = _jobs(prepared)
    sizes = [job.size() for job in work]
    if jobs > 1 and len(work) > 1 and can_fork():
        results = run_in_workers(lambda index: _compile_job(work[index]), sizes, jobs)
        failures = [r for r in results if isinstance(r, WorkerFailure)]
        if failures:
            raise RuntimeError(f"a compile worker failed: {failures[0].message}")
        done: list[tuple[NativeUnit, StageTimings]] = results  # type: ignore[assignment]
    else:
        done = [_compile_job(job) for job in work]
    units: list[NativeUnit | None] = [None] * len(prepared)
    for job, (unit, _) in zip(work, done, strict=True):
        for member in job.members:
            units[member] = unit
    if timings is not None:
        stages = [stage for p in prepared for stage in p.timings]
        stages += [stage for _, job_stages in done for stage in job_stages]
        timings.extend(merged_timings(stages))
    return units  # type: ignore[return-value]


def compile_one(unit: ModuleOp, lower: LowerToLLVMDialect) -> tuple[NativeUnit, StageTimings]:
    """A unit through convert-loop-to-llvm and LLVM alone, and the seconds of each stage."""
    prepared = prepare_one(unit, lower)
    native, stages = _compile_job(_Job((prepared,), (0,)))
    return native, prepared.timings + stages


def compile_units(
    units: Sequence[ModuleOp],
    lower: LowerToLLVMDialect,
    timings: StageTimings | None = None,
    jobs: int | None = None,
) -> list[NativeUnit]:
    """Every unit compiled (`prepare_one`, then `compile_prepared`: kernel families compiled
    once), in worker processes when there is enough work and more than one job; the
    seconds of each stage, summed over the units, are appended to `timings`. Workers that
    take units fewer than a family needs compile each one through (one fork, not two: an
    op edit's new kernel and entry unit)."""
    jobs = compile_jobs() if jobs is None else jobs
    sizes = [op_count(unit) for unit in units]
    parallel = jobs > 1 and worth_workers(sizes) and can_fork()
    start = time.perf_counter()
    kernels = sum(1 for unit in units if not any(is_entry(op) for op in unit.ops))
    if parallel and (kernels < FAMILY_MIN_MEMBERS or not families_enabled()):
        compiled = _compile_in_workers(units, lower, sizes, jobs, timings)
    elif parallel:
        prepared = _prepare_in_workers(units, lower, sizes, jobs)
        compiled = compile_prepared(prepared, jobs, timings)
    else:
        prepared = [prepare_one(unit, lower) for unit in units]
        compiled = compile_prepared(prepared, 1, timings)
    if timings is not None and parallel:
        timings.append((f"native-units ({jobs} jobs, wall)", time.perf_counter() - start))
    return compiled


def worth_workers(sizes: Sequence[int]) -> bool:
    """Whether units of `sizes` ops are worth compiling in worker processes: two or more,
    of `PARALLEL_MIN_OPS` or more in all."""
    return len(sizes) > 1 and sum(sizes) >= PARALLEL_MIN_OPS


def op_count(unit: Operation) -> int:
    return sum(1 for _ in walk_ops(unit))


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _compile_in_workers(
    units: Sequence[ModuleOp],
    lower: LowerToLLVMDialect,
    sizes: list[int],
    jobs: int,
    timings: StageTimings | None,
) -> list[NativeUnit]:
    """Each unit compiled alone by `jobs` forked workers, the largest first."""
    results = run_in_workers(lambda index: compile_one(units[index], lower), sizes, jobs)
    failures = [result for result in results if isinstance(result, WorkerFailure)]
    if failures:
        raise RuntimeError(f"a compile worker failed: {failures[0].message}")
    done: list[tuple[NativeUnit, StageTimings]] = results  # type: ignore[assignment]
    if timings is not None:
        timings.extend(merged_timings([stage for _, stages in done for stage in stages]))
    return [unit for unit, _ in done]


def _prepare_in_workers(
    units: Sequence[ModuleOp], lower: LowerToLLVMDialect, sizes: list[int], jobs: int
) -> list[PreparedUnit]:
    """The units prepared by `jobs` forked workers, the largest first (balanced load)."""
    results = run_in_workers(lambda index: prepare_one(units[index], lower), sizes, jobs)
    failures = [result for result in results if isinstance(result, WorkerFailure)]
    if failures:
        raise RuntimeError(f"a compile worker failed: {failures[0].message}")
    return results  # type: ignore[return-value]


@dataclass(frozen=True)
class WorkerFailure:
    """What a task raised in a worker process (exceptions may hold IR, which does not pickle)."""

    message: str


_TASK: Callable[[int], object] | None = None
"""What the forked workers run: set before the fork, read by `_run_task`."""


def _run_task(index: int) -> object:
    assert _TASK is not None
    try:
        return _TASK(index)
    except Exception as err:  # noqa: BLE001 - sent to the parent, which decides
        return WorkerFailure(f"{type(err).__name__}: {err}")


def run_in_workers(
    task: Callable[[int], T], sizes: Sequence[int], jobs: int
) -> list[T | WorkerFailure]:
    """`task(i)` for every `i < len(sizes)`, run by `jobs` worker processes forked from this
    one (they inherit everything `task` reads: nothing is serialised but the results), the
    largest `sizes` first (a balanced load); a task that raises gives a `WorkerFailure`."""
    global _TASK
    order = sorted(range(len(sizes)), key=lambda i: -sizes[i])
    _TASK = task
    try:
        context = multiprocessing.get_context("fork")
        with context.Pool(min(jobs, len(sizes))) as pool:
            results = dict(zip(order, pool.imap(_run_task, order), strict=True))
    finally:
        _TASK = None
    return [results[i] for i in range(len(sizes))]  # type: ignore[misc]
