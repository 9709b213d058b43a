"""The result buffers of a compiled function, reused once the caller has let them go.

A compiled function returns its results as new numpy arrays (64-byte aligned:
`jit.aligned_buffer`). Memory of a large result comes from glibc's `mmap` every time once it
passes the allocator's mmap threshold (at most 32 MiB), and the kernel hands out every such
page zeroed on its first touch: a 4096x4096 `relu(a + b)` spent 7-8 ms of its 13 ms on that
(`np.empty` + fill of 64 MiB: 10.4-11.5 ms, the fill alone 2.7 ms, two runs on a Zen 4 VM).
Onnxruntime's arena keeps such buffers from one run to the next. A small result costs time
of another kind: a new aligned array took 2.5 us of Python (1.1 us once its view became one
`ndarray` call), a pooled one takes 0.5 us (a lock, a reference count, the view), and a
20 us depthwise convolution spent 5.8 us of its call outside its kernel.

`OutputPool` therefore keeps, for every result slot, up to `POOL_DEPTH` raw buffers, and a call
takes one that no array refers to any more. Every array the caller holds that views a result
(the result itself, a slice, a reshape) keeps its raw buffer referenced (numpy's `base` chain
ends at the owner), so a buffer is taken only when nothing the caller can reach still sees it;
when every pooled buffer is in use, the call gets a new, unpooled one. The kernels write every
element of their results, so a reused buffer returns exactly what a new one would. A caller
that keeps raw pointers (`ctypes`) into a result it has dropped is on its own, as it would be
with memory `free` gave back.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Sequence

import numpy as np

from fusion_compiler.lowering.jit import AlignedBytes, aligned_bytes, aligned_view

POOL_DEPTH = 2
"""Buffers kept per result slot: two cover the usual loop `y = f(x)`, where the previous
result is still referenced while the next call runs."""


def _references(raw: np.ndarray) -> int:
    return sys.getrefcount(raw)


def _references_when_free() -> int:
    """`_references` of a pooled raw buffer that only the pool refers to, counted the way
    `OutputPool.take_all` counts (its tuple in the pool, the argument)."""
    buffers: list[AlignedBytes] = [(np.empty(1), 0, 0)]
    for aligned in buffers:
        return _references(aligned[0])
    raise AssertionError("unreachable")


_FREE_REFERENCES = _references_when_free()


class OutputPool:
    """The pooled result buffers of one compiled function (thread-safe), one slot per result
    of the given shapes and dtypes."""

    def __init__(self, results: Sequence[tuple[Sequence[int], np.dtype]]):
        self._slots: tuple[tuple[tuple[int, ...], np.dtype, int, list[AlignedBytes]], ...] = tuple(
            (tuple(shape), np.dtype(dtype), math.prod(shape) * np.dtype(dtype).itemsize, [])
            for shape, dtype in results
        )
        """Per result: its shape, dtype, bytes and pooled buffers."""
        self._lock = threading.Lock()

    def take_all(self) -> tuple[list[np.ndarray], list[int]]:
        """An aligned array for each result and its address: per slot, a pooled buffer nothing
        else refers to, else a new one (kept in the pool while it has room)."""
        arrays = []
        addresses = []
        with self._lock:
            for shape, dtype, size, buffers in self._slots:
                for aligned in buffers:
                    if _references(aligned[0]) <= _FREE_REFERENCES:
                        break
                else:
                    aligned = aligned_bytes(size)
                    if len(buffers) < POOL_DEPTH:
                        buffers.append(aligned)
                array, address = aligned_view(aligned, shape, dtype)
                arrays.append(array)
                addresses.append(address)
        return arrays, addresses
