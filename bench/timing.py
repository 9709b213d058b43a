"""The bench scripts' timers: the median of consecutive runs of one implementation, and the
samples of several that take turns (what a ratio between them needs on a shared machine)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence


def median_seconds(run: Callable[[], object], runs: int) -> float:
    """The median wall time of `runs` consecutive calls of `run`, after one warm-up call."""
    run()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def alternating_samples(runs: Sequence[Callable[[], object]], rounds: int) -> list[list[float]]:
    """The seconds of each of `runs` in each of `rounds` rounds in which they take turns
    (a, b, a, b, ...), so that a change of the machine's load hits each alike. Each timed call
    follows an untimed call of the same run: the thread pool of the run before it keeps its
    cores for a while (onnxruntime's spins after every run, libgomp's before it sleeps), and a
    timed call made right after the other side's would measure that contention, not the run
    (on 2 threads, resnet50: ours 83.7 ms and onnxruntime 39.8 ms timed back to back, 53.7
    and 32.3 ms each after an untimed call of its own)."""
    samples: list[list[float]] = [[] for _ in runs]
    for _ in range(rounds):
        for run, times in zip(runs, samples, strict=True):
            run()
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
    return samples
