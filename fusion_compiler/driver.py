"""The compiler driver: every pass by name, the named pipelines, and the compile functions.

This is the one module that knows how the compiler is assembled; the tools, the ONNX backend,
the progress bars, the benchmarks, the lit configuration and the public API ask it.

```python
from fusion_compiler.driver import DEFAULT_PIPELINE, PassManager, compile_module

PassManager("legalize-ops,annotate-pattern,fuse-ops{max-depth=8},fuse-tir").run(module)
model = compile_module(module, DEFAULT_PIPELINE)   # then lower-graph, convert-loop-to-llvm, LLVM
```

A pipeline is a comma-separated list of pass names with options in braces, exactly as on the
`fusion-opt -p` command line. The imports run one way: `fusion_compiler.errors` ← `dialects` ←
`passes` ← `lowering` ← this module ← the API, `frontend.backend` and the tools. The passes of
`lowering` are imported lazily (each factory imports its pass on first use, like xDSL's
registry), so listing the passes (`xdsl-opt` does it on start-up) loads neither llvmlite nor
any pass. Nor does loading a model the cache holds load xDSL, the dialects' ops or a pass:
`compile_file` on an unchanged file (`file_cache`) reads entries, maps constants and loads
object code, and this module, `compile_cache`, `jit`, `load_launches` and `compiled_model`
import the IR's machinery where a compile first needs it (`tests/lowering/test_file_cache.py`
checks in a new process).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from fusion_compiler.collector import collector_paused
from fusion_compiler.errors import PassOptionError

if TYPE_CHECKING:
    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.passes import ModulePass
    from xdsl.utils.arg_spec import ArgSpec

    from fusion_compiler.instruments import PassInstrument
    from fusion_compiler.lowering.compile_cache import NativeCode
    from fusion_compiler.lowering.compiled_model import CompiledModel
    from fusion_compiler.lowering.file_cache import SourceFile
    from fusion_compiler.lowering.llvm_codegen import StageTimings
    from fusion_compiler.lowering.schedule_memo import ScheduleMemo
    from fusion_compiler.specializing import SpecializingModel

PassFactory = Callable[[], "type[ModulePass]"]

# --- the pass registry ------------------------------------------------------------------------


def _lazy(module: str, name: str) -> PassFactory:
    """A factory that imports the pass class `name` of `fusion_compiler.<module>` on first use."""

    def factory() -> type[ModulePass]:
        pass_class: type[ModulePass] = getattr(import_module(f"fusion_compiler.{module}"), name)
        return pass_class

    factory.__qualname__ = factory.__name__ = f"load_{name}"
    return factory


_SCHEDULE = "passes.schedule"

PASSES: dict[str, PassFactory] = {
    "specialize-shapes": _lazy("passes.specialize_shapes", "SpecializeShapesPass"),
    "fold-constants": _lazy("passes.fold_constants", "FoldConstantsPass"),
    "fuse-ops-by-pattern": _lazy("passes.fuse_ops_by_pattern", "FuseOpsByPatternPass"),
    "legalize-ops": _lazy("passes.legalize_ops", "LegalizeOpsPass"),
    "annotate-pattern": _lazy("passes.annotate_pattern", "AnnotatePatternPass"),
    "fuse-ops": _lazy("passes.fuse_ops", "FuseOpsPass"),
    "fuse-tir": _lazy("passes.fuse_tir", "FuseTIRPass"),
    "schedule-kernels": _lazy(f"{_SCHEDULE}.schedule_kernels", "ScheduleKernelsPass"),
    "normalize-kernels": _lazy(f"{_SCHEDULE}.normalize_kernels", "NormalizeKernelsPass"),
    "compute-inline": _lazy(f"{_SCHEDULE}.compute_inline", "ComputeInlinePass"),
    "reuse-outputs": _lazy(f"{_SCHEDULE}.reuse_outputs", "ReuseOutputsPass"),
    "fuse-loops": _lazy(f"{_SCHEDULE}.fuse_loops", "FuseLoopsPass"),
    "clean-up-kernels": _lazy(f"{_SCHEDULE}.clean_up_kernels", "CleanUpKernelsPass"),
    "schedule-contractions": _lazy(f"{_SCHEDULE}.contraction_schedule", "ScheduleContractionsPass"),
    "prepack-weights": _lazy(f"{_SCHEDULE}.prepack_weights", "PrepackWeightsPass"),
    "reorder-reductions": _lazy(f"{_SCHEDULE}.reorder_reductions", "ReorderReductionsPass"),
    "unroll-reductions": _lazy(f"{_SCHEDULE}.unroll_reductions", "UnrollReductionsPass"),
    "unroll-jam-reductions": _lazy(f"{_SCHEDULE}.unroll_jam_reductions", "UnrollJamReductionsPass"),
    "split-index-sets": _lazy(f"{_SCHEDULE}.split_index_sets", "SplitIndexSetsPass"),
    "deinterleave-buffers": _lazy(f"{_SCHEDULE}.deinterleave_buffers", "DeinterleaveBuffersPass"),
    "balance-max-chains": _lazy(f"{_SCHEDULE}.balance_max_chains", "BalanceMaxChainsPass"),
    "tile-transposes": _lazy(f"{_SCHEDULE}.tile_transposes", "TileTransposesPass"),
    "collapse-nests": _lazy(f"{_SCHEDULE}.collapse_nests", "CollapseNestsPass"),
    "fold-buffers": _lazy(f"{_SCHEDULE}.fold_buffers", "FoldBuffersPass"),
    "align-buffer-rows": _lazy(f"{_SCHEDULE}.align_buffer_rows", "AlignBufferRowsPass"),
    "prefetch-epilogues": _lazy(f"{_SCHEDULE}.prefetch_epilogues", "PrefetchEpiloguesPass"),
    "mark-loop-kinds": _lazy(f"{_SCHEDULE}.mark_loop_kinds", "MarkLoopKindsPass"),
    "overlap-vector-tails": _lazy(f"{_SCHEDULE}.overlap_vector_tails", "OverlapVectorTailsPass"),
    "lower-graph": _lazy("lowering.lower_graph", "LowerGraphPass"),
    "convert-loop-to-llvm": _lazy("lowering.convert_loop_to_llvm", "ConvertLoopToLLVMPass"),
}
"""The project's passes in pipeline order (`schedule-kernels` is the pipeline of the stage passes
that follow it); each factory imports its pass on first use."""


def available_passes() -> dict[str, PassFactory]:
    """The project's passes, then every other pass of the environment (xDSL's own and its
    plugins'); a project pass wins a name clash."""
    passes = dict(_environment_passes())
    passes.update(PASSES)
    return passes


def _pass_factory(name: str) -> PassFactory | None:
    """The factory of the pass `name` as `available_passes` resolves it, or None. The
    environment is looked up only for a name the project has no pass of, so a pipeline of the
    project's passes neither imports `xdsl.universe` and `importlib.metadata` nor reads every
    installed package's entry points (10-12 ms of a new process's compile of an example)."""
    return PASSES.get(name) or _environment_passes().get(name)


@functools.cache
def _environment_passes() -> dict[str, PassFactory]:
    """xDSL's passes and its plugins', found once per process: looking them up reads every
    installed package's entry points (4 ms, which each native unit's pipeline paid)."""
    from xdsl.universe import Universe

    return dict(Universe.get_multiverse().all_passes)


# --- the named pipelines ----------------------------------------------------------------------

FOLD_PIPELINE = "fold-constants"
"""Compile-time constant folding (TVM's FoldConstant): first in every named pipeline."""

ANNOTATE_PIPELINE = "legalize-ops,annotate-pattern"
"""Graph ops to kernels, each with its pattern kind: what fuse-ops sees (fusion-report
partitions the annotated module itself)."""

FUSION_PIPELINE = f"{FOLD_PIPELINE},{ANNOTATE_PIPELINE},fuse-ops,fuse-tir"
"""TVM's fusion pipeline: graph IR in, fused `loop.func` kernels called through
`graph.call_loop` out (kernels as fuse-tir builds them, unscheduled)."""

UNFUSED_FUSION_PIPELINE = f"{FOLD_PIPELINE},{ANNOTATE_PIPELINE},fuse-ops{{opt-level=0}},fuse-tir"
"""The fusion pipeline with fusion switched off: one kernel per graph op."""

SCHEDULE_PIPELINE = "schedule-kernels"
"""The scheduling of every kernel (after fuse-tir)."""

DEFAULT_PIPELINE = f"{FUSION_PIPELINE},{SCHEDULE_PIPELINE}"
"""The fusion pipeline, then the scheduling of every kernel: what `fusion-run` compiles."""

UNFUSED_PIPELINE = f"{UNFUSED_FUSION_PIPELINE},{SCHEDULE_PIPELINE}"
"""The default pipeline with fusion switched off: one (scheduled) kernel per graph op."""

BLAS_PATTERNS = "fuse-ops-by-pattern{patterns=blas annotate-codegen=true}"
"""Pattern dispatch: matrix products (with their bias and activation) to the BLAS library."""

BLAS_FUSION_PIPELINE = FUSION_PIPELINE.replace(FOLD_PIPELINE, f"{FOLD_PIPELINE},{BLAS_PATTERNS}", 1)
"""The fusion pipeline after pattern dispatch: composites for BLAS, automatic fusion for the
rest."""

BLAS_PIPELINE = DEFAULT_PIPELINE.replace(FOLD_PIPELINE, f"{FOLD_PIPELINE},{BLAS_PATTERNS}", 1)
"""The default pipeline after pattern dispatch (needs the `blas` extra to compile natively)."""

NATIVE_PIPELINE = ("lower-graph", "convert-loop-to-llvm")
"""What every native build runs after its pipeline, before LLVM: graph-level functions become
entries over buffers (the kernels each entry launches are read in between), then the LLVM
dialect."""

PROFILE_LOWER_GRAPH = "lower-graph{profile=true}"
"""The first step of `NATIVE_PIPELINE` in a profiling build (`profile=True`): every kernel
launch is timed (`fusion_compiler.lowering.profiling`)."""


def native_steps(profile: bool = False) -> tuple[str, str]:
    """`NATIVE_PIPELINE`, with lower-graph's profiling option in a profiling build."""
    return (PROFILE_LOWER_GRAPH, NATIVE_PIPELINE[1]) if profile else NATIVE_PIPELINE


def cache_pipeline(pipeline: str, profile: bool = False) -> str:
    """The pipeline a build is cached under: a profiling build never shares a normal one's
    entry."""
    return f"{pipeline},{PROFILE_LOWER_GRAPH}" if profile else pipeline


GRAPH_PASSES = frozenset({"fold-constants"})
"""Passes from the graph level to the graph level that change its constants. `compile_module`
runs those a pipeline starts with on a copy of the module before anything else
(`split_graph_passes`), so the constants bound to the native code and the compile cache's key
are those of their result."""


def split_graph_passes(pipeline: str) -> tuple[str, str]:
    """The leading `GRAPH_PASSES` of `pipeline` and the rest, as two pipelines."""
    from xdsl.utils.arg_spec import parse_pipeline as split_pipeline
    from xdsl.utils.exceptions import ArgSpecParseError

    from fusion_compiler.dialects.diagnostics import CompileError

    try:
        specs = tuple(split_pipeline(pipeline))
    except (ArgSpecParseError, ValueError):
        return "", pipeline  # parse_pipeline reports it
    count = next((i for i, s in enumerate(specs) if s.name not in GRAPH_PASSES), len(specs))
    late = [s.name for s in specs[count:] if s.name in GRAPH_PASSES]
    if late:
        raise CompileError(
            f"invalid pass pipeline '{pipeline}': {late[0]} must come first (the constants it "
            "makes are bound to the native code)"
        )
    if count == 0:
        return "", pipeline
    return ",".join(map(str, specs[:count])), ",".join(map(str, specs[count:]))


def make_pipeline(*, fuse: bool = True, schedule: str | None = "") -> str:
    """A named pipeline with fusion on or off, and `schedule-kernels` with the options
    `schedule` (`""`: the defaults, `"tile=16"`: options, None: no scheduling)."""
    passes = FUSION_PIPELINE if fuse else UNFUSED_FUSION_PIPELINE
    if schedule is None:
        return passes
    options = "{" + schedule + "}" if schedule else ""
    return f"{passes},{SCHEDULE_PIPELINE}{options}"


def parse_pipeline(spec: str) -> tuple[ModulePass, ...]:
    """The passes of a pipeline string such as `"legalize-ops,fuse-ops{max-depth=8}"`.

    A pipeline pass (`schedule-kernels`) stands for its stage passes, which are returned in its
    place. An unknown pass, a syntax error or an option of the wrong type raises
    `CompileError`; an option value out of its range raises the pass's `PassOptionError`.
    """
    from xdsl.utils.arg_spec import parse_pipeline as split_pipeline
    from xdsl.utils.exceptions import ArgSpecParseError

    from fusion_compiler.dialects.diagnostics import CompileError

    try:
        specs = tuple(split_pipeline(spec))
    except (ArgSpecParseError, ValueError) as err:  # (ArgSpecParseError is a BaseException)
        raise CompileError(f"invalid pass pipeline '{spec}': {err}") from None
    found = {s.name: _pass_factory(s.name) for s in specs}
    factories = {name: factory for name, factory in found.items() if factory is not None}
    unknown = [s.name for s in specs if s.name not in factories]
    if unknown:
        raise CompileError(f"invalid pass pipeline '{spec}': Unrecognized passes: {unknown}")
    return tuple(stage for s in specs for stage in _expand(_build_pass(factories[s.name], s, spec)))


def _expand(pass_: ModulePass) -> tuple[ModulePass, ...]:
    """A pass, or the stages of a pipeline pass (`schedule-kernels`), recursively."""
    from fusion_compiler.passes.pipeline_pass import PipelinePass

    if not isinstance(pass_, PipelinePass):
        return (pass_,)
    return tuple(stage for inner in pass_.stages() for stage in _expand(inner))


def _build_pass(factory: PassFactory, pass_spec: ArgSpec, spec: str) -> ModulePass:
    from fusion_compiler.dialects.diagnostics import CompileError

    try:
        return factory().from_pass_spec(pass_spec)
    except PassOptionError:
        raise
    except (ValueError, TypeError, KeyError) as err:
        raise CompileError(f"invalid pass pipeline '{spec}': {err}") from None


# --- running passes ---------------------------------------------------------------------------


VERIFY_EACH_VARIABLE = "FUSION_VERIFY_EACH"
"""Set to 1, the compile functions verify the IR after every pass (the test suite sets it: the
test pipeline verifies each pass); otherwise they verify their input and the result of the
whole pipeline, which saves half the time of a recompile (verifying a module costs as much as
most passes). `fusion-opt` and a `PassManager` made without `verify=` verify after every pass."""


def verify_policy() -> str:
    """`"each"` when `FUSION_VERIFY_EACH` is 1, else `"end"`: how the compile functions verify."""
    return "each" if os.environ.get(VERIFY_EACH_VARIABLE, "") == "1" else "end"


class PassManager:
    """Runs a pipeline of module passes, verifying the IR after each one (`verify="each"`),
    after the last one only (`"end"`), or never (`"off"`: LLVM verifies what it is given).

    A `CompileError` (or xDSL `DiagnosticException`) raised by a pass is re-raised as a
    `CompileError` with the pass's name in front of its message: passes do not name
    themselves.
    """

    VERIFY_POLICIES = ("each", "end", "off")

    def __init__(
        self,
        pipeline: str | Sequence[ModulePass] = DEFAULT_PIPELINE,
        *,
        verify: str = "each",
        instruments: Sequence[PassInstrument] = (),
        ctx: Context | None = None,
    ):
        if verify not in self.VERIFY_POLICIES:
            raise ValueError(f"verify must be one of {self.VERIFY_POLICIES}, not {verify!r}")
        self.passes = (
            parse_pipeline(pipeline)
            if isinstance(pipeline, str)
            else tuple(stage for pass_ in pipeline for stage in _expand(pass_))
        )
        self.verify = verify
        self.instruments = tuple(instruments)
        if ctx is None:
            from fusion_compiler.dialects.context import make_context

            ctx = make_context()
        self.ctx = ctx

    def run(self, module: ModuleOp) -> ModuleOp:
        """Apply every pass in order to `module`, in place; returns it for chaining (with
        Python's cyclic garbage collector paused: `fusion_compiler.collector`)."""
        with collector_paused():
            return self._run(module)

    def _run(self, module: ModuleOp) -> ModuleOp:
        for pass_ in self.passes:
            for instrument in self.instruments:
                instrument.before_pass(pass_, module)
            self._apply(pass_, module)
            for instrument in self.instruments:
                instrument.after_pass(pass_, module)
            if self.verify == "each":
                self._verify_after(f"pass '{pass_.name}'", module)
        if self.verify == "end" and self.passes:
            names = ",".join(pass_.name for pass_ in self.passes)
            self._verify_after(
                f"pipeline '{names}' (set {VERIFY_EACH_VARIABLE}=1 to verify after each pass)",
                module,
            )
        return module

    def _apply(self, pass_: ModulePass, module: ModuleOp) -> None:
        from xdsl.utils.exceptions import DiagnosticException

        from fusion_compiler.dialects.diagnostics import CompileError

        try:
            pass_.apply(self.ctx, module)
        except CompileError as err:
            err.add_prefix(f"{pass_.name}: ")
            raise
        except DiagnosticException as err:  # xDSL's way for a pattern to refuse the IR
            raise CompileError(f"{pass_.name}: {err}") from None

    @staticmethod
    def _verify_after(what: str, module: ModuleOp) -> None:
        from fusion_compiler.dialects.diagnostics import CompileError, verify_module

        try:
            verify_module(module)
        except CompileError as err:
            raise CompileError(f"IR after {what} does not verify: {err.message}", err.op) from None


# --- compiling to native code -----------------------------------------------------------------


def lower_to_entries(
    module: ModuleOp,
    pipeline: str,
    instruments: Sequence[PassInstrument] = (),
    ctx: Context | None = None,
    *,
    profile: bool = False,
    memo: ScheduleMemo | None = None,
) -> tuple[ModuleOp, dict[str, tuple[str, ...]]]:
    """A copy of `module` (graph level) through `pipeline` and lower-graph (timing every
    launch when `profile`), and the kernels each entry launches, in order (the passes only:
    no LLVM). With the schedule `memo` (for a pipeline that ends with schedule-kernels), the
    kernels it has records of are stubs before schedule-kernels runs (when fuse-tir ends the
    passes before it, the groups of fuse-ops it has records of are stubs before fuse-tir
    runs), and what it makes of the others is noted (`lowering/schedule_memo.py`)."""
    from fusion_compiler.lowering.compile_cache import entry_kernels
    from fusion_compiler.lowering.schedule_memo import (
        FUSE_TIR_PASS,
        MemoMiss,
        lazy_legalize_holds,
        sources_hold,
        split_fuse_tir,
        split_schedule,
        unbuilt_members,
    )
    from fusion_compiler.passes.legalize_ops.deferred import deferred_kernels, offer_kinds

    lowered = module.clone()
    lower = native_steps(profile)[0]
    parts = split_schedule(pipeline) if memo is not None else None
    policy = verify_policy()
    if parts is None:
        spec = ",".join(p for p in (pipeline, lower) if p)
        PassManager(spec, ctx=ctx, instruments=instruments, verify=policy).run(lowered)
        return lowered, entry_kernels(lowered)
    assert memo is not None
    fusion, schedule = parts
    between = "off" if policy == "end" else policy  # ("end": once, after lower-graph)
    before_fuse_tir = split_fuse_tir(fusion)
    sources = sources_hold(fusion)
    if memo.known_kind is not None and lazy_legalize_holds(fusion):
        offer_kinds(lowered, memo.known_kind)  # legalize-ops defers the kernels of known kinds
    if before_fuse_tir is None:
        PassManager(fusion, ctx=ctx, instruments=instruments, verify=between).run(lowered)
    else:  # fuse-tir builds the kernels of the groups the memo has no record of
        if before_fuse_tir:
            PassManager(before_fuse_tir, ctx=ctx, instruments=instruments, verify=between).run(
                lowered
            )
        memo.replay_groups(lowered, sources)
        if unbuilt_members(lowered):  # (fuse-tir would fuse an empty body)
            raise MemoMiss()
        PassManager(FUSE_TIR_PASS, ctx=ctx, instruments=instruments, verify=between).run(lowered)
    memo.replay(lowered, sources)
    PassManager(schedule, ctx=ctx, instruments=instruments, verify=between).run(lowered)
    memo.capture(lowered)
    PassManager(lower, ctx=ctx, instruments=instruments, verify=policy).run(lowered)
    if deferred_kernels(lowered):  # (the memo builds every one lower-graph does not erase)
        raise MemoMiss()
    return lowered, entry_kernels(lowered)


def compile_native(
    module: ModuleOp,
    pipeline: str = DEFAULT_PIPELINE,
    *,
    cache: bool = True,
    instruments: Sequence[PassInstrument] = (),
    timings: StageTimings | None = None,
    profile: bool = False,
) -> NativeCode:
    """Native code for `module` (graph level; left unchanged) compiled with `pipeline`, from the
    on-disk compile cache when it holds it; `instruments` run around each pass when the
    module is compiled; the seconds of the stages that are not passes (`compile_cache.
    compile_native`'s) are appended to `timings` when given.
    `profile` makes a profiling build (every kernel launch timed), cached apart.
    `CompiledModel.of` binds the constants of `module` to the code, so `pipeline` must keep
    them: `compile_module` runs the `GRAPH_PASSES` a pipeline starts with before this."""
    from fusion_compiler.dialects.context import make_context
    from fusion_compiler.lowering import compile_cache
    from fusion_compiler.lowering.schedule_memo import split_schedule

    ctx = make_context()

    def to_entries(memo: ScheduleMemo | None) -> tuple[ModuleOp, dict[str, tuple[str, ...]]]:
        return lower_to_entries(module, pipeline, instruments, ctx, profile=profile, memo=memo)

    parts = None if profile else split_schedule(pipeline)
    unit_pipeline = native_steps(profile)[1]

    # LLVM verifies the translated unit (`llvm_codegen`); xDSL's verifier of the llvm dialect
    # would cost a fifth of the pass's time again.
    unit_passes = PassManager(unit_pipeline, ctx=ctx, verify="off")

    def to_llvm_dialect(unit: ModuleOp) -> None:
        unit_passes.run(unit)

    # A kernel scheduled by a worker (`schedule_workers`) is verified there, with its own
    # module: this process's verification sees only its stub.
    schedule_passes = (
        None if parts is None else PassManager(parts[1], ctx=ctx, verify=verify_policy())
    )

    def schedule_module(unit: ModuleOp) -> None:
        assert schedule_passes is not None
        schedule_passes.run(unit)

    with collector_paused():  # over the worker processes too, which inherit it
        return compile_cache.compile_native(
            module,
            cache_pipeline(pipeline, profile),
            to_entries,
            to_llvm_dialect,
            unit_pipeline=unit_pipeline,
            use_cache=cache,
            timings=timings,
            schedule=None if parts is None else parts[1],
            schedule_module=None if schedule_passes is None else schedule_module,
        )


def compile_module(
    module: ModuleOp,
    pipeline: str = DEFAULT_PIPELINE,
    *,
    cache: bool = True,
    instruments: Sequence[PassInstrument] = (),
    timings: StageTimings | None = None,
    profile: bool = False,
    source: SourceFile | None = None,
) -> CompiledModel | SpecializingModel:
    """Compile `module` (graph level; verified, left unchanged) with `pipeline`, then to
    native code (`compile_native`): a model whose graph-level functions take numpy arrays.
    A module with dynamic dimensions (or shape computations) gives a `SpecializingModel`,
    which specialises and compiles it on the shapes of each new set of arguments.
    The seconds of the stages that are not passes are appended to `timings` when given
    (`verify`: of the input; `compile_native`'s; `bind-constants`: the load entry packing
    the weights; `file-cache-store`). With `profile`, a
    profiling build, whose `CompiledModel.profile` times every kernel launch. `source`, when
    `module` is the parse of an IR file as it is (`read_source`), lets the cache load the
    model by the file's text (`file_cache`) and keep it so."""
    from fusion_compiler.lowering import file_cache

    if cache and source is not None:
        hit = file_cache.load(source, cache_pipeline(pipeline, profile))
        if hit is not None:
            return hit
    return _compile_and_keep(module, pipeline, cache, instruments, timings, profile, source)


def _compile_and_keep(
    module: ModuleOp,
    pipeline: str,
    cache: bool,
    instruments: Sequence[PassInstrument],
    timings: StageTimings | None,
    profile: bool,
    source: SourceFile | None,
) -> CompiledModel | SpecializingModel:
    """`compile_module` after its file-level lookup missed: the compile, kept at the file
    level when `source` is given."""
    from fusion_compiler.dialects.diagnostics import verify_module
    from fusion_compiler.lowering import file_cache
    from fusion_compiler.lowering.compiled_model import CompiledModel
    from fusion_compiler.passes.specialize_shapes import is_dynamic_module
    from fusion_compiler.specializing import SpecializingModel

    file_pipeline = cache_pipeline(pipeline, profile)
    start = time.perf_counter()
    verify_module(module)
    start = _lap(timings, "verify", start)
    if is_dynamic_module(module):  # compiled per set of argument shapes, when called
        return SpecializingModel(module, pipeline, cache=cache, profile=profile)
    graph_passes, pipeline = split_graph_passes(pipeline)
    if graph_passes:  # their result is what the native code binds and the cache is keyed by
        module = module.clone()
        # ("end": verified once, after lower-graph; densenet121's graph module took 0.08 s)
        between = "each" if verify_policy() == "each" else "off"
        PassManager(graph_passes, instruments=instruments, verify=between).run(module)
    native = compile_native(
        module, pipeline, cache=cache, instruments=instruments, timings=timings, profile=profile
    )
    start = time.perf_counter()
    model = CompiledModel.of(module, native)
    start = _lap(timings, "bind-constants", start)
    if cache and source is not None:
        file_cache.store(source, file_pipeline, model)
        _lap(timings, "file-cache-store", start)
    return model


def _lap(timings: StageTimings | None, stage: str, start: float) -> float:
    """Appends the seconds since `start` to `timings` as `stage` (when given); returns now."""
    now = time.perf_counter()
    if timings is not None:
        timings.append((stage, now - start))
    return now


def compile_file(
    path: str | Path, pipeline: str = DEFAULT_PIPELINE, *, cache: bool = True, profile: bool = False
) -> CompiledModel | SpecializingModel:
    """Compile a graph-level IR file (`compile_module`). With the cache, a file compiled before
    with `pipeline` is not parsed again: the model loads by the file's text (`file_cache`)."""
    from fusion_compiler.lowering import file_cache

    source = read_source(path)
    if cache:
        hit = file_cache.load(source, cache_pipeline(pipeline, profile))
        if hit is not None:
            return hit
    module = parse_read_source(source)
    return _compile_and_keep(module, pipeline, cache, (), None, profile, source)


def read_source(path: str | Path) -> SourceFile:
    """The text of a graph-level IR file, to parse with `parse_read_source`."""
    from fusion_compiler.lowering.file_cache import SourceFile

    path = Path(path)
    try:
        return SourceFile(path, path.read_text(encoding="utf-8"))
    except OSError as err:
        from fusion_compiler.dialects.diagnostics import CompileError

        raise CompileError(f"cannot read '{path}': {err.strerror}") from None
    except UnicodeDecodeError as err:
        from fusion_compiler.dialects.diagnostics import CompileError

        raise CompileError(
            f"{path}: not a text file of graph IR (byte {err.start} is not UTF-8)"
        ) from None


def parse_read_source(source: SourceFile) -> ModuleOp:
    """The module of an IR file read by `read_source` (a syntax error is a `CompileError` at
    its position); the files its parse reads are noted in `source`."""
    from fusion_compiler.dialects.context import make_context
    from fusion_compiler.dialects.diagnostics import parse_source

    module = parse_source(
        make_context(), source.text, str(source.path), read_files=source.read_files
    )
    source.parsed()
    return module


def parse_file(path: str | Path) -> ModuleOp:
    """Parse a graph-level IR file (a syntax error is a `CompileError` at its position)."""
    return parse_read_source(read_source(path))
