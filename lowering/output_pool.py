"""Large result buffers of a compiled function, reused once the caller has let them go.

A compiled function returns its results as new numpy arrays (64-byte aligned:
`jit.aligned_buffer`). Memory that large comes from glibc's `mmap` every time once it passes
the allocator's mmap threshold (at most 32 MiB), and the kernel hands out every such page
zeroed on its first touch: a 4096x4096 `relu(a + b)` spent 7-8 ms of its 13 ms on that
(`np.empty` + fill of 64 MiB: 10.4-11.5 ms, the fill alone 2.7 ms, two runs on a Zen 4 VM). Onnxruntime's
arena keeps such buffers from one run to the next.

`OutputPool` does the same for results of at least `POOLED_BYTES`: per result slot it keeps
up to `POOL_DEPTH` raw buffers, and a call takes one that no array refers to any more. Every
array the caller holds that views a result (the result itself, a slice, a reshape) keeps its
raw buffer referenced (numpy's `base` chain ends at the owner), so a buffer is taken only when
nothing the caller can reach still sees it; when every pooled buffer is in use, the call gets
a new, unpooled one. The kernels write every element of their results, so a reused buffer
returns exactly what a new one would. A caller that keeps raw pointers (`ctypes`) into a
result it has dropped is on its own, as it would be with memory `free` gave back.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence

import numpy as np

from fusion_compiler.lowering.jit import aligned_buffer, aligned_bytes, aligned_view

POOLED_BYTES = 1 << 20
"""Results of at least this many bytes are pooled; smaller ones are new arrays each call
(malloc reuses its heap for them: no fresh pages)."""

POOL_DEPTH = 2
"""Buffers kept per result slot: two cover the usual loop `y = f(x)`, where the previous
result is still referenced while the next call runs."""


def _references(raw: np.ndarray) -> int:
    return sys.getrefcount(raw)


def _references_when_free() -> int:
    """`_references` of a pooled raw buffer that only the pool refers to, counted the way
    `OutputPool.take` counts (its tuple in the pool, the loop variable, the argument)."""
    buffers = [(np.empty(1), 0)]
    for raw, _ in buffers:
        return _references(raw)
    raise AssertionError("unreachable")


_FREE_REFERENCES = _references_when_free()


class OutputPool:
    """The pooled result buffers of one compiled function (thread-safe)."""

    def __init__(self, sizes: Sequence[int]):
        self._pooled = [size >= POOLED_BYTES for size in sizes]
        self._buffers: list[list[tuple[np.ndarray, int]]] = [[] for _ in sizes]
        self._lock = threading.Lock()

    def take(self, slot: int, shape: Sequence[int], dtype: np.dtype, size: int):
        """An aligned array for result `slot` and its address: a pooled buffer nothing else
        refers to, else a new one (kept in the pool while it has room)."""
        if not self._pooled[slot]:
            return aligned_buffer(shape, dtype, size)
        with self._lock:
            buffers = self._buffers[slot]
            for raw, start in buffers:
                if _references(raw) <= _FREE_REFERENCES:
                    return aligned_view(raw, start, shape, dtype, size)
            raw, start = aligned_bytes(size)
            if len(buffers) < POOL_DEPTH:
                buffers.append((raw, start))
            return aligned_view(raw, start, shape, dtype, size)
