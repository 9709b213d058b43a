"""Static memory planning of a lowered entry function (read-only, IR-free).

Each intermediate value lives from the step that writes it to the last step that reads it.
Values whose lifetimes do not overlap share a *slot* (one flat buffer). A slot is freed only
after the step that reads its value for the last time, so a step never gets an output buffer
that overlaps one of its inputs — kernel arguments stay `noalias`. Allocation is best fit:
the smallest free slot that is large enough, else the largest free slot grown to fit, else a
new slot. Everything is deterministic (lists, ties broken by slot number).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Lifetime:
    """An intermediate value: its size in elements, the step that defines it and the last
    step that uses it (`last_use >= defined`)."""

    size: int
    defined: int
    last_use: int


@dataclass(frozen=True)
class MemoryPlan:
    slot_of: tuple[int, ...]
    """Per value, the slot that holds it."""
    slot_sizes: tuple[int, ...]
    """Per slot, its size in elements (the largest value it holds)."""

    @property
    def total(self) -> int:
        return sum(self.slot_sizes)


def plan_memory(values: Sequence[Lifetime]) -> MemoryPlan:
    """Assign a slot to every value so that values alive at the same step never share one."""
    slot_sizes: list[int] = []
    slot_of = [-1] * len(values)
    busy_until: list[int] = []  # per slot, the last step its current value is used at
    order = sorted(range(len(values)), key=lambda v: (values[v].defined, v))
    for value in order:
        lifetime = values[value]
        free = [s for s in range(len(slot_sizes)) if busy_until[s] < lifetime.defined]
        slot = _best_fit(free, slot_sizes, lifetime.size)
        if slot is None:
            slot_sizes.append(lifetime.size)
            busy_until.append(lifetime.last_use)
            slot_of[value] = len(slot_sizes) - 1
            continue
        slot_sizes[slot] = max(slot_sizes[slot], lifetime.size)
        busy_until[slot] = lifetime.last_use
        slot_of[value] = slot
    return MemoryPlan(tuple(slot_of), tuple(slot_sizes))


def _best_fit(free: list[int], sizes: list[int], size: int) -> int | None:
    fitting = [s for s in free if sizes[s] >= size]
    if fitting:
        return min(fitting, key=lambda s: (sizes[s], s))
    if free:
        return max(free, key=lambda s: (sizes[s], -s))
    return None
