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

from collections import ChainMap
from collections.abc import Hashable, MutableMapping

from xdsl.dialects import arith, memref
from xdsl.ir import Block, Operation, SSAValue

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.dialects.loop.queries import SCALAR_OPS
from fusion_compiler.passes.analysis.ir_walk import walk_ops


def eliminate_common_values(func: FuncOp) -> int:
    """Merge the duplicate pure scalar ops of `func` (module docstring); how many were erased."""
    return _block(func.body.block, ChainMap())


def _block(block: Block, known: ChainMap) -> int:
    erased = 0
    loads: dict[Hashable, Operation] = {}  # this block's, since the last write to them
    for op in list(block.ops):
        if op.regions:
            for region in op.regions:
                for inner in region.blocks:
                    erased += _block(inner, known.new_child())
            _forget(loads, {o.memref for o in walk_ops(op) if isinstance(o, memref.StoreOp)})
            continue
        if isinstance(op, memref.StoreOp):
            _forget(loads, {op.memref})
            continue
        table: MutableMapping[Hashable, Operation]
        key: Hashable
        if isinstance(op, memref.LoadOp):
            table, key = loads, (op.memref, tuple(op.indices), op.res.type)
        elif type(op) in SCALAR_OPS and not isinstance(op, arith.ConstantOp):
            table, key = known, _key(op)
        else:
            continue
        earlier = table.get(key)
        if earlier is None:
            table[key] = op
            continue
        for result, kept in zip(op.results, earlier.results, strict=True):
            result.replace_all_uses_with(kept)
        op.detach()
        op.erase()
        erased += 1
    return erased


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
