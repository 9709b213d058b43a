"""Native run time of every example with and without `schedule-kernels` (median or min of N runs).

    python bench/schedule_effect.py [--runs 7] [--stat median|min] [--threads 1]
                                    [--examples conv_block ...] [--options 'unroll-jam=2 ...']

Each example is compiled through fuse-tir with fusion off and on, each without and with
`schedule-kernels` (the `+sched` columns), then `lower-graph` and `convert-loop-to-llvm`,
JIT-compiled for the host, and its entry `main` is run on random inputs (bound constants after
the arguments). Prints milliseconds, the speed-up of scheduling the fused build, and the
largest difference between the fused builds (0: bit-identical). Single-threaded by default
(`--threads` sets `FUSION_NUM_THREADS`, read by the threading runtime of `parallel` loops).
"""

from __future__ import annotations

import argparse
import os
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
    parser.add_argument(
        "--threads", default="1", help="FUSION_NUM_THREADS for `parallel` loops (0: every core)"
    )
    args = parser.parse_args()
    os.environ["FUSION_NUM_THREADS"] = args.threads
    paths = [p for p in EXAMPLES if args.examples is None or p.stem in args.examples]
    print(
        f"{args.stat} of {args.runs} runs, milliseconds, {args.threads} thread(s); "
        f"schedule-kernels{{{args.options}}}"
    )
    print(
        f"{'example':<20}{'unfused':>9}{'+sched':>9}{'fused':>9}{'+sched':>9}"
        f"{'speed-up':>10}  max|diff|"
    )
    stat = statistics.median if args.stat == "median" else min
    for path in paths:
        models = [
            compile_example(path, fused=fused, schedule=schedule)
            for fused in (False, True)
            for schedule in (None, args.options)
        ]
        inputs = random_inputs(models[0].signature_inputs, seed=0)
        times = [time_ms(model, inputs, args.runs, stat) for model in models]
        base, new = models[2].run(inputs), models[3].run(inputs)
        diff = max(float(np.max(np.abs(a - b))) for a, b in zip(base, new, strict=True))
        columns = "".join(f"{t:>9.2f}" for t in times)
        print(f"{path.stem:<20}{columns}{times[2] / times[3]:>9.2f}x  {diff:.2e}")


if __name__ == "__main__":
    main()
