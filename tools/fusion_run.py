"""`fusion-run`: compile a graph-level IR file through the fusion pipeline and run it natively.

    fusion-run FILE [--entry main] [--inputs in.npz | --random-inputs [--seed N]]
               [--input-shape NAME=DIMS ...] [--outputs out.npz] [--check] [--bench N] [--no-fusion | --pipeline P]
               [--no-cache]
               [--profile [--profile-runs N] [--profile-top K] [--profile-json OUT.json]
                [--peak-gflops G] [--peak-gbps B]]

`in.npz` holds `arg0, arg1, ...` in argument order; `out.npz` receives `out0, out1, ...`.
A function with dynamic dimensions (`tensor<?x16xf32>`) is specialised first
(`specialize-shapes`) on the shapes of the `--inputs` arrays, or on those `--input-shape
x=2x16` gives (with `--random-inputs`).
`--check` compares the results with the numpy reference semantics and exits 1 on a mismatch;
`--bench N` prints the median time of N runs of the fused build, of the unfused build (the
same pipeline, `--pipeline P`'s included, with `fuse-ops{opt-level=0}`) and of the reference
evaluator (not for a file that already holds `loop.func` kernels: the evaluator would
interpret them). `--pipeline P`
compiles with the pipeline `P` (any pipeline string, e.g. `fusion_compiler.driver.BLAS_PIPELINE`,
which hands the matrix products to the BLAS library) rather than the default one. `--profile`
times every kernel launch and prints a table per kernel: time, share, FLOPs, bytes, rates and
the roof that bounds it (`run_profile`).

A run of a file the cache holds parses nothing (`run_facts`) and imports none of the IR's
machinery: this module imports xDSL, the dialects and the passes only where it parses
(`tests/tools/test_fusion_run_cached.py` checks what such a run imports).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from fusion_compiler.dialects.compile_error import CompileError
from fusion_compiler.driver import (
    DEFAULT_PIPELINE,
    UNFUSED_PIPELINE,
    cache_pipeline,
    compile_module,
    parse_read_source,
    read_source,
)
from fusion_compiler.host import compile_jobs
from fusion_compiler.lowering import compile_cache, file_cache
from fusion_compiler.lowering.compiled_model import CompiledModel
from fusion_compiler.lowering.file_cache import SourceFile
from fusion_compiler.lowering.threading_runtime import default_num_threads
from fusion_compiler.tools import run_facts, run_profile
from fusion_compiler.tools.errors import run_without_traceback
from fusion_compiler.tools.input_shapes import parse_input_shape
from fusion_compiler.tools.run_check import CHECK_ATOL_SCALE, CHECK_RTOL, check
from fusion_compiler.tools.run_facts import RunFacts
from fusion_compiler.tools.run_inputs import (
    ArgumentFacts,
    ArgumentSpec,
    archive_shapes,
    check_index_ranges,
    load_inputs,
    random_inputs,
)
from fusion_compiler.tools.run_memory import check_memory, memory_needed, memory_problem

if TYPE_CHECKING:
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp

    from fusion_compiler.specializing import SpecializingModel

__all__ = ["CHECK_ATOL_SCALE", "CHECK_RTOL", "main", "run"]


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="fusion-run", description=__doc__.split("\n\n")[0])
    parser.add_argument("file", help="graph-level IR file (.mlir)")
    parser.add_argument("--entry", default="main", help="the function to run (default: main)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--inputs", metavar="IN.npz", help="inputs named arg0, arg1, ... or like the parameters"
    )
    source.add_argument(
        "--random-inputs",
        action="store_true",
        help="standard-normal inputs (positive where an op needs them: sqrt, log, ...)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of --random-inputs (>= 0)")
    parser.add_argument(
        "--input-shape",
        action="append",
        default=[],
        type=parse_input_shape,
        metavar="NAME=DIMS",
        help="the shape of an argument with dynamic dimensions, e.g. x=2x16 (repeatable); "
        "with --inputs, the arrays' shapes are used",
    )
    parser.add_argument("--outputs", metavar="OUT.npz", help="write the results as out0, ...")
    parser.add_argument("--check", action="store_true", help="compare with the reference")
    parser.add_argument("--bench", type=int, metavar="N", default=0, help="time N runs")
    build = parser.add_mutually_exclusive_group()
    build.add_argument("--no-fusion", action="store_true", help="run the unfused build")
    build.add_argument(
        "--pipeline", metavar="P", help="compile with this pass pipeline (default: the default)"
    )
    parser.add_argument("--no-cache", action="store_true", help="bypass the compile cache")
    run_profile.add_arguments(parser)
    args = parser.parse_args(argv)
    _check_options(args)
    return args


def _check_options(args: argparse.Namespace) -> None:
    """User errors in the options and the environment, found before anything is compiled."""
    for option, value in (("--seed", args.seed), ("--bench", args.bench)):
        if value < 0:
            raise CompileError(f"{option}: expected a non-negative integer, got {value}")
    try:
        default_num_threads()
        compile_jobs()
    except ValueError as err:
        raise CompileError(str(err)) from None
    if args.outputs is not None and Path(args.outputs).is_dir():
        raise CompileError(f"--outputs {args.outputs}: is a directory, expected a file name")
    run_profile.check_options(args)


def read_file(path: str) -> SourceFile:
    """The graph-level IR file `path` as read (an ONNX model is refused, with what to do)."""
    if path.endswith(".onnx"):
        raise CompileError(
            f"{path}: an ONNX model; import it into the graph dialect first: "
            f"fusion-import {path} -o {Path(path).with_suffix('.mlir').name}"
        )
    return read_source(path)


def read_module(source: SourceFile) -> ModuleOp:
    """The verified module of the file `source`."""
    from fusion_compiler.dialects.diagnostics import verify_module

    module = parse_read_source(source)
    verify_module(module)
    return module


def specialize_for_run(args: argparse.Namespace, module: ModuleOp) -> bool:
    """Make a module with dynamic dimensions static (in place) on the shapes given by
    `--input-shape` and, with `--inputs`, on the shapes of the arrays in the archive;
    whether it did."""
    from fusion_compiler.dialects.shape_rules import is_static
    from fusion_compiler.passes.specialize_shapes import is_dynamic_module, specialize_shapes
    from fusion_compiler.tools.run_ir import argument_specs

    shapes = dict(args.input_shape)
    if not shapes and not is_dynamic_module(module):
        return False
    function = entry_function(module, args.file, args.entry)
    if args.inputs is not None:
        for name, shape in archive_shapes(args.inputs, argument_specs(function)).items():
            shapes.setdefault(name, shape)
    missing = [
        spec.name
        for spec in argument_specs(function)
        if spec.name not in shapes and not is_static(spec.shape)
    ]
    if missing and all(name in [s.name for s in argument_specs(function)] for name in shapes):
        raise CompileError(
            f"{args.file}: @{args.entry}: argument %{missing[0]} has a dynamic shape: give it "
            f"with --input-shape {missing[0]}=DIMS (or give --inputs IN.npz)"
        )
    specialize_shapes(module, shapes, args.entry)
    return True


def entry_function(module: ModuleOp, path: str, entry: str) -> func.FuncOp:
    from fusion_compiler.dialects.graph import graph_functions

    functions = {f.sym_name.data: f for f in graph_functions(module)}
    if entry in functions:
        return functions[entry]
    if not functions:
        raise CompileError(f"{path}: no function @{entry} (the module has no functions)")
    raise CompileError(f"{path}: no function @{entry} (functions: {', '.join(functions)})")


def prepare_inputs(
    args: argparse.Namespace, name: str, specs: list[ArgumentSpec], facts: list[ArgumentFacts]
) -> list[np.ndarray]:
    """The inputs of `@name`, whose parameters are `specs` and their facts `facts`: read from
    `--inputs` and checked, or drawn (`--random-inputs`, its notes printed)."""
    if args.inputs is not None:
        arrays = load_inputs(args.inputs, specs)
        check_index_ranges(args.inputs, specs, facts, arrays)
        return arrays
    if args.random_inputs:
        inputs, notes = random_inputs(specs, facts, args.seed)
        for note in notes:
            print(f"--random-inputs: {note}")
        return inputs
    if specs:
        raise CompileError(
            f"@{name} takes {len(specs)} arguments: give --inputs IN.npz or --random-inputs"
        )
    return []


def write_outputs(path: str, results: list[np.ndarray]) -> None:
    """`out0, out1, ...` into exactly `path` (np.savez would append `.npz` to a name)."""
    with open(path, "wb") as stream:
        np.savez(stream, **{f"out{i}": r for i, r in enumerate(results)})


def _count(items, noun: str) -> str:
    return f"{len(items)} {noun}" + ("" if len(items) == 1 else "s")


def median_seconds(*runs: Callable[[], object], repeats: int) -> list[float]:
    """The median time of each of `runs` after a warm-up; their runs alternate (a, b, a, b,
    ...), so that a change of the machine's load hits each alike."""
    for run in runs:
        run()  # warm up
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeats):
        for run, samples in zip(runs, times, strict=True):
            start = time.perf_counter()
            run()
            samples.append(time.perf_counter() - start)
    return [statistics.median(samples) for samples in times]


def unfused_pipeline(pipeline: str) -> str:
    """`pipeline` with fusion switched off: each `fuse-ops` step (with or without options)
    made `fuse-ops{opt-level=0}`; unchanged when it does not fuse (no `fuse-ops` step, or
    only `fuse-ops{opt-level=0}`: `--no-fusion`)."""
    return UNFUSED_STEP.sub(r"\1fuse-ops{opt-level=0}", pipeline)


UNFUSED_STEP = re.compile(r"(^|,)fuse-ops(\{[^}]*\})?(?=,|$)")
"""A `fuse-ops` step of a pipeline string (not `fuse-ops-by-pattern`)."""


def bench(args, module, inputs, fused, pipeline: str) -> None:
    """Times the build of `pipeline` (`fused`) against the same pipeline unfused, alternating,
    then the reference evaluator; prints one line."""
    kernels = _count(fused.kernels(args.entry), "kernel")
    unfused_steps = unfused_pipeline(pipeline)
    if unfused_steps == pipeline:
        (fused_time,) = median_seconds(lambda: fused.run(args.entry, *inputs), repeats=args.bench)
        comparison = "no unfused build to compare: the pipeline does not fuse"
        line = f"bench (median of {args.bench}): {fused_time * 1e3:.3f} ms ({kernels}); "
    else:
        unfused = compile_module(module, unfused_steps, cache=not args.no_cache)
        fused_time, unfused_time = median_seconds(
            lambda: fused.run(args.entry, *inputs),
            lambda: unfused.run(args.entry, *inputs),
            repeats=args.bench,
        )
        speed_up = unfused_time / fused_time
        verdict = f"{speed_up:.2f}x faster" if speed_up >= 1 else f"{1 / speed_up:.2f}x slower"
        comparison = f"fused is {verdict}"
        line = (
            f"bench (median of {args.bench}, fused and unfused alternating): fused "
            f"{fused_time * 1e3:.3f} ms ({kernels}), unfused {unfused_time * 1e3:.3f} ms "
            f"({_count(unfused.kernels(args.entry), 'kernel')}): "
        )
    if holds_loop_kernels(module):
        reference = "reference evaluator not timed (it would interpret the module's loop kernels)"
    else:
        (reference_time,) = median_seconds(
            lambda: reference_results(module, args.entry, inputs),
            repeats=max(1, min(args.bench, 5)),
        )
        reference = (
            f"reference evaluator {reference_time * 1e3:.3f} ms "
            f"({reference_time / fused_time:.1f}x)"
        )
    print(f"{line}{comparison}; {reference}")


def reference_results(module: ModuleOp, entry: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """What the reference evaluator computes for `@entry` of `module` on `inputs` (imported
    here: `--check` and `--bench` need it, a run does not, and it is 5 ms of the start)."""
    from fusion_compiler.dialects.reference.evaluator import evaluate

    return evaluate(module, entry, inputs)


def holds_loop_kernels(module: ModuleOp) -> bool:
    """Whether `module` already holds `loop.func` kernels (a file written after fuse-tir):
    the reference evaluator runs those element by element in Python, seconds per million
    iterations, so `--bench` does not time it (`--check`, asked for, still runs it)."""
    from fusion_compiler.dialects.loop import FuncOp as LoopFuncOp

    return any(isinstance(op, LoopFuncOp) for op in module.ops)


def run(argv: Sequence[str] | None = None) -> int:
    args = parse_arguments(argv)
    pipeline = args.pipeline or (UNFUSED_PIPELINE if args.no_fusion else DEFAULT_PIPELINE)
    profiling = run_profile.wanted(args)
    file = read_file(args.file)
    cached = run_from_cache(args, cache_pipeline(pipeline, profiling), file)
    if cached is not None:
        model, inputs, elapsed = cached
        return finish(args, None, model, inputs, pipeline, elapsed)
    from fusion_compiler.tools.run_ir import argument_facts, argument_specs

    module = read_module(file)
    # (a module specialised on shapes is no longer the file's: neither it nor its facts are
    # kept under the file's key)
    source = None if specialize_for_run(args, module) else file
    function = entry_function(module, args.file, args.entry)
    needed = memory_needed(function)
    check_memory(function, needed=needed)
    specs = argument_specs(function)
    facts = RunFacts(specs, argument_facts(function, specs), needed)
    inputs = prepare_inputs(args, args.entry, specs, facts.arguments)
    start = time.perf_counter()
    model = compile_module(
        module, pipeline, cache=not args.no_cache, profile=profiling, source=source
    )
    elapsed = time.perf_counter() - start
    if source is not None and not args.no_cache:
        run_facts.store(source, cache_pipeline(pipeline, profiling), args.entry, facts)
    return finish(args, module, model, inputs, pipeline, elapsed)


def run_from_cache(
    args: argparse.Namespace, pipeline: str, source: SourceFile
) -> tuple[CompiledModel, list[np.ndarray], float] | None:
    """The model of `args.file` (read: `source`) built with `pipeline` (with profiling, if asked for) loaded
    from the cache's file level, its inputs and the seconds the load took, without parsing the
    file (`run_facts`); None when the run needs the IR or the cache lacks the model or its
    facts (the run then parses the file, and reports any error where the IR has it)."""
    if (
        args.no_cache
        or args.check
        or args.bench
        or args.input_shape
        or compile_cache.cache_dir() is None
    ):
        return None
    facts = run_facts.load(source, pipeline, args.entry)
    if facts is None or memory_problem(args.entry, facts.memory) is not None:
        return None
    start = time.perf_counter()
    model = file_cache.load(source, pipeline)
    elapsed = time.perf_counter() - start
    if model is None:
        return None
    return model, prepare_inputs(args, args.entry, facts.specs, facts.arguments), elapsed


def finish(
    args: argparse.Namespace,
    module: ModuleOp | None,
    model: CompiledModel | SpecializingModel,
    inputs: list[np.ndarray],
    pipeline: str,
    elapsed: float,
) -> int:
    """Says what runs, runs it and does what the options ask (`--check` and `--bench` with
    the `module`, which a run from the cache does not have); the exit status."""
    profiling = run_profile.wanted(args)
    kernels = model.kernels(args.entry)
    origin = "from cache" if model.from_cache else "compiled"
    origin += " (profiling build)" if profiling else ""
    print(
        f"{args.file}: @{args.entry} runs {_count(kernels, 'kernel')} ({', '.join(kernels)}); "
        f"{origin} in {elapsed:.2f} s"
    )
    results = model.run(args.entry, *inputs)
    if args.outputs:
        write_outputs(args.outputs, results)
    status = 0
    if args.check:
        assert module is not None
        if not check(results, reference_results(module, args.entry, inputs)):
            status = 1
    if args.bench > 0:
        assert module is not None
        bench(args, module, inputs, model, pipeline)
    if profiling:
        run_profile.profile(args, model, inputs)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    return run_without_traceback(lambda: run(argv), "fusion-run")


if __name__ == "__main__":
    sys.exit(main())
