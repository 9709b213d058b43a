"""The graph ops built from Python: every constructor infers its result type from the shape rules,
the built IR verifies, prints the same bytes twice, and round-trips between the custom and the
generic syntax; property accessors give Python values; verifiers name the shapes."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from io import StringIO

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseIntOrFPElementsAttr,
    FunctionType,
    MemRefType,
    ModuleOp,
    TensorType,
    f16,
    f32,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from fusion_compiler.dialects import shape_rules as sr
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.graph import (
    BINARY_OPS,
    COMPUTE_OPS,
    INDEXING_OPS,
    LOGIC_OPS,
    UNARY_OPS,
    AddOp,
    AvgPool2DOp,
    BatchNormOp,
    BroadcastToOp,
    CallLoopOp,
    ClipOp,
    ConcatOp,
    ConstantOp,
    Conv2DOp,
    ExpandDimsOp,
    GatherOp,
    GlobalAvgPool2DOp,
    LayerNormOp,
    LrnOp,
    MatmulOp,
    MaxPool2DOp,
    ReduceMaxOp,
    ReduceMeanOp,
    ReduceSumOp,
    ReluOp,
    ReshapeOp,
    SliceOp,
    SoftmaxOp,
    SplitOp,
    SqueezeOp,
    TransposeOp,
)
from fusion_compiler.dialects.graph.base import tensor_type
from fusion_compiler.dialects.loop import FuncOp as KernelOp
from fusion_compiler.dialects.loop import ReturnOp as KernelReturnOp
from fusion_compiler.dialects.shape_rules import ShapeError

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Case:
    """An op built by its constructor from operands of `operands` shapes."""

    name: str
    operands: Sequence[Shape]
    build: Callable[..., Operation]
    expected: Sequence[Shape]
    """The result shapes, computed by calling the shape rules directly."""


def _unary(cls) -> Case:
    if cls is ClipOp:
        return Case("clip", [(4, 8)], lambda x: ClipOp(x, 0.0, 6.0), [(4, 8)])
    return Case(cls.name.removeprefix("graph."), [(4, 8)], cls, [(4, 8)])


def _binary(cls) -> Case:
    shapes = [(4, 1), (8,)]
    return Case(cls.name.removeprefix("graph."), shapes, cls, [sr.broadcast(*shapes)])


CONV = ((2, 2), (1, 0, 1, 1), (1, 2), 2)
POOL = ((3, 3), (2, 2), (1, 1, 1, 1))

CASES = [
    *(_unary(cls) for cls in UNARY_OPS),
    *(_binary(cls) for cls in BINARY_OPS),
    Case("matmul", [(2, 1, 3, 4), (5, 4, 6)], MatmulOp, [sr.matmul((2, 1, 3, 4), (5, 4, 6))]),
    Case(
        "conv2d",
        [(1, 4, 9, 9), (8, 2, 3, 3)],
        lambda x, w: Conv2DOp(x, w, *CONV),
        [sr.conv2d((1, 4, 9, 9), (8, 2, 3, 3), *CONV)],
    ),
    Case(
        "max_pool2d",
        [(1, 8, 16, 16)],
        lambda x: MaxPool2DOp(x, *POOL),
        [sr.pool2d((1, 8, 16, 16), *POOL)],
    ),
    Case(
        "avg_pool2d",
        [(1, 8, 16, 16)],
        lambda x: AvgPool2DOp(x, *POOL, count_include_pad=True),
        [sr.pool2d((1, 8, 16, 16), *POOL)],
    ),
    Case("global_avg_pool2d", [(2, 8, 7, 7)], GlobalAvgPool2DOp, [sr.global_pool2d((2, 8, 7, 7))]),
    Case(
        "batch_norm",
        [(1, 8, 4, 4), (8,), (8,), (8,), (8,)],
        lambda *xs: BatchNormOp(*xs, epsilon=1e-3),
        [(1, 8, 4, 4)],
    ),
    Case(
        "layer_norm",
        [(2, 16, 32), (16, 32), (16, 32)],
        lambda x, g, b: LayerNormOp(x, g, b, axis=1),
        [(2, 16, 32)],
    ),
    Case("lrn", [(1, 8, 4, 4)], lambda x: LrnOp(x, 5), [(1, 8, 4, 4)]),
    Case("softmax", [(4, 16)], lambda x: SoftmaxOp(x, axis=0), [(4, 16)]),
    Case(
        "reduce_sum",
        [(4, 8, 16)],
        lambda x: ReduceSumOp(x, [1], keepdims=True),
        [sr.reduce((4, 8, 16), [1], True)],
    ),
    Case(
        "reduce_mean",
        [(4, 8, 16)],
        lambda x: ReduceMeanOp(x, [-1, 0]),
        [sr.reduce((4, 8, 16), [-1, 0], False)],
    ),
    Case("reduce_max", [(4, 8, 16)], lambda x: ReduceMaxOp(x, []), [()]),
    Case("reshape", [(128, 256)], lambda x: ReshapeOp(x, (128, 4, 64)), [(128, 4, 64)]),
    Case("broadcast_to", [(1, 8, 1)], lambda x: BroadcastToOp(x, (3, 8, 5)), [(3, 8, 5)]),
    Case(
        "transpose",
        [(128, 4, 64)],
        lambda x: TransposeOp(x, [1, 2, 0]),
        [sr.transpose((128, 4, 64), [1, 2, 0])],
    ),
    Case(
        "squeeze",
        [(10, 1, 20, 1)],
        lambda x: SqueezeOp(x, []),
        [sr.squeeze((10, 1, 20, 1), [])],
    ),
    Case(
        "expand_dims",
        [(10, 20)],
        lambda x: ExpandDimsOp(x, [0, -1]),
        [sr.expand_dims((10, 20), [0, -1])],
    ),
    Case(
        "concat",
        [(2, 3), (2, 5), (2, 1)],
        lambda *xs: ConcatOp(xs, -1),
        [sr.concat([(2, 3), (2, 5), (2, 1)], -1)],
    ),
    Case(
        "split",
        [(2, 10)],
        lambda x: SplitOp(x, 1, [3, 0, 7]),
        sr.split((2, 10), 1, [3, 0, 7]),
    ),
    Case(
        "slice",
        [(8, 10)],
        lambda x: SliceOp(x, [1, -1], [7, 0], [2, -2]),
        [sr.slice_((8, 10), [1, -1], [7, 0], [2, -2])],
    ),
]

IDS = [case.name for case in CASES]


def _values(shapes: Sequence[Shape]) -> list[SSAValue]:
    return [create_ssa_value(tensor_type(shape)) for shape in shapes]


def _result_shapes(op: Operation) -> list[Shape]:
    results = []
    for result in op.results:
        assert isinstance(result.type, TensorType)
        assert result.type.element_type == f32
        results.append(tuple(result.type.get_shape()))
    return results


def test_every_compute_op_has_a_constructor_case():
    built = {type(case.build(*_values(case.operands))) for case in CASES}
    typed = {*LOGIC_OPS, GatherOp, *INDEXING_OPS}  # test_typed_ops.py, test_indexing_ops.py
    assert built == set(COMPUTE_OPS) - typed


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_constructor_infers_the_result_type_from_the_shape_rules(case: Case):
    op = case.build(*_values(case.operands))
    assert _result_shapes(op) == [tuple(shape) for shape in case.expected]
    op.verify()


# ---------------------------------------------------------------------------------------------
# Printing and parsing
# ---------------------------------------------------------------------------------------------


def _function(case: Case) -> func.FuncOp:
    types = [tensor_type(shape) for shape in case.operands]
    block = Block(arg_types=types)
    op = case.build(*block.args)
    block.add_ops([op, func.ReturnOp(*op.results)])
    function_type = FunctionType.from_lists(types, [r.type for r in op.results])
    return func.FuncOp(case.name, function_type, Region(block))


def _module() -> ModuleOp:
    buffer = MemRefType(f32, [8])
    kernel = KernelOp(
        "kernel", [buffer], [buffer], Region(Block([KernelReturnOp()], arg_types=[buffer] * 2))
    )
    block = Block(arg_types=[tensor_type((8,))])
    call = CallLoopOp("kernel", [block.args[0]], [tensor_type((8,))])
    scalar = ConstantOp(DenseIntOrFPElementsAttr.from_list(tensor_type(()), [0.125]))
    add = AddOp(call.results[0], scalar.result)
    block.add_ops([call, scalar, add, func.ReturnOp(add.result)])
    caller = func.FuncOp(
        "call_loop",
        FunctionType.from_lists([tensor_type((8,))], [tensor_type((8,))]),
        Region(block),
    )
    return ModuleOp([*(_function(case) for case in CASES), kernel, caller])


def _print(op: Operation, generic: bool = False) -> str:
    stream = StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(op)
    return stream.getvalue()


def _parse(text: str) -> ModuleOp:
    return parse_source(make_context(), text, "test.mlir")


def test_built_module_verifies():
    _module().verify()


def test_printing_twice_gives_identical_bytes():
    module = _module()
    first = _print(module)
    assert _print(module) == first
    again = _parse(first)
    again.verify()
    assert _print(again) == first


def test_generic_and_custom_forms_round_trip():
    module = _module()
    custom, generic = _print(module), _print(module, generic=True)
    assert _print(_parse(generic)) == custom
    assert _print(_parse(custom), generic=True) == generic
    assert _print(_parse(generic), generic=True) == generic
    assert _parse(custom).is_structurally_equivalent(_parse(generic))


def test_every_op_is_printed_in_its_custom_syntax():
    custom = _print(_module())
    for name in [case.name for case in CASES] + ["constant", "call_loop"]:
        assert f"graph.{name} " in custom
    assert '"graph.' not in custom


def test_constant_custom_syntax_writes_the_type_once():
    text = """func.func @c() -> tensor<f32> {
  %c = graph.constant dense<1.250000e-01> : tensor<f32>
  func.return %c : tensor<f32>
}
"""
    module = _parse(text)
    module.verify()
    printed = _print(module)
    assert "%c = graph.constant dense<1.250000e-01> : tensor<f32>\n" in printed


# ---------------------------------------------------------------------------------------------
# Property accessors
# ---------------------------------------------------------------------------------------------


def test_property_accessors_give_python_values():
    x4 = create_ssa_value(tensor_type((1, 4, 9, 9)))
    conv = Conv2DOp(x4, create_ssa_value(tensor_type((8, 2, 3, 3))), *CONV)
    assert conv.params == ((2, 2), (1, 0, 1, 1), (1, 2), 2)
    pool = AvgPool2DOp(x4, *POOL, count_include_pad=True)
    assert pool.window == POOL
    assert pool.count_include_pad_value is True
    assert AvgPool2DOp(x4, *POOL).count_include_pad_value is False
    x3 = create_ssa_value(tensor_type((4, 8, 16)))
    reduce = ReduceMeanOp(x3, [-1, 0], keepdims=True)
    assert reduce.axes_values == (0, 2)
    assert reduce.keepdims_value is True
    assert ReduceSumOp(x3, []).axes_values == (0, 1, 2)
    assert SoftmaxOp(x3).axis_value == 2
    gamma = create_ssa_value(tensor_type((16,)))
    assert LayerNormOp(x3, gamma, gamma).axis_value == 2
    assert TransposeOp(x3, [2, 0, 1]).perm_values == (2, 0, 1)
    assert ClipOp(x3, -1.0, 1.0).bounds == (-1.0, 1.0)
    x2 = create_ssa_value(tensor_type((2, 10)))
    assert ConcatOp([x2, x2], -2).axis_value == 0
    assert SplitOp(x2, -1, [5, 5]).axis_value == 1
    sliced = SliceOp(create_ssa_value(tensor_type((8, 10))), [1, -1], [7, 0], [2, -2])
    assert sliced.bounds == ((1, -1), (7, 0), (2, -2))
    assert [list(r) for r in sliced.axis_ranges()] == [[1, 3, 5], [9, 7, 5, 3, 1]]


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "shapes", "message"),
    [
        (AddOp, [(2, 3), (4, 5)], "shapes 2x3 and 4x5 are not broadcast-compatible"),
        (MatmulOp, [(128, 768), (512, 3072)], "contracting dimensions differ"),
        (
            lambda x, w: Conv2DOp(x, w, padding=(1, 1, 1, 1)),
            [(1, 64, 8, 8), (64, 32, 3, 3)],
            "input 1x64x8x8 has 64",
        ),
        (lambda x: TransposeOp(x, [0, 0]), [(2, 3)], "perm [0, 0] is not a permutation"),
        (lambda x: ReshapeOp(x, (5,)), [(2, 3)], "cannot reshape 2x3"),
        (lambda x: SqueezeOp(x, [0]), [(2, 3)], "cannot squeeze axis 0 of 2x3"),
        (lambda x: SplitOp(x, 0, [1]), [(2, 3)], "add up to 2"),
        (lambda x: SliceOp(x, [0], [1], [1]), [(2, 3)], "one entry per axis of 2x3"),
        (lambda x: ReduceSumOp(x, [2]), [(2, 3)], "axes 2 is out of range for rank 2"),
        (
            lambda x: MaxPool2DOp(x, (2, 2), padding=(2, 0, 0, 0)),
            [(1, 1, 4, 4)],
            "must be smaller than the kernel",
        ),
    ],
)
def test_constructors_reject_bad_shapes(build, shapes, message):
    with pytest.raises(ShapeError, match=re.escape(message)):
        build(*_values(shapes))


def _with_result(cls, operands: Sequence[Shape], result: Shape, **properties) -> Operation:
    return cls.create(
        operands=_values(operands), result_types=[tensor_type(result)], properties=properties
    )


def test_verifier_names_the_result_shape_and_the_expected_one():
    with pytest.raises(VerifyException, match="graph.add: result #0 has shape 4x9, expected 4x8"):
        _with_result(AddOp, [(4, 8), (8,)], (4, 9)).verify()


def test_verifier_names_both_operand_shapes():
    op = _with_result(AddOp, [(2, 3), (4, 5)], (2, 3))
    with pytest.raises(VerifyException, match=r"operand shapes 2x3 \(lhs\) and 4x5 \(rhs\)"):
        op.verify()


def test_verifier_rejects_parameters_of_the_wrong_shape():
    x, p, q = _values([(1, 8, 4, 4), (8,), (4,)])
    with pytest.raises(VerifyException, match="graph.batch_norm: var must have shape 8"):
        BatchNormOp(x, p, p, p, q).verify()
    y, gamma, beta = _values([(2, 16), (2, 16), (16,)])
    with pytest.raises(VerifyException, match=r"graph.layer_norm: gamma must have shape 16"):
        LayerNormOp(y, gamma, beta).verify()


def test_verifier_accepts_dynamic_rejects_negative_and_non_f32_tensors():
    dynamic = create_ssa_value(TensorType(f32, [DYNAMIC_INDEX, 8]))
    ReluOp.create(operands=[dynamic], result_types=[dynamic.type]).verify()
    negative = create_ssa_value(TensorType(f32, [-1, 8]))
    with pytest.raises(VerifyException, match="negative dimension"):
        ReluOp.create(operands=[negative], result_types=[negative.type]).verify()
    half = create_ssa_value(TensorType(f16, [8]))
    with pytest.raises(
        VerifyException, match="must have f32, i64 or i32 elements, got tensor<8xf16>"
    ):
        ReluOp.create(operands=[half], result_types=[half.type]).verify()


def test_call_loop_of_an_unknown_kernel_does_not_verify():
    block = Block(arg_types=[tensor_type((8,))])
    call = CallLoopOp("missing", [block.args[0]], [tensor_type((8,))])
    block.add_ops([call, func.ReturnOp(call.results[0])])
    function_type = FunctionType.from_lists([tensor_type((8,))], [tensor_type((8,))])
    module = ModuleOp([func.FuncOp("f", function_type, Region(block))])
    with pytest.raises(VerifyException, match="no kernel named @missing"):
        module.verify()


def test_a_kernel_built_without_a_body_can_be_called():
    buffer = MemRefType(f32, [8])
    kernel = KernelOp("kernel", [buffer], [buffer])
    block = Block(arg_types=[tensor_type((8,))])
    call = CallLoopOp("kernel", [block.args[0]], [tensor_type((8,))])
    block.add_ops([call, func.ReturnOp(call.results[0])])
    function_type = FunctionType.from_lists([tensor_type((8,))], [tensor_type((8,))])
    ModuleOp([kernel, func.FuncOp("f", function_type, Region(block))]).verify()


def test_every_compute_op_class_is_a_leaf():
    """`preconditions.require_legalized` tells compute ops by their exact class."""
    from fusion_compiler.dialects.graph import COMPUTE_OPS

    assert [c for c in COMPUTE_OPS if c.__subclasses__()] == []
