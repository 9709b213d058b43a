"""Paired A/B of a pipeline change on one model: the default pipeline against the same with
one pass's options changed, compiled in one process and timed alternately.

    python bench/pipeline_ab.py MODEL.mlir --change 'schedule-kernels=schedule-kernels{collapse=false}'
                                [--rounds 21] [--calls 3] [--threads 1,2]

`--change OLD=NEW` replaces the text `OLD` of `DEFAULT_PIPELINE` by `NEW` for the baseline
build (it must occur). Both builds compile with the cache off, run on the same random inputs
(checked to give the same bits, or the largest difference is printed), and are timed in
rounds: each round runs each build once untimed, then `--calls` times timed, alternating, so
that a noisy neighbour slows both sides alike. Prints per thread count the medians and
baseline / default (above 1: the default pipeline is faster). A benchmark, not a test: run it
on a quiet machine and repeat a surprising figure.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))

from fusion_compiler.driver import DEFAULT_PIPELINE, compile_module, parse_file  # noqa: E402


def _builds(path: Path, change: str):
    old, sep, new = change.partition("=")
    if not sep or old not in DEFAULT_PIPELINE:
        raise SystemExit(
            f"error: --change needs OLD=NEW with OLD in the default pipeline: {change}"
        )
    module = parse_file(path)
    baseline = compile_module(module, DEFAULT_PIPELINE.replace(old, new, 1), cache=False)
    default = compile_module(module, DEFAULT_PIPELINE, cache=False)
    return baseline, default


def _inputs(model) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [
        rng.standard_normal(p.shape).astype(p.dtype) for p in model.functions["main"].parameters
    ]


def _largest_difference(a, b) -> float:
    return max(
        float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)), initial=0.0))
        for x, y in zip(a, b, strict=True)
    )


def paired_medians(baseline, default, inputs, rounds: int, calls: int) -> tuple[float, float]:
    """Median milliseconds per call of each build, timed alternately."""
    samples: dict[str, list[float]] = {"baseline": [], "default": []}
    for _ in range(rounds):
        for label, model in (("baseline", baseline), ("default", default)):
            model.run("main", *inputs)
            start = time.perf_counter()
            for _ in range(calls):
                model.run("main", *inputs)
            samples[label].append((time.perf_counter() - start) / calls * 1e3)
    return statistics.median(samples["baseline"]), statistics.median(samples["default"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--change", required=True, help="OLD=NEW, the baseline's pipeline text")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--threads", default="1,2")
    args = parser.parse_args(argv)
    baseline, default = _builds(args.model, args.change)
    inputs = _inputs(default)
    difference = _largest_difference(baseline.run("main", *inputs), default.run("main", *inputs))
    same = "the same bits" if difference == 0 else f"largest difference {difference:.3g}"
    print(
        f"{args.model.name}: baseline `{args.change.partition('=')[2]}` against the default; {same}"
    )
    print("| threads | baseline ms | default ms | baseline / default |")
    print("|---|---|---|---|")
    for threads in (int(t) for t in args.threads.split(",")):
        for model in (baseline, default):
            model.set_num_threads(threads)
        old, new = paired_medians(baseline, default, inputs, args.rounds, args.calls)
        print(f"| {threads} | {old:.3f} | {new:.3f} | {old / new:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
