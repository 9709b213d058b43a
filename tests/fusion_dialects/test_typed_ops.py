"""Constructors and verifiers of the graph ops on integer and boolean tensors: result types
inferred from the shape rules and the element-type rules (docs/graph-dialect.md)."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import TensorType, f32, i1, i32, i64
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.graph import COMPARISON_OPS, tensor_type


def value(shape, element=f32):
    return create_ssa_value(tensor_type(shape, element))


def result_type(op) -> TensorType:
    op.verify()
    typ = op.results[0].type
    assert isinstance(typ, TensorType)
    return typ


@pytest.mark.parametrize("op", COMPARISON_OPS, ids=lambda o: o.name)
@pytest.mark.parametrize("element", [f32, i64, i32], ids=str)
def test_comparisons_give_i1_of_the_broadcast_shape(op, element):
    typ = result_type(op(value((4, 1), element), value((8,), element)))
    assert typ == tensor_type((4, 8), i1)


def test_equal_takes_booleans_but_less_does_not():
    assert result_type(graph.EqualOp(value((3,), i1), value((3,), i1))).element_type == i1
    with pytest.raises(VerifyException, match="must have f32, i64 or i32 elements"):
        graph.LessOp(value((3,), i1), value((3,), i1)).verify()


def test_logical_ops_and_where():
    a, b = value((2, 1), i1), value((5,), i1)
    assert result_type(graph.LogicalAndOp(a, b)) == tensor_type((2, 5), i1)
    assert result_type(graph.LogicalOrOp(a, b)) == tensor_type((2, 5), i1)
    assert result_type(graph.LogicalNotOp(a)) == tensor_type((2, 1), i1)
    where = graph.WhereOp(a, value((3, 1, 5), i64), value((), i64))
    assert result_type(where) == tensor_type((3, 2, 5), i64)
    with pytest.raises(VerifyException, match="operand #2 has f32 elements, expected i64"):
        graph.WhereOp.create(
            operands=[a, value((2, 1), i64), value((2, 1))],
            result_types=[tensor_type((2, 1), i64)],
        ).verify()


@pytest.mark.parametrize("target", [f32, i64, i32, i1], ids=str)
def test_cast_keeps_the_shape(target):
    assert result_type(graph.CastOp(value((2, 3), i64), target)) == tensor_type((2, 3), target)


@pytest.mark.parametrize(
    ("axis", "expected"), [(0, (2, 3, 4)), (1, (5, 2, 3)), (-1, (5, 2, 3))], ids=str
)
def test_gather_shape(axis, expected):
    op = graph.GatherOp(value((5, 4)), value((2, 3), i32), axis)
    assert result_type(op) == tensor_type(expected)
    assert op.axis_value == axis % 2


def test_integer_arithmetic_and_float_only_math():
    assert result_type(graph.AddOp(value((4,), i32), value((4,), i32))).element_type == i32
    assert result_type(graph.NegOp(value((4,), i64))).element_type == i64
    with pytest.raises(VerifyException, match="must have f32 elements, got tensor<4xi64>"):
        graph.ExpOp(value((4,), i64)).verify()
    with pytest.raises(VerifyException, match="operand #1 has i32 elements, expected i64"):
        graph.AddOp.create(
            operands=[value((4,), i64), value((4,), i32)], result_types=[tensor_type((4,), i64)]
        ).verify()


def test_data_movement_keeps_the_element_type():
    x = value((2, 3), i1)
    for op in (
        graph.TransposeOp(x, (1, 0)),
        graph.ReshapeOp(x, (6,)),
        graph.ExpandDimsOp(x, (0,)),
        graph.ConcatOp([x, x], 0),
        graph.SliceOp(x, (0, 0), (1, 3), (1, 1)),
    ):
        assert result_type(op).element_type == i1
