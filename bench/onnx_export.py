"""Export a graph-dialect function to an ONNX model, so each benchmark case is written once.

```python
model = export_function(module, "main")          # onnx.ModelProto, opset 20, checked
session = onnxruntime.InferenceSession(model.SerializeToString())
```

Covers the ops the benchmark cases use: the unary and binary elementwise ops, `matmul`,
`conv2d` (`Conv`), `max_pool2d` and `avg_pool2d` (`MaxPool`, `AveragePool`), `layer_norm`
(`LayerNormalization`), `softmax`, the reductions, `reshape`, `transpose` and
`graph.constant` (an initializer). The function's arguments become the graph's
inputs (same names, float32, static shapes) and its results the outputs `out0, out1, ...`.
`gelu` is the opset-20 `Gelu` node, or `0.5 x (1 + Erf(x / sqrt 2))` below opset 20. Any other
op raises `ExportError` naming it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.traits import SymbolTable

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.graph.base import ReductionOp, ints_of, shape_of
from fusion_compiler.dialects.reference.evaluator import constant_array

OPSET = 20
"""The default opset: the first with a `Gelu` operator."""
MIN_OPSET = 18
"""Reductions take their axes as an input from opset 18 on; older opsets are not supported."""
IR_VERSION = 10
"""The ONNX IR version of opsets 20 and 21, which every onnxruntime since 1.17 loads."""

UNARY_OPS: dict[type[Operation], str] = {
    graph.ReluOp: "Relu",
    graph.ExpOp: "Exp",
    graph.LogOp: "Log",
    graph.SqrtOp: "Sqrt",
    graph.TanhOp: "Tanh",
    graph.SigmoidOp: "Sigmoid",
    graph.NegOp: "Neg",
    graph.AbsOp: "Abs",
    graph.ErfOp: "Erf",
    graph.SinOp: "Sin",
    graph.CosOp: "Cos",
    graph.TanOp: "Tan",
    graph.AsinOp: "Asin",
    graph.AcosOp: "Acos",
    graph.AtanOp: "Atan",
    graph.SinhOp: "Sinh",
    graph.CoshOp: "Cosh",
    graph.AsinhOp: "Asinh",
    graph.AcoshOp: "Acosh",
    graph.AtanhOp: "Atanh",
    graph.FloorOp: "Floor",
    graph.CeilOp: "Ceil",
    graph.RoundOp: "Round",
    graph.SignOp: "Sign",
}
BINARY_OPS: dict[type[Operation], str] = {
    graph.AddOp: "Add",
    graph.SubOp: "Sub",
    graph.MulOp: "Mul",
    graph.DivOp: "Div",
    graph.MaxOp: "Max",
    graph.MinOp: "Min",
    graph.PowOp: "Pow",
    graph.MatmulOp: "MatMul",
}
REDUCTION_OPS: dict[type[Operation], str] = {
    graph.ReduceSumOp: "ReduceSum",
    graph.ReduceMeanOp: "ReduceMean",
    graph.ReduceMaxOp: "ReduceMax",
}


class ExportError(ValueError):
    """The function uses an op (or an opset) the exporter does not cover."""


@dataclass
class _Exporter:
    """The nodes and initializers built so far, and the ONNX name of every SSA value."""

    opset: int
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    names: dict[SSAValue, str] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)

    def fresh(self, stem: str) -> str:
        name, index = stem, 0
        while name in self.taken:
            index += 1
            name = f"{stem}_{index}"
        self.taken.add(name)
        return name

    def bind(self, value: SSAValue, stem: str) -> str:
        self.names[value] = self.fresh(value.name_hint or stem)
        return self.names[value]

    def initializer(self, array: np.ndarray, stem: str) -> str:
        name = self.fresh(stem)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def scalar(self, value: float) -> str:
        return self.initializer(np.array(value, np.float32), "c")

    def node(self, op_type: str, inputs: list[str], output: str | None = None, **attrs) -> str:
        output = output or self.fresh(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [output], **attrs))
        return output


Handler = Callable[[_Exporter, Operation, list[str], str], None]


def _one_node(ex: _Exporter, op: Operation, inputs: list[str], out: str) -> None:
    """An op with an ONNX operator of the same semantics (`UNARY_OPS`, `BINARY_OPS`)."""
    ex.node(UNARY_OPS.get(type(op)) or BINARY_OPS[type(op)], inputs, out)


def _gelu(ex: _Exporter, op: Operation, inputs: list[str], out: str) -> None:
    if ex.opset >= 20:
        ex.node("Gelu", inputs, out)
        return
    (x,) = inputs
    scaled = ex.node("Div", [x, ex.scalar(math.sqrt(2.0))])
    shifted = ex.node("Add", [ex.node("Erf", [scaled]), ex.scalar(1.0)])
    ex.node("Mul", [ex.node("Mul", [x, shifted]), ex.scalar(0.5)], out)


def _rsqrt(ex: _Exporter, op: Operation, inputs: list[str], out: str) -> None:
    ex.node("Reciprocal", [ex.node("Sqrt", inputs)], out)


def _conv2d(ex: _Exporter, op: graph.Conv2DOp, inputs: list[str], out: str) -> None:
    strides, padding, dilation, groups = op.params
    kernel = shape_of(op.weight)[2:]
    ex.node(
        "Conv",
        inputs,
        out,
        kernel_shape=list(kernel),
        strides=list(strides),
        pads=list(padding),  # (top, left, bottom, right) is ONNX's (h_begin, w_begin, ...)
        dilations=list(dilation),
        group=groups,
    )


def _pool2d(ex: _Exporter, op: graph.Pool2DOp, inputs: list[str], out: str) -> None:
    kernel, strides, padding = op.window
    average = isinstance(op, graph.AvgPool2DOp)
    extra = {"count_include_pad": int(op.count_include_pad_value)} if average else {}
    ex.node(
        "AveragePool" if average else "MaxPool",
        inputs,
        out,
        kernel_shape=list(kernel),
        strides=list(strides),
        pads=list(padding),
        **extra,
    )


def _layer_norm(ex: _Exporter, op: graph.LayerNormOp, inputs: list[str], out: str) -> None:
    epsilon = op.epsilon.value.data
    ex.node("LayerNormalization", inputs, out, axis=op.axis_value, epsilon=epsilon)


def _softmax(ex: _Exporter, op: graph.SoftmaxOp, inputs: list[str], out: str) -> None:
    ex.node("Softmax", inputs, out, axis=op.axis_value)


def _reduction(ex: _Exporter, op: ReductionOp, inputs: list[str], out: str) -> None:
    axes = ex.initializer(np.array(op.axes_values, np.int64), "axes")
    keepdims = int(op.keepdims_value)
    ex.node(REDUCTION_OPS[type(op)], [*inputs, axes], out, keepdims=keepdims)


def _reshape(ex: _Exporter, op: graph.ReshapeOp, inputs: list[str], out: str) -> None:
    shape = ex.initializer(np.array(shape_of(op.result), np.int64), "shape")
    ex.node("Reshape", [*inputs, shape], out)


def _transpose(ex: _Exporter, op: graph.TransposeOp, inputs: list[str], out: str) -> None:
    ex.node("Transpose", inputs, out, perm=list(ints_of(op.perm)))


def _clip(ex: _Exporter, op: graph.ClipOp, inputs: list[str], out: str) -> None:
    low, high = op.bounds
    ex.node("Clip", [*inputs, ex.scalar(low), ex.scalar(high)], out)


HANDLERS: dict[type[Operation], Handler] = {
    **dict.fromkeys([*UNARY_OPS, *BINARY_OPS], _one_node),
    **dict.fromkeys(REDUCTION_OPS, _reduction),
    graph.GeluOp: _gelu,
    graph.RsqrtOp: _rsqrt,
    graph.ClipOp: _clip,
    graph.Conv2DOp: _conv2d,
    graph.MaxPool2DOp: _pool2d,
    graph.AvgPool2DOp: _pool2d,
    graph.LayerNormOp: _layer_norm,
    graph.SoftmaxOp: _softmax,
    graph.ReshapeOp: _reshape,
    graph.TransposeOp: _transpose,
}
"""How each graph op becomes ONNX nodes: (exporter, op, input names, output name)."""


def _value_info(name: str, value: SSAValue) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape_of(value)))


def _export_op(ex: _Exporter, op: Operation) -> None:
    if isinstance(op, graph.ConstantOp):
        array = np.asarray(constant_array(op.value), np.float32)
        ex.names[op.result] = ex.initializer(array, op.result.name_hint or "const")
        return
    handler = HANDLERS.get(type(op))
    if handler is None:
        raise ExportError(f"no ONNX export for {op.name}")
    inputs = [ex.names[operand] for operand in op.operands]
    (result,) = op.results
    handler(ex, op, inputs, ex.bind(result, "v"))


def export_function(module: ModuleOp, name: str = "main", opset: int = OPSET) -> onnx.ModelProto:
    """The graph-level function `@name` of `module` as a checked ONNX model."""
    if opset < MIN_OPSET:
        raise ExportError(f"opset {opset} is not supported (the exporter needs >= {MIN_OPSET})")
    function = SymbolTable.lookup_symbol(module, name)
    if not isinstance(function, func.FuncOp):
        raise ExportError(f"the module has no function @{name}")
    ex = _Exporter(opset)
    arguments = function.body.block.args
    inputs = [_value_info(ex.bind(arg, f"arg{arg.index}"), arg) for arg in arguments]
    outputs: list[onnx.ValueInfoProto] = []
    for op in function.body.block.ops:
        if isinstance(op, func.ReturnOp):
            for index, value in enumerate(op.arguments):
                out = ex.node("Identity", [ex.names[value]], ex.fresh(f"out{index}"))
                outputs.append(_value_info(out, value))
            break
        _export_op(ex, op)
    onnx_graph = helper.make_graph(ex.nodes, name, inputs, outputs, ex.initializers)
    model = helper.make_model(
        onnx_graph,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="fusion-compiler bench",
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model
