"""legalize-ops as a pass: naming, deduplication, placement, determinism, diagnostics, the
kernel conventions, and the pattern kinds annotate-pattern derives from the kernels."""

from __future__ import annotations

import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.test_value import create_ssa_value

from fusion_compiler.dialects import graph, loop
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.dialects.graph import CallLoopOp, ConstantOp, tensor_type
from fusion_compiler.dialects.pattern_kind import PatternKind
from fusion_compiler.passes.analysis.pattern_analysis import kernel_pattern
from fusion_compiler.passes.legalize_ops import LegalizeOpsPass

ROOT = Path(__file__).parents[3]


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def run(text: str) -> ModuleOp:
    module = parse(text)
    LegalizeOpsPass().apply(make_context(), module)
    module.verify()
    return module


def printed(module: ModuleOp) -> str:
    stream = StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue()


def calls(module: ModuleOp) -> list[str]:
    return [op.callee.string_value() for op in module.walk() if isinstance(op, CallLoopOp)]


def kernel_names(module: ModuleOp) -> list[str]:
    return [op.sym_name.data for op in module.ops if isinstance(op, loop.FuncOp)]


TWO_ADDS = """
func.func @main(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = graph.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = graph.relu %0 : tensor<4x8xf32>
  %2 = graph.add %1, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = graph.add %2, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %4 = graph.add %3, %3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = graph.add %c, %c : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %4 : tensor<4x8xf32>
}
"""


def test_metadata():
    assert LegalizeOpsPass.name == "legalize-ops"
    doc = LegalizeOpsPass.__doc__ or ""
    for part in ("Pre-conditions", "Post-conditions", "Follow-up passes"):
        assert part in doc


def test_dedupe_and_naming_in_order_of_first_use():
    module = run(TWO_ADDS)
    assert kernel_names(module) == ["add", "relu", "add_1", "add_2"]
    assert calls(module) == ["add", "relu", "add", "add_1", "add", "add_2"]


def test_kernels_come_before_the_functions():
    module = run(TWO_ADDS)
    kinds = [type(op) for op in module.ops]
    assert kinds == [loop.FuncOp] * 4 + [func.FuncOp]


def test_no_graph_compute_op_is_left_and_unused_ops_are_legalized_too():
    module = run(TWO_ADDS)
    graph_ops = [op for op in module.walk() if op.name.startswith("graph.")]
    assert all(isinstance(op, CallLoopOp) for op in graph_ops)
    assert len(graph_ops) == 6


def test_constants_stay_at_the_graph_level():
    module = run(
        """
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = graph.constant dense<2.0> : tensor<3xf32>
  %unused = graph.constant dense<1.0> : tensor<3xf32>
  %y = graph.mul %x, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
"""
    )
    constants = [op for op in module.walk() if isinstance(op, ConstantOp)]
    assert len(constants) == 2
    (call,) = [op for op in module.walk() if isinstance(op, CallLoopOp)]
    assert call.inputs[1] is constants[0].result


def test_existing_symbols_are_not_reused_and_calls_are_untouched():
    module = run(
        """
func.func private @add(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = func.call @add(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %z = graph.add %y, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %z : tensor<2xf32>
}
"""
    )
    assert kernel_names(module) == ["add_1"]
    assert [op.callee.string_value() for op in module.walk() if isinstance(op, func.CallOp)] == [
        "add"
    ]


def test_kernels_are_shared_between_functions():
    module = run(
        """
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = graph.exp %x : tensor<3xf32>
  func.return %y : tensor<3xf32>
}
func.func @g(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = graph.exp %x : tensor<3xf32>
  func.return %y : tensor<3xf32>
}
"""
    )
    assert kernel_names(module) == ["exp"]
    assert calls(module) == ["exp", "exp"]


def test_different_properties_give_different_kernels():
    module = run(
        """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.clip %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<4xf32>
  %1 = graph.clip %0 {min = 0.0 : f32, max = 1.0 : f32} : tensor<4xf32>
  %2 = graph.clip %1 {min = 0.0 : f32, max = 6.0 : f32} : tensor<4xf32>
  func.return %2 : tensor<4xf32>
}
"""
    )
    assert calls(module) == ["clip", "clip_1", "clip"]


def test_locations_are_kept():
    module = parse(TWO_ADDS)
    locations = [op.location for op in module.walk() if op.name.startswith("graph.")]
    LegalizeOpsPass().apply(make_context(), module)
    assert [op.location for op in module.walk() if isinstance(op, CallLoopOp)] == locations


def test_output_is_byte_identical_across_processes():
    sources = sorted((ROOT / "tests" / "filecheck" / "legalize-ops").glob("*.mlir"))
    script = (
        "import sys\n"
        "from xdsl.parser import Parser\n"
        "from xdsl.printer import Printer\n"
        "from fusion_compiler.dialects.context import make_context\n"
        "from fusion_compiler.passes.legalize_ops import LegalizeOpsPass\n"
        "for path in sys.argv[1:]:\n"
        "    for chunk in open(path).read().split('// -----'):\n"
        "        module = Parser(make_context(), chunk).parse_module()\n"
        "        try:\n"
        "            LegalizeOpsPass().apply(make_context(), module)\n"
        "        except Exception as err:\n"
        "            print(type(err).__name__, err)\n"
        "        Printer().print_op(module)\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script, *map(str, sources)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    assert "loop.func" in outputs.pop()


@pytest.mark.parametrize(
    "typ, reason",
    [
        (tensor_type((2, 0)), "zero-size tensors must be folded away first"),
        (tensor_type((-1, 4)), "only static shapes are supported"),
    ],
)
def test_unsupported_types_are_a_clear_error(typ, reason):
    x = create_ssa_value(typ)
    relu = graph.ReluOp(x)
    block_module = ModuleOp([])
    block_module.body.block.add_op(relu)
    with pytest.raises(CompileError, match=f"cannot legalize 'graph.relu': operand #0 .*{reason}"):
        LegalizeOpsPass().apply(make_context(), block_module)


# ---------------------------------------------------------------------------------------------
# Kernel conventions
# ---------------------------------------------------------------------------------------------

CONV = """
func.func @main(%x: tensor<1x4x6x6xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x3x6xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>,
                            dilation = array<i64: 1, 1>, groups = 2 : i64}
      : (tensor<1x4x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x3xf32>
  %s = graph.softmax %y {axis = 1 : i64} : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %c = graph.concat %s, %y {axis = -1 : i64}
      : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x6xf32>
  func.return %c : tensor<1x4x3x6xf32>
}
"""


def test_kernel_prologue_holds_each_constant_once_then_the_loops():
    for kernel in run(CONV).ops:
        if not isinstance(kernel, loop.FuncOp):
            continue
        ops = list(kernel.body.block.ops)
        prologue = [op for op in ops if isinstance(op, arith.ConstantOp | loop.AllocOp)]
        assert ops[: len(prologue)] == prologue
        values = [str(op.value) for op in prologue if isinstance(op, arith.ConstantOp)]
        assert len(values) == len(set(values))
        nested = [op for op in kernel.walk() if isinstance(op, arith.ConstantOp)]
        assert len(nested) == len(values)


def test_loops_start_at_zero_with_step_one():
    for op in run(CONV).walk():
        if isinstance(op, loop.ForOp):
            for bound, value in ((op.lb, 0), (op.step, 1)):
                assert isinstance(bound.owner, arith.ConstantOp)
                assert isinstance(bound.owner.value, IntegerAttr)
                assert bound.owner.value.value.data == value


# ---------------------------------------------------------------------------------------------
# Pattern kinds (FUSION_RULES.md: "Observed on TVM's legalized ops")
# ---------------------------------------------------------------------------------------------

OUT_EWISE = PatternKind.OUT_EWISE_FUSABLE
KINDS = [
    (
        "conv2d",
        lambda x, w: graph.Conv2DOp(x, w, (1, 1), (1, 1, 1, 1)),
        [(1, 4, 6, 6), (4, 4, 3, 3)],
        OUT_EWISE,
    ),
    ("conv2d-nopad", graph.Conv2DOp, [(1, 4, 6, 6), (4, 4, 3, 3)], OUT_EWISE),
    ("matmul", graph.MatmulOp, [(4, 5), (5, 6)], OUT_EWISE),
    (
        "max_pool2d",
        lambda x: graph.MaxPool2DOp(x, (3, 3), (2, 2), (1, 1, 1, 1)),
        [(1, 2, 7, 7)],
        OUT_EWISE,
    ),
    (
        "avg_pool2d",
        lambda x: graph.AvgPool2DOp(x, (3, 3), (2, 2), (1, 1, 1, 1)),
        [(1, 2, 7, 7)],
        OUT_EWISE,
    ),
    ("softmax", lambda x: graph.SoftmaxOp(x, -1), [(4, 5)], OUT_EWISE),
    ("layer_norm", lambda x, g, b: graph.LayerNormOp(x, g, b, -1), [(4, 5), (5,), (5,)], OUT_EWISE),
    ("reduce_mean", lambda x: graph.ReduceMeanOp(x, (1,), True), [(4, 5)], OUT_EWISE),
    ("reduce_sum", lambda x: graph.ReduceSumOp(x, (1,), False), [(4, 5)], PatternKind.COMM_REDUCE),
    ("reduce_max", lambda x: graph.ReduceMaxOp(x, (0,), True), [(4, 5)], PatternKind.COMM_REDUCE),
    ("reshape", lambda x: graph.ReshapeOp(x, (8, 4, 4)), [(8, 16)], PatternKind.INJECTIVE),
    ("transpose", lambda x: graph.TransposeOp(x, (1, 0, 2)), [(3, 4, 5)], PatternKind.INJECTIVE),
    ("concat", lambda a, b: graph.ConcatOp([a, b], 1), [(2, 3), (2, 4)], PatternKind.INJECTIVE),
    ("split", lambda x: graph.SplitOp(x, 1, (3, 4)), [(2, 7)], PatternKind.INJECTIVE),
    ("slice", lambda x: graph.SliceOp(x, (0, 1), (2, 5), (1, 2)), [(2, 7)], PatternKind.INJECTIVE),
    ("expand_dims", lambda x: graph.ExpandDimsOp(x, (0,)), [(2, 7)], PatternKind.BROADCAST),
    ("squeeze", lambda x: graph.SqueezeOp(x, (1,)), [(10, 1, 20)], PatternKind.ELEMWISE),
    ("add-bias", graph.AddOp, [(1, 8, 5, 5), (1, 8, 1, 1)], PatternKind.ELEMWISE),
    ("add-scalar", graph.AddOp, [(10, 1, 20), ()], PatternKind.ELEMWISE),
    ("relu", graph.ReluOp, [(4, 5)], PatternKind.ELEMWISE),
    ("gelu", graph.GeluOp, [(4, 5)], PatternKind.ELEMWISE),
    ("sigmoid", graph.SigmoidOp, [(4, 5)], PatternKind.ELEMWISE),
    ("sqrt", graph.SqrtOp, [(4, 5)], PatternKind.ELEMWISE),
]


@pytest.mark.parametrize("name, make_op, shapes, kind", KINDS, ids=[k[0] for k in KINDS])
def test_pattern_kinds_match_tvm(name, make_op, shapes, kind, one_op_module, legalize, kernels_of):
    (kernel,) = kernels_of(legalize(one_op_module(make_op, shapes)))
    assert kernel_pattern(kernel) == kind
