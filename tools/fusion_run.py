"""`fusion-run`: compile a graph-level IR file through the fusion pipeline and run it natively.

    fusion-run FILE [--entry main] [--inputs in.npz | --random-inputs [--seed N]]
               [--outputs out.npz] [--check] [--bench N] [--no-fusion] [--no-cache]

`in.npz` holds `arg0, arg1, ...` in argument order; `out.npz` receives `out0, out1, ...`.
`--check` compares the results with the numpy reference semantics and exits 1 on a mismatch;
`--bench N` prints the median time of N runs of the fused build, of the unfused build (the
same pipeline with `fuse-ops{opt-level=0}`) and of the reference evaluator.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import CompileError, parse_source
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import DEFAULT_PIPELINE, UNFUSED_PIPELINE, compile_module
from fusion_compiler.lowering.compiled_model import CompiledFunction, graph_functions
from fusion_compiler.tools.errors import run_without_traceback

CHECK_RTOL = 1e-4
"""Relative tolerance of `--check`. The reference rounds once from float64; native kernels
accumulate in float32 in loop order, so reductions of a few thousand terms differ by ~1e-5."""
CHECK_ATOL_SCALE = 1e-4
"""Absolute tolerance of `--check`, as a fraction of the largest reference magnitude (for
outputs where cancellation leaves values near zero)."""


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="fusion-run", description=__doc__.split("\n\n")[0])
    parser.add_argument("file", help="graph-level IR file (.mlir)")
    parser.add_argument("--entry", default="main", help="the function to run (default: main)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--inputs", metavar="IN.npz", help="inputs arg0, arg1, ... in order")
    source.add_argument("--random-inputs", action="store_true", help="standard-normal inputs")
    parser.add_argument("--seed", type=int, default=0, help="seed of --random-inputs")
    parser.add_argument("--outputs", metavar="OUT.npz", help="write the results as out0, ...")
    parser.add_argument("--check", action="store_true", help="compare with the reference")
    parser.add_argument("--bench", type=int, metavar="N", default=0, help="time N runs")
    parser.add_argument("--no-fusion", action="store_true", help="run the unfused build")
    parser.add_argument("--no-cache", action="store_true", help="bypass the compile cache")
    return parser.parse_args(argv)


def load_inputs(args: argparse.Namespace, function: CompiledFunction) -> list[np.ndarray]:
    if args.inputs is None and not args.random_inputs:
        if function.parameters:
            raise CompileError(
                f"@{function.name} takes {len(function.parameters)} arguments: give --inputs "
                "IN.npz or --random-inputs"
            )
        return []
    if args.random_inputs:
        rng = np.random.default_rng(args.seed)
        return [rng.standard_normal(p.shape).astype(np.float32) for p in function.parameters]
    with np.load(args.inputs) as archive:
        missing = [f"arg{i}" for i in range(len(function.parameters)) if f"arg{i}" not in archive]
        if missing:
            raise CompileError(f"{args.inputs}: missing {', '.join(missing)}")
        return [np.ascontiguousarray(archive[f"arg{i}"]) for i in range(len(function.parameters))]


def check(results, reference) -> bool:
    """Print the error of each result against the reference; whether all are within tolerance."""
    ok = True
    for index, (got, want) in enumerate(zip(results, reference, strict=True)):
        scale = float(np.nanmax(np.abs(want))) if want.size else 0.0
        error = np.abs(got.astype(np.float64) - want)
        both_nan = np.isnan(got) & np.isnan(want)
        error[both_nan] = 0.0
        max_abs = float(np.nanmax(error)) if error.size else 0.0
        relative = error / np.maximum(np.abs(want), np.finfo(np.float32).tiny)
        max_rel = float(np.nanmax(relative)) if error.size else 0.0
        good = bool(
            np.all(error <= CHECK_ATOL_SCALE * scale + CHECK_RTOL * np.abs(want))
            and np.array_equal(np.isnan(got), np.isnan(want))
        )
        ok &= good
        verdict = "OK" if good else "MISMATCH"
        print(
            f"check out{index}: max abs error {max_abs:.3g}, max rel error {max_rel:.3g} "
            f"(|ref| <= {scale:.3g}): {verdict}"
        )
    return ok


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


def bench(args, module, inputs, fused) -> None:
    unfused = compile_module(module, UNFUSED_PIPELINE, cache=not args.no_cache)
    fused_time, unfused_time = median_seconds(
        lambda: fused.run(args.entry, *inputs),
        lambda: unfused.run(args.entry, *inputs),
        repeats=args.bench,
    )
    (reference_time,) = median_seconds(
        lambda: evaluate(module, args.entry, inputs), repeats=max(1, min(args.bench, 5))
    )
    speed_up = unfused_time / fused_time
    verdict = f"{speed_up:.2f}x faster" if speed_up >= 1 else f"{1 / speed_up:.2f}x slower"
    print(
        f"bench (median of {args.bench}, fused and unfused alternating): fused "
        f"{fused_time * 1e3:.3f} ms ({_count(fused.kernels(args.entry), 'kernel')}), unfused "
        f"{unfused_time * 1e3:.3f} ms ({_count(unfused.kernels(args.entry), 'kernel')}): fused "
        f"is {verdict}; reference evaluator {reference_time * 1e3:.3f} ms "
        f"({reference_time / fused_time:.1f}x)"
    )


def run(argv: Sequence[str] | None = None) -> int:
    args = parse_arguments(argv)
    with open(args.file, encoding="utf-8") as stream:
        text = stream.read()
    module = parse_source(make_context(), text, args.file)
    names = [f.sym_name.data for f in graph_functions(module)]
    if args.entry not in names:
        raise CompileError(
            f"{args.file}: no function @{args.entry} (functions: {', '.join(names)})"
        )
    pipeline = UNFUSED_PIPELINE if args.no_fusion else DEFAULT_PIPELINE
    start = time.perf_counter()
    model = compile_module(module, pipeline, cache=not args.no_cache)
    elapsed = time.perf_counter() - start
    kernels = model.kernels(args.entry)
    origin = "from cache" if model.from_cache else "compiled"
    print(
        f"{args.file}: @{args.entry} runs {_count(kernels, 'kernel')} ({', '.join(kernels)}); "
        f"{origin} in {elapsed:.2f} s"
    )
    function = model.functions[args.entry]
    inputs = load_inputs(args, function)
    results = model.run(args.entry, *inputs)
    if args.outputs:
        np.savez(args.outputs, **{f"out{i}": r for i, r in enumerate(results)})
    status = 0
    if args.check and not check(results, evaluate(module, args.entry, inputs)):
        status = 1
    if args.bench > 0:
        bench(args, module, inputs, model)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    return run_without_traceback(lambda: run(argv), "fusion-run")


if __name__ == "__main__":
    sys.exit(main())
