"""The positional graph ops (`gather_nd`, `trilu`, `cumsum`, `arg_max`, `arg_min`) and
`is_nan`: their reference semantics against numpy written out by hand, and each op after
legalize-ops (run by the loop interpreter) against the reference, exactly, on every element
type it accepts; NaNs, ties, wrapping sums and out-of-range indices."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import f32, i1, i32, i64

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.element_dtypes import numpy_dtype
from fusion_compiler.dialects.reference import numpy_ops as ref

_spec = importlib.util.spec_from_file_location(
    "reference_logic_cases", Path(__file__).with_name("test_logic.py")
)
_logic = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_logic)  # the helpers of the typed ops' cases: one home
draw, module_of, legalized_matches_reference = (
    _logic.draw,
    _logic.module_of,
    _logic.legalized_matches_reference,
)


def test_is_nan():
    x = draw((3, 5), f32, np.random.default_rng(0))
    (result,) = legalized_matches_reference(module_of(graph.IsNaNOp, [((3, 5), f32)]), [x])
    np.testing.assert_array_equal(result, x != x)
    assert result[0, 0] and not result[0, 1:].any()


@pytest.mark.parametrize("element", [f32, i64, i32, i1], ids=str)
@pytest.mark.parametrize(("upper", "k"), [(True, 0), (True, -2), (False, 1), (False, -1)])
def test_trilu(element, upper, k):
    x = draw((2, 3, 5), element, np.random.default_rng(1))
    module = module_of(lambda v: graph.TriluOp(v, upper, k), [((2, 3, 5), element)])
    (result,) = legalized_matches_reference(module, [x])
    rows, cols = np.indices((3, 5))
    keep = cols - rows >= k if upper else cols - rows <= k
    np.testing.assert_array_equal(result, np.where(keep, x, np.zeros_like(x)))
    assert result.dtype == numpy_dtype(element)


def _running_sums(x: np.ndarray, exclusive: bool, reverse: bool) -> list:
    """Row sums of a 1-D array, written out term by term in the op's order."""
    n = len(x)
    order = range(n - 1, -1, -1) if reverse else range(n)
    sums = []
    for j in range(n):
        total = x.dtype.type(0)
        for t in order:
            if (t > j if reverse else t < j) or (t == j and not exclusive):
                with np.errstate(over="ignore", invalid="ignore"):
                    total = x.dtype.type(total + x[t])
        sums.append(total)
    return sums


@pytest.mark.parametrize("element", [f32, i64, i32], ids=str)
@pytest.mark.parametrize(
    ("exclusive", "reverse"), [(False, False), (True, False), (False, True), (True, True)]
)
def test_cumsum(element, exclusive, reverse):
    x = draw((3, 6), element, np.random.default_rng(2))
    module = module_of(lambda v: graph.CumSumOp(v, 1, exclusive, reverse), [((3, 6), element)])
    (result,) = legalized_matches_reference(module, [x])
    expected = np.array([_running_sums(row, exclusive, reverse) for row in x], x.dtype)
    np.testing.assert_array_equal(result, expected)
    assert result.tobytes() == expected.tobytes() or element == f32  # NaN payloads aside


def test_cumsum_along_the_first_axis_and_signed_zeros():
    x = np.array([[-0.0, 1.0], [-0.0, -1.0], [-0.0, 2.0]], np.float32)
    module = module_of(lambda v: graph.CumSumOp(v, -2), [((3, 2), f32)])
    (result,) = legalized_matches_reference(module, [x])
    np.testing.assert_array_equal(result, [[0.0, 1.0], [0.0, 0.0], [0.0, 2.0]])
    assert not np.signbit(result).any()  # sums start from +0.0


@pytest.mark.parametrize("element", [f32, i64, i32], ids=str)
@pytest.mark.parametrize("op", [graph.ArgMaxOp, graph.ArgMinOp], ids=lambda o: o.name)
@pytest.mark.parametrize("last", [False, True], ids=["first", "last"])
@pytest.mark.parametrize(("axis", "keepdims"), [(1, False), (0, True), (-1, True)])
def test_arg_reduce(op, element, last, axis, keepdims):
    x = draw((4, 7), element, np.random.default_rng(3))
    x[2, :] = x[2, 0]  # a row of ties
    module = module_of(lambda v: op(v, axis, keepdims, last), [((4, 7), element)])
    (result,) = legalized_matches_reference(module, [x])
    assert result.dtype == np.int64
    largest = op is graph.ArgMaxOp
    moved = np.moveaxis(x, axis, -1)
    expected = np.empty(moved.shape[:-1], np.int64)
    for position in np.ndindex(*moved.shape[:-1]):
        terms = list(moved[position])
        best = 0
        for t in range(1, len(terms)):
            a, b = terms[t], terms[best]
            nan_wins = np.isnan(a) and (last or not np.isnan(b)) if element == f32 else False
            better = (a >= b if last else a > b) if largest else (a <= b if last else a < b)
            if bool(better) or bool(nan_wins):
                best = t
        expected[position] = best
    if keepdims:
        expected = np.expand_dims(expected, axis)
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("index_type", [i64, i32], ids=str)
def test_gather_nd(index_type):
    data = np.arange(4 * 3 * 5, dtype=np.float32).reshape(4, 3, 5)
    raw = [[0, 1], [3, -1], [-4, 2], [9, -9], [1, 7], [-1, 0]]
    indices = np.array(raw, numpy_dtype(index_type)).reshape(2, 3, 2)
    types = [((4, 3, 5), f32), ((2, 3, 2), index_type)]
    module = module_of(lambda d, i: graph.GatherNDOp(d, i), types)
    (result,) = legalized_matches_reference(module, [data, indices])
    clamped = [[0, 1], [3, 2], [0, 2], [3, 0], [1, 2], [3, 0]]  # wrapped once, then clamped
    expected = np.stack([data[a, b] for a, b in clamped]).reshape(2, 3, 5)
    np.testing.assert_array_equal(result, expected)


def test_gather_nd_with_batch_axes_of_booleans():
    flags = np.random.default_rng(4).random((2, 3, 4)) < 0.5
    ids = np.array([[[3], [0], [-1]], [[1], [1], [5]]], np.int64)
    types = [((2, 3, 4), i1), ((2, 3, 1), i64)]
    module = module_of(lambda d, i: graph.GatherNDOp(d, i, 2), types)
    (result,) = legalized_matches_reference(module, [flags, ids])
    picks = [[3, 0, 3], [1, 1, 3]]
    expected = np.array([[flags[b, j, picks[b][j]] for j in range(3)] for b in range(2)])
    np.testing.assert_array_equal(result, expected)
    np.testing.assert_array_equal(ref.gather_nd(flags, ids, 2), expected)
