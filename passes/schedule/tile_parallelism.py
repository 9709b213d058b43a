"""Which loops of a packed-panel nest run on the thread team (`parallel_tile_loops`).

At most one loop on each path through the emitted nests is marked `parallel`, chosen
among the loops over tiles and spatial iterations (`parallel_tile_loops`): the outermost
whose iterations divide evenly enough among the host's cores. The static schedule gives
each thread `ceil(n / cores)` iterations at most, so a loop of `n` runs at `n / (ceil(n /
cores) * cores)` of the team's speed (its balance): 5 column tiles on 2 cores keep one core
idle for a sixth of the time. A loop whose balance is under `BALANCE` goes serial when a
loop inside it, with enough work per launch (`PARALLEL_THRESHOLD`), balances better; that
one is then launched once per iteration of the loops around it (a launch costs a
microsecond or two, a column tile of a convolution hundreds). Measured on resnet50 (Zen 5,
whole model, the old and the new choice compiled in one process and timed alternately,
medians of 11-21 rounds, four such runs): 1.01-1.27x faster on 2 threads (six pairs,
median 1.11x); 0.94-1.01x on 1 thread (four pairs, median 0.97x). Its 3x3
256 -> 256 convolution on 14 x 14 pixels (5 column tiles of 48 channels, now 14 output rows
in parallel) took 3.1 instead of 4.0 ms in one pair of `fusion-run --profile` runs.
"""

from __future__ import annotations

from fusion_compiler.dialects.loop import ForOp
from fusion_compiler.dialects.loop.queries import parallel_work
from fusion_compiler.lowering.parallel_to_llvm import PARALLEL_THRESHOLD
from fusion_compiler.passes.analysis.loop_access import trip_count

BALANCE = 0.9
"""The balance (module docstring) at which a loop is parallel even where a loop inside it
balances better."""


def balance(trips: int, cores: int) -> float:
    """The share of a team of `cores` threads that a static schedule of `trips` iterations
    keeps busy."""
    return trips / (-(-trips // cores) * cores)


def parallel_tile_loops(tops: list[ForOp], cores: int) -> list[ForOp]:
    """The loops of `tops` (outer loops before the loops inside them) to run in parallel: on
    each path, the outermost of two iterations or more whose balance reaches `BALANCE`, or
    that no loop inside it (of enough work per launch) beats."""
    chosen: list[ForOp] = []
    for loop in tops:
        trips = trip_count(loop) or 0
        if trips < 2 or any(outer.is_ancestor(loop) for outer in chosen):
            continue
        inside = [
            balance(trip_count(inner) or 0, cores)
            for inner in tops
            if inner is not loop
            and loop.is_ancestor(inner)
            and (trip_count(inner) or 0) >= 2
            and (parallel_work(inner) or 0) >= PARALLEL_THRESHOLD
        ]
        if balance(trips, cores) >= min(BALANCE, max(inside, default=0.0)):
            chosen.append(loop)
    return chosen
