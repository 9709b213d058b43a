"""The reference evaluator: every graph op against numpy_ops, calls, constants, input checks, and
the same one-op functions after legalize-ops (run by the loop interpreter)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block, Operation, Region
from xdsl.parser import Parser

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.graph import COMPUTE_OPS, INDEXING_OPS, LOGIC_OPS, tensor_type
from fusion_compiler.dialects.reference import numpy_ops as ref
from fusion_compiler.dialects.reference.evaluator import OP_SEMANTICS, EvaluationError, evaluate


@dataclass(frozen=True)
class Case:
    """`make_op` applied to arguments of `shapes` must compute `reference` of the inputs."""

    op: type[Operation]
    make_op: Callable[..., Operation]
    shapes: tuple[tuple[int, ...], ...]
    reference: Callable[..., np.ndarray | list[np.ndarray]]
    positive: bool = False

    @property
    def id(self) -> str:
        return self.op.name.removeprefix("graph.")


def _unary(op, fn, positive=False) -> Case:
    return Case(op, op, ((2, 3, 4),), fn, positive)


def _binary(op, fn, positive=False) -> Case:
    return Case(op, op, ((2, 3, 4), (3, 1)), fn, positive)


def _reduction(op, fn) -> Case:
    return Case(op, lambda x: op(x, (0, 2), True), ((3, 4, 5),), lambda x: fn(x, (0, 2), True))


CONV = ((2, 1), (1, 0, 2, 1), (1, 2), 2)
POOL = ((3, 2), (2, 1), (1, 1, 0, 1))

CASES = [
    _unary(graph.ReluOp, ref.relu),
    _unary(graph.ExpOp, ref.exp),
    _unary(graph.LogOp, ref.log, positive=True),
    _unary(graph.SqrtOp, ref.sqrt, positive=True),
    _unary(graph.RsqrtOp, ref.rsqrt, positive=True),
    _unary(graph.TanhOp, ref.tanh),
    _unary(graph.SigmoidOp, ref.sigmoid),
    _unary(graph.NegOp, ref.neg),
    _unary(graph.AbsOp, ref.abs),
    _unary(graph.ErfOp, ref.erf),
    _unary(graph.GeluOp, ref.gelu),
    _unary(graph.GeluTanhOp, ref.gelu_tanh),
    _unary(graph.SiluOp, ref.silu),
    _unary(graph.SinOp, ref.sin),
    _unary(graph.CosOp, ref.cos),
    _unary(graph.TanOp, ref.tan),
    _unary(graph.AsinOp, ref.asin),
    _unary(graph.AcosOp, ref.acos),
    _unary(graph.AtanOp, ref.atan),
    _unary(graph.SinhOp, ref.sinh),
    _unary(graph.CoshOp, ref.cosh),
    _unary(graph.AsinhOp, ref.asinh),
    _unary(graph.AcoshOp, ref.acosh),
    _unary(graph.AtanhOp, ref.atanh),
    _unary(graph.FloorOp, ref.floor),
    _unary(graph.CeilOp, ref.ceil),
    _unary(graph.RoundOp, ref.round_even),
    _unary(graph.SignOp, ref.sign),
    Case(
        graph.ClipOp,
        lambda x: graph.ClipOp(x, -0.5, 0.75),
        ((4, 5),),
        lambda x: ref.clip(x, -0.5, 0.75),
    ),
    _binary(graph.AddOp, ref.add),
    _binary(graph.SubOp, ref.sub),
    _binary(graph.MulOp, ref.mul),
    _binary(graph.DivOp, ref.div, positive=True),
    _binary(graph.MaxOp, ref.maximum),
    _binary(graph.MinOp, ref.minimum),
    _binary(graph.PowOp, ref.pow, positive=True),
    Case(graph.MatmulOp, graph.MatmulOp, ((2, 1, 3, 4), (3, 4, 5)), ref.matmul),
    Case(
        graph.Conv2DOp,
        lambda x, w: graph.Conv2DOp(x, w, *CONV),
        ((1, 4, 9, 8), (6, 2, 3, 2)),
        lambda x, w: ref.conv2d(x, w, *CONV),
    ),
    Case(
        graph.MaxPool2DOp,
        lambda x: graph.MaxPool2DOp(x, *POOL),
        ((1, 2, 7, 6),),
        lambda x: ref.max_pool2d(x, *POOL),
    ),
    Case(
        graph.AvgPool2DOp,
        lambda x: graph.AvgPool2DOp(x, *POOL, count_include_pad=False),
        ((1, 2, 7, 6),),
        lambda x: ref.avg_pool2d(x, *POOL, count_include_pad=False),
    ),
    Case(graph.GlobalAvgPool2DOp, graph.GlobalAvgPool2DOp, ((2, 3, 4, 5),), ref.global_avg_pool2d),
    Case(
        graph.BatchNormOp,
        lambda *args: graph.BatchNormOp(*args, epsilon=1e-3),
        ((2, 3, 4, 5), (3,), (3,), (3,), (3,)),
        lambda *args: ref.batch_norm(*args, epsilon=1e-3),
        positive=True,
    ),
    Case(
        graph.LayerNormOp,
        lambda x, g, b: graph.LayerNormOp(x, g, b, -2, 1e-4),
        ((2, 3, 4), (3, 4), (3, 4)),
        lambda x, g, b: ref.layer_norm(x, g, b, -2, 1e-4),
    ),
    Case(
        graph.LrnOp,
        lambda x: graph.LrnOp(x, 3, 1e-2, 0.75, 2.0),
        ((1, 5, 3, 2),),
        lambda x: ref.lrn(x, 3, 1e-2, 0.75, 2.0),
    ),
    Case(
        graph.SoftmaxOp,
        lambda x: graph.SoftmaxOp(x, 1),
        ((2, 5, 3),),
        lambda x: ref.softmax(x, 1),
    ),
    _reduction(graph.ReduceSumOp, ref.reduce_sum),
    _reduction(graph.ReduceMeanOp, ref.reduce_mean),
    _reduction(graph.ReduceMaxOp, ref.reduce_max),
    Case(
        graph.ReshapeOp,
        lambda x: graph.ReshapeOp(x, (4, 6)),
        ((2, 3, 4),),
        lambda x: ref.reshape(x, (4, 6)),
    ),
    Case(
        graph.BroadcastToOp,
        lambda x: graph.BroadcastToOp(x, (2, 3, 4)),
        ((3, 1),),
        lambda x: ref.broadcast_to(x, (2, 3, 4)),
    ),
    Case(
        graph.TransposeOp,
        lambda x: graph.TransposeOp(x, (2, 0, 1)),
        ((2, 3, 4),),
        lambda x: ref.transpose(x, (2, 0, 1)),
    ),
    Case(
        graph.SqueezeOp,
        lambda x: graph.SqueezeOp(x, (0, -2)),
        ((1, 3, 1, 4),),
        lambda x: ref.squeeze(x, (0, -2)),
    ),
    Case(
        graph.ExpandDimsOp,
        lambda x: graph.ExpandDimsOp(x, (1, 3)),
        ((3, 4),),
        lambda x: ref.expand_dims(x, (1, 3)),
    ),
    Case(
        graph.ConcatOp,
        lambda *xs: graph.ConcatOp(list(xs), -2),
        ((2, 1, 2), (2, 3, 2), (2, 2, 2)),
        lambda *xs: ref.concat(xs, -2),
    ),
    Case(
        graph.SplitOp,
        lambda x: graph.SplitOp(x, -1, (1, 1, 2)),
        ((3, 4),),
        lambda x: ref.split(x, -1, (1, 1, 2)),
    ),
    Case(
        graph.SliceOp,
        lambda x: graph.SliceOp(x, (-1, 4), (-6, 100), (-2, 1)),
        ((5, 6),),
        lambda x: ref.slice(x, (-1, 4), (-6, 100), (-2, 1)),
    ),
]


def one_op_module(case: Case) -> ModuleOp:
    """`func.func @main(args) { %r = op(args); return %r }` in a module."""
    block = Block(arg_types=[tensor_type(s) for s in case.shapes])
    op = case.make_op(*block.args)
    block.add_ops([op, func.ReturnOp(*op.results)])
    signature = FunctionType.from_lists([a.type for a in block.args], [r.type for r in op.results])
    module = ModuleOp([func.FuncOp("main", signature, Region(block))])
    module.verify()
    return module


def inputs_of(case: Case, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if case.positive:
        return [rng.uniform(0.5, 2.0, s).astype(np.float32) for s in case.shapes]
    return [rng.standard_normal(s).astype(np.float32) for s in case.shapes]


def as_list(value: np.ndarray | Sequence[np.ndarray]) -> list[np.ndarray]:
    return list(value) if isinstance(value, list | tuple) else [value]


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


# --- every graph op -----------------------------------------------------------------------------


TYPED_OPS = (*LOGIC_OPS, graph.GatherOp, *INDEXING_OPS)
"""Ops of integer and boolean tensors: their cases are in `test_logic.py` and
`test_indexing.py`."""


def test_every_compute_op_has_semantics_and_a_case():
    assert [op for op in COMPUTE_OPS if op not in OP_SEMANTICS] == []
    float_ops = [op for op in COMPUTE_OPS if op not in TYPED_OPS]
    assert sorted(op.name for op in float_ops) == sorted(case.op.name for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op_matches_numpy_ops(case: Case):
    inputs = inputs_of(case)
    actual = evaluate(one_op_module(case), "main", inputs)
    expected = as_list(case.reference(*inputs))
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_legalized_op_evaluates_like_the_graph_op(case: Case):
    """evaluate(before legalize-ops) == evaluate(after): the kernel run by the loop interpreter
    agrees with the numpy reference."""
    legalize_ops = pytest.importorskip("fusion_compiler.passes.legalize_ops")
    module = one_op_module(case)
    inputs = inputs_of(case, seed=1)
    before = evaluate(module, "main", inputs)
    legalize_ops.LegalizeOpsPass().apply(make_context(), module)
    module.verify()
    assert not any(isinstance(op, case.op) for op in module.walk())
    after = evaluate(module, "main", inputs)
    for got, want in zip(after, before, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# --- structure: constants, calls, kernels -------------------------------------------------------

CONSTANTS = """
func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %splat = "graph.constant"() <{value = dense<1.5> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
  %dense = "graph.constant"() <{value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
  %a = "graph.add"(%x, %splat) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %a, %dense : tensor<2x3xf32>, tensor<2x3xf32>
}
"""


def test_constants_splat_and_dense():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    added, dense = evaluate(parse(CONSTANTS), "main", [x])
    np.testing.assert_array_equal(added, x + 1.5)
    np.testing.assert_array_equal(dense, np.arange(1, 7, dtype=np.float32).reshape(2, 3))
    assert dense.dtype == np.float32


CALLS = """
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %s = func.call @fused_add_relu(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %n = "graph.neg"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %n : tensor<4xf32>
}
func.func private @fused_add_relu(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> attributes {graph.primitive} {
  %s = "graph.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = "graph.relu"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
"""


def test_func_call_of_a_primitive_function():
    x = np.array([1, -2, 3, -4], np.float32)
    y = np.array([-3, 1, 1, 1], np.float32)
    (result,) = evaluate(parse(CALLS), "main", [x, y])
    np.testing.assert_array_equal(result, -np.maximum(x + y, 0))
    (inner,) = evaluate(parse(CALLS), "fused_add_relu", [x, y])
    np.testing.assert_array_equal(inner, np.maximum(x + y, 0))


CALL_LOOP = """
loop.func @scale(%x: memref<2x3xf32>, %f: memref<f32>) outs(%y: memref<2x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %j = %c0 to %c3 step %c1 {
      %v = memref.load %x[%i, %j] : memref<2x3xf32>
      %s = memref.load %f[] : memref<f32>
      %p = arith.mulf %v, %s : f32
      memref.store %p, %y[%i, %j] : memref<2x3xf32>
    }
  }
  loop.return
}
func.func @main(%x: tensor<2x3xf32>, %f: tensor<f32>) -> tensor<2x3xf32> {
  %y = graph.call_loop @scale(%x, %f) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
"""


def test_call_loop_runs_the_kernel():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = evaluate(parse(CALL_LOOP), "main", [x, np.array(2.5, np.float32)])
    np.testing.assert_array_equal(y, x * 2.5)
    np.testing.assert_array_equal(x, np.arange(6).reshape(2, 3))


def test_returned_argument_is_a_copy():
    module = parse("""
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  func.return %x : tensor<3xf32>
}
""")
    x = np.ones(3, np.float32)
    (y,) = evaluate(module, "main", [x])
    assert y is not x
    np.testing.assert_array_equal(y, x)


# --- errors -------------------------------------------------------------------------------------


def test_wrong_number_of_inputs():
    with pytest.raises(ValueError, match="@main takes 2 arguments, got 1"):
        evaluate(parse(CALLS), "main", [np.zeros(4, np.float32)])


def test_wrong_shape_names_the_argument():
    x = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match=r"argument #1 \(%y\) has shape \(5,\), expected \(4,\)"):
        evaluate(parse(CALLS), "main", [x, np.zeros(5, np.float32)])


def test_wrong_dtype_names_the_argument():
    x = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match=r"argument #0 \(%x\) has dtype float64"):
        evaluate(parse(CALLS), "main", [x.astype(np.float64), x])


def test_non_array_input():
    with pytest.raises(ValueError, match="must be a numpy array, got list"):
        evaluate(parse(CALLS), "main", [[0.0] * 4, np.zeros(4, np.float32)])


def test_missing_entry():
    with pytest.raises(ValueError, match="no function @nope"):
        evaluate(parse(CALLS), "nope", [])


def test_unknown_op_is_named():
    module = parse("""
func.func @main() -> tensor<2xf32> {
  %c = arith.constant dense<1.0> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
""")
    with pytest.raises(EvaluationError, match="no reference semantics for 'arith.constant'"):
        evaluate(module, "main", [])
