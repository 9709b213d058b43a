"""Legalization of the ops that compute on element positions: `trilu`, `cumsum`, `arg_max` and
`arg_min`.

**trilu** is one spatial block over the result: `out[.., i, j] = keep ? x[.., i, j] : 0` with
`keep` an index comparison, `j >= i + k` (upper) or `j <= i + k` (lower; written `j - k` on
the other side when `k < 0`, so that no index is negative).

**cumsum** along an axis of `n` elements is a reduction of `n` steps for every element: the
accumulator starts at zero (+0.0) and step `t` adds the term `x[.., t', ..]` when it belongs to
the element's sum (`t' <= j`, `t' < j` when exclusive), else keeps the accumulator (a select,
not an addition of zero, which would differ on a NaN's payload or an infinity's sum).
`t'` is `t`, or `n - 1 - t` with `reverse`, so the terms are added in the op's order:

```mlir
memref.store %zero, %out[%i, %j]
loop.for %t = %c0 to %cN step %c1 {
  %acc = memref.load %out[%i, %j]
  %x = memref.load %in0[%i, %t]
  %in = arith.cmpi sle, %t, %j : index
  %sum = arith.addf %acc, %x : f32
  memref.store (arith.select %in, %sum, %acc), %out[%i, %j]
}
```

`O(n^2)` work for `n` terms; `n` is a sequence length here, tens to hundreds.

**arg_max / arg_min**: for each kept element, the best value so far in a local buffer and its
index in the output, both started at term 0; step `t` (1 to n-1) replaces them when the term
*beats* the best: `x > best` (`>=` with `select_last_index`) or, on floats, the term is a NaN
and the best is not (any NaN with `select_last_index`), so a NaN wins as in numpy.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, MemRefType, i64
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects.graph import ArgMaxOp, ArgMinOp, ArgReduceOp, CumSumOp, TriluOp
from fusion_compiler.passes.legalize_ops.logic import element_type
from fusion_compiler.passes.legalize_ops.loop_builder import KernelBuilder, buffer_shape


def _at(ivs: list[SSAValue], axis: int, value: SSAValue) -> list[SSAValue]:
    return [*ivs[:axis], value, *ivs[axis + 1 :]]


def legalize_trilu(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, TriluOp)
    upper, k = op.params
    x, out = kb.inputs[0], kb.outputs[0]
    zero = kb.zero(element_type(x))
    with kb.nest(buffer_shape(out)) as ivs:
        row, column = ivs[-2], ivs[-1]
        if k >= 0:
            lhs, rhs = column, kb.affine([(row, 1)], k)
        else:
            lhs, rhs = kb.affine([(column, 1)], -k), row
        keep = kb.arith(arith.CmpiOp, lhs, rhs, "sge" if upper else "sle")
        kb.store(kb.arith(arith.SelectOp, keep, kb.load(x, ivs), zero), out, ivs)


def legalize_cumsum(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, CumSumOp)
    axis, exclusive, reverse = op.params
    x, out = kb.inputs[0], kb.outputs[0]
    shape = buffer_shape(out)
    size = shape[axis]
    kind = element_type(x)
    add = arith.AddiOp if isinstance(kind, IntegerType) else arith.AddfOp
    predicate = ("sg" if reverse else "sl") + ("t" if exclusive else "e")
    with kb.nest(shape) as ivs:
        kb.store(kb.zero(kind), out, ivs)
        with kb.nest([size], hint="k") as (step,):
            term_index = kb.affine([(step, -1)], size - 1) if reverse else step
            accumulator = kb.load(out, ivs)
            term = kb.load(x, _at(ivs, axis, term_index))
            included = kb.arith(arith.CmpiOp, term_index, ivs[axis], predicate)
            total = kb.arith(add, accumulator, term)
            kb.store(kb.arith(arith.SelectOp, included, total, accumulator), out, ivs)


def _beats(kb: KernelBuilder, op: ArgReduceOp) -> Callable[[SSAValue, SSAValue], SSAValue]:
    """`beats(term, best)`: whether the term replaces the best so far."""
    _, _, last = op.params
    largest = isinstance(op, ArgMaxOp)
    if isinstance(element_type(kb.inputs[0]), IntegerType):
        predicate = ("sg" if largest else "sl") + ("e" if last else "t")
        return lambda term, best: kb.arith(arith.CmpiOp, term, best, predicate)
    predicate = ("og" if largest else "ol") + ("e" if last else "t")

    def beats(term: SSAValue, best: SSAValue) -> SSAValue:
        better = kb.arith(arith.CmpfOp, term, best, predicate)
        nan = kb.arith(arith.CmpfOp, term, term, "uno")
        if not last:
            nan = kb.arith(arith.AndIOp, nan, kb.arith(arith.CmpfOp, best, best, "ord"))
        return kb.arith(arith.OrIOp, better, nan)

    return beats


def legalize_arg_reduce(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, ArgReduceOp)
    axis, keepdims, _ = op.params
    x, out = kb.inputs[0], kb.outputs[0]
    shape = buffer_shape(x)
    kept = [d for d in range(len(shape)) if d != axis]
    kept_shape = [shape[d] for d in kept]
    best = kb.alloc(MemRefType(element_type(x), kept_shape), "best")
    beats = _beats(kb, op)
    with kb.nest(kept_shape) as ivs:
        full = [*ivs[:axis], kb.index(0), *ivs[axis:]]
        position = full if keepdims else ivs
        kb.store(kb.load(x, full), best, ivs)
        kb.store(kb.integer(0, i64), out, position)
        if shape[axis] == 1:
            return
        with kb.nest([shape[axis] - 1], hint="k") as (step,):
            index = kb.affine([(step, 1)], 1)
            term, so_far = kb.load(x, _at(full, axis, index)), kb.load(best, ivs)
            replace = beats(term, so_far)
            kb.store(kb.arith(arith.SelectOp, replace, term, so_far), best, ivs)
            as_i64 = kb.emit(arith.IndexCastOp(index, i64)).results[0]
            previous = kb.load(out, position)
            kb.store(kb.arith(arith.SelectOp, replace, as_i64, previous), out, position)


LEGALIZATIONS = {
    TriluOp: legalize_trilu,
    CumSumOp: legalize_cumsum,
    ArgMaxOp: legalize_arg_reduce,
    ArgMinOp: legalize_arg_reduce,
}
"""The legalizations of `trilu`, `cumsum`, `arg_max` and `arg_min`."""
