"""Constructors, verifiers and shape rules of `gather_nd`, `trilu`, `cumsum`, `arg_max`,
`arg_min` and `is_nan`: result types from the shape rules, element-type rules
(docs/graph-dialect.md), and the shape errors that name what is wrong."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import TensorType, f32, i1, i32, i64
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from fusion_compiler.dialects import graph
from fusion_compiler.dialects import shape_rules as sr
from fusion_compiler.dialects.graph import tensor_type


def value(shape, element=f32):
    return create_ssa_value(tensor_type(shape, element))


def result_type(op) -> TensorType:
    op.verify()
    typ = op.results[0].type
    assert isinstance(typ, TensorType)
    return typ


@pytest.mark.parametrize(
    ("data", "indices", "batch_dims", "expected"),
    [
        ((4, 3, 5), (2, 3, 2), 0, (2, 3, 5)),
        ((4, 3, 5), (6, 3), 0, (6,)),
        ((2, 3, 4), (2, 5, 1), 1, (2, 5, 4)),
        ((2, 3, 4), (2, 3, 1), 2, (2, 3)),
    ],
)
def test_gather_nd_shape(data, indices, batch_dims, expected):
    assert sr.gather_nd(data, indices, batch_dims) == expected
    op = graph.GatherNDOp(value(data, i1), value(indices, i32), batch_dims)
    assert result_type(op) == tensor_type(expected, i1)
    assert op.batch_dims_value == batch_dims


@pytest.mark.parametrize(
    ("data", "indices", "batch_dims", "message"),
    [
        ((4, 3), (), 0, "indices of rank >= 1"),
        ((4, 3), (2, 3), 0, "index tuples of length 3 do not fit data 4x3"),
        ((4, 3), (2, 1), 1, "batch axes differ"),
        ((4, 3), (4, 1), 2, r"batch_dims=2 must be in \[0, 2\)"),
        ((0, 3), (2, 1), 0, "from an axis of size 0"),
    ],
)
def test_gather_nd_shape_errors(data, indices, batch_dims, message):
    with pytest.raises(sr.ShapeError, match=message):
        sr.gather_nd(data, indices, batch_dims)


@pytest.mark.parametrize("element", [f32, i64, i32, i1], ids=str)
def test_trilu_keeps_the_type(element):
    op = graph.TriluOp(value((2, 4, 4), element), upper=False, k=-1)
    assert result_type(op) == tensor_type((2, 4, 4), element)
    assert op.params == (False, -1)
    with pytest.raises(sr.ShapeError, match="rank >= 2"):
        graph.TriluOp(value((4,), element), upper=True)


@pytest.mark.parametrize("element", [f32, i64, i32], ids=str)
def test_cumsum_keeps_the_type(element):
    op = graph.CumSumOp(value((3, 5), element), -1, exclusive=True)
    assert result_type(op) == tensor_type((3, 5), element)
    assert op.params == (1, True, False)
    with pytest.raises(sr.ShapeError, match="axis 2 is out of range"):
        graph.CumSumOp(value((3, 5), element), 2)


def test_cumsum_of_booleans_is_rejected():
    with pytest.raises(VerifyException, match="graph.cumsum: operand #0 must have f32, i64 or i32"):
        graph.CumSumOp(value((4,), i1), 0).verify()


@pytest.mark.parametrize("op_class", [graph.ArgMaxOp, graph.ArgMinOp], ids=lambda o: o.name)
@pytest.mark.parametrize(
    ("axis", "keepdims", "expected"), [(0, True, (1, 5)), (-1, False, (3,)), (1, True, (3, 1))]
)
def test_arg_reduce_gives_i64(op_class, axis, keepdims, expected):
    op = op_class(value((3, 5), i32), axis, keepdims, select_last_index=True)
    assert result_type(op) == tensor_type(expected, i64)
    assert op.params == (axis % 2, keepdims, True)
    with pytest.raises(sr.ShapeError, match="axis 0 of size 0"):
        op_class(value((0, 5)), 0)


def test_is_nan_of_floats_only():
    assert result_type(graph.IsNaNOp(value((2, 3)))) == tensor_type((2, 3), i1)
    with pytest.raises(VerifyException, match="graph.is_nan: operand #0 must have f32"):
        graph.IsNaNOp(value((2, 3), i64)).verify()
