"""The static cost of a kernel: its floating-point operations and its compulsory bytes.

A read-only analysis of `loop.func` kernels, for the profiler (`lowering/profiling.py`):

- **FLOPs**: every floating-point op of the body, weighted by `FLOP_WEIGHTS` and multiplied by
  the trip counts of the loops around it. An add, a subtract, a multiply, a divide, a max or
  min, a negation and a comparison count 1; a fused multiply-add (`math.fma`) counts 2 (a
  `mulf` + `addf` pair marked `contract`, which the LLVM lowering fuses, counts 1 + 1 = 2
  too); every other math function (exp, log, tanh, erf, sqrt, rsqrt, pow, ...) counts 1, as
  profilers and roofline models conventionally do, although its expansion executes a dozen
  or more instructions. Index arithmetic, loads, stores, selects and casts count 0. Padding
  taps a convolution computes (a multiply by a padded zero) count. A schedule that executes
  more than the kernel's algorithm (schedule-contractions pads a remainder tile to whole
  vectors, overlap-vector-tails repeats a few iterations, so how much depends on the host's
  vector width) records the algorithm's count on
  the kernel first (`ALGORITHM_FLOPS_ATTR`), and that count is the kernel's: the FLOPs of a
  kernel do not depend on the host or the schedule.
- **Compulsory bytes**: each input buffer read once and each output buffer written once (the
  sizes of the kernel's buffer arguments); kernel-local buffers and re-reads are not counted,
  so bytes / time is a lower bound of the traffic.

```
loop.for %i = 0 to 4 {                     matmul 4x5 @ 5x6: 4 * 5 * 6 * (mulf + addf) = 240
  loop.for %k = 0 to 5 {                   FLOPs; bytes 4 * (4*5 + 5*6 + 4*6) = 296
    loop.for %j = 0 to 6 { mulf, addf } } }
```

A loop whose trip count is not a constant makes the kernel's FLOPs unknown (None).
"""

from __future__ import annotations

import math as pymath
from dataclasses import dataclass

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IntegerAttr, MemRefType, i64
from xdsl.ir import Operation

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.element_dtypes import numpy_dtype
from fusion_compiler.dialects.loop.attributes import ALGORITHM_FLOPS_ATTR
from fusion_compiler.dialects.loop.queries import trip_count

_ONE_FLOP_ARITH: tuple[type[Operation], ...] = (
    arith.AddfOp,
    arith.SubfOp,
    arith.MulfOp,
    arith.DivfOp,
    arith.MaximumfOp,
    arith.MinimumfOp,
    arith.MaxnumfOp,
    arith.MinnumfOp,
    arith.NegfOp,
    arith.CmpfOp,
)

_INTEGER_MATH: frozenset[type[Operation]] = frozenset(
    {math.AbsIOp, math.CountLeadingZerosOp, math.CountTrailingZerosOp, math.CtPopOp, math.IPowIOp}
)

_ONE_FLOP_MATH: tuple[type[Operation], ...] = tuple(
    op for op in math.Math.operations if op is not math.FmaOp and op not in _INTEGER_MATH
)

FLOP_WEIGHTS: dict[type[Operation], int] = {
    **dict.fromkeys(_ONE_FLOP_ARITH, 1),
    **dict.fromkeys(_ONE_FLOP_MATH, 1),
    math.FmaOp: 2,
}
"""The FLOPs of one execution of each counted op (see the module docstring)."""


@dataclass(frozen=True)
class KernelCost:
    """What one launch of a kernel computes and must move."""

    flops: int | None
    """Floating-point operations (None: a loop without a constant trip count)."""
    bytes: int
    """Compulsory bytes: the input buffers read once, the output buffers written once."""


def kernel_flops(kernel: loop.FuncOp) -> int | None:
    """The FLOPs of one launch of `kernel` (its algorithm's, when a schedule recorded them),
    or None when a trip count is not constant."""
    recorded = kernel.attributes.get(ALGORITHM_FLOPS_ATTR)
    if isinstance(recorded, IntegerAttr):
        return recorded.value.data
    return counted_flops(kernel)


def record_algorithm_flops(kernel: loop.FuncOp, flops: int | None) -> None:
    """Record `flops` (counted before a schedule that executes more) as `kernel`'s, unless a
    count is recorded already or it is unknown."""
    if flops is not None and ALGORITHM_FLOPS_ATTR not in kernel.attributes:
        kernel.attributes[ALGORITHM_FLOPS_ATTR] = IntegerAttr(flops, i64)


def counted_flops(kernel: loop.FuncOp) -> int | None:
    """The FLOPs of the ops in `kernel`'s body, weighted and multiplied by their trip counts."""
    total = 0
    for op in kernel.body.walk():
        weight = FLOP_WEIGHTS.get(type(op))
        if not weight:
            continue
        count = _executions(op, kernel)
        if count is None:
            return None
        total += weight * count
    return total


def _executions(op: Operation, kernel: loop.FuncOp) -> int | None:
    """How many times `op` runs in one launch: the product of its loops' trip counts."""
    count = 1
    parent = op.parent_op()
    while parent is not None and parent is not kernel:
        if isinstance(parent, loop.ForOp):
            trips = trip_count(parent)
            if trips is None:
                return None
            count *= trips
        parent = parent.parent_op()
    return count


def buffer_bytes(buffer_type: MemRefType) -> int:
    """The bytes of a buffer of `buffer_type`."""
    return pymath.prod(buffer_type.get_shape()) * numpy_dtype(buffer_type.element_type).itemsize


def kernel_bytes(kernel: loop.FuncOp) -> int:
    """The compulsory bytes of one launch of `kernel`."""
    types = (*kernel.function_type.inputs.data, *kernel.function_type.outputs.data)
    return sum(buffer_bytes(t) for t in types if isinstance(t, MemRefType))


def kernel_cost(kernel: loop.FuncOp) -> KernelCost:
    return KernelCost(kernel_flops(kernel), kernel_bytes(kernel))
