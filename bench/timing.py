"""The timer of the single-implementation bench scripts: the median of consecutive runs."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(run: Callable[[], object], runs: int) -> float:
    """The median wall time of `runs` consecutive calls of `run`, after one warm-up call."""
    run()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
