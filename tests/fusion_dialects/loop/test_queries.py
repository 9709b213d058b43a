"""The loop facts of `fusion_compiler.dialects.loop.queries`, and that every stage asks them
(the passes' analyses, the JIT and the reference interpreter hold no copy)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
)

from fusion_compiler.dialects import element_dtypes
from fusion_compiler.dialects.loop import ForOp
from fusion_compiler.dialects.loop import queries as q
from fusion_compiler.dialects.reference import _loop_ops, _loop_plan
from fusion_compiler.passes.analysis import kernel_blocks, linear_index, loop_access


def index(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, IndexType()))


@pytest.mark.parametrize(
    ("bounds", "trips"), [((0, 8, 1), 8), ((0, 8, 3), 3), ((4, 4, 1), 0), ((5, 2, 1), 0)]
)
def test_constant_bounds_and_trip_count(bounds, trips):
    lb, ub, step = (index(v) for v in bounds)
    loop = ForOp(lb.result, ub.result, step.result)
    assert q.loop_range(loop) == bounds
    assert q.trip_count(loop) == trips
    assert q.constant_index(ub.result) == bounds[1]


def test_no_range_without_constant_positive_bounds():
    lb, ub, zero = index(0), index(8), index(0)
    assert q.loop_range(ForOp(lb.result, ub.result, zero.result)) is None
    outer = ForOp(lb.result, ub.result, index(1).result)
    inner = ForOp(lb.result, outer.induction_var, index(1).result)
    assert q.loop_range(inner) is None and q.trip_count(inner) is None
    assert q.defined_outside(lb.result, outer)
    assert q.defined_outside(outer.induction_var, inner)  # the outer iv is fixed inside inner


@pytest.mark.parametrize(
    ("element_type", "dtype"),
    [
        (Float16Type(), np.float16),
        (Float32Type(), np.float32),
        (Float64Type(), np.float64),
        (IntegerType(1), np.bool_),
        (IntegerType(8), np.int8),
        (IntegerType(32), np.int32),
        (IntegerType(64), np.int64),
        (IndexType(), np.int64),
    ],
)
def test_one_dtype_table(element_type, dtype):
    assert element_dtypes.numpy_dtype(element_type) == np.dtype(dtype)


def test_the_interpreter_computes_integers_in_64_bits_on_top_of_the_table():
    assert _loop_ops.numpy_dtype(IntegerType(1)) == np.bool_
    assert _loop_ops.numpy_dtype(Float32Type()) == np.float32
    assert _loop_ops.numpy_dtype(IntegerType(32)) == np.int64


def test_no_dtype_for_odd_integer_widths():
    with pytest.raises(TypeError, match="no numpy dtype"):
        element_dtypes.numpy_dtype(IntegerType(7))


def test_every_stage_asks_the_same_home():
    assert loop_access.loop_range is q.loop_range
    assert loop_access.trip_count is q.trip_count
    assert loop_access.same_subscripts is q.same_subscripts
    assert linear_index.constant_index is q.constant_index
    assert kernel_blocks.KERNEL_OPS is q.KERNEL_OPS
    assert _loop_plan.loop_range is q.loop_range and _loop_plan.trip_count is q.trip_count
    assert q.SCALAR_OPS < q.KERNEL_OPS
