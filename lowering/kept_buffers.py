"""Buffers an entry keeps from one call to the next: the slots of its memory plan.

lower-graph marks the slots of a model's run entry `fusion.kept` (`KEPT_BUFFER_ATTR`; not those of
its load entry, which runs once). `convert-loop-to-llvm` gives each kept slot that lives on
the heap a global of its own, `@__fusion_kept_<entry>_<n>` (`KEPT_PREFIX`), which holds the
buffer between calls, and brackets the entry with two calls (`memref_to_llvm`):

    %buffer = call ptr @__fusion_take_buffer(ptr @__fusion_kept_main_0, i64 <bytes>)
    ...
    call void @__fusion_give_buffer(ptr @__fusion_kept_main_0, ptr %buffer)   (before each return)

`take` exchanges the global with null atomically and allocates (`aligned_alloc`, 64-byte
aligned) only when it found none; `give` exchanges the buffer back in and frees what it
displaced. One caller at a time reuses the same buffer on every call; two concurrent calls
of one entry cannot share one: the second takes null and allocates its own, and whichever
gives back last keeps its buffer and frees the other. Both functions are LLVM IR
(`KEEPER_IR`), linked into the entry's unit before it is optimised (`link_buffer_keeper`).
`JitModule` frees what the globals hold when it is collected (`release_kept`).

Why: glibc serves an allocation above its mmap threshold with fresh pages, and its heap gives
pages back when the free space at its top passes the trim threshold, so an entry that
allocated its slots on every call faulted their pages in on every call, zeroed by the
kernel. Measured on a Zen 4 VM, 1 thread, 20 calls after 5 (`faults.py`): resnet50 1,536-1,956
page faults a call (6-8 MB of slots) and 3.4 ms of system time of its 86-89 ms; vgg19 9,432
faults (37 MB) and 20 ms of 402 ms. With glibc told to keep its memory
(`MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`): no faults, resnet50 80.6 ms, vgg19
383 ms. Onnxruntime's arena keeps its buffers likewise.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Sequence

import llvmlite.binding as llvm

from fusion_compiler.lowering.linked_ir import declares, link_internal

KEPT_PREFIX = "__fusion_kept_"
"""The prefix of the globals that hold kept buffers: `<prefix><entry>_<n>`."""

TAKE_BUFFER = "__fusion_take_buffer"
GIVE_BUFFER = "__fusion_give_buffer"

KEEPER_IR = f"""
declare ptr @aligned_alloc(i64, i64)
declare void @free(ptr)

define ptr @{TAKE_BUFFER}(ptr %slot, i64 %size) {{
entry:
  %kept = atomicrmw xchg ptr %slot, ptr null acquire, align 8
  %none = icmp eq ptr %kept, null
  br i1 %none, label %fresh, label %reuse
fresh:
  %made = call ptr @aligned_alloc(i64 64, i64 %size)
  ret ptr %made
reuse:
  ret ptr %kept
}}

define void @{GIVE_BUFFER}(ptr %slot, ptr %buffer) {{
entry:
  %displaced = atomicrmw xchg ptr %slot, ptr %buffer acq_rel, align 8
  call void @free(ptr %displaced)
  ret void
}}
"""
"""The two functions kept slots are taken and given back with (`free(NULL)` does nothing)."""


def declares_buffer_keeper(module: llvm.ModuleRef) -> bool:
    """Whether `module` calls `__fusion_take_buffer` without defining it."""
    return declares(module, TAKE_BUFFER)


def link_buffer_keeper(module: llvm.ModuleRef) -> None:
    """Defines the keeper's functions in `module` (internal, so that they inline)."""
    link_internal(module, KEEPER_IR, (TAKE_BUFFER, GIVE_BUFFER))


_KEPT_GLOBAL = re.compile(rf'^@"?({KEPT_PREFIX}[^" ]+)"? = ', re.MULTILINE)


def kept_globals(llvm_ir: str) -> list[str]:
    """The names of the kept-buffer globals a unit's LLVM IR defines."""
    return _KEPT_GLOBAL.findall(llvm_ir)


def release_kept(addresses: Sequence[int]) -> None:
    """Frees the buffers the kept-buffer globals at `addresses` hold and clears them (no entry
    of theirs may be running)."""
    for address in addresses:
        held = ctypes.c_void_p.from_address(address)
        if held.value:
            _free(held.value)
            held.value = None


_libc = ctypes.CDLL(None)
_free = _libc.free
_free.argtypes = [ctypes.c_void_p]
_free.restype = None
