"""The bench scripts' timers: the median of consecutive runs of one implementation, and the
samples of several that take turns (what a ratio between them needs on a shared machine)."""

from __future__ import annotations

import itertools
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


SETTLE_CALLS = 2
"""Untimed calls that start each turn of `alternating_samples` (more until `SETTLE_SECONDS`
have passed)."""

SETTLE_SECONDS = 0.05
"""onnxruntime's thread pool spins for about 30 ms after a run."""

TEAM_SETTLE_SECONDS = 0.3
"""`SETTLE_SECONDS` when the runs use thread teams: after the other side's turn, our team
thread can share a core with the calling thread for a while (the scheduler placed it there
while the other side's threads still held the other core, and it keeps it there while it
spins between launches), and runs then take up to 5x longer (15 ms turns of a 2.7 ms
squeezenet). Measured on a 2-core Zen 5 VM, squeezenet on 2 threads, 12 rounds, two runs
each: ours 3.45-4.16 ms timed after 50 ms of settling, 2.68-2.70 ms after 300 ms, 2.66-2.97
ms with onnxruntime not running at all; onnxruntime 2.13-2.30 ms either way."""


def settle_seconds(threads: int) -> float:
    """How long each turn of `alternating_samples` settles for runs on `threads` threads."""
    return TEAM_SETTLE_SECONDS if threads > 1 else SETTLE_SECONDS


TURN_CALLS = 3
"""Timed calls in each turn of `alternating_samples`."""


def alternating_samples(
    runs: Sequence[Callable[[], object]], rounds: int, threads: int = 1
) -> list[list[float]]:
    """The seconds of each of `runs` over `rounds` rounds in which they take turns (a, b, a,
    b, ...), so that a change of the machine's load hits each alike. A turn is
    `SETTLE_CALLS` untimed calls (more until `settle_seconds(threads)` have passed), then
    `TURN_CALLS` timed ones: the run before keeps the
    cores busy for a while (onnxruntime's thread pool spins for about 30 ms after a run,
    libgomp's before it sleeps) and an idle VM's second core wakes slowly, so a call timed
    right after the other side's measures that, not the run. Measured on 2 threads,
    everything else paused: shufflenet alone 9.5 ms, timed right after each onnxruntime
    call 21.5 ms (onnxruntime 3.7 ms alone, 5.4 ms right after ours); squeezenet 10.1 ms
    after two settling calls, 6.7 ms after 50 ms of them (6.5 ms alone)."""
    samples: list[list[float]] = [[] for _ in runs]
    settle = settle_seconds(threads)
    for _ in range(rounds):
        for run, times in zip(runs, samples, strict=True):
            settle_until = time.perf_counter() + settle
            for call in itertools.count():
                if call >= SETTLE_CALLS and time.perf_counter() >= settle_until:
                    break
                run()
            for _ in range(TURN_CALLS):
                start = time.perf_counter()
                run()
                times.append(time.perf_counter() - start)
    return samples
