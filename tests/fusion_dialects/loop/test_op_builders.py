"""`op_builders` makes the ops their constructors make: same operands, result types,
properties, attributes, regions (checked structurally and by their printed form)."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, f32
from xdsl.ir import Block, Operation

from fusion_compiler.dialects.loop import ForOp, LoopKind, op_builders


def _values():
    block = Block(arg_types=[IndexType(), IndexType(), IndexType(), MemRefType(f32, [4, 8]), f32])
    return block, block.args


def _same(made: Operation, expected: Operation) -> None:
    assert type(made) is type(expected)
    assert made.is_structurally_equivalent(expected)
    assert made.properties == expected.properties
    assert made.attributes == expected.attributes
    assert [r.type for r in made.results] == [r.type for r in expected.results]
    assert str(made) == str(expected)


@pytest.mark.parametrize("kind", list(LoopKind))
def test_for_loop_is_the_constructors(kind):
    _, (lb, ub, step, _, _) = _values()
    _same(op_builders.for_loop(lb, ub, step, kind), ForOp(lb, ub, step, kind=kind))


def test_add_load_store_are_the_constructors():
    _, (i, j, _, buffer, value) = _values()
    for constant in (0, 7, -3):
        _same(
            op_builders.index_constant(constant),
            arith.ConstantOp(IntegerAttr(constant, IndexType())),
        )
    _same(op_builders.add_index(i, j), arith.AddiOp(i, j))
    _same(op_builders.load(buffer, [i, j]), memref.LoadOp.get(buffer, [i, j]))
    _same(op_builders.store(value, buffer, [i, j]), memref.StoreOp.get(value, buffer, [i, j]))


def test_the_ops_verify_in_a_block():
    block, (i, j, step, buffer, value) = _values()
    loop = op_builders.for_loop(i, j, step, LoopKind.SERIAL)
    loaded = op_builders.load(buffer, [i, loop.induction_var])
    block.add_ops([loop])
    loop.body.block.insert_op_before(loaded, loop.body.block.last_op)
    stored = op_builders.store(value, buffer, [i, loop.induction_var])
    loop.body.block.insert_op_before(stored, loop.body.block.last_op)
    loop.verify()
