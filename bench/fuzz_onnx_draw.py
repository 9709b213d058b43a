"""Random valid ONNX models for `bench/fuzz.py onnx-graphs` (`bench/fuzz_onnx_graphs.py`
checks them).

Seed s draws a small model (`draw_model`): one or two float32 graph inputs of static shape
(rank 1-5) and a chain of 1-8 nodes, each an op of the importer's (`SUPPORTED_OPS`) applied
to an earlier tensor with attributes drawn from what the ONNX spec allows at the model's
opset (9-20): negative axes, pads and `auto_pad`, strides and dilations, groups, slice
steps and out-of-range bounds, broadcast operands, reductions with and without axes, splits,
gathers with negative indices, casts, and the rest below. A node that ONNX's checker or
shape inference rejects, or whose output shape it cannot tell, is drawn again.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

OPSETS = (9, 10, 11, 12, 13, 13, 17, 18, 18, 20, 20)
STEPS = (1, 8)
MAX_ELEMENTS = 20_000
"""A node is applied to a tensor of at most this many elements (tiles and pads grow them)."""


class ModelDraft:
    """A model being drawn: its nodes, initializers, inputs and each tensor's shape."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.values = np.random.default_rng(seed)
        self.seed = seed
        self.opset = self.rng.choice(OPSETS)
        self.nodes: list = []
        self.initializers: list = []
        self.inputs: list = []
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.types: dict[str, int] = {}
        self._count = 0

    def fresh(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def constant(self, array: np.ndarray, prefix: str = "w") -> str:
        from onnx import numpy_helper

        name = self.fresh(prefix)
        self.initializers.append(numpy_helper.from_array(array, name))
        self.shapes[name] = tuple(array.shape)
        return name

    def weights(self, shape: tuple[int, ...], low: float = -1.0, high: float = 1.0) -> str:
        return self.constant(self.values.uniform(low, high, shape).astype(np.float32))

    def scalar(self, value: float) -> str:
        return self.constant(np.array(value, np.float32))

    def int64s(self, values) -> str:
        return self.constant(np.array(values, np.int64), "k")

    def graph_input(self, shape: tuple[int, ...]) -> str:
        from onnx import TensorProto, helper

        name = self.fresh("x")
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        self.shapes[name], self.types[name] = tuple(shape), TensorProto.FLOAT
        return name

    def second_input(self, shape: tuple[int, ...]) -> str:
        """A second graph input of `shape`; with one already, a constant if its shape is
        another."""
        if len(self.inputs) < 2:
            return self.graph_input(shape)
        name = self.inputs[1].name
        return name if self.shapes[name] == shape else self.weights(shape)

    def model(self, outputs: list[str]):
        from onnx import helper

        typed = [helper.make_tensor_value_info(o, self.types[o], None) for o in outputs]
        used = {name for node in self.nodes for name in node.input}
        graph = helper.make_graph(
            self.nodes,
            f"seed{self.seed}",
            self.inputs,
            typed,
            [t for t in self.initializers if t.name in used],
        )
        made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        made.ir_version = 8
        return made

    def node(self, op_type: str, inputs: list[str], outputs: int = 1, **attributes) -> list[str]:
        """The outputs of a new node, if ONNX's checker and shape inference accept it and the
        latter gives each a static shape of no zero or negative dimension; else [] and no
        node."""
        from onnx import checker, helper, shape_inference

        names = [self.fresh("t") for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, names, **attributes))
        self.types.update(dict.fromkeys(names, 0))
        try:
            context = checker.C.CheckerContext()  # (the op's schema at the opset)
            context.ir_version, context.opset_imports = 8, {"": self.opset}
            checker.check_node(self.nodes[-1], context, checker.C.LexicalScopeContext())
            inferred = shape_inference.infer_shapes(
                self.model(names), strict_mode=True, data_prop=True
            )
        except Exception:  # noqa: BLE001 - any refusal: the node is drawn again
            self.nodes.pop()
            return []
        found = {}
        for info in list(inferred.graph.output) + list(inferred.graph.value_info):
            tensor = info.type.tensor_type
            if info.name in names and tensor.HasField("shape"):
                dims = tensor.shape.dim
                if all(d.HasField("dim_value") and d.dim_value > 0 for d in dims):
                    found[info.name] = (tuple(d.dim_value for d in dims), tensor.elem_type)
        if len(found) != len(names):
            self.nodes.pop()
            return []
        for name in names:
            self.shapes[name], self.types[name] = found[name]
        return names

    def one(self, op_type: str, inputs: list[str], **attributes) -> str | None:
        made = self.node(op_type, inputs, **attributes)
        return made[0] if made else None


def broadcast_like(rng: random.Random, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts to `shape`: leading dimensions dropped, others made 1."""
    dropped = rng.randrange(len(shape) + 1) if rng.random() < 0.5 else 0
    return tuple(1 if rng.random() < 0.4 else d for d in shape[dropped:])


def signed(rng: random.Random, axis: int, rank: int) -> int:
    """`axis`, counted from the end a third of the time."""
    return axis - rank if rng.random() < 0.3 else axis


UNARY = (
    "Abs",
    "Neg",
    "Relu",
    "Sigmoid",
    "Tanh",
    "Erf",
    "Softsign",
    "Softplus",
    "HardSwish",
    "Identity",
    "Exp",
    *("Sin", "Cos", "Atan", "Asinh"),  # (not Floor, Round, Sign: an ulp would become a 1)
)
BINARY = ("Add", "Sub", "Mul", "Max", "Min")


def _unary(d: ModelDraft, x: str) -> str | None:
    return d.one(d.rng.choice(UNARY), [x])


def _positive_domain(d: ModelDraft, x: str) -> str | None:
    """Log, Sqrt or Reciprocal of |x| + 0.25."""
    shifted = d.one("Add", [d.one("Abs", [x]) or x, d.scalar(0.25)])
    return d.one(d.rng.choice(["Log", "Sqrt", "Reciprocal"]), [shifted]) if shifted else None


def _binary(d: ModelDraft, x: str) -> str | None:
    rng = d.rng
    if rng.random() < 0.3:
        return d.one(rng.choice(BINARY), [x, x])
    other = d.weights(broadcast_like(rng, d.shapes[x]))
    return d.one(rng.choice(BINARY), [x, other] if rng.random() < 0.7 else [other, x])


def _two_inputs(d: ModelDraft, x: str) -> str | None:
    shape = d.shapes[x]
    y = d.second_input(broadcast_like(d.rng, shape) if d.rng.random() < 0.7 else shape)
    return d.one(d.rng.choice(BINARY), [x, y] if d.rng.random() < 0.5 else [y, x])


def _divide(d: ModelDraft, x: str) -> str | None:
    """By a constant of magnitude 0.5-2 (no cancellation to amplify)."""
    shape = broadcast_like(d.rng, d.shapes[x])
    magnitude = d.values.uniform(0.5, 2.0, shape) * d.values.choice([-1.0, 1.0], shape)
    return d.one("Div", [x, d.constant(magnitude.astype(np.float32))])


def _power(d: ModelDraft, x: str) -> str | None:
    base = d.one("Add", [d.one("Abs", [x]) or x, d.scalar(0.5)])
    exponent = d.scalar(d.rng.choice([2.0, 3.0, 0.5, -1.0, 1.7]))
    return d.one("Pow", [base, exponent]) if base else None


def _variadic(d: ModelDraft, x: str) -> str | None:
    others = [d.weights(broadcast_like(d.rng, d.shapes[x])) for _ in range(d.rng.randrange(3))]
    return d.one(d.rng.choice(["Sum", "Mean", "Max", "Min"]), [x, *others])


def _activation(d: ModelDraft, x: str) -> str | None:
    rng = d.rng
    op = rng.choice(["Elu", "Selu", "LeakyRelu", "HardSigmoid", "Gelu"])
    attributes: dict = {}
    if op == "Gelu":
        if d.opset < 20:
            return None
        attributes["approximate"] = rng.choice(["none", "tanh"])
    elif op in ("Elu", "LeakyRelu") and rng.random() < 0.7:
        attributes["alpha"] = rng.choice([0.1, 0.5, 1.5])
    elif op == "Selu" and rng.random() < 0.5:
        attributes.update(alpha=1.2, gamma=0.9)
    elif op == "HardSigmoid" and rng.random() < 0.7:
        attributes.update(alpha=rng.choice([0.1, 0.3]), beta=rng.choice([0.4, 0.6]))
    return d.one(op, [x], **attributes)


def _clip(d: ModelDraft, x: str) -> str | None:
    """Bounds as inputs, either left out; before opset 11, as attributes."""
    bounds = d.rng.uniform(-1, 0), d.rng.uniform(0, 1)
    form = d.rng.randrange(3)
    if d.opset < 11:
        given = [{"min": bounds[0], "max": bounds[1]}, {"max": bounds[1]}, {"min": bounds[0]}]
        return d.one("Clip", [x], **given[form])
    low, high = d.scalar(bounds[0]), d.scalar(bounds[1])
    return d.one("Clip", [[x, low, high], [x, "", high], [x, low]][form])


def _cast(d: ModelDraft, x: str) -> str | None:
    from onnx import TensorProto

    target = d.rng.choice([TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL])
    cast = d.one("Cast", [x], to=target)
    if cast and d.opset >= 15 and d.rng.random() < 0.3:  # (back like x)
        return d.one("CastLike", [cast, x])
    return d.one("Cast", [cast], to=TensorProto.FLOAT) if cast else None


def _integers(d: ModelDraft, x: str) -> str | None:
    """Arithmetic on x cast to int32 or int64 (truncated toward zero), cast back."""
    from onnx import TensorProto

    rng = d.rng
    to = rng.choice([TensorProto.INT32, TensorProto.INT64])
    scaled = d.one("Mul", [x, d.scalar(rng.choice([3.0, 10.0]))])
    value = d.one("Cast", [scaled], to=to) if scaled else None
    dtype = np.int32 if to == TensorProto.INT32 else np.int64
    for _ in range(rng.randrange(1, 3)):
        if value is None:
            return None
        if rng.random() < 0.3:
            value = d.one(rng.choice(["Neg", "Abs"]), [value])
            continue
        other = d.values.integers(-5, 6, broadcast_like(rng, d.shapes[value])).astype(dtype)
        value = d.one(
            rng.choice(["Add", "Sub", "Mul", "Max", "Min"]), [value, d.constant(other, "n")]
        )
    return d.one("Cast", [value], to=TensorProto.FLOAT) if value else None


def _gather_by_computed_indices(d: ModelDraft, x: str) -> str | None:
    """Gather from a constant table by indices computed from x (ArgMax, or a cast clipped
    into range): indices known only when the model runs."""
    from onnx import TensorProto

    rng, shape = d.rng, d.shapes[x]
    rank = len(shape)
    if rng.random() < 0.5:
        axis = rng.randrange(-rank, rank)
        indices = d.one(
            rng.choice(["ArgMax", "ArgMin"]), [x], axis=axis, keepdims=rng.choice([0, 1])
        )
        size = shape[axis]
    else:
        size = rng.randrange(2, 6)  # (indices from 1 - size to size - 1: negative ones too)
        clipped = d.one("Clip", [x, d.scalar(-size + 0.5), d.scalar(size - 0.5)])
        indices = d.one("Cast", [clipped], to=TensorProto.INT64) if clipped else None
    if indices is None:
        return None
    table = (size, rng.randrange(1, 4)) if rng.random() < 0.7 else (rng.randrange(1, 3), size)
    axis = 0 if table[0] == size else 1
    return d.one("Gather", [d.weights(table), indices], axis=axis)


def _select(d: ModelDraft, x: str) -> str | None:
    """Where of a comparison (and/or/not of two, or IsNaN of a log) between x and another."""
    rng, shape = d.rng, d.shapes[x]
    if rng.random() < 0.2:
        condition = d.one("IsNaN", [d.one("Log", [x]) or x])
    else:
        comparison = rng.choice(["Greater", "Less", "Equal", "GreaterOrEqual", "LessOrEqual"])
        condition = d.one(comparison, [x, d.weights(broadcast_like(rng, shape))])
        if condition and rng.random() < 0.3:
            positive = d.one("Greater", [x, d.scalar(0.0)])
            condition = (
                d.one(rng.choice(["And", "Or"]), [condition, positive]) if positive else None
            )
        if condition and rng.random() < 0.2:
            condition = d.one("Not", [condition])
    other = d.weights(broadcast_like(rng, shape))
    return (
        d.one("Where", [condition, x, other] if rng.random() < 0.5 else [condition, other, x])
        if condition
        else None
    )


def _reduce(d: ModelDraft, x: str) -> str | None:
    rng, rank = d.rng, len(d.shapes[x])
    op = rng.choice(
        [
            "ReduceSum",
            "ReduceMean",
            "ReduceMax",
            "ReduceMin",
            "ReduceL1",
            "ReduceL2",
            "ReduceSumSquare",
        ]
    )
    keep = rng.choice([0, 1])
    axes_input = op == "ReduceSum" and d.opset >= 13 or d.opset >= 18
    if rng.random() < 0.1:  # every axis; or, given as no axes, none at all
        if axes_input and rng.random() < 0.5:
            noop = rng.choice([0, 1])
            return d.one(op, [x, d.int64s([])], keepdims=keep, noop_with_empty_axes=noop)
        return d.one(op, [x], keepdims=keep)
    axes = [
        signed(rng, a, rank) for a in sorted(rng.sample(range(rank), rng.randrange(1, rank + 1)))
    ]
    if axes_input:
        return d.one(op, [x, d.int64s(axes)], keepdims=keep)
    return d.one(op, [x], axes=axes, keepdims=keep)


def _arg_reduce(d: ModelDraft, x: str) -> str | None:
    from onnx import TensorProto

    rng, rank = d.rng, len(d.shapes[x])
    source = d.one("Relu", [x]) if rng.random() < 0.5 else x  # (ties: zeros)
    attributes = {"axis": rng.randrange(-rank, rank), "keepdims": rng.choice([0, 1])}
    if rng.random() < 0.3:
        attributes["select_last_index"] = 1
    index = d.one(rng.choice(["ArgMax", "ArgMin"]), [source or x], **attributes)
    return d.one("Cast", [index], to=TensorProto.FLOAT) if index else None


def _normalize(d: ModelDraft, x: str) -> str | None:
    rng, shape = d.rng, d.shapes[x]
    rank = len(shape)
    kind = rng.choice(["softmax", "layer", "batch", "instance", "lrn"])
    if kind == "softmax":
        return d.one(rng.choice(["Softmax", "LogSoftmax"]), [x], axis=rng.randrange(-rank, rank))
    if kind == "layer" and d.opset >= 17:
        axis = rng.randrange(-rank, rank)
        normalized = shape[axis:]
        operands = [x, d.weights(normalized)] + (
            [d.weights(normalized)] if rng.random() < 0.6 else []
        )
        return d.one("LayerNormalization", operands, axis=axis, epsilon=rng.choice([1e-5, 1e-3]))
    if kind == "batch" and rank >= 2:
        channels = (shape[1],)
        operands = [x, *(d.weights(channels) for _ in range(3)), d.weights(channels, 0.5, 2.0)]
        return d.one("BatchNormalization", operands, epsilon=rng.choice([1e-5, 1e-2]))
    if kind == "instance" and rank >= 3:
        channels = (shape[1],)
        return d.one("InstanceNormalization", [x, d.weights(channels), d.weights(channels)])
    if kind == "lrn" and rank == 4:
        size, alpha = rng.choice([1, 3, 5]), rng.choice([1e-4, 0.01])
        return d.one("LRN", [x], size=size, alpha=alpha, beta=0.75, bias=rng.choice([1.0, 2.0]))
    return None


def _reshape(d: ModelDraft, x: str) -> str | None:
    rng, shape = d.rng, d.shapes[x]
    kind = rng.choice(["reshape", "flatten", "transpose", "squeeze", "unsqueeze"])
    rank = len(shape)
    if kind == "reshape":
        dims = _factors(rng, int(np.prod(shape)))
        if len(dims) > 1 and rng.random() < 0.4:
            dims[rng.randrange(len(dims))] = -1
        copied = [i for i in range(min(len(dims), rank)) if dims[i] == shape[i]]
        if copied and rng.random() < 0.3:  # 0: the input's dimension
            dims[rng.choice(copied)] = 0
        return d.one("Reshape", [x, d.int64s(dims)])
    if kind == "flatten":
        return d.one("Flatten", [x], axis=rng.randrange(-rank, rank + 1))
    if kind == "transpose":
        perm = list(range(rank))
        rng.shuffle(perm)
        return d.one("Transpose", [x], **({"perm": perm} if rng.random() < 0.9 else {}))
    if kind == "squeeze":
        ones = [i for i, n in enumerate(shape) if n == 1]
        if not ones or rng.random() < 0.1:
            return d.one("Squeeze", [x]) if ones else None
        axes = [signed(rng, a, rank) for a in rng.sample(ones, rng.randrange(1, len(ones) + 1))]
        if d.opset < 13:
            return d.one("Squeeze", [x], axes=axes)
        return d.one("Squeeze", [x, d.int64s(axes)])
    count = rng.randrange(1, 3)
    axes = [signed(rng, a, rank + count) for a in rng.sample(range(rank + count), count)]
    if d.opset < 13:
        return d.one("Unsqueeze", [x], axes=axes)
    return d.one("Unsqueeze", [x, d.int64s(axes)])


def _factors(rng: random.Random, total: int) -> list[int]:
    dims: list[int] = []
    while total > 1 and len(dims) < 4:
        factor = rng.choice([f for f in range(2, total + 1) if total % f == 0])
        dims.append(factor)
        total //= factor
    if not dims or rng.random() < 0.3:
        dims.insert(rng.randrange(len(dims) + 1), 1)
    return dims


def _shape_computation(d: ModelDraft, x: str) -> str | None:
    """What exported models compute from `Shape`: x reshaped to a shape made of its own
    dimensions (flattened after the first, or the first kept and the rest split), or a fill
    of x's shape (`ConstantOfShape`) added to it. With dynamic dimensions these run when the model
    does. (A `Range` up to a dimension has no static shape to ONNX's inference, which the
    drawing needs.)"""
    from onnx import TensorProto, helper

    rng, shape = d.rng, d.shapes[x]
    rank = len(shape)
    kind = rng.choice(["flatten", "keep-first", "fill"])
    whole = d.one("Shape", [x])
    if whole is None:
        return None
    if kind == "fill":
        value = helper.make_tensor("value", TensorProto.FLOAT, [1], [rng.uniform(-1, 1)])
        fill = d.one("ConstantOfShape", [whole], value=value)
        return d.one("Add", [x, fill]) if fill else None
    first = d.one("Slice", [whole, d.int64s([0]), d.int64s([1]), d.int64s([0])])
    if first is None or rank < 2:
        return None
    if kind == "flatten":
        target = d.one("Concat", [first, d.int64s([-1])], axis=0)
    else:
        rest = int(np.prod(shape[1:]))
        dims = [f for f in range(2, rest + 1) if rest % f == 0][:2] or [1]
        split = [dims[0], rest // dims[0]]
        target = d.one("Concat", [first, d.int64s(split)], axis=0)
    return d.one("Reshape", [x, target]) if target else None


def _concat_or_split(d: ModelDraft, x: str) -> str | None:
    rng, shape = d.rng, d.shapes[x]
    rank = len(shape)
    axis = rng.randrange(-rank, rank)
    if rng.random() < 0.5:
        other = list(shape)
        other[axis] = rng.randrange(1, 4)
        operands = [x, d.weights(tuple(other))] + ([x] if rng.random() < 0.3 else [])
        rng.shuffle(operands)
        return d.one("Concat", operands, axis=axis)
    size = shape[axis]
    if size < 2:
        return None
    cuts = sorted(rng.sample(range(1, size), min(size - 1, rng.randrange(1, 3))))
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, size], strict=True)]
    if d.opset < 13:
        parts = d.node("Split", [x], len(sizes), axis=axis, split=sizes)
    elif d.opset < 18 or rng.random() < 0.5:
        parts = d.node("Split", [x, d.int64s(sizes)], len(sizes), axis=axis)
    else:
        count = rng.randrange(2, min(size, 4) + 1)
        parts = d.node("Split", [x], count, axis=axis, num_outputs=count)
    return rng.choice(parts) if parts else None


def _slice(d: ModelDraft, x: str) -> str | None:
    rng, shape = d.rng, d.shapes[x]
    rank = len(shape)
    axes = rng.sample(range(rank), rng.randrange(1, rank + 1))
    starts, ends, steps = [], [], []
    for axis in axes:
        size = shape[axis]
        starts.append(rng.randrange(-size - 2, size + 2))
        far = rng.choice([2**62, -(2**62)])
        ends.append(far if rng.random() < 0.15 else rng.randrange(-size - 2, size + 2))
        steps.append(rng.choice([1, 1, 1, 2, -1, -2, 3]))
    signed_axes = [signed(rng, a, rank) for a in axes]
    if d.opset < 10:  # (attributes, no steps; negative axes from opset 11)
        if any(step != 1 for step in steps):
            return None
        return d.one("Slice", [x], starts=starts, ends=ends, axes=axes)
    operands = [x, d.int64s(starts), d.int64s(ends), d.int64s(signed_axes)]
    if rng.random() < 0.8:
        operands.append(d.int64s(steps))
    elif any(step != 1 for step in steps):
        return None
    return d.one("Slice", operands)


def _pad(d: ModelDraft, x: str) -> str | None:
    rng, shape = d.rng, d.shapes[x]
    rank = len(shape)
    mode = rng.choice(["constant", "constant", "reflect", "edge"])
    pads = [rng.randrange(0, 3) for _ in range(2 * rank)]
    if mode == "constant" and rng.random() < 0.3:  # some negative: a crop
        pads = [p - rng.randrange(0, 2) if shape[i % rank] > 2 else p for i, p in enumerate(pads)]
    if mode == "reflect":
        pads = [min(p, shape[i % rank] - 1) for i, p in enumerate(pads)]
    if d.opset < 11:  # (attributes)
        constant = (
            {"value": rng.uniform(-1, 1)} if mode == "constant" and rng.random() < 0.5 else {}
        )
        return d.one("Pad", [x], pads=pads, mode=mode, **constant)
    value = d.scalar(rng.uniform(-1, 1)) if mode == "constant" and rng.random() < 0.5 else ""
    if d.opset >= 18 and rng.random() < 0.4:  # the pads of some axes only
        axes = sorted(rng.sample(range(rank), rng.randrange(1, rank + 1)))
        pads = [pads[a] for a in axes] + [pads[rank + a] for a in axes]
        operands = [x, d.int64s(pads), value, d.int64s([signed(rng, a, rank) for a in axes])]
        return d.one("Pad", operands, mode=mode)
    return d.one("Pad", [x, d.int64s(pads)] + ([value] if value else []), mode=mode)


def _repeat(d: ModelDraft, x: str) -> str | None:
    rng, shape = d.rng, d.shapes[x]
    if rng.random() < 0.5:
        return d.one("Tile", [x, d.int64s([rng.choice([1, 1, 2, 3]) for _ in shape])])
    target = [rng.choice([1, 2, 3]) if n == 1 else n for n in shape]
    if rng.random() < 0.3:
        target = [rng.randrange(1, 3), *target]
    if rng.random() < 0.3:
        target = [1 if rng.random() < 0.5 else n for n in target]
    return d.one("Expand", [x, d.int64s(target)])


def _gather(d: ModelDraft, x: str) -> str | None:
    rng, shape = d.rng, d.shapes[x]
    rank = len(shape)
    if rng.random() < 0.6:
        axis = rng.randrange(-rank, rank)
        size = shape[axis]
        index_shape = rng.choice([(), (rng.randrange(1, 4),), (2, rng.randrange(1, 3))])
        count = int(np.prod(index_shape))
        indices = np.array([rng.randrange(-size, size) for _ in range(count)], np.int64)
        return d.one("Gather", [x, d.constant(indices.reshape(index_shape), "i")], axis=axis)
    depth, count = rng.randrange(1, rank + 1), rng.randrange(1, 4)
    rows = [[rng.randrange(-shape[j], shape[j]) for j in range(depth)] for _ in range(count)]
    return d.one("GatherND", [x, d.constant(np.array(rows, np.int64), "i")])


def _scan(d: ModelDraft, x: str) -> str | None:
    """CumSum (exclusive, reverse) or Trilu."""
    rng, rank = d.rng, len(d.shapes[x])
    if rng.random() < 0.5 or rank < 2:
        attributes = {k: 1 for k in ("exclusive", "reverse") if rng.random() < 0.4}
        axis = d.constant(np.array(rng.randrange(-rank, rank), np.int64), "a")
        return d.one("CumSum", [x, axis], **attributes)
    k = [d.constant(np.array(rng.randrange(-3, 4), np.int64), "k")] if rng.random() < 0.6 else []
    return d.one("Trilu", [x, *k], upper=rng.choice([0, 1]))


def _prelu_or_dropout(d: ModelDraft, x: str) -> str | None:
    rng = d.rng
    if rng.random() < 0.5:
        return d.one("PRelu", [x, d.weights(broadcast_like(rng, d.shapes[x]), 0, 0.5)])
    extra = []
    if d.opset >= 12 and rng.random() < 0.5:
        extra = [d.scalar(0.3), d.constant(np.array(False), "b")]
    return d.one("Dropout", [x, *extra])


def _matmul(d: ModelDraft, x: str) -> str | None:
    rng, shape = d.rng, d.shapes[x]
    columns = rng.randrange(1, 9)
    if len(shape) == 2 and rng.random() < 0.5:
        transpose_a, transpose_b = rng.choice([0, 1]), rng.choice([0, 1])
        rows, inner = (shape[1], shape[0]) if transpose_a else shape
        operands = [x, d.weights((columns, inner) if transpose_b else (inner, columns))]
        if rng.random() < 0.7 or d.opset < 11:  # (C is optional from opset 11)
            bias = rng.choice([(columns,), (1, columns), (rows, columns), (rows, 1), ()])
            operands.append(d.weights(bias))
        attributes: dict = {"transA": transpose_a, "transB": transpose_b}
        if rng.random() < 0.4:
            attributes.update(alpha=rng.choice([0.5, 2.0]), beta=rng.choice([0.0, 1.5]))
        return d.one("Gemm", operands, **attributes)
    inner = shape[-1]
    if rng.random() < 0.2:
        return d.one("MatMul", [x, d.weights((inner,))])
    if len(shape) >= 2 and rng.random() < 0.2:  # (x on the right)
        return d.one("MatMul", [d.weights((rng.randrange(1, 9), shape[-2])), x])
    batch = broadcast_like(rng, shape[:-2]) if len(shape) > 2 and rng.random() < 0.4 else ()
    return d.one("MatMul", [x, d.weights((*batch, inner, columns))])


def _window(d: ModelDraft, x: str) -> str | None:
    """Conv, MaxPool, AveragePool or a global pool over the spatial axes of a rank 3-5 input."""
    rng, shape = d.rng, d.shapes[x]
    if not 3 <= len(shape) <= 5:
        return None
    kind = rng.choice(["conv", "conv", "pool", "pool", "global", "transpose"])
    if kind == "global":
        return d.one(rng.choice(["GlobalAveragePool", "GlobalMaxPool"]), [x])
    spatial = len(shape) - 2
    attributes: dict = {}
    if rng.random() < 0.4:
        attributes["strides"] = [rng.choice([1, 2]) for _ in range(spatial)]
    if rng.random() < 0.3:
        attributes["auto_pad"] = rng.choice(["SAME_UPPER", "SAME_LOWER", "VALID"])
    elif rng.random() < 0.6:
        most = 3 if kind == "conv" else 2
        attributes["pads"] = [rng.randrange(0, most) for _ in range(2 * spatial)]
    kernel = [rng.choice([1, 2, 3]) for _ in range(spatial)]
    if kind == "pool":
        return _pool(d, x, kernel, attributes)
    if kind == "transpose":
        return _conv_transpose(d, x, kernel, attributes)
    return _conv(d, x, kernel, attributes)


def _pool(d: ModelDraft, x: str, kernel: list[int], attributes: dict) -> str | None:
    rng = d.rng
    op = rng.choice(["MaxPool", "AveragePool"])
    if rng.random() < 0.3:
        attributes["ceil_mode"] = 1
    if op == "AveragePool" and rng.random() < 0.5:
        attributes["count_include_pad"] = 1
    same = attributes.get("auto_pad", "").startswith("SAME")  # (onnxruntime gets the shape
    dilated = op == "MaxPool" or d.opset >= 19  # of these wrong: 0 rows, not 1; AveragePool
    if dilated and rng.random() < 0.2 and not same:  # has dilations from opset 19)
        attributes["dilations"] = [rng.choice([1, 2]) for _ in kernel]
    return d.one(op, [x], kernel_shape=kernel, **attributes)


def _conv(d: ModelDraft, x: str, kernel: list[int], attributes: dict) -> str | None:
    """A convolution of 1-8 filters per group (grouped, depthwise or not), its kernel shape
    given or left to the weights, with or without a bias."""
    rng = d.rng
    if rng.random() < 0.3:
        attributes["dilations"] = [rng.choice([1, 2]) for _ in kernel]
    channels = d.shapes[x][1]
    group = rng.choice([1, 1, channels, next((g for g in (2, 3) if channels % g == 0), 1)])
    outputs = channels if group == channels and rng.random() < 0.5 else rng.randrange(1, 9) * group
    if group > 1:
        attributes["group"] = group
    if rng.random() < 0.5:
        attributes["kernel_shape"] = kernel
    operands = [x, d.weights((outputs, channels // group, *kernel))]
    if rng.random() < 0.6:
        operands.append(d.weights((outputs,)))
    return d.one("Conv", operands, **attributes)


def _conv_transpose(d: ModelDraft, x: str, kernel: list[int], attributes: dict) -> str | None:
    """A transposed convolution (1-4 outputs per group), with `output_padding` below its
    stride, or an `output_shape` about its natural size instead of `pads`."""
    rng, shape = d.rng, d.shapes[x]
    strides = attributes.get("strides", [1] * len(kernel))
    if rng.random() < 0.3:
        attributes["dilations"] = [rng.choice([1, 2]) for _ in kernel]
    dilations = attributes.get("dilations", [1] * len(kernel))
    if rng.random() < 0.3:
        attributes["output_padding"] = [
            rng.randrange(max(s, d)) for s, d in zip(strides, dilations, strict=True)
        ]
    if rng.random() < 0.2 and "auto_pad" not in attributes:
        attributes.pop("pads", None)
        natural = [
            s * (size - 1) + (k - 1) * dl + 1
            for size, s, k, dl in zip(shape[2:], strides, kernel, dilations, strict=True)
        ]
        attributes["output_shape"] = [max(1, n + rng.randrange(-2, 2)) for n in natural]
    channels = shape[1]
    group = rng.choice([1, 1, channels, next((g for g in (2, 3) if channels % g == 0), 1)])
    if group > 1:
        attributes["group"] = group
    per_group = rng.randrange(1, 5)
    operands = [x, d.weights((channels, per_group, *kernel))]
    if rng.random() < 0.5:
        operands.append(d.weights((group * per_group,)))
    return d.one("ConvTranspose", operands, **attributes)


def _rearrange(d: ModelDraft, x: str) -> str | None:
    """DepthToSpace (DCR or CRD) or SpaceToDepth of a rank-4 input."""
    rng, shape = d.rng, d.shapes[x]
    if len(shape) != 4:
        return None
    if rng.random() < 0.5:
        block = rng.choice([1, 2])
        if shape[1] % (block * block):
            return None
        return d.one("DepthToSpace", [x], blocksize=block, mode=rng.choice(["DCR", "CRD"]))
    if shape[2] % 2 or shape[3] % 2:
        return None
    return d.one("SpaceToDepth", [x], blocksize=2)


MAKERS: tuple[tuple[Callable[[ModelDraft, str], str | None], int], ...] = (
    (_unary, 4),
    (_positive_domain, 1),
    (_binary, 2),
    (_two_inputs, 2),
    (_divide, 1),
    (_power, 1),
    (_variadic, 1),
    (_activation, 2),
    (_clip, 1),
    (_cast, 1),
    (_integers, 1),
    (_gather_by_computed_indices, 1),
    (_select, 2),
    (_reduce, 2),
    (_arg_reduce, 1),
    (_normalize, 3),
    (_reshape, 4),
    (_shape_computation, 2),
    (_concat_or_split, 2),
    (_slice, 2),
    (_pad, 1),
    (_repeat, 1),
    (_gather, 2),
    (_scan, 1),
    (_prelu_or_dropout, 1),
    (_matmul, 2),
    (_window, 5),
    (_rearrange, 1),
)
"""What a node is drawn from, and how often (weights)."""
SCALAR_MAKERS = {_unary, _positive_domain, _binary, _divide, _power, _variadic, _activation}
"""The makers that take a scalar (rank 0) tensor."""


def draw_model(seed: int):
    """Model `seed`, its inputs (standard normal), and its nodes' op types; None when no node
    could be drawn."""
    from onnx import TensorProto, shape_inference

    d = ModelDraft(seed)
    rng = d.rng
    rank = rng.choice([1, 2, 3, 4, 4, 4, 5])
    shape = {
        1: lambda: (rng.randrange(1, 30),),
        2: lambda: (rng.randrange(1, 6), rng.randrange(1, 12)),
        3: lambda: (rng.choice([1, 2]), rng.randrange(1, 7), rng.randrange(3, 12)),
        4: lambda: (
            rng.choice([1, 1, 2]),
            rng.randrange(1, 7),
            rng.randrange(3, 10),
            rng.randrange(3, 10),
        ),
        5: lambda: (1, rng.randrange(1, 4), *(rng.randrange(2, 6) for _ in range(3))),
    }[rank]()
    tensors = [d.graph_input(shape)]
    makers, weights = zip(*MAKERS, strict=True)
    wanted = rng.randrange(STEPS[0], STEPS[1] + 1)
    for _ in range(8 * wanted):
        if len(tensors) > wanted:
            break
        source = rng.choice(tensors)
        maker = rng.choices(makers, weights)[0]
        if int(np.prod(d.shapes[source])) > MAX_ELEMENTS:
            continue
        if not d.shapes[source] and maker not in SCALAR_MAKERS:
            continue
        made = maker(d, source)
        if made is not None and d.types[made] == TensorProto.FLOAT:
            tensors.append(made)
    if len(tensors) == 1:
        return None
    outputs = [tensors[-1]]
    if len(tensors) > 2 and rng.random() < 0.3:
        outputs.append(rng.choice(tensors[1:-1]))
    model = shape_inference.infer_shapes(d.model(outputs), strict_mode=True)
    inputs = {
        i.name: d.values.standard_normal(d.shapes[i.name]).astype(np.float32) for i in d.inputs
    }
    return model, inputs, [node.op_type for node in d.nodes]
