"""Random graphs as plain data, and how to build them: the model `bench/random_graphs.py`
draws into and `tests/test_random_graphs.py` and `bench/fuzz.py` compile.

A graph is a `GraphSpec` (argument shapes, op nodes, returned values). `build_module` turns it
into a `func.func @main` with the graph ops' typed constructors, each op at its own location
(`loc("random":<node>:0)`). `Draft` is the spec under construction, with what the drawers know
of each value (its shape, and a bound of its magnitude and sign).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IntAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Block, Operation, Region, SSAValue

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.graph.base import tensor_type

Shape = tuple[int, ...]
MAX_ELEMENTS = 512
"""Largest value drawn: keeps LLVM's work and the loop nests small."""


@dataclass(frozen=True)
class Ref:
    """A value of the graph: argument `index`, or result `result` of node `index`."""

    kind: str
    index: int
    result: int = 0


@dataclass(frozen=True)
class Node:
    op: str
    """A key of `UNARY`, `BINARY`, `REDUCE` or `BUILDERS`."""
    operands: tuple[Ref, ...]
    params: tuple = ()


@dataclass(frozen=True)
class GraphSpec:
    args: tuple[Shape, ...]
    nodes: tuple[Node, ...]
    outputs: tuple[Ref, ...]


UNARY = {
    "relu": graph.ReluOp,
    "sigmoid": graph.SigmoidOp,
    "tanh": graph.TanhOp,
    "neg": graph.NegOp,
    "abs": graph.AbsOp,
    "gelu": graph.GeluOp,
    "gelu_tanh": graph.GeluTanhOp,
    "silu": graph.SiluOp,
    "erf": graph.ErfOp,
    "exp": graph.ExpOp,
    "log": graph.LogOp,
    "sqrt": graph.SqrtOp,
    "rsqrt": graph.RsqrtOp,
    "sin": graph.SinOp,
    "cos": graph.CosOp,
    "atan": graph.AtanOp,
}
BINARY = {
    "add": graph.AddOp,
    "sub": graph.SubOp,
    "mul": graph.MulOp,
    "max": graph.MaxOp,
    "min": graph.MinOp,
    "div": graph.DivOp,
    "pow": graph.PowOp,
}
REDUCE = {
    "reduce_sum": graph.ReduceSumOp,
    "reduce_max": graph.ReduceMaxOp,
    "reduce_mean": graph.ReduceMeanOp,
}


def constant_op(shape: Shape, seed: int, low: float = -1.0, high: float = 1.0):
    values = np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)
    attr = DenseIntOrFPElementsAttr.from_list(tensor_type(shape), values.ravel().tolist())
    return graph.ConstantOp(attr)


Builder = Callable[[list[SSAValue], tuple], Operation]
BUILDERS: dict[str, Builder] = {
    "transpose": lambda xs, p: graph.TransposeOp(xs[0], p[0]),
    "reshape": lambda xs, p: graph.ReshapeOp(xs[0], p[0]),
    "expand_dims": lambda xs, p: graph.ExpandDimsOp(xs[0], p[0]),
    "squeeze": lambda xs, p: graph.SqueezeOp(xs[0], p[0]),
    "broadcast_to": lambda xs, p: graph.BroadcastToOp(xs[0], p[0]),
    "matmul": lambda xs, p: graph.MatmulOp(xs[0], xs[1]),
    "conv2d": lambda xs, p: graph.Conv2DOp(xs[0], xs[1], *p),
    "constant": lambda xs, p: constant_op(*p),
    "clip": lambda xs, p: graph.ClipOp(xs[0], *p),
    "softmax": lambda xs, p: graph.SoftmaxOp(xs[0], *p),
    "layer_norm": lambda xs, p: graph.LayerNormOp(*xs, *p),
    "batch_norm": lambda xs, p: graph.BatchNormOp(*xs, *p),
    "max_pool2d": lambda xs, p: graph.MaxPool2DOp(xs[0], *p),
    "avg_pool2d": lambda xs, p: graph.AvgPool2DOp(xs[0], *p),
    "global_avg_pool2d": lambda xs, p: graph.GlobalAvgPool2DOp(xs[0]),
    "lrn": lambda xs, p: graph.LrnOp(xs[0], *p),
    "concat": lambda xs, p: graph.ConcatOp(xs, *p),
    "split": lambda xs, p: graph.SplitOp(xs[0], *p),
    "slice": lambda xs, p: graph.SliceOp(xs[0], *p),
    "trilu": lambda xs, p: graph.TriluOp(xs[0], *p),
    "cumsum": lambda xs, p: graph.CumSumOp(xs[0], *p),
}
"""How to build the ops that are not in `UNARY`, `BINARY` or `REDUCE`."""


def build_op(node: Node, operands: list[SSAValue]) -> Operation:
    if node.op in UNARY:
        return UNARY[node.op](operands[0])
    if node.op in BINARY:
        return BINARY[node.op](operands[0], operands[1])
    if node.op in REDUCE:
        return REDUCE[node.op](operands[0], *node.params)
    return BUILDERS[node.op](operands, node.params)


def location(node: int) -> FileLineColLoc:
    return FileLineColLoc(StringAttr("random"), IntAttr(node), IntAttr(0))


def build_module(spec: GraphSpec) -> ModuleOp:
    """`func.func @main` computing `spec`, built with the ops' constructors."""
    block = Block(arg_types=[tensor_type(shape) for shape in spec.args])
    values: dict[Ref, SSAValue] = {}
    for index, arg in enumerate(block.args):
        arg.name_hint = f"x{index}"
        values[Ref("arg", index)] = arg
    for index, node in enumerate(spec.nodes):
        op = build_op(node, [values[ref] for ref in node.operands])
        op.location = location(index)
        block.add_op(op)
        for number, result in enumerate(op.results):
            result.name_hint = f"v{index}" if len(op.results) == 1 else f"v{index}_{number}"
            values[Ref("node", index, number)] = result
    outputs = [values[ref] for ref in spec.outputs]
    block.add_op(func.ReturnOp(*outputs))
    signature = ([arg.type for arg in block.args], [v.type for v in outputs])
    return ModuleOp([func.FuncOp("main", signature, Region(block))])


# ---------------------------------------------------------------------------------------------
# A graph under construction
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    ref: Ref
    shape: Shape
    bound: float
    """An upper bound of its magnitude (inputs and constants lie in [-1, 1])."""
    low: float | None = None
    """A lower bound of its values where one is known to be positive."""


@dataclass
class Draft:
    args: list[Shape] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    values: list[Value] = field(default_factory=list)
    uses: Counter = field(default_factory=Counter)

    def new_arg(self, shape: Shape) -> Value:
        self.args.append(tuple(shape))
        value = Value(Ref("arg", len(self.args) - 1), tuple(shape), 1.0)
        self.values.append(value)
        return value

    def add(self, op: str, operands, params: tuple, shape, bound, low=None) -> Value:
        return self.add_multi(op, operands, params, [shape], bound, low)[0]

    def add_multi(self, op: str, operands, params: tuple, shapes, bound, low=None) -> list[Value]:
        self.nodes.append(Node(op, tuple(v.ref for v in operands), params))
        self.uses.update(v.ref for v in operands)
        index = len(self.nodes) - 1
        made = [
            Value(Ref("node", index, number), tuple(shape), float(bound), low)
            for number, shape in enumerate(shapes)
        ]
        self.values.extend(made)
        return made

    def constant(self, shape: Shape, seed: int, low: float = -1.0, high: float = 1.0) -> Value:
        positive = low if low > 0 else None
        return self.add(
            "constant", (), (tuple(shape), seed, low, high), shape, max(-low, high), positive
        )

    def unused(self) -> list[Value]:
        return [v for v in self.values if v.ref.kind == "node" and self.uses[v.ref] == 0]
