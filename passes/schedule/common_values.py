"""Common subexpression elimination of a kernel's scalar arithmetic (`eliminate_common_values`).

Two pure scalar ops (`arith`, `math`: `loop.queries.SCALAR_OPS`) of the same name, operands,
properties, attributes and result types compute the same value; the later one is replaced by
the earlier one wherever the earlier one dominates it: in the same block after it, or in any
region nested below that point (kernel bodies are structured loops, one block per region).
A load of the element an earlier load in the same block read is replaced by it when nothing
between them (no store, no loop holding one) writes to that buffer. Constants are left to
`normalize.hoist_constants` (which tells -0.0 from 0.0); stores and loops are never merged.

This replaces xDSL's general `cse` in `clean-up-kernels`, which also asks every op for its
memory effects: it was 60% of clean-up-kernels' time, itself a quarter of the scheduling
passes' (inception_v1: xDSL's cse 3.1 s of the 18 s profiled).
"""

from __future__ import annotations

from collections.abc import Hashable

from xdsl.dialects import arith, memref
from xdsl.ir import Block, Operation, SSAValue

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.dialects.loop.queries import SCALAR_OPS


def eliminate_common_values(func: FuncOp) -> int:
    """Merge the duplicate pure scalar ops of `func` (module docstring); how many were erased."""
    return _block(func.body.block, {}, set())


def _block(block: Block, known: dict[Hashable, Operation], stored: set[SSAValue]) -> int:
    """Merge the duplicates in `block` and the blocks nested in it; how many were erased.

    `known` holds the pure ops of the enclosing blocks up to this one (their values dominate
    it), by key: this block's are added while it is walked and taken out at its end, so that
    no sibling block sees them (as a chain of scopes would: a key found is never added again,
    so none is shadowed). The buffers stored to in `block` and below are added to `stored`
    (the merging erases no store, so these are the stores a walk after it would find)."""
    erased = 0
    added: list[Hashable] = []
    loads: dict[Hashable, Operation] = {}  # this block's, since the last write to them
    for op in list(block.ops):
        if op.regions:
            nested: set[SSAValue] = set()
            for region in op.regions:
                for inner in region.blocks:
                    erased += _block(inner, known, nested)
            _forget(loads, nested)
            stored |= nested
            continue
        if isinstance(op, memref.StoreOp):
            _forget(loads, {op.memref})
            stored.add(op.memref)
            continue
        earlier = _earlier(op, known, added, loads)
        if earlier is None:
            continue
        for result, kept in zip(op.results, earlier.results, strict=True):
            result.replace_all_uses_with(kept)
        op.detach()
        op.erase()
        erased += 1
    for key in added:
        del known[key]
    return erased


def _earlier(
    op: Operation,
    known: dict[Hashable, Operation],
    added: list[Hashable],
    loads: dict[Hashable, Operation],
) -> Operation | None:
    """The earlier op `op` duplicates, if any; else None, and `op` is recorded (a pure op in
    `known`, its key in `added`; a load in `loads`) if it may have duplicates."""
    table: dict[Hashable, Operation]
    key: Hashable
    if isinstance(op, memref.LoadOp):
        # (its memref and subscripts are its operands: read at once, not by the accessors)
        table, key = loads, (tuple(op.operands), op.res.type)
    elif type(op) in SCALAR_OPS and not isinstance(op, arith.ConstantOp):
        table, key = known, _key(op)
    else:
        return None
    earlier = table.get(key)
    if earlier is None:
        table[key] = op
        if table is known:
            added.append(key)
    return earlier


def _forget(loads: dict[Hashable, Operation], written: set[SSAValue]) -> None:
    for key in [key for key, load in loads.items() if load.operands[0] in written]:
        del loads[key]


def _key(op: Operation) -> Hashable:
    return (
        op.name,
        tuple(op.operands),
        tuple(sorted(op.properties.items())),
        tuple(sorted(op.attributes.items())),
        tuple(result.type for result in op.results),
    )
