"""Specialising one graph-level function on concrete argument shapes.

One forward walk over the function's ops, in order (each op's operands are final when it is
reached):

1. `graph.shape_of` of a static tensor becomes the `i64` constant of its dimensions;
2. every other op gets its result types again from the shape rules (`expected_result_shapes`,
   or what a shape computation infers from its now constant shape operands);
3. an op of constants with integer or boolean results (shape arithmetic: gather, concat, add,
   ... of shapes) is folded by the reference semantics, as fold-constants would (integer
   arithmetic is exact, so folding it early changes no result); a `graph.dynamic_range` of
   constants is folded whatever its size;
4. a `graph.dynamic_reshape` / `dynamic_broadcast_to` / `dynamic_slice` whose shape operands
   are constants becomes `graph.reshape` / `broadcast_to` / `slice` (or its input, when the
   shapes are equal).

Constants left without a user are erased. A shape that breaks an op's rules (a reshape of the
wrong element count, a broadcast of 3 against 4) is an error at that op.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, IntegerType, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.dialects.graph.base import GraphOp, ints_of, shape_of
from fusion_compiler.dialects.graph.dynamic import ShapeComputationOp
from fusion_compiler.dialects.graph.shape_values import fully_known
from fusion_compiler.dialects.shape_rules import DYN, Shape, compatible, fmt, is_static
from fusion_compiler.dialects.shape_rules import onnx_slice_bounds as slice_bounds
from fusion_compiler.passes.fold_constants import DEFAULT_GROWTH_LIMIT
from fusion_compiler.passes.fold_constants.elements import new_constant
from fusion_compiler.passes.fold_constants.evaluate import evaluate_op, is_foldable
from fusion_compiler.passes.specialize_shapes.static_check import argument_name


def specialize_function(function: func.FuncOp, shapes: Mapping[str, Shape]) -> None:
    """Give the arguments of `function` named in `shapes` those shapes and re-infer, fold and
    make static everything after them (see the module docstring)."""
    _set_argument_shapes(function, shapes)
    block = function.body.block
    dead: list[Operation] = []
    for op in list(block.ops):
        if isinstance(op, func.ReturnOp):
            break
        _specialize_op(op, dead)
    _erase_dead(dead)
    outputs = [operand.type for operand in block.last_op.operands] if block.last_op else []
    function.function_type = FunctionType.from_lists([a.type for a in block.args], outputs)


def _set_argument_shapes(function: func.FuncOp, shapes: Mapping[str, Shape]) -> None:
    args = list(function.body.block.args)
    names = [argument_name(arg, index) for index, arg in enumerate(args)]
    unknown = [name for name in shapes if name not in names]
    if unknown:
        raise CompileError(
            f"@{function.sym_name.data} has no argument '{unknown[0]}' (arguments: "
            f"{', '.join(names)})",
            function,
        )
    for arg, name in zip(args, names, strict=True):
        if name not in shapes:
            continue
        typ = arg.type
        assert isinstance(typ, TensorType)
        shape = tuple(shapes[name])
        if not compatible(shape, typ.get_shape()) or not is_static(shape):
            raise CompileError(
                f"@{function.sym_name.data}: argument %{name} of type {typ} cannot have the "
                f"shape {fmt(shape)}",
                function,
            )
        Rewriter.replace_value_with_new_type(arg, TensorType(typ.element_type, shape))


def _specialize_op(op: Operation, dead: list[Operation]) -> None:
    if isinstance(op, graph.ShapeOfOp) and is_static(shape_of(op.input)):
        _replace_by_constants(op, [np.array(shape_of(op.input), np.int64)], dead)
        return
    if not isinstance(op, GraphOp) or isinstance(op, graph.ConstantOp | graph.CallLoopOp):
        return  # constants and kernel calls have the types they have
    _retype(op)
    if _is_shape_arithmetic(op):
        values = evaluate_op(op)
        if values is not None:
            _replace_by_constants(op, values, dead)
            return
    static = _static_form(op)
    if static is not None:
        _replace(op, static, dead)


def _retype(op: GraphOp) -> None:
    """Give `op` the result types its (new) operand types imply."""
    try:
        if isinstance(op, ShapeComputationOp):
            shapes = op.inferred_shapes()
        else:
            shapes = op.expected_result_shapes([shape_of(v) for v in op.operands])
    except VerifyException as err:
        raise CompileError(f"specialised shapes do not fit: {err}", op) from None
    for result, shape in zip(list(op.results), shapes, strict=True):
        typ = result.type
        assert isinstance(typ, TensorType)
        refined = _meet(shape, typ.get_shape())
        if refined != tuple(typ.get_shape()):
            Rewriter.replace_value_with_new_type(result, TensorType(typ.element_type, refined))


def _meet(inferred: Shape, declared: Shape) -> Shape:
    """The more precise of two compatible shapes, dimension by dimension."""
    if not compatible(inferred, declared):
        return inferred  # the op's verifier names the mismatch
    return tuple(d if d != DYN else e for d, e in zip(inferred, declared, strict=True))


def _is_shape_arithmetic(op: GraphOp) -> bool:
    """Whether `op` computes on constants only and is folded here: a range (whatever its
    size), or an op with integer or boolean results within fold-constants' growth limit."""
    if isinstance(op, graph.DynamicRangeOp):
        return all(_is_constant(v) for v in op.operands)
    integer = all(
        isinstance(r.type, TensorType) and isinstance(r.type.element_type, IntegerType)
        for r in op.results
    )
    static = all(isinstance(r.type, TensorType) and r.type.has_static_shape() for r in op.results)
    return integer and static and is_foldable(op, DEFAULT_GROWTH_LIMIT)


def _is_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, graph.ConstantOp)


def _static_form(op: GraphOp) -> Operation | SSAValue | None:
    """The static op (or the value) a shape computation with known shape operands becomes."""
    if any(not r.type.has_static_shape() for r in op.results):  # type: ignore[attr-defined]
        return None
    match op:
        case graph.DynamicReshapeOp(input=x) | graph.DynamicBroadcastToOp(input=x) if shape_of(
            x
        ) == shape_of(op.results[0]):
            return x
        case graph.DynamicReshapeOp(input=x):
            return graph.ReshapeOp(x, shape_of(op.results[0]))
        case graph.DynamicBroadcastToOp(input=x):
            return graph.BroadcastToOp(x, shape_of(op.results[0]))
        case graph.DynamicSliceOp():
            return _static_slice(op)
    return None


def _static_slice(op: graph.DynamicSliceOp) -> Operation | None:
    starts, ends = fully_known(op.starts), fully_known(op.ends)
    if starts is None or ends is None:
        return None
    shape = shape_of(op.input)
    lows, highs, steps = [0] * len(shape), list(shape), [1] * len(shape)
    axes = [a % len(shape) for a in ints_of(op.axes)]
    for axis, start, end, step in zip(axes, starts, ends, ints_of(op.steps), strict=True):
        lows[axis], highs[axis], steps[axis] = slice_bounds(shape[axis], start, end, step)
    return graph.SliceOp(op.input, lows, highs, steps)


def _replace_by_constants(op: Operation, values: list[np.ndarray], dead: list[Operation]) -> None:
    constants = [
        new_constant(value, result.type, op, result.name_hint)
        for value, result in zip(values, op.results, strict=True)
    ]
    dead.extend(operand.owner for operand in op.operands if isinstance(operand.owner, Operation))
    Rewriter.replace_op(op, constants, [c.results[0] for c in constants])


def _replace(op: Operation, new: Operation | SSAValue, dead: list[Operation]) -> None:
    dead.extend(operand.owner for operand in op.operands if isinstance(operand.owner, Operation))
    if isinstance(new, SSAValue):
        op.results[0].replace_all_uses_with(new)
        Rewriter.erase_op(op)
        return
    new.location = op.location
    new.results[0].name_hint = op.results[0].name_hint
    Rewriter.replace_op(op, new)


def _erase_dead(candidates: list[Operation]) -> None:
    """Erase the constants (and folded shape values) that lost their last user, in reverse
    order of the walk so that chains go too."""
    for op in reversed(candidates):
        if op.parent is None or not isinstance(op, graph.ConstantOp):
            continue
        if all(r.uses.get_length() == 0 for r in op.results):
            Rewriter.erase_op(op)
