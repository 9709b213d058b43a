"""Folded buffers: a kernel-local buffer that one loop walks a slice per iteration becomes a
buffer of one slice, allocated in that loop.

```
%lanes = loop.alloc : memref<512x32xf32>                loop.for %i = 0 to 512 step 8 parallel {
loop.for %i = 0 to 512 step 8 parallel {          ->      %lanes = loop.alloc {fusion.private} : memref<8x32xf32>
  ... %lanes[%i + 3, %l] ...                              ... %lanes[3, %l] ...
```

A row reduction's partial sums (legalize-ops' 32 lanes per row, the trees that add them up)
are such buffers once unroll-jam-reductions has blocked the rows: softmax over 512 x 512 kept
248 KB of them, of which each block of 8 rows uses 4 KB; streaming all of it through the caches
beside the rows themselves cost 1.06-1.14x on one thread (paired runs, the same bits).

Legal when every use of the buffer (allocated at the kernel's top level) is a load or store in
one top-level loop `L` of constant bounds and step `s`, subscripted first with `%i + c` (`%i`
that loop's variable, `0 <= c < s`; leading dimensions of extent 1, subscripted 0 everywhere,
come first: a depthwise convolution's padded input `1 x C x H x W` walked a channel per
iteration) and elsewhere independently of `%i`: iteration `%i` then
touches only rows `%i .. %i + s - 1`, which no other iteration touches, so no value flows
from one iteration to the next through the buffer, and each iteration may have its own
`s` rows (`PRIVATE_BUFFER_ATTR`: on threads, one copy each). Every access reads and writes the
same values in the same order: the results are the same bits.
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, UnitAttr

from fusion_compiler.dialects.loop import AllocOp, ForOp, FuncOp
from fusion_compiler.dialects.loop.attributes import PRIVATE_BUFFER_ATTR
from fusion_compiler.dialects.loop.queries import constant_index, loop_range, top_level_op
from fusion_compiler.passes.analysis.linear_index import linear_form
from fusion_compiler.passes.analysis.loop_access import MemoryAccess, depends_on
from fusion_compiler.passes.schedule.loop_transforms import index_constant


def _unit_prefix(buffer_type: MemRefType, users: list[MemoryAccess]) -> int:
    """How many leading dimensions of the buffer have extent 1 and are subscripted with the
    constant 0 by every access (the slice dimension comes after them)."""
    shape = buffer_type.get_shape()
    prefix = 0
    while prefix < len(shape) - 1 and shape[prefix] == 1:
        if not all(constant_index(user.indices[prefix]) == 0 for user in users):
            break
        prefix += 1
    return prefix


def row_offsets(
    alloc: AllocOp, kernel: FuncOp
) -> tuple[ForOp, int, list[tuple[MemoryAccess, int]]] | None:
    """The loop `L` that walks `alloc`'s buffer a slice per iteration, the dimension it slices
    (after the unit prefix) and each use with its row offset `c` (module docstring), or None."""
    users = [use.operation for use in alloc.result.uses]
    accesses = [user for user in users if isinstance(user, MemoryAccess)]
    if not accesses or len(accesses) != len(users):
        return None
    if any(access.memref is not alloc.result or not access.indices for access in accesses):
        return None  # (the buffer stored as a value; a rank-0 buffer)
    loops = {top_level_op(access, kernel) for access in accesses}
    if len(loops) != 1:
        return None
    (loop,) = loops
    bounds = loop_range(loop) if isinstance(loop, ForOp) else None
    if bounds is None:
        return None
    assert isinstance(loop, ForOp)
    iv, step = loop.induction_var, bounds[2]
    buffer_type = alloc.result.type
    assert isinstance(buffer_type, MemRefType)
    dim = _unit_prefix(buffer_type, accesses)
    offsets = []
    for access in accesses:
        indices = list(access.indices)
        form = linear_form(indices[dim])
        if form.coefficient(iv) != 1 or form.without(iv).terms or not 0 <= form.constant < step:
            return None
        if any(depends_on(index, iv) for index in indices[dim + 1 :]):
            return None
        offsets.append((access, form.constant))
    return loop, dim, offsets


def fold_buffer(
    alloc: AllocOp, loop: ForOp, dim: int, offsets: list[tuple[MemoryAccess, int]]
) -> None:
    """Replace `alloc` by a private buffer of `step` rows (of dimension `dim`) at the top of
    `loop`, each use subscripted with its row offset."""
    buffer_type = alloc.result.type
    assert isinstance(buffer_type, MemRefType)
    bounds = loop_range(loop)
    assert bounds is not None
    shape = buffer_type.get_shape()
    rows = min(bounds[2], shape[dim])
    folded = AllocOp(MemRefType(buffer_type.element_type, [*shape[:dim], rows, *shape[dim + 1 :]]))
    folded.attributes[PRIVATE_BUFFER_ATTR] = UnitAttr()
    folded.result.name_hint = alloc.result.name_hint
    loop.body.block.insert_op_before(folded, loop.body.block.first_op)  # type: ignore[arg-type]
    for access, offset in offsets:  # the buffer operand, then the subscripts
        at = 0 if isinstance(access, memref.LoadOp) else 1
        access.operands[at] = folded.result
        access.operands[at + 1 + dim] = index_constant(offset, access)
    alloc.detach()
    alloc.erase()


def fold_buffers(kernel: FuncOp) -> int:
    """Fold every top-level buffer of `kernel` that may be; returns how many."""
    folded = 0
    for op in list(kernel.body.block.ops):
        if isinstance(op, AllocOp) and PRIVATE_BUFFER_ATTR not in op.attributes:
            found = row_offsets(op, kernel)
            if found is not None:
                fold_buffer(op, *found)
                folded += 1
    return folded
