"""Native run time of every example with and without `schedule-kernels` (median or min of N runs).

    python bench/schedule_effect.py [--runs 7] [--stat median|min] [--examples conv_block ...]
                                    [--options 'unroll-jam=2 ...']

Each example is compiled through fuse-tir (plus `schedule-kernels` for the second column),
`lower-graph` and `convert-loop-to-llvm`, JIT-compiled for the host, and its entry `main` is
run on random inputs (bound constants after the arguments). Prints a table in milliseconds
and checks that both builds agree.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))
from native_model import NativeModel, compile_example, random_inputs  # noqa: E402

EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))


def time_ms(model: NativeModel, inputs: list[np.ndarray], runs: int, stat) -> float:
    model.run(inputs)  # warm up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        model.run(inputs)
        times.append(time.perf_counter() - start)
    return 1e3 * stat(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--examples", nargs="*", default=None)
    parser.add_argument("--options", default="", help="schedule-kernels options, e.g. 'fuse=false'")
    parser.add_argument(
        "--stat", choices=("median", "min"), default="median", help="statistic of the runs"
    )
    args = parser.parse_args()
    paths = [p for p in EXAMPLES if args.examples is None or p.stem in args.examples]
    print(f"{args.stat} of {args.runs} runs, milliseconds; schedule-kernels{{{args.options}}}")
    print(
        f"{'example':<22}{'unfused':>10}{'fused':>10}{'scheduled':>11}{'speed-up':>10}  max|diff|"
    )
    for path in paths:
        unfused = compile_example(path, fused=False, schedule=None)
        fused = compile_example(path, fused=True, schedule=None)
        scheduled = compile_example(path, fused=True, schedule=args.options)
        inputs = random_inputs(fused.signature_inputs, seed=0)
        stat = statistics.median if args.stat == "median" else min
        times = [time_ms(m, inputs, args.runs, stat) for m in (unfused, fused, scheduled)]
        base = fused.run(inputs)
        new = scheduled.run(inputs)
        diff = max(float(np.max(np.abs(a - b))) for a, b in zip(base, new, strict=True))
        print(
            f"{path.stem:<22}{times[0]:>10.2f}{times[1]:>10.2f}{times[2]:>11.2f}"
            f"{times[1] / times[2]:>9.2f}x  {diff:.2e}"
        )


if __name__ == "__main__":
    main()
