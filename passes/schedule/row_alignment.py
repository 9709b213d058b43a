"""Aligned rows: a local buffer's rows shorter than a cache line padded to a divisor of the
line, so that no row straddles two lines.

A depthwise convolution of a 7 x 7 plane pads it to 9 x 9 floats per channel: rows of 36
bytes, most of them split across two 64-byte lines, written by a copy and read back at once by
the window's vector loads. Split loads and stores, and loads that the store buffer cannot
forward from a split store, made the padding cost twice the window's arithmetic. With rows of
16 floats (64 bytes, one line each) the same kernel runs 1.5x faster (544 channels, 1 thread).

The row pitch `P` of a buffer whose last extent `E` is below a line (16 floats) is the least
power of two `P >= E`: a 9 becomes 16, a 7 becomes 8, a 13 becomes 16. The buffer's base is
aligned to a line (`jit.BUFFER_ALIGNMENT`), so each row then lies within one line.
The elements past `E` in each row are never touched. Longer rows keep their extent: padding
them to whole lines (29 to 32, 57 to 64: pools of 27 x 27 and 112 x 112 planes) measured
0.94-1.10x, no gain worth the memory.

Legal for a `loop.alloc` used only by loads and stores: its shape is invisible outside them,
and a larger last extent changes no element any access reaches (every subscript is below `E`).
Only buffers of at least two rows whose rows some `vectorized` loop walks are padded (a buffer
of one row, or one read element by element, gains nothing), and none that a collapsed nest
walks as one run of elements (`(f / W, f % W)`: the lowering addresses it as `f` only while
the rows are dense; padded, it would gather).
"""

from __future__ import annotations

from xdsl.dialects.builtin import MemRefType, NoneAttr

from fusion_compiler.dialects.loop import AllocOp, ForOp, FuncOp, LoopKind
from fusion_compiler.lowering.jit import BUFFER_ALIGNMENT
from fusion_compiler.passes.analysis.ir_walk import walk_ops
from fusion_compiler.passes.analysis.loop_access import (
    MemoryAccess,
    access_digit_runs,
    is_unit_stride,
    only_accesses,
)
from fusion_compiler.passes.schedule.loop_transforms import alloc_like


def row_pitch(extent: int, element_bytes: int) -> int:
    """The row pitch (in elements) for rows of `extent`: the least power of two at least
    `extent` for rows shorter than a line (a divisor of the line), else `extent`."""
    line = max(1, BUFFER_ALIGNMENT // element_bytes)
    if extent >= line:
        return extent
    pitch = 1
    while pitch < extent:
        pitch *= 2
    return pitch


def _walked_by_vector_loop(access: MemoryAccess) -> bool:
    loop = access.parent_op()
    return (
        isinstance(loop, ForOp)
        and loop.loop_kind == LoopKind.VECTORIZED
        and is_unit_stride(access, loop.induction_var)
    )


def aligned_type(alloc: AllocOp) -> MemRefType | None:
    """`alloc`'s type with its rows padded, if it may and should be (module docstring)."""
    buffer_type = alloc.result.type
    if (
        not isinstance(buffer_type, MemRefType)
        or not buffer_type.has_static_shape()
        or not isinstance(buffer_type.layout, NoneAttr)
    ):
        return None
    shape = buffer_type.get_shape()
    element_bits = getattr(buffer_type.element_type, "bitwidth", 0)
    if (
        len(shape) < 2
        or all(size == 1 for size in shape[:-1])
        or element_bits % 8
        or not element_bits
    ):
        return None  # (a single row; elements narrower than a byte, such as i1)
    *lead, extent = shape
    pitch = row_pitch(extent, element_bits // 8)
    if pitch == extent:
        return None
    accesses = only_accesses(alloc.result)
    if accesses is None:
        return None
    if any(access_digit_runs(access) for access in accesses):
        return None  # a collapsed walk, addressed as one offset only over dense rows
    if not any(_walked_by_vector_loop(access) for access in accesses):
        return None
    return MemRefType(buffer_type.element_type, [*lead, pitch])


def align_buffer_rows(kernel: FuncOp) -> int:
    """Pad the rows of every local buffer of `kernel` that may and should be; returns how
    many."""
    plans = [
        (op, padded)
        for op in walk_ops(kernel)
        if isinstance(op, AllocOp) and (padded := aligned_type(op)) is not None
    ]
    for alloc, padded in plans:
        alloc.result.replace_all_uses_with(alloc_like(alloc, padded).result)
        alloc.detach()
        alloc.erase()
    return len(plans)
