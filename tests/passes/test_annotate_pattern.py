"""The `annotate-pattern` pass: what it changes, its `force` option, and the kinds it gives the
kernels `legalize-ops` produces for every graph op (FUSION_RULES.md, "Observed on TVM's
legalized ops")."""

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.dialects.pattern_kind import PatternKind as K
from fusion_compiler.driver import PassManager, parse_pipeline
from fusion_compiler.passes.annotate_pattern import AnnotatePatternPass

KERNELS = """
loop.func @copy(%x: memref<4xf32>) outs(%y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  loop.return
}
loop.func @reverse(%x: memref<4xf32>) outs(%y: memref<4xf32>) pattern opaque {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 {
    %j = arith.subi %c3, %i : index
    %v = memref.load %x[%j] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  loop.return
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.call_loop @copy(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %z = graph.call_loop @reverse(%y) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}
"""


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def patterns(module: ModuleOp) -> dict[str, K | None]:
    return {op.sym_name.data: op.pattern_kind for op in module.walk() if isinstance(op, FuncOp)}


def test_every_kernel_gets_a_pattern_and_existing_ones_are_kept():
    module = parse(KERNELS)
    AnnotatePatternPass().apply(make_context(), module)
    module.verify()
    assert patterns(module) == {"copy": K.ELEMWISE, "reverse": K.OPAQUE}


def test_force_reanalyses_annotated_kernels():
    module = parse(KERNELS)
    AnnotatePatternPass(force=True).apply(make_context(), module)
    assert patterns(module) == {"copy": K.ELEMWISE, "reverse": K.INJECTIVE}


def test_force_is_a_pipeline_option():
    (pass_,) = parse_pipeline("annotate-pattern{force=true}")
    assert pass_ == AnnotatePatternPass(force=True)
    assert parse_pipeline("annotate-pattern") == (AnnotatePatternPass(),)


def test_nothing_but_the_patterns_changes():
    module = parse(KERNELS)
    original = module.clone()
    AnnotatePatternPass(force=True).apply(make_context(), module)
    for before, after in zip(original.walk(), module.walk(), strict=True):
        if isinstance(after, FuncOp):
            assert isinstance(before, FuncOp)
            after.pattern = before.pattern
    assert module.is_structurally_equivalent(original)


def test_the_kernel_name_plays_no_part():
    renamed = KERNELS.replace("@copy", "@matmul").replace("@reverse", "@softmax")
    module = parse(renamed.replace(" pattern opaque", ""))
    AnnotatePatternPass().apply(make_context(), module)
    assert patterns(module) == {"matmul": K.ELEMWISE, "softmax": K.INJECTIVE}


def test_a_module_without_kernels_is_left_alone():
    module = parse(
        "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n  func.return %x : tensor<2xf32>\n}"
    )
    original = module.clone()
    AnnotatePatternPass().apply(make_context(), module)
    assert module.is_structurally_equivalent(original)


# ---------------------------------------------------------------------------------------------
# Every graph op through legalize-ops, then annotate-pattern
# ---------------------------------------------------------------------------------------------


def T(shape: str) -> str:
    return f"tensor<{shape}xf32>"


CONV = "dilation = array<i64: {d}, {d}>, groups = {g} : i64"
POOL = "kernel = array<i64: {k}, {k}>, strides = array<i64: {s}, {s}>, padding = array<i64: {p}, {p}, {p}, {p}>"
EPS = "epsilon = 1.0e-05 : f32"

GRAPH_OPS = [
    # (id, op, properties, operand types, result types, expected kind)
    ("conv2d", "conv2d", "strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, " + CONV.format(d=1, g=1), [T("1x4x6x6"), T("8x4x3x3")], [T("1x8x6x6")], K.OUT_EWISE_FUSABLE),
    ("conv2d_strided", "conv2d", "strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, " + CONV.format(d=1, g=1), [T("1x4x7x7"), T("8x4x3x3")], [T("1x8x3x3")], K.OUT_EWISE_FUSABLE),
    ("conv2d_grouped_dilated", "conv2d", "strides = array<i64: 1, 1>, padding = array<i64: 2, 2, 2, 2>, " + CONV.format(d=2, g=4), [T("1x4x6x6"), T("4x1x3x3")], [T("1x4x6x6")], K.OUT_EWISE_FUSABLE),
    ("conv2d_1x1", "conv2d", "strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, " + CONV.format(d=1, g=1), [T("1x4x5x5"), T("8x4x1x1")], [T("1x8x5x5")], K.OUT_EWISE_FUSABLE),
    ("matmul", "matmul", "", [T("4x3"), T("3x5")], [T("4x5")], K.OUT_EWISE_FUSABLE),
    ("matmul_batched", "matmul", "", [T("2x4x3"), T("2x3x5")], [T("2x4x5")], K.OUT_EWISE_FUSABLE),
    ("matmul_broadcast_batch", "matmul", "", [T("2x1x4x3"), T("3x3x5")], [T("2x3x4x5")], K.OUT_EWISE_FUSABLE),
    ("max_pool2d", "max_pool2d", POOL.format(k=2, s=2, p=0), [T("1x2x4x4")], [T("1x2x2x2")], K.OUT_EWISE_FUSABLE),
    ("max_pool2d_padded", "max_pool2d", POOL.format(k=3, s=1, p=1), [T("1x2x4x4")], [T("1x2x4x4")], K.OUT_EWISE_FUSABLE),
    ("avg_pool2d", "avg_pool2d", POOL.format(k=3, s=1, p=1) + ", count_include_pad = false", [T("1x2x4x4")], [T("1x2x4x4")], K.OUT_EWISE_FUSABLE),
    ("global_avg_pool2d", "global_avg_pool2d", "", [T("1x2x4x4")], [T("1x2x1x1")], K.OUT_EWISE_FUSABLE),
    ("softmax", "softmax", "axis = 1 : i64", [T("4x6")], [T("4x6")], K.OUT_EWISE_FUSABLE),
    ("softmax_axis0", "softmax", "axis = 0 : i64", [T("4x6")], [T("4x6")], K.OUT_EWISE_FUSABLE),
    ("layer_norm", "layer_norm", "axis = 1 : i64, " + EPS, [T("4x6"), T("6"), T("6")], [T("4x6")], K.OUT_EWISE_FUSABLE),
    ("layer_norm_two_axes", "layer_norm", "axis = 1 : i64, " + EPS, [T("2x4x6"), T("4x6"), T("4x6")], [T("2x4x6")], K.OUT_EWISE_FUSABLE),
    ("reduce_mean", "reduce_mean", "axes = array<i64: 1>, keepdims = true", [T("4x6")], [T("4x1")], K.OUT_EWISE_FUSABLE),
    ("reduce_mean_dropped_axis", "reduce_mean", "axes = array<i64: 1>, keepdims = false", [T("4x6")], [T("4")], K.OUT_EWISE_FUSABLE),
    ("reduce_sum", "reduce_sum", "axes = array<i64: 1>, keepdims = false", [T("4x6")], [T("4")], K.COMM_REDUCE),
    ("reduce_sum_keepdims", "reduce_sum", "axes = array<i64: 0>, keepdims = true", [T("4x6")], [T("1x6")], K.COMM_REDUCE),
    ("reduce_sum_all", "reduce_sum", "axes = array<i64: 0, 1>, keepdims = false", [T("4x6")], ["tensor<f32>"], K.COMM_REDUCE),
    ("reduce_max", "reduce_max", "axes = array<i64: 1>, keepdims = false", [T("4x6")], [T("4")], K.COMM_REDUCE),
    ("reshape", "reshape", "", [T("4x6")], [T("3x8")], K.INJECTIVE),
    ("transpose", "transpose", "perm = array<i64: 1, 0>", [T("4x6")], [T("6x4")], K.INJECTIVE),
    ("concat", "concat", "axis = 1 : i64", [T("4x6"), T("4x2")], [T("4x8")], K.INJECTIVE),
    ("split", "split", "axis = 1 : i64, sections = array<i64: 2, 4>", [T("4x6")], [T("4x2"), T("4x4")], K.INJECTIVE),
    ("slice", "slice", "starts = array<i64: 1, 0>, ends = array<i64: 3, 6>, steps = array<i64: 1, 2>", [T("4x6")], [T("2x3")], K.INJECTIVE),
    ("expand_dims", "expand_dims", "axes = array<i64: 1>", [T("4x6")], [T("4x1x6")], K.BROADCAST),
    ("broadcast_to", "broadcast_to", "", [T("1x6")], [T("4x6")], K.BROADCAST),
    ("broadcast_to_new_axis", "broadcast_to", "", [T("6")], [T("4x6")], K.BROADCAST),
    ("squeeze", "squeeze", "axes = array<i64: 1>", [T("4x1x6")], [T("4x6")], K.ELEMWISE),
    ("add", "add", "", [T("4x6"), T("4x6")], [T("4x6")], K.ELEMWISE),
    ("add_bias_nchw", "add", "", [T("1x8x6x6"), T("1x8x1x1")], [T("1x8x6x6")], K.ELEMWISE),
    ("add_bias_row", "add", "", [T("4x6"), T("6")], [T("4x6")], K.ELEMWISE),
    ("add_scalar", "add", "", [T("4x6"), "tensor<f32>"], [T("4x6")], K.ELEMWISE),
    ("sub", "sub", "", [T("4x6"), T("4x6")], [T("4x6")], K.ELEMWISE),
    ("mul_column", "mul", "", [T("4x6"), T("4x1")], [T("4x6")], K.ELEMWISE),
    ("div", "div", "", [T("4x6"), T("4x6")], [T("4x6")], K.ELEMWISE),
    ("pow", "pow", "", [T("4x6"), T("6")], [T("4x6")], K.ELEMWISE),
    ("relu", "relu", "", [T("4x6")], [T("4x6")], K.ELEMWISE),
    ("gelu", "gelu", "", [T("4x6")], [T("4x6")], K.ELEMWISE),
    ("gelu_tanh", "gelu_tanh", "", [T("4x6")], [T("4x6")], K.ELEMWISE),
    ("exp", "exp", "", [T("4x6")], [T("4x6")], K.ELEMWISE),
    ("sqrt", "sqrt", "", [T("4x6")], [T("4x6")], K.ELEMWISE),
    ("sigmoid", "sigmoid", "", [T("4x6")], [T("4x6")], K.ELEMWISE),
    ("silu", "silu", "", [T("4x6")], [T("4x6")], K.ELEMWISE),
    ("clip", "clip", "min = 0.0 : f32, max = 6.0 : f32", [T("4x6")], [T("4x6")], K.ELEMWISE),
    ("batch_norm", "batch_norm", EPS, [T("1x8x6x6")] + [T("8")] * 4, [T("1x8x6x6")], K.ELEMWISE),
]  # fmt: skip


def graph_function(op: str, properties: str, operands: list[str], results: list[str]) -> str:
    """`func.func @main` applying one graph op (generic form) to its arguments."""
    args = ", ".join(f"%a{n}: {t}" for n, t in enumerate(operands))
    uses = ", ".join(f"%a{n}" for n in range(len(operands)))
    defs = ", ".join(f"%r{n}" for n in range(len(results)))
    props = f" <{{{properties}}}>" if properties else ""
    signature = f"({', '.join(operands)}) -> ({', '.join(results)})"
    return (
        f"func.func @main({args}) -> ({', '.join(results)}) {{\n"
        f'  {defs} = "graph.{op}"({uses}){props} : {signature}\n'
        f"  func.return {defs} : {', '.join(results)}\n}}"
    )


@pytest.mark.parametrize(
    ("op", "properties", "operands", "results", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in GRAPH_OPS],
)
def test_legalized_graph_op_kind(op, properties, operands, results, expected):
    module = parse(graph_function(op, properties, operands, results))
    PassManager("legalize-ops,annotate-pattern").run(module)
    kinds = set(patterns(module).values())
    assert kinds == {expected}
