"""Run a `loop.func` kernel on numpy buffers: the numeric oracle of the loop level.

`run_kernel(kernel, buffers)` executes the kernel in place on its buffers (inputs, then outputs),
with the sequential semantics of its loop nests, but vectorised:

- A loop that `_loop_plan` proves vectorisable runs all its iterations at once. Its induction
  variable becomes `lb + step * np.arange(n)` on an axis of its own, and every SSA value inside
  is a numpy array broadcast over the axes of the loops it depends on. Index arithmetic becomes
  numpy integer arithmetic, `memref.load` fancy indexing, `memref.store` an assignment, and a
  reduction update `acc[s] = acc[s] OP term` a numpy reduction of `term` over the loop axes that
  do not index `acc` (a `sum(a * b)` is contracted with `np.einsum`, so a 1x64x56x56 conv with a
  64x64x3x3 weight or a 128x768 @ 768x3072 matmul runs as one BLAS call).
- Nests whose arrays would exceed `_loop_plan.MAX_ELEMENTS` elements are strip-mined along their
  outermost loops, so temporaries stay in the tens of megabytes.
- Any other loop (non-constant bounds, stores that are neither sliced by the loop nor a reduction
  over it, local buffers allocated inside it) runs in Python, one iteration at a time; its body's
  ops then see Python ints as induction variables and numpy scalars as values. This is slow but
  exact, and fine for small kernels.

Every executed access is bounds-checked: an out-of-range subscript raises `KernelError` instead
of wrapping around as numpy's negative indices would.

Precision. Scalar float ops run in the kernel's float type (float32) with numpy's ufuncs, like the
native code; `math.erf` is evaluated in float64 (error < 1e-15) and rounded. Sum reductions are
more accurate than a native sequential float32 loop: the terms (and `a * b` products, which are
exact in float64) are summed in float64 and rounded once into the float32 accumulator per chunk.
So against the float64 numpy reference a reduction differs by a few float32 ulps of the result
(rtol 1e-5 holds unless the sum cancels, where an absolute tolerance scaled by the sum of the
magnitudes of the terms is needed), and native kernels may differ from the interpreter by their
own accumulation error, about sqrt(K) * 6e-8 relative for K terms. Max/min reductions are exact.
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, Operation, SSAValue

from fusion_compiler.dialects.element_dtypes import numpy_dtype as buffer_dtype
from fusion_compiler.dialects.loop import AllocOp, ForOp, FuncOp, PrefetchOp, ReturnOp, YieldOp
from fusion_compiler.dialects.loop.queries import loop_range
from fusion_compiler.dialects.reference._loop_ops import (
    KernelError,
    Value,
    evaluate_scalar_op,
    numpy_dtype,
    to_result_type,
)
from fusion_compiler.dialects.reference._loop_plan import (
    KernelPlan,
    LoopPlan,
    Reduction,
    ReductionKind,
    plan_kernel,
)

__all__ = ["KernelError", "run_kernel"]

_SMALL_PRODUCT = 1 << 16
"""Below this many elements a `sum(a * b)` multiplies directly instead of calling einsum."""

_AXIS_LABELS = string.ascii_letters


def run_kernel(kernel: FuncOp, buffers: Sequence[np.ndarray]) -> None:
    """Execute `kernel` in place on `buffers` (its inputs, then its outputs)."""
    check_buffers(kernel, buffers)
    plan = plan_kernel(kernel)
    with np.errstate(all="ignore"):
        _Interpreter(plan).run(kernel, buffers)


def check_buffers(kernel: FuncOp, buffers: Sequence[np.ndarray]) -> None:
    """Fail fast unless `buffers` match the kernel's arguments in number, shape and dtype."""
    name = kernel.sym_name.data
    args = kernel.body.block.args
    if len(buffers) != len(args):
        raise KernelError(
            f"@{name} takes {kernel.num_inputs} input and {kernel.num_outputs} output buffers, "
            f"got {len(buffers)} buffers"
        )
    for index, (arg, buffer) in enumerate(zip(args, buffers, strict=True)):
        typ = arg.type
        assert isinstance(typ, MemRefType)
        role = "input" if index < kernel.num_inputs else "output"
        expected = (tuple(typ.get_shape()), buffer_dtype(typ.element_type))
        actual = (getattr(buffer, "shape", None), getattr(buffer, "dtype", None))
        if not isinstance(buffer, np.ndarray) or actual != expected:
            raise KernelError(
                f"@{name}: buffer #{index} ({role}) must be an array of shape {expected[0]} "
                f"and dtype {expected[1]}, got {actual[0]} {actual[1]}"
            )


# --- reductions over numpy arrays ----------------------------------------------------------------


def _with_rank(value: Value, rank: int, dtype=None) -> np.ndarray:
    array = np.asarray(value, dtype=dtype)
    return array.reshape((1,) * rank) if array.ndim == 0 else array


def _split_axes(term: np.ndarray, reduced: list[tuple[int, int]]) -> tuple[tuple[int, ...], int]:
    """The reduced axes `term` varies along, and how many times it repeats along the others."""
    varying = tuple(axis for axis, _ in reduced if term.shape[axis] != 1)
    repeat = math.prod(extent for axis, extent in reduced if term.shape[axis] == 1)
    return varying, repeat


def _sum(term: np.ndarray, reduced: list[tuple[int, int]]) -> np.ndarray:
    varying, repeat = _split_axes(term, reduced)
    return np.sum(term, axis=varying, dtype=np.float64, keepdims=True) * repeat


def _reducer(ufunc: np.ufunc) -> Callable[[np.ndarray, list[tuple[int, int]]], np.ndarray]:
    def reduce(term: np.ndarray, reduced: list[tuple[int, int]]) -> np.ndarray:
        varying, _ = _split_axes(term, reduced)
        return ufunc.reduce(term, axis=varying, keepdims=True) if varying else term

    return reduce


_REDUCERS = {
    ReductionKind.SUM: _sum,
    ReductionKind.MAX: _reducer(np.maximum),
    ReductionKind.MIN: _reducer(np.minimum),
    ReductionKind.MAXNUM: _reducer(np.fmax),
    ReductionKind.MINNUM: _reducer(np.fmin),
}

_COMBINERS: dict[ReductionKind, Callable[[Value, np.ndarray], np.ndarray]] = {
    ReductionKind.SUM: lambda old, total: np.asarray(old, dtype=np.float64) + total,
    ReductionKind.MAX: np.maximum,
    ReductionKind.MIN: np.minimum,
    ReductionKind.MAXNUM: np.fmax,
    ReductionKind.MINNUM: np.fmin,
}


def _contract(lhs: np.ndarray, rhs: np.ndarray, reduced: list[tuple[int, int]]) -> np.ndarray:
    """sum(lhs * rhs) over the `reduced` axes in float64, without materialising the product."""
    rank = lhs.ndim
    shape = np.broadcast_shapes(lhs.shape, rhs.shape)
    if math.prod(shape) <= _SMALL_PRODUCT:
        return _sum(lhs * rhs, reduced)
    reduced_axes = {axis for axis, _ in reduced}
    lhs_axes = [a for a in range(rank) if lhs.shape[a] != 1]
    rhs_axes = [a for a in range(rank) if rhs.shape[a] != 1]
    out_axes = [a for a in range(rank) if a not in reduced_axes and shape[a] != 1]
    spec = "{},{}->{}".format(
        *("".join(_AXIS_LABELS[a] for a in axes) for axes in (lhs_axes, rhs_axes, out_axes))
    )
    total = np.einsum(spec, lhs.squeeze(), rhs.squeeze(), optimize=True)
    keep_shape = [shape[a] if a in out_axes else 1 for a in range(rank)]
    repeat = math.prod(n for a, n in reduced if shape[a] == 1)
    return total.reshape(keep_shape) * repeat


# --- the interpreter -----------------------------------------------------------------------------


def _ignore(_: Operation) -> None:
    pass


def _index_range(subscript: Value) -> tuple[int, int]:
    if isinstance(subscript, int):
        return subscript, subscript
    return int(np.min(subscript)), int(np.max(subscript))


class _Interpreter:
    """Executes one kernel: SSA values live in `env`; `active` lists the vectorised loops being
    run as (induction variable, axis, extent); `rank` is the axis count of the current nest."""

    def __init__(self, plan: KernelPlan):
        self.plan = plan
        self.env: dict[SSAValue, Value] = {}
        self.active: list[tuple[SSAValue, int, int]] = []
        self.rank = 0
        self.handlers: dict[type[Operation], Callable[[Any], None]] = {
            ForOp: self._run_loop,
            memref.LoadOp: self._load,
            memref.StoreOp: self._store,
            AllocOp: self._alloc,
            PrefetchOp: _ignore,  # (a hint: no value changes)
            YieldOp: _ignore,
            ReturnOp: _ignore,
        }

    def run(self, kernel: FuncOp, buffers: Sequence[np.ndarray]) -> None:
        self.env.update(zip(kernel.body.block.args, buffers, strict=True))
        self._run_block(kernel.body.block)

    def _run_block(self, block: Block) -> None:
        for op in block.ops:
            handler = self.handlers.get(type(op))
            if handler is not None:
                handler(op)
            elif op not in self.plan.deferred:
                self.env[op.results[0]] = evaluate_scalar_op(op, [self.env[v] for v in op.operands])

    def _value(self, value: SSAValue) -> Value:
        """A value from the environment, or computed now if its op was deferred to its store."""
        if value in self.env:
            return self.env[value]
        op = value.owner
        assert isinstance(op, Operation) and op in self.plan.deferred
        return evaluate_scalar_op(op, [self._value(v) for v in op.operands])

    # --- loops ---

    def _run_loop(self, loop: ForOp) -> None:
        plan = self.plan.loops[loop]
        if plan.vectorized:
            self._run_vectorized(loop, plan)
        else:
            self._run_scalar(loop)

    def _scalar(self, value: SSAValue) -> int:
        runtime = self.env[value]
        if np.ndim(runtime) != 0:
            raise KernelError("a loop bound varies across the iterations of a vectorised loop")
        return int(runtime)

    def _run_scalar(self, loop: ForOp) -> None:
        lb, ub, step = (self._scalar(v) for v in (loop.lb, loop.ub, loop.step))
        if step <= 0:
            raise KernelError(f"loop.for step must be positive, got {step}")
        for i in range(lb, ub, step):
            self.env[loop.induction_var] = i
            self._run_block(loop.body.block)

    def _run_vectorized(self, loop: ForOp, plan: LoopPlan) -> None:
        bounds = loop_range(loop)
        assert bounds is not None  # planned as vectorized: constant bounds
        lb, _, step = bounds
        if plan.nest_rank:
            self.rank = plan.nest_rank
        shape = [1] * self.rank
        iv = loop.induction_var
        for start in range(0, plan.extent, plan.chunk):
            count = min(plan.chunk, plan.extent - start)
            shape[plan.axis] = count
            self.env[iv] = (lb + step * np.arange(start, start + count)).reshape(shape)
            self.active.append((iv, plan.axis, count))
            self._run_block(loop.body.block)
            self.active.pop()
            self._forget(loop.body.block)
        self.env.pop(iv, None)

    def _forget(self, block: Block) -> None:
        """Drop the values of a finished chunk, so that nests do not pile up temporaries."""
        for op in block.ops:
            for result in op.results:
                self.env.pop(result, None)

    # --- memory ---

    def _alloc(self, op: AllocOp) -> None:
        typ = op.result.type
        assert isinstance(typ, MemRefType)
        self.env[op.result] = np.zeros(typ.get_shape(), buffer_dtype(typ.element_type))

    def _subscripts(self, op: memref.LoadOp | memref.StoreOp) -> tuple[Value, ...]:
        buffer = self.env[op.memref]
        index = tuple(self.env[v] for v in op.indices)
        for position, (subscript, size) in enumerate(zip(index, buffer.shape, strict=True)):
            low, high = _index_range(subscript)
            if low < 0 or high >= size:
                raise KernelError(
                    f"'{op.name}': subscript #{position} is {low if low < 0 else high}, out of "
                    f"bounds for a buffer of shape {buffer.shape}"
                )
        return index

    def _load(self, op: memref.LoadOp) -> None:
        # Integers narrower than 64 bits are held as int64 between loads and stores.
        loaded = self.env[op.memref][self._subscripts(op)]
        self.env[op.res] = np.asarray(loaded).astype(numpy_dtype(op.res.type), copy=False)

    def _store(self, op: memref.StoreOp) -> None:
        index = self._subscripts(op)
        ivs = self.plan.store_ivs[op]
        reduced = [(axis, extent) for iv, axis, extent in self.active if iv not in ivs]
        if not reduced:
            self.env[op.memref][index] = self._value(op.value)
            return
        value = self._reduce(self.plan.reductions[op], reduced)
        # The reduced value keeps unit reduction axes; a store at scalar subscripts drops them.
        target = np.broadcast_shapes(*(np.shape(s) for s in index))
        self.env[op.memref][index] = value.reshape(target) if len(target) < value.ndim else value

    def _reduce(self, reduction: Reduction, reduced: list[tuple[int, int]]) -> Value:
        """The new accumulator value of a reduction store, over the `reduced` (axis, extent)s."""
        old = self.env[reduction.accumulator.res]
        if reduction.product is not None:
            lhs, rhs = (
                _with_rank(self._value(v), self.rank, np.float64)
                for v in reduction.product.operands
            )
            total = _contract(lhs, rhs, reduced)
        else:
            term = _with_rank(self._value(reduction.term), self.rank)
            total = _REDUCERS[reduction.kind](term, reduced)
        return to_result_type(reduction.combine, _COMBINERS[reduction.kind](old, total))
