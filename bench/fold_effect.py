"""The effect of `fold-constants` on the zoo models: run time and compile time, paired.

    python bench/fold_effect.py [--models shufflenet,resnet50] [--runs 7] [--threads 1,2]

Each model of `bench/zoo.py` (random weights) is compiled with the default pipeline and with
the default pipeline without `fold-constants` (the build before the pass), both without the
compile cache; then, for each thread count (`set_num_threads`, the same for both), the two
run alternately on the same inputs (in turns: before, after, after, before, ...), and the
table gives the medians, their ratio, the kernels each launches, the compile seconds and each
build's error against onnxruntime (max |ours - theirs| / max |theirs|). squeezenet has no
batch norm and nothing to fold: its row measures the noise.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import zoo  # noqa: E402

from fusion_compiler.driver import DEFAULT_PIPELINE, compile_module  # noqa: E402
from fusion_compiler.frontend.onnx_importer import import_model  # noqa: E402

UNFOLDED_PIPELINE = DEFAULT_PIPELINE.replace("fold-constants,", "")


def _compiled(module, pipeline: str):
    start = time.perf_counter()
    compiled = compile_module(module, pipeline, cache=False)
    return compiled, time.perf_counter() - start


def measure(name: str, runs: int, thread_counts: list[int]) -> list[str]:
    """One table row per thread count for model `name`."""
    model = zoo.random_model(name)
    module = import_model(model, filename=f"light_{name}.onnx")
    inputs = zoo.random_inputs(model)
    builds = [_compiled(module, p) for p in (UNFOLDED_PIPELINE, DEFAULT_PIPELINE)]
    _, (expected,) = zoo.oracle_outputs(model, inputs)
    errors = [zoo.relative_error(c.run("main", *inputs)[0], expected) for c, _ in builds]
    kernels = [len(c.kernels("main")) for c, _ in builds]
    rows = []
    for threads in thread_counts:
        before, after = _paired_ms([c for c, _ in builds], inputs, runs, threads)
        rows.append(
            f"| {name} | {threads} | {kernels[0]} → {kernels[1]} | {before:.1f} | {after:.1f} | "
            f"{before / after:.2f} | {builds[0][1]:.1f} | {builds[1][1]:.1f} | "
            f"{errors[0]:.1e} | {errors[1]:.1e} |"
        )
    return rows


def _paired_ms(builds: list, inputs: list, runs: int, threads: int) -> tuple[float, float]:
    """Median milliseconds of each build, run in turns: before, after, after, before, ..."""
    times: list[list[float]] = [[], []]
    for compiled in builds:
        compiled.set_num_threads(threads)
        compiled.run("main", *inputs)  # warm up
    for run in range(runs):
        for index in (0, 1) if run % 2 == 0 else (1, 0):
            start = time.perf_counter()
            builds[index].run("main", *inputs)
            times[index].append(time.perf_counter() - start)
    before, after = (1e3 * statistics.median(t) for t in times)
    return before, after


def _load() -> str:
    try:
        return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "load average unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="squeezenet,shufflenet,resnet50")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--threads", default=f"1,{zoo.CORES}", help="comma-separated thread counts")
    args = parser.parse_args()
    thread_counts = sorted({int(t) for t in args.threads.split(",")})
    print(f"median of {args.runs} alternated runs, {_load()}")
    print(
        "| model | threads | kernels before → after | before ms | after ms | speed-up | "
        "compile before s | compile after s | error before | error after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        print("\n".join(measure(name, args.runs, thread_counts)), flush=True)


if __name__ == "__main__":
    main()
