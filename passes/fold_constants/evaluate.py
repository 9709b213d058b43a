"""Folding a graph op whose operands are all constants: predicate, evaluation, rewrite.

The op is evaluated by its reference semantics (`OP_SEMANTICS`, the evaluator's table keyed
by op class: DESIGN.md decision 8), so a folded constant holds exactly the bits the reference
evaluator computes for the unfolded op.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.reference.evaluator import OP_SEMANTICS
from fusion_compiler.passes.fold_constants.elements import (
    array_of,
    constant_of,
    element_count,
    holds,
    new_constant,
)

__all__ = [
    "FoldConstantOpPattern",
    "erase_dead_constants",
    "evaluate_op",
    "is_foldable",
    "replace_by_constants",
]


# --- predicates (never mutate IR) -----------------------------------------------------------------


def is_foldable(op: Operation, growth_limit: int) -> bool:
    """Whether `op` has reference semantics, only constant operands, static tensor results,
    and results of at most `growth_limit` elements more than its operands hold together (so
    that a broadcast does not turn a small constant into a large one)."""
    if type(op) not in OP_SEMANTICS or not op.operands:
        return False
    if any(constant_of(operand) is None for operand in op.operands):
        return False
    if not all(isinstance(r.type, TensorType) for r in op.results):
        return False
    created = sum(element_count(r) for r in op.results)
    return created <= sum(element_count(v) for v in op.operands) + growth_limit


# --- evaluation ------------------------------------------------------------------------------------


def evaluate_op(
    op: Operation, other: Callable[[SSAValue], np.ndarray] | None = None
) -> list[np.ndarray] | None:
    """The values of the results of a foldable `op` (its operands constants, or values
    `other` gives: the empty tensors of `empty.py`), or None when the reference semantics
    refuse its operands or give results that do not fit its result types."""
    arrays = [
        array_of(operand) if other is None or constant_of(operand) is not None else other(operand)
        for operand in op.operands
    ]
    try:
        with np.errstate(all="ignore"):  # inf and nan are values, as in the kernels
            results = OP_SEMANTICS[type(op)](op, arrays)
    except (ValueError, IndexError, ArithmeticError):
        return None
    results = results if isinstance(results, list) else [results]
    types = [r.type for r in op.results]
    if len(results) != len(types) or not all(map(holds, results, types)):
        return None
    return results


# --- rewriting -------------------------------------------------------------------------------------


def erase_dead_constants(owners: list[Operation | Block], rewriter: PatternRewriter) -> None:
    """Erase each op of `owners` (former producers of rewritten operands) that is a constant
    no longer used, so that a chain of folds keeps one copy of a weight alive, not each."""
    seen: list[Operation] = []
    for owner in owners:
        if owner in seen or not isinstance(owner, graph.ConstantOp):
            continue
        seen.append(owner)
        if owner.result.uses.get_length() == 0 and owner.parent is not None:
            rewriter.erase(owner)


class FoldConstantOpPattern(RewritePattern):
    """`op(constants...)` → `graph.constant` holding its value (one per result)."""

    def __init__(self, growth_limit: int):
        self.growth_limit = growth_limit

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not is_foldable(op, self.growth_limit):
            return
        values = evaluate_op(op)
        if values is not None:
            replace_by_constants(op, values, rewriter)


def replace_by_constants(
    op: Operation, values: list[np.ndarray], rewriter: PatternRewriter
) -> None:
    """`op` replaced by one `graph.constant` per result, holding `values`; the constants it
    read that nothing else reads are erased."""
    constants = [
        new_constant(value, result.type, op, result.name_hint)
        for value, result in zip(values, op.results, strict=True)
    ]
    owners = [operand.owner for operand in op.operands]
    rewriter.replace(op, constants, [c.results[0] for c in constants])
    erase_dead_constants(owners, rewriter)
