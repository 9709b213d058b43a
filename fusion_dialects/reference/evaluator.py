"""Evaluate a graph-level `func.func` on numpy arrays: the reference semantics of a module.

Every graph compute op runs through its `numpy_ops` function (DESIGN.md decision 8), found in
`OP_SEMANTICS`, a table keyed by op class whose small adapters read the op's properties through
its accessors. Besides them the evaluator knows

- `graph.constant`: the dense elements as a float32 array (splats included);
- `func.call`: evaluates the callee, a function of the same module (such as the
  `func.func private @fused_* attributes {graph.primitive}` functions of fuse-ops);
- `graph.call_loop @kernel(...)`: runs the `loop.func` kernel with the loop interpreter on copies
  of the operands and zero-initialised result buffers;
- `func.return`.

```python
outputs = evaluate(module, "main", [x, w, b])
```

Inputs are checked against the function's signature (count, shape, dtype) with a `ValueError`
naming the argument; an op without reference semantics raises `EvaluationError` naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import SymbolTable

from fusion_compiler.dialects import graph, shape_rules
from fusion_compiler.dialects.element_dtypes import numpy_dtype
from fusion_compiler.dialects.graph.base import element_type_of, int_of, ints_of, shape_of
from fusion_compiler.dialects.loop import FuncOp as KernelOp
from fusion_compiler.dialects.reference import numpy_ops as ref
from fusion_compiler.dialects.reference.loop_interpreter import run_kernel

__all__ = ["OP_SEMANTICS", "EvaluationError", "constant_array", "evaluate"]


class EvaluationError(ValueError):
    """The module cannot be evaluated (unknown op, missing symbol, wrong result shape)."""


Adapter = Callable[[Operation, list[np.ndarray]], np.ndarray | list[np.ndarray]]


# --- adapters: one per op family, reading properties through the op's accessors -----------------


def _unary(fn: Callable[[np.ndarray], np.ndarray]) -> Adapter:
    return lambda _, args: fn(args[0])


def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Adapter:
    return lambda _, args: fn(args[0], args[1])


def _reduction(fn: Callable[..., np.ndarray]) -> Adapter:
    def adapter(op: graph.ReductionOp, args: list[np.ndarray]) -> np.ndarray:
        return fn(args[0], op.axes_values, op.keepdims_value)

    return adapter


def _f32(attr) -> float:
    """The value of a `FloatAttr` property."""
    return attr.value.data


def _clip(op: graph.ClipOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.clip(args[0], *op.bounds)


def _conv2d(op: graph.Conv2DOp, args: list[np.ndarray]) -> np.ndarray:
    strides, padding, dilation, groups = op.params
    return ref.conv2d(args[0], args[1], strides, padding, dilation, groups)


def _max_pool2d(op: graph.MaxPool2DOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.max_pool2d(args[0], *op.window)


def _avg_pool2d(op: graph.AvgPool2DOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.avg_pool2d(args[0], *op.window, count_include_pad=op.count_include_pad_value)


def _batch_norm(op: graph.BatchNormOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.batch_norm(*args, epsilon=_f32(op.epsilon))


def _layer_norm(op: graph.LayerNormOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.layer_norm(*args, axis=op.axis_value, epsilon=_f32(op.epsilon))


def _lrn(op: graph.LrnOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.lrn(args[0], int_of(op.size), _f32(op.alpha), _f32(op.beta), _f32(op.bias))


def _softmax(op: graph.SoftmaxOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.softmax(args[0], op.axis_value)


def _reshape(op: graph.ReshapeOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.reshape(args[0], shape_of(op.result))


def _broadcast_to(op: graph.BroadcastToOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.broadcast_to(args[0], shape_of(op.result))


def _transpose(op: graph.TransposeOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.transpose(args[0], op.perm_values)


def _squeeze(op: graph.SqueezeOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.squeeze(args[0], ints_of(op.axes))


def _expand_dims(op: graph.ExpandDimsOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.expand_dims(args[0], ints_of(op.axes))


def _concat(op: graph.ConcatOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.concat(args, op.axis_value)


def _split(op: graph.SplitOp, args: list[np.ndarray]) -> list[np.ndarray]:
    return ref.split(args[0], op.axis_value, ints_of(op.sections))


def _slice(op: graph.SliceOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.slice(args[0], *op.bounds)


def _cast(op: graph.CastOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.cast(args[0], numpy_dtype(element_type_of(op.result)))


def _gather(op: graph.GatherOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.gather(args[0], args[1], op.axis_value)


def _gather_nd(op: graph.GatherNDOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.gather_nd(args[0], args[1], op.batch_dims_value)


def _trilu(op: graph.TriluOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.trilu(args[0], *op.params)


def _cumsum(op: graph.CumSumOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.cumsum(args[0], *op.params)


def _arg_max(op: graph.ArgMaxOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.arg_max(args[0], *op.params)


def _arg_min(op: graph.ArgMinOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.arg_min(args[0], *op.params)


def _where(_: graph.WhereOp, args: list[np.ndarray]) -> np.ndarray:
    return ref.where(*args)


def _shape_of(_: graph.ShapeOfOp, args: list[np.ndarray]) -> np.ndarray:
    return np.array(args[0].shape, np.int64)


def _dynamic_reshape(op: graph.DynamicReshapeOp, args: list[np.ndarray]) -> np.ndarray:
    x, shape = args
    target = shape_rules.onnx_reshape_target(x.shape, shape.tolist(), op.allowzero_value)
    return ref.reshape(x, target)


def _dynamic_broadcast_to(_: graph.DynamicBroadcastToOp, args: list[np.ndarray]) -> np.ndarray:
    x, shape = args
    return ref.broadcast_to(x, shape_rules.broadcast(x.shape, tuple(shape.tolist())))


def _dynamic_slice(op: graph.DynamicSliceOp, args: list[np.ndarray]) -> np.ndarray:
    x, starts, ends = args
    bounds = [slice(0, d, 1) for d in x.shape]
    axes = shape_rules.normalize_axes(ints_of(op.axes), x.ndim)
    for axis, start, end, step in zip(axes, starts, ends, ints_of(op.steps), strict=True):
        bounds[axis] = slice(*shape_rules.onnx_slice_bounds(x.shape[axis], start, end, step))
    return np.array(x[tuple(bounds)], copy=True)


def _dynamic_range(_: graph.DynamicRangeOp, args: list[np.ndarray]) -> np.ndarray:
    start, limit, delta = (a.item() for a in args)
    length = shape_rules.range_length(start, limit, delta)
    return (start + np.arange(length, dtype=args[0].dtype) * args[0].dtype.type(delta)).astype(
        args[0].dtype
    )


OP_SEMANTICS: dict[type[Operation], Adapter] = {
    graph.ReluOp: _unary(ref.relu),
    graph.ExpOp: _unary(ref.exp),
    graph.LogOp: _unary(ref.log),
    graph.SqrtOp: _unary(ref.sqrt),
    graph.RsqrtOp: _unary(ref.rsqrt),
    graph.TanhOp: _unary(ref.tanh),
    graph.SigmoidOp: _unary(ref.sigmoid),
    graph.NegOp: _unary(ref.neg),
    graph.AbsOp: _unary(ref.abs),
    graph.ErfOp: _unary(ref.erf),
    graph.GeluOp: _unary(ref.gelu),
    graph.GeluTanhOp: _unary(ref.gelu_tanh),
    graph.SiluOp: _unary(ref.silu),
    graph.ClipOp: _clip,
    graph.SinOp: _unary(ref.sin),
    graph.CosOp: _unary(ref.cos),
    graph.TanOp: _unary(ref.tan),
    graph.AsinOp: _unary(ref.asin),
    graph.AcosOp: _unary(ref.acos),
    graph.AtanOp: _unary(ref.atan),
    graph.SinhOp: _unary(ref.sinh),
    graph.CoshOp: _unary(ref.cosh),
    graph.AsinhOp: _unary(ref.asinh),
    graph.AcoshOp: _unary(ref.acosh),
    graph.AtanhOp: _unary(ref.atanh),
    graph.FloorOp: _unary(ref.floor),
    graph.CeilOp: _unary(ref.ceil),
    graph.RoundOp: _unary(ref.round_even),
    graph.SignOp: _unary(ref.sign),
    graph.AddOp: _binary(ref.add),
    graph.SubOp: _binary(ref.sub),
    graph.MulOp: _binary(ref.mul),
    graph.DivOp: _binary(ref.div),
    graph.MaxOp: _binary(ref.maximum),
    graph.MinOp: _binary(ref.minimum),
    graph.PowOp: _binary(ref.pow),
    graph.MatmulOp: _binary(ref.matmul),
    graph.Conv2DOp: _conv2d,
    graph.MaxPool2DOp: _max_pool2d,
    graph.AvgPool2DOp: _avg_pool2d,
    graph.GlobalAvgPool2DOp: _unary(ref.global_avg_pool2d),
    graph.BatchNormOp: _batch_norm,
    graph.LayerNormOp: _layer_norm,
    graph.LrnOp: _lrn,
    graph.SoftmaxOp: _softmax,
    graph.ReduceSumOp: _reduction(ref.reduce_sum),
    graph.ReduceMeanOp: _reduction(ref.reduce_mean),
    graph.ReduceMaxOp: _reduction(ref.reduce_max),
    graph.ReshapeOp: _reshape,
    graph.BroadcastToOp: _broadcast_to,
    graph.TransposeOp: _transpose,
    graph.SqueezeOp: _squeeze,
    graph.ExpandDimsOp: _expand_dims,
    graph.ConcatOp: _concat,
    graph.SplitOp: _split,
    graph.SliceOp: _slice,
    graph.GatherOp: _gather,
    graph.GatherNDOp: _gather_nd,
    graph.TriluOp: _trilu,
    graph.CumSumOp: _cumsum,
    graph.ArgMaxOp: _arg_max,
    graph.ArgMinOp: _arg_min,
    graph.IsNaNOp: _unary(ref.is_nan),
    graph.CastOp: _cast,
    graph.EqualOp: _binary(ref.equal),
    graph.LessOp: _binary(ref.less),
    graph.LessEqualOp: _binary(ref.less_equal),
    graph.GreaterOp: _binary(ref.greater),
    graph.GreaterEqualOp: _binary(ref.greater_equal),
    graph.LogicalAndOp: _binary(ref.logical_and),
    graph.LogicalOrOp: _binary(ref.logical_or),
    graph.LogicalNotOp: _unary(ref.logical_not),
    graph.WhereOp: _where,
    graph.ShapeOfOp: _shape_of,
    graph.DynamicReshapeOp: _dynamic_reshape,
    graph.DynamicBroadcastToOp: _dynamic_broadcast_to,
    graph.DynamicSliceOp: _dynamic_slice,
    graph.DynamicRangeOp: _dynamic_range,
}
"""The reference semantics of every graph compute op, keyed by op class."""


# --- constants and signatures --------------------------------------------------------------------


def constant_array(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The elements of a dense attribute as a fresh array of its shape (splats expanded)."""
    shape = tuple(attr.get_shape())
    element_type = attr.get_element_type()
    flat = np.frombuffer(attr.data.data, dtype=np.dtype(element_type.format))
    if flat.size == 1:
        flat = np.full(shape, flat[0])
    return ref.constant(flat.reshape(shape), numpy_dtype(element_type))


def _tensor_signature(typ: Attribute) -> tuple[tuple[int, ...], np.dtype]:
    assert isinstance(typ, TensorType)
    return tuple(typ.get_shape()), numpy_dtype(typ.element_type)


def _describe(index: int, arg: SSAValue) -> str:
    name = f" (%{arg.name_hint})" if arg.name_hint else ""
    return f"argument #{index}{name}"


def check_inputs(function: func.FuncOp, inputs: Sequence[np.ndarray]) -> None:
    """Fail fast with a `ValueError` naming the argument unless `inputs` match the signature."""
    name = function.sym_name.data
    args = function.body.block.args
    if len(inputs) != len(args):
        raise ValueError(f"@{name} takes {len(args)} arguments, got {len(inputs)}")
    for index, (arg, value) in enumerate(zip(args, inputs, strict=True)):
        shape, dtype = _tensor_signature(arg.type)
        what = f"@{name}: {_describe(index, arg)}"
        if not isinstance(value, np.ndarray):
            raise ValueError(f"{what} must be a numpy array, got {type(value).__name__}")
        if not shape_rules.compatible(value.shape, shape):
            wanted = shape if shape_rules.is_static(shape) else shape_rules.fmt(shape)
            raise ValueError(f"{what} has shape {value.shape}, expected {wanted}")
        if value.dtype != dtype:
            raise ValueError(f"{what} has dtype {value.dtype}, expected {dtype}")


def _lookup(anchor: Operation, symbol, kind: type[Operation]) -> Operation:
    target = SymbolTable.lookup_symbol(anchor, symbol)
    if not isinstance(target, kind):
        found = "nothing" if target is None else f"a '{target.name}'"
        raise EvaluationError(f"{symbol} is {found}, not a '{kind.name}'")
    return target


# --- the evaluator -------------------------------------------------------------------------------


def evaluate(
    module: ModuleOp,
    entry: str = "main",
    inputs: Sequence[np.ndarray] = (),
    *,
    perturb: Callable[[np.ndarray], np.ndarray] | None = None,
) -> list[np.ndarray]:
    """Run function `@entry` of `module` on `inputs`; return its results as numpy arrays.

    `perturb`, when given, replaces every result of every compute op (not constants, not
    arguments) before its users see it: the checkers pass a small random relative error to see
    how much the outputs depend on each op's rounding (`bench/graph_checks.py`)."""
    function = SymbolTable.lookup_symbol(module, entry)
    if not isinstance(function, func.FuncOp):
        raise ValueError(f"the module has no function @{entry}")
    results = _call_function(function, inputs, perturb)
    return [np.array(r, copy=True) if any(r is x for x in inputs) else r for r in results]


def _call_function(
    function: func.FuncOp,
    inputs: Sequence[np.ndarray],
    perturb: Callable[[np.ndarray], np.ndarray] | None = None,
) -> list[np.ndarray]:
    check_inputs(function, inputs)
    env: dict[SSAValue, np.ndarray] = dict(zip(function.body.block.args, inputs, strict=True))
    for op in function.body.block.ops:
        args = [env[v] for v in op.operands]
        if isinstance(op, func.ReturnOp):
            return args
        results = _run_op(op, args)
        _check_results(op, results)
        if perturb is not None and not isinstance(op, graph.ConstantOp):
            results = [perturb(r) for r in results]
        env.update(zip(op.results, results, strict=True))
    raise EvaluationError(f"@{function.sym_name.data} has no func.return")


def _run_op(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    adapter = OP_SEMANTICS.get(type(op))
    if adapter is not None:
        results = adapter(op, args)
        return results if isinstance(results, list) else [results]
    handler = _STRUCTURAL.get(type(op))
    if handler is None:
        raise EvaluationError(f"evaluate: no reference semantics for '{op.name}'")
    return handler(op, args)


def _constant(op: graph.ConstantOp, _: list[np.ndarray]) -> list[np.ndarray]:
    return [constant_array(op.value)]


def _call(op: func.CallOp, args: list[np.ndarray]) -> list[np.ndarray]:
    return _call_function(_lookup(op, op.callee, func.FuncOp), args)


def _call_loop(op: graph.CallLoopOp, args: list[np.ndarray]) -> list[np.ndarray]:
    kernel = _lookup(op, op.callee, KernelOp)
    outputs = [np.zeros(*_tensor_signature(r.type)) for r in op.results]
    run_kernel(kernel, [np.array(a, copy=True) for a in args] + outputs)
    return outputs


_STRUCTURAL: dict[type[Operation], Adapter] = {
    graph.ConstantOp: _constant,
    func.CallOp: _call,
    graph.CallLoopOp: _call_loop,
}


def _check_results(op: Operation, results: list[np.ndarray]) -> None:
    expected = [_tensor_signature(r.type)[0] for r in op.results]
    actual = [np.shape(r) for r in results]
    if len(actual) != len(expected) or not all(map(shape_rules.compatible, actual, expected)):
        raise EvaluationError(f"'{op.name}' produced shapes {actual}, its results are {expected}")
