"""Random small graphs through the whole compiler: each computes what the reference says,
fused and unfused; fusion puts every source op in exactly one kernel; compiling twice gives
the same IR, byte for byte.

A graph is drawn as plain data (`GraphSpec`: argument shapes, op nodes, returned values) by
the `graphs()` strategy, then built with the graph ops' typed constructors inside a
`func.func @main`, each op at its own location (`loc("random":<node>:0)`). The ops drawn:
elementwise unary (relu, sigmoid, tanh, neg, abs, gelu, and exp of values known to be small),
binary with broadcasting (add, sub, mul, max, min against a bias argument, a constant, another
value or the value itself), injective (transpose, reshape, expand_dims, squeeze, broadcast_to),
reductions (reduce_sum/max/mean over some or all axes, negative axes, keepdims or not), matmul
(2-D or batched 3-D, with a fresh weight or an earlier value) and small conv2d (C <= 4, 1x1 or
3x3, padding 0/1 per side, strides and dilations 1/2, grouped or not). Operands prefer values
not used yet, so graphs are chains with side branches, diamonds and fan-out. Every op's result
is used (fuse-ops drops dead groups, as TVM does): every value nobody uses is returned.

A failing example prints its graph as MLIR (`fusion-run FILE --random-inputs --check` replays
it) after the spec hypothesis shrank it to.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from math import prod

import numpy as np
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IntAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.graph import PRIMITIVE_ATTR
from fusion_compiler.dialects.graph.base import tensor_type
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import (
    DEFAULT_PIPELINE,
    UNFUSED_PIPELINE,
    PassManager,
    compile_module,
    parse_pipeline,
)
from fusion_compiler.passes.analysis.function_graph import build_function_graph, op_label
from fusion_compiler.passes.analysis.graph_partition import partition
from fusion_compiler.passes.fuse_ops import FuseOpsPass

Shape = tuple[int, ...]
MAX_ELEMENTS = 512
"""Largest value drawn: keeps LLVM's work and the loop nests small."""
NODES = (2, 8)
"""How many ops a graph has, at least and at most."""
EXP_INPUT_BOUND = 6.0
"""exp only of values known to lie in [-6, 6], so nothing overflows or loses its scale."""

# ---------------------------------------------------------------------------------------------
# Graphs as data
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ref:
    """A value of the graph: argument `index` or the result of node `index`."""

    kind: str
    index: int


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
    "exp": graph.ExpOp,
}
BINARY = {
    "add": graph.AddOp,
    "sub": graph.SubOp,
    "mul": graph.MulOp,
    "max": graph.MaxOp,
    "min": graph.MinOp,
}
REDUCE = {
    "reduce_sum": graph.ReduceSumOp,
    "reduce_max": graph.ReduceMaxOp,
    "reduce_mean": graph.ReduceMeanOp,
}


def _constant(shape: Shape, seed: int) -> graph.ConstantOp:
    values = np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)
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
    "constant": lambda xs, p: _constant(*p),
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
        op.results[0].name_hint = f"v{index}"
        block.add_op(op)
        values[Ref("node", index)] = op.results[0]
    outputs = [values[ref] for ref in spec.outputs]
    block.add_op(func.ReturnOp(*outputs))
    signature = ([arg.type for arg in block.args], [v.type for v in outputs])
    return ModuleOp([func.FuncOp("main", signature, Region(block))])


# ---------------------------------------------------------------------------------------------
# The strategy
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    ref: Ref
    shape: Shape
    bound: float
    """An upper bound of its magnitude (inputs and constants lie in [-1, 1])."""


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

    def add(self, op: str, operands: tuple[Value, ...], params: tuple, shape, bound) -> Value:
        self.nodes.append(Node(op, tuple(v.ref for v in operands), params))
        self.uses.update(v.ref for v in operands)
        value = Value(Ref("node", len(self.nodes) - 1), tuple(shape), float(bound))
        self.values.append(value)
        return value

    def constant(self, shape: Shape, seed: int) -> Value:
        return self.add("constant", (), (tuple(shape), seed), shape, 1.0)

    def unused(self) -> list[Value]:
        return [v for v in self.values if v.ref.kind == "node" and self.uses[v.ref] == 0]


dims = st.integers(1, 6)


def _broadcastable(a: Shape, b: Shape) -> bool:
    return all(x == y or 1 in (x, y) for x, y in zip(reversed(a), reversed(b), strict=False))


def _broadcast(a: Shape, b: Shape) -> Shape:
    return tuple(np.broadcast_shapes(a, b))


@st.composite
def bias_shapes(draw, shape: Shape) -> Shape:
    """A shape broadcasting against `shape`: a suffix of it with some axes 1, where a unit
    axis of `shape` may also grow (so the result can be larger than both)."""
    keep = draw(st.integers(0, len(shape))) if shape else 0
    suffix = shape[len(shape) - keep :]
    out = []
    for size in suffix:
        choices = [size, 1] if size > 1 else [1, 2, 3]
        out.append(draw(st.sampled_from(choices)))
    result = tuple(out)
    return result if prod(_broadcast(shape, result)) <= MAX_ELEMENTS else suffix


def draw_unary(draw, d: Draft, x: Value) -> None:
    names = [n for n in UNARY if n != "exp"]
    names += ["exp"] * 3 if x.bound <= EXP_INPUT_BOUND else []
    name = draw(st.sampled_from(names))
    bound = {"sigmoid": 1.0, "tanh": 1.0}.get(name, x.bound)
    bound = float(np.exp(x.bound)) if name == "exp" else bound
    d.add(name, (x,), (), x.shape, bound)


def _rhs(draw, d: Draft, x: Value) -> Value:
    source = draw(st.sampled_from(["arg", "constant", "value", "self"]))
    others = [v for v in d.values if v != x and _broadcastable(x.shape, v.shape)]
    others = [v for v in others if prod(_broadcast(x.shape, v.shape)) <= MAX_ELEMENTS]
    if source == "self":
        return x
    if source == "value" and others:
        return draw(st.sampled_from(others))
    shape = draw(bias_shapes(x.shape))
    if source == "constant":
        return d.constant(shape, draw(st.integers(0, 2**16)))
    return d.new_arg(shape)


def draw_binary(draw, d: Draft, x: Value) -> None:
    name = draw(st.sampled_from(sorted(BINARY)))
    y = _rhs(draw, d, x)
    lhs, rhs = (y, x) if draw(st.booleans()) else (x, y)
    bound = x.bound * y.bound if name == "mul" else x.bound + y.bound
    d.add(name, (lhs, rhs), (), _broadcast(x.shape, y.shape), bound)


def draw_transpose(draw, d: Draft, x: Value) -> None:
    perm = tuple(draw(st.permutations(range(len(x.shape)))))
    d.add("transpose", (x,), (perm,), tuple(x.shape[p] for p in perm), x.bound)


def _reshape_targets(shape: Shape) -> list[Shape]:
    n = prod(shape)
    targets = {(n,), tuple(reversed(shape))}
    if len(shape) >= 2:
        targets.add((shape[0], n // shape[0]))
        targets.add((n // shape[-1], shape[-1]))
        targets.add(shape[:-2] + (shape[-2] * shape[-1],))
    for axis, size in enumerate(shape):
        for factor in range(2, size):
            if size % factor == 0:
                targets.add(shape[:axis] + (factor, size // factor) + shape[axis + 1 :])
    return sorted(targets)


def draw_reshape(draw, d: Draft, x: Value) -> None:
    target = draw(st.sampled_from(_reshape_targets(x.shape)))
    d.add("reshape", (x,), (target,), target, x.bound)


def draw_expand_dims(draw, d: Draft, x: Value) -> None:
    rank = len(x.shape) + 1
    axis = draw(st.integers(-rank, rank - 1))
    shape = list(x.shape)
    shape.insert(axis % rank, 1)
    d.add("expand_dims", (x,), ((axis,),), shape, x.bound)


def draw_squeeze(draw, d: Draft, x: Value) -> None:
    units = [axis for axis, size in enumerate(x.shape) if size == 1]
    axes = tuple(draw(st.lists(st.sampled_from(units), unique=True, max_size=len(units))))
    dropped = axes or units
    shape = tuple(s for axis, s in enumerate(x.shape) if axis not in dropped)
    d.add("squeeze", (x,), (tuple(sorted(axes)),), shape, x.bound)


def draw_broadcast_to(draw, d: Draft, x: Value) -> None:
    lead = draw(st.lists(st.integers(1, 3), max_size=max(0, 3 - len(x.shape))))
    shape = tuple(lead) + tuple(draw(st.integers(1, 3)) if s == 1 else s for s in x.shape)
    if prod(shape) > MAX_ELEMENTS:
        shape = x.shape
    d.add("broadcast_to", (x,), (shape,), shape, x.bound)


def draw_reduce(draw, d: Draft, x: Value) -> None:
    rank = len(x.shape)
    name = draw(st.sampled_from(sorted(REDUCE)))
    axes = sorted(draw(st.lists(st.integers(0, rank - 1), unique=True, max_size=rank)))
    axes = [a - rank if draw(st.booleans()) else a for a in axes]  # negative axes too
    keepdims = draw(st.booleans())
    reduced = [a % rank for a in axes] or list(range(rank))
    shape = [1 if a in reduced else s for a, s in enumerate(x.shape)]
    shape = shape if keepdims else [s for a, s in enumerate(x.shape) if a not in reduced]
    count = prod(x.shape[a] for a in reduced) if name == "reduce_sum" else 1
    d.add(name, (x,), (tuple(axes), keepdims), shape, x.bound * count)


def draw_matmul(draw, d: Draft, x: Value) -> None:
    """`x @ w`, x of rank 2 or 3 (batched); w another value or a fresh weight argument, of
    rank 2 (broadcast over the batch) or with the batch axis."""
    *batch, m, k = x.shape
    others = [v for v in d.values if v.shape[-2:-1] == (k,) and v != x]
    others = [v for v in others if len(v.shape) == 2 or tuple(v.shape[:-2]) == tuple(batch)]
    if others and draw(st.booleans()):
        w = draw(st.sampled_from(others))
    else:
        w = d.new_arg((*draw(st.sampled_from([(), tuple(batch)])), k, draw(dims)))
    d.add("matmul", (x, w), (), (*batch, m, w.shape[-1]), k * x.bound * w.bound)


def _window(draw, size: int) -> tuple[int, int]:
    """A (kernel size, dilation) whose window fits in `size` (the padded input)."""
    options = [(k, dil) for k in (1, 3) for dil in (1, 2) if dil * (k - 1) + 1 <= size]
    return draw(st.sampled_from(options))


def draw_conv2d(draw, d: Draft, x: Value) -> None:
    n, c, h, w = x.shape
    padding = tuple(draw(st.lists(st.integers(0, 1), min_size=4, max_size=4)))
    padded = (h + padding[0] + padding[2], w + padding[1] + padding[3])
    k, dilation = _window(draw, min(padded))
    strides = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    groups = draw(st.sampled_from([1, c]))
    out_channels = groups * draw(st.integers(1, max(1, 4 // groups)))
    weight = d.new_arg((out_channels, c // groups, k, k))
    span = dilation * (k - 1) + 1
    out = [(p - span) // s + 1 for p, s in zip(padded, strides, strict=True)]
    params = (strides, padding, (dilation, dilation), groups)
    bound = (c // groups) * k * k * x.bound
    d.add("conv2d", (x, weight), params, (n, out_channels, *out), bound)


Drawer = Callable[..., None]
DRAWERS: dict[str, tuple[Callable[[Shape], bool], Drawer]] = {
    "unary": (lambda s: True, draw_unary),
    "binary": (lambda s: True, draw_binary),
    "transpose": (lambda s: len(s) >= 2, draw_transpose),
    "reshape": (lambda s: True, draw_reshape),
    "expand_dims": (lambda s: len(s) < 4, draw_expand_dims),
    "squeeze": (lambda s: 1 in s, draw_squeeze),
    "broadcast_to": (lambda s: 1 in s or len(s) < 3, draw_broadcast_to),
    "reduce": (lambda s: len(s) >= 1, draw_reduce),
    "matmul": (lambda s: len(s) in (2, 3), draw_matmul),
    "conv2d": (lambda s: len(s) == 4 and s[1] <= 4, draw_conv2d),
}


WEIGHTS = {"conv2d": 4, "matmul": 4, "binary": 3, "unary": 2, "reduce": 2, "squeeze": 2}
"""How much likelier than a data-movement op each kind is, where it applies."""


def _pick_operand(draw, d: Draft) -> Value:
    """The last value (chains), a value nobody uses yet, or any value (fan-out, diamonds);
    never a constant: an op of constants only is folded away by fold-constants
    (`tests/passes/test_fold_constants*.py`), and this test counts a kernel per op."""
    how = draw(st.sampled_from(["last", "unused", "any"]))
    values = [v for v in d.values if v.ref.kind == "arg" or d.nodes[v.ref.index].op != "constant"]
    unused = [v for v in d.unused() if v in values]
    if how == "unused" and unused:
        return draw(st.sampled_from(unused))
    if how == "any":
        return draw(st.sampled_from(values))
    return values[-1]


def _input_shape(draw) -> Shape:
    rank = draw(st.sampled_from([2, 1, 3, 4]))
    size = st.integers(1, 4) if rank == 4 else dims
    return tuple(draw(st.lists(size, min_size=rank, max_size=rank)))


def _computed(d: Draft) -> list[Ref]:
    return [
        v.ref for v in d.values if v.ref.kind == "node" and d.nodes[v.ref.index].op != "constant"
    ]


@st.composite
def graphs(draw) -> GraphSpec:
    d = Draft()
    if draw(st.booleans()):  # an NCHW input for convolutions
        nchw = (st.integers(1, 2), st.integers(1, 4), st.integers(3, 6), st.integers(3, 6))
        d.new_arg(draw(st.tuples(*nchw)))
    for _ in range(draw(st.integers(1, 3)) - len(d.args)):
        d.new_arg(_input_shape(draw))
    for _ in range(draw(st.integers(*NODES))):
        x = _pick_operand(draw, d)
        kinds = [kind for kind, (applies, _) in DRAWERS.items() if applies(x.shape)]
        kind = draw(st.sampled_from([k for k in kinds for _ in range(WEIGHTS.get(k, 1))]))
        DRAWERS[kind][1](draw, d, x)
    outputs = [v.ref for v in d.unused()]
    used = [r for r in _computed(d) if r not in outputs]  # a returned constant needs a copy
    if used and draw(st.booleans()):
        outputs.append(draw(st.sampled_from(used)))
    return GraphSpec(tuple(d.args), tuple(d.nodes), tuple(outputs))


# ---------------------------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------------------------


def main_of(module: ModuleOp) -> func.FuncOp:
    return next(
        op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main"
    )


def body_ops(function: func.FuncOp) -> list[Operation]:
    return [op for op in function.body.block.ops if not isinstance(op, func.ReturnOp)]


def fusion_units(main: func.FuncOp, fuse: FuseOpsPass) -> dict[FileLineColLoc, tuple]:
    """The partition of legalized `main` as `fuse` computes it: each group's ops in block
    order, keyed by the location of the last one (the location of the group's call)."""
    info = build_function_graph(main)
    result = partition(info.graph, fuse.max_depth, fuse.opt_level, fuse.max_args)
    members: dict[int, list[Operation]] = {}
    for index, op in enumerate(info.ops):
        members.setdefault(result.group_of[info.node_of_op(index)], []).append(op)
    return {ops[-1].location: tuple(ops) for ops in members.values()}


def _labels(ops) -> list[str]:
    return [op_label(op) for op in ops]


def check_call(op: Operation, units: dict, module: ModuleOp) -> int:
    """`op` of fused @main stands for exactly one unit of the partition; returns its size."""
    assert op.location in units, f"{op.name} at {op.location} stands for no group (or two)"
    unit = units.pop(op.location)
    if not isinstance(op, func.CallOp):
        assert unit == (op,), (op, unit)
        return 1
    callee = SymbolTable.lookup_symbol(module, op.callee)
    assert isinstance(callee, func.FuncOp) and PRIMITIVE_ATTR in callee.attributes
    inner = body_ops(callee)
    assert _labels(inner) == _labels(unit)
    assert all(isinstance(o, graph.CallLoopOp) for o in inner)
    if callee.location == unit[0].location:  # the group that defined the (shared) function
        assert [o.location for o in inner] == [o.location for o in unit]
    return len(unit)


def split_pipeline() -> tuple[tuple[ModulePass, ...], FuseOpsPass, tuple[ModulePass, ...]]:
    """`DEFAULT_PIPELINE` as (the passes before fuse-ops, fuse-ops, the passes after it)."""
    passes = parse_pipeline(DEFAULT_PIPELINE)
    at = next(i for i, p in enumerate(passes) if isinstance(p, FuseOpsPass))
    fuse = passes[at]
    assert isinstance(fuse, FuseOpsPass)
    return passes[:at], fuse, passes[at + 1 :]


def run_pipeline_checking_partition(spec: GraphSpec, module: ModuleOp) -> int:
    """Runs `DEFAULT_PIPELINE` on `module`, checking around fuse-ops that every source op is
    in exactly one group and each group in exactly one call of @main. Returns the number of
    calls that launch a kernel."""
    before, fuse, after = split_pipeline()
    manager = PassManager(before)
    manager.run(module)
    main = main_of(module)
    sources = Counter(location(index) for index in range(len(spec.nodes)))
    assert Counter(op.location for op in body_ops(main)) == sources
    units = fusion_units(main, fuse)
    PassManager([fuse], ctx=manager.ctx).run(module)
    calls = body_ops(main_of(module))
    covered = sum(check_call(op, units, module) for op in calls)
    assert not units, f"groups without a call: {units}"
    assert covered == len(spec.nodes)
    PassManager(after, ctx=manager.ctx).run(module)
    return sum(1 for op in calls if not isinstance(op, graph.ConstantOp))


def random_inputs(spec: GraphSpec, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, shape).astype(np.float32) for shape in spec.args]


def assert_close(got: list[np.ndarray], want: list[np.ndarray], what: str) -> None:
    """Native kernels compute in float32 in loop order, the reference in float64 rounded once
    per op. Inputs and constants lie in [-1, 1], exp only sees values in [-6, 6], and no
    reduction, matmul or conv sums more than a few hundred terms, so the float32 round-off
    accumulated over a graph of at most 8 ops stays far below 1e-4 of each value (rtol),
    except where terms cancel: there the error is float32 epsilon (1.2e-7) times the size of
    the terms, which these graphs keep within a factor of ~10-100 of the largest output
    (atol 1e-5 times max |reference|)."""
    assert len(got) == len(want)
    for index, (g, w) in enumerate(zip(got, want, strict=True)):
        assert np.all(np.isfinite(w)), f"reference result #{index} is not finite"
        scale = float(np.max(np.abs(w), initial=0.0)) or 1.0
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5 * scale, err_msg=f"{what} #{index}")


def check_numerics(spec: GraphSpec, kernels: int) -> str:
    """Reference, unfused and fused native results agree; returns the fused LLVM IR."""
    module = build_module(spec)
    inputs = random_inputs(spec, seed=len(spec.nodes))
    reference = evaluate(module, "main", inputs)
    unfused = compile_module(module, UNFUSED_PIPELINE, cache=False)
    fused = compile_module(module, DEFAULT_PIPELINE, cache=False)
    assert_close(unfused.run("main", *inputs), reference, "unfused result")
    assert_close(fused.run("main", *inputs), reference, "fused result")
    assert len(unfused.kernels("main")) == sum(n.op != "constant" for n in spec.nodes)
    assert len(fused.kernels("main")) == kernels
    return fused.llvm_ir


def record_op_mix(spec: GraphSpec) -> None:
    for node in spec.nodes:
        event(f"op {node.op}")
    event(f"{len(spec.nodes)} nodes, {len(spec.outputs)} outputs")


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(graphs())
def test_random_graph_compiles_to_the_reference(spec: GraphSpec) -> None:
    record_op_mix(spec)
    note(str(build_module(spec)))
    staged = build_module(spec)
    kernels = run_pipeline_checking_partition(spec, staged)
    at_once = PassManager(DEFAULT_PIPELINE).run(build_module(spec))
    assert str(staged) == str(at_once), "the pipeline is not deterministic"
    llvm_ir = check_numerics(spec, kernels)
    # The second compile starts from the pipeline's output: only its lowering runs again.
    again = compile_module(at_once, pipeline="", cache=False)
    assert again.llvm_ir == llvm_ir, "compiling twice gave different LLVM IR"
