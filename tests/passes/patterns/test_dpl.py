"""The dataflow pattern language and its matcher, on IR built in Python (no IR text)."""

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerType
from xdsl.ir import Block

from fusion_compiler.dialects.graph import (
    AddOp,
    ConstantOp,
    Conv2DOp,
    GeluOp,
    MatmulOp,
    ReluOp,
    tensor_type,
)
from fusion_compiler.passes.patterns import (
    PatternError,
    is_const,
    is_op,
    match_value,
    matches,
    wildcard,
)


class Graph:
    """A block of graph ops built one by one."""

    def __init__(self, *shapes):
        self.block = Block(arg_types=[tensor_type(s) for s in shapes])
        self.args = self.block.args

    def add(self, op):
        self.block.add_op(op)
        return op.results[0]

    def constant(self, shape):
        data = np.ones(shape, np.float32).ravel().tolist()
        return self.add(ConstantOp(DenseIntOrFPElementsAttr.from_list(tensor_type(shape), data)))


def matmul_bias_relu():
    g = Graph((4, 8), (8, 16), (16,))
    x, w, b = g.args
    mm = g.add(MatmulOp(x, w))
    biased = g.add(AddOp(mm, b))
    return g, mm, biased, g.add(ReluOp(biased))


def test_op_pattern_matches_ops_and_binds_operands():
    g, mm, biased, relu = matmul_bias_relu()
    x, w, b = wildcard(), wildcard(), wildcard()
    pattern = is_op("graph.relu")(is_op(AddOp)(is_op("graph.matmul")(x, w), b))
    match = match_value(pattern, relu)
    assert match is not None
    assert match.root is relu.owner
    assert match.ops == (mm.owner, biased.owner, relu.owner)
    assert match.bindings({"x": x, "w": w, "b": b}) == dict(zip("xwb", g.args, strict=True))


def test_wrong_op_or_arity_does_not_match():
    _, mm, biased, relu = matmul_bias_relu()
    assert match_value(is_op(GeluOp)(wildcard()), relu) is None
    assert match_value(is_op(AddOp)(wildcard()), biased) is None
    assert match_value(is_op(MatmulOp)(wildcard(), wildcard()), relu) is None


def test_commutative_ops_match_both_orders():
    g, mm, biased, _ = matmul_bias_relu()
    bias = wildcard()
    swapped = is_op(AddOp)(bias, is_op(MatmulOp)(wildcard(), wildcard()))
    match = match_value(swapped, biased)
    assert match is not None and match.value_of(bias) is g.args[2]


def test_non_commutative_ops_keep_their_order():
    g = Graph((4, 8), (8, 4))
    mm = g.add(MatmulOp(*g.args))
    relu = g.add(ReluOp(g.args[0]))
    pattern = is_op(MatmulOp)(is_op(ReluOp)(wildcard()), wildcard())
    assert match_value(pattern, mm) is None
    assert relu is not None


def test_alternatives_are_tried_in_order_and_optional_is_an_alternative():
    _, mm, biased, relu = matmul_bias_relu()
    core = is_op(AddOp)(is_op(MatmulOp)(wildcard(), wildcard()), wildcard())
    with_relu = core.optional(lambda p: is_op(ReluOp)(p))
    assert [len(m.ops) for m in matches(with_relu, relu)] == [3]
    assert [len(m.ops) for m in matches(with_relu, biased)] == [2]
    either = is_op(GeluOp)(wildcard()) | is_op(ReluOp)(wildcard())
    assert match_value(either, relu) is not None


def test_the_same_pattern_object_must_match_the_same_value():
    g = Graph((4, 4), (4, 4))
    x = wildcard()
    same = g.add(AddOp(g.args[0], g.args[0]))
    different = g.add(AddOp(g.args[0], g.args[1]))
    pattern = is_op(AddOp)(x, x)
    assert match_value(pattern, same) is not None
    assert match_value(pattern, different) is None


def test_is_const_matches_constants_only():
    g = Graph((4, 16))
    c = g.constant((16,))
    with_const = g.add(AddOp(g.args[0], c))
    with_arg = g.add(AddOp(g.args[0], g.args[0]))
    pattern = is_op(AddOp)(wildcard(), is_const())
    assert match_value(pattern, with_const) is not None
    assert match_value(pattern, with_arg) is None


def test_shape_rank_and_dtype_constraints():
    _, mm, _, relu = matmul_bias_relu()
    assert match_value(wildcard().has_shape((4, 16)), mm) is not None
    assert match_value(wildcard().has_shape((16, 4)), mm) is None
    assert match_value(wildcard().has_rank(2), relu) is not None
    assert match_value(wildcard().has_rank(3), relu) is None
    assert match_value(wildcard().has_dtype("f32"), mm) is not None
    assert match_value(wildcard().has_dtype(IntegerType(64)), mm) is None
    with pytest.raises(PatternError, match="unknown element type 'f16'"):
        wildcard().has_dtype("f16")


def test_has_attr_constrains_properties():
    g = Graph((1, 4, 8, 8), (4, 4, 3, 3))
    conv = g.add(Conv2DOp(*g.args, padding=(1, 1, 1, 1)))
    pattern = is_op(Conv2DOp)(wildcard(), wildcard())
    assert match_value(pattern.has_attr({"padding": [1, 1, 1, 1], "groups": 1}), conv)
    assert match_value(pattern.has_attr({"padding": [0, 0, 0, 0]}), conv) is None
    assert match_value(pattern.has_attr({"no_such_property": 1}), conv) is None


def test_only_used_by_an_op_class_and_only_used_inside_the_match():
    g = Graph((4, 8), (8, 16), (16,))
    x, w, b = g.args
    mm = g.add(MatmulOp(x, w))
    biased = g.add(AddOp(mm, b))
    relu = g.add(ReluOp(biased))
    product = is_op(MatmulOp)(wildcard(), wildcard())
    assert match_value(product.only_used_by(AddOp), mm) is not None
    assert match_value(product.only_used_by("graph.relu"), mm) is None
    inside = is_op(ReluOp)(is_op(AddOp)(product.only_used_inside(), wildcard()))
    assert match_value(inside, relu) is not None
    assert match_value(product.only_used_inside(), mm) is None  # used by the add, outside
    g.add(GeluOp(mm))  # a second use of the product, outside the match
    assert match_value(inside, relu) is None
    assert match_value(product.only_used_by(AddOp), mm) is None


def test_unknown_op_names_and_non_patterns_are_clear_errors():
    with pytest.raises(PatternError, match="unknown graph op 'graph.conv3d'"):
        is_op("graph.conv3d")
    with pytest.raises(PatternError, match="is not a graph op class"):
        is_op(int)
    with pytest.raises(PatternError, match="operand patterns must be patterns"):
        is_op("graph.relu")("x")


def test_block_arguments_match_no_op_pattern():
    g = Graph((4,))
    assert match_value(is_op(ReluOp)(wildcard()), g.args[0]) is None
    assert match_value(wildcard(), g.args[0]) is None  # a match is rooted at an op
