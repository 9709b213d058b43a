"""Tensors of no elements are constants: folding the graph ops that make or read them.

A tensor with a dimension of 0 has a value known at compile time whatever computes it (it
holds nothing), so fold-constants treats it as it treats a `graph.constant`: an op whose
results are all empty becomes empty constants; an op that reads an empty tensor and
otherwise only constants is evaluated (a matmul over an empty reduction is zeros, a sum over
an empty axis 0, a max -inf, a mean 0: the reference semantics); a concat drops its empty
operands (a decoder's key/value cache at the first step, `concat(past[.., 0, ..], new)`) and
a split its empty pieces (a rotary embedding over the whole head: nothing passes through).
No kernel ever sees an empty tensor: an empty function argument is simply not read, an
empty result is returned as the empty constant. The graph's verifiers leave little else (a
broadcast with an empty operand is empty; a gather from an empty axis does not verify); an
evaluation the reference semantics refuse, or a result beyond the growth limit that is not
uniform, stays, and legalize-ops refuses it by name.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.element_dtypes import numpy_dtype
from fusion_compiler.dialects.graph.base import ints_of
from fusion_compiler.dialects.reference.evaluator import OP_SEMANTICS
from fusion_compiler.dialects.shape_rules import is_static
from fusion_compiler.passes.fold_constants.elements import (
    constant_of,
    element_count,
    new_constant,
)
from fusion_compiler.passes.fold_constants.evaluate import (
    erase_dead_constants,
    evaluate_op,
    replace_by_constants,
)

__all__ = ["FoldEmptyTensorsPattern", "is_empty"]


def is_empty(value: SSAValue) -> bool:
    """Whether `value` is a tensor of static shape with no elements."""
    typ = value.type
    if not isinstance(typ, TensorType):
        return False
    shape = typ.get_shape()
    return 0 in shape and is_static(shape)


def empty_array(value: SSAValue) -> np.ndarray:
    """The value of an empty tensor (`is_empty`): an array of its shape and element dtype."""
    assert isinstance(value.type, TensorType)
    return np.empty(tuple(value.type.get_shape()), numpy_dtype(value.type.element_type))


class FoldEmptyTensorsPattern(RewritePattern):
    """`op` with empty results → empty constants; `op(empty, constants...)` → its value;
    `concat(..., empty, ...)` → the concat of the others; a split's empty pieces → empty
    constants, the split of the rest (see the module's docstring).
    A fold that reads an empty tensor keeps to `growth_limit` as other folds do, unless its
    results are uniform (zeros, -inf: one element stored)."""

    def __init__(self, growth_limit: int):
        self.growth_limit = growth_limit

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if type(op) not in OP_SEMANTICS or isinstance(op, graph.ConstantOp) or not op.results:
            return
        if not all(_static(result) for result in op.results):
            return
        if isinstance(op, graph.ConcatOp) and not is_empty(op.results[0]):
            _drop_empty_operands(op, rewriter)
            return
        if isinstance(op, graph.SplitOp) and not is_empty(op.input):
            _drop_empty_pieces(op, rewriter)
            return
        arrays = self._values(op)
        if arrays is not None:
            replace_by_constants(op, arrays, rewriter)

    def _values(self, op: Operation) -> list[np.ndarray] | None:
        """The values of `op`'s results when they are known: all empty, or computed from
        empty tensors and constants within the growth limit."""
        if all(is_empty(result) for result in op.results):
            return [empty_array(result) for result in op.results]
        if not any(map(is_empty, op.operands)) or not all(map(_known, op.operands)):
            return None
        arrays = evaluate_op(op, empty_array)
        return arrays if arrays is not None and self._fits(op, arrays) else None

    def _fits(self, op: Operation, arrays: list[np.ndarray]) -> bool:
        """Whether the results of a fold stay within `growth_limit` new elements, counting
        a uniform result as one."""
        created = sum(1 if _uniform(array) else array.size for array in arrays)
        return created <= sum(element_count(v) for v in op.operands) + self.growth_limit


def _drop_empty_operands(op: graph.ConcatOp, rewriter: PatternRewriter) -> None:
    """A concat with a non-empty result, without its empty operands (the one left, if one
    is)."""
    kept = [operand for operand in op.operands if not is_empty(operand)]
    if len(kept) == len(op.operands):
        return
    owners = [operand.owner for operand in op.operands if is_empty(operand)]
    if len(kept) == 1:
        rewriter.replace(op, [], [kept[0]])
    else:
        joined = graph.ConcatOp(kept, op.axis_value)
        joined.location = op.location
        joined.results[0].name_hint = op.results[0].name_hint
        rewriter.replace(op, joined)
    erase_dead_constants(owners, rewriter)


def _drop_empty_pieces(op: graph.SplitOp, rewriter: PatternRewriter) -> None:
    """A split of a non-empty tensor without its empty pieces (each an empty constant now;
    the input itself when one piece is left)."""
    pieces = [result for result in op.results if not is_empty(result)]
    if len(pieces) == len(op.results):
        return
    if len(pieces) == 1:
        cut: list[SSAValue] = [op.input]
        new_ops: list[Operation] = []
    else:
        sections = [size for size in ints_of(op.sections) if size != 0]
        split = graph.SplitOp(op.input, op.axis_value, sections)
        split.location = op.location
        cut, new_ops = list(split.results), [split]
    values = iter(cut)
    results: list[SSAValue] = []
    for result in op.results:
        if is_empty(result):
            constant = new_constant(empty_array(result), result.type, op, result.name_hint)
            new_ops.append(constant)
            results.append(constant.results[0])
        else:
            value = next(values)
            if value is not op.input:
                value.name_hint = result.name_hint
            results.append(value)
    rewriter.replace(op, new_ops, results)


def _known(value: SSAValue) -> bool:
    return constant_of(value) is not None or is_empty(value)


def _static(value: SSAValue) -> bool:
    typ = value.type
    return isinstance(typ, TensorType) and is_static(typ.get_shape())


def _uniform(array: np.ndarray) -> bool:
    bits = np.ascontiguousarray(array).reshape(-1)
    bits = bits.view(f"u{bits.itemsize}")
    return bits.size <= 1 or bool(np.all(bits == bits[0]))
