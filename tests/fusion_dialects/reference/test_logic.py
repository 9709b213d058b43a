"""The integer and boolean graph ops: their reference semantics against numpy written out by
hand, and each op after legalize-ops (run by the loop interpreter) against the reference,
exactly, on every element type it accepts; NaN, wrapping and out-of-range gather indices."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, f32, i1, i32, i64
from xdsl.ir import Attribute, Block, Operation, Region

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.element_dtypes import numpy_dtype
from fusion_compiler.dialects.graph import tensor_type
from fusion_compiler.dialects.reference import numpy_ops as ref
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.passes.legalize_ops import LegalizeOpsPass

NAN = np.float32(np.nan)


def module_of(make: Callable[..., Operation], types: list[tuple[tuple[int, ...], Attribute]]):
    block = Block(arg_types=[tensor_type(shape, element) for shape, element in types])
    op = make(*block.args)
    block.add_ops([op, func.ReturnOp(*op.results)])
    signature = FunctionType.from_lists([a.type for a in block.args], [r.type for r in op.results])
    module = ModuleOp([func.FuncOp("main", signature, Region(block))])
    module.verify()
    return module


def draw(shape: tuple[int, ...], element: Attribute, rng: np.random.Generator) -> np.ndarray:
    """Values that exercise the edge cases: NaN, +-inf and integers beyond int32 for floats;
    the extremes of the integer type (so that arithmetic wraps)."""
    dtype = numpy_dtype(element)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        values = rng.integers(-5, 5, shape).astype(dtype)
        flat = values.reshape(-1)
        extremes = [info.max, info.min, -1][: flat.size]
        flat[: len(extremes)] = extremes
        return values
    values = rng.integers(-4, 4, shape).astype(np.float32) * np.float32(0.5)
    flat = values.reshape(-1)
    specials = [NAN, np.inf, -np.inf, 3e9, -0.0, 2.5, -2.7][: flat.size]
    flat[: len(specials)] = specials
    return values


def legalized_matches_reference(module: ModuleOp, inputs: list[np.ndarray]) -> list[np.ndarray]:
    before = evaluate(module, "main", inputs)
    LegalizeOpsPass().apply(make_context(), module)
    module.verify()
    after = evaluate(module, "main", inputs)
    for got, want in zip(after, before, strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)  # NaN where NaN
    return before


COMPARISONS = [
    (graph.EqualOp, np.equal),
    (graph.LessOp, np.less),
    (graph.LessEqualOp, np.less_equal),
    (graph.GreaterOp, np.greater),
    (graph.GreaterEqualOp, np.greater_equal),
]


@pytest.mark.parametrize("element", [f32, i64, i32], ids=str)
@pytest.mark.parametrize(("op", "expected"), COMPARISONS, ids=lambda c: getattr(c, "name", ""))
def test_comparison(op, expected, element):
    rng = np.random.default_rng(1)
    types = [((3, 8), element), ((8,), element)]
    inputs = [draw(shape, t, rng) for shape, t in types]
    (result,) = legalized_matches_reference(module_of(op, types), inputs)
    assert result.dtype == np.bool_
    np.testing.assert_array_equal(result, expected(inputs[0], inputs[1]))
    if element == f32:  # a NaN compares false, whatever the predicate
        assert not result[0, 0]


def test_equal_of_booleans():
    rng = np.random.default_rng(2)
    types = [((16,), i1), ((16,), i1)]
    inputs = [draw(shape, t, rng) for shape, t in types]
    (result,) = legalized_matches_reference(module_of(graph.EqualOp, types), inputs)
    np.testing.assert_array_equal(result, inputs[0] == inputs[1])


@pytest.mark.parametrize(
    ("op", "expected"),
    [(graph.LogicalAndOp, np.logical_and), (graph.LogicalOrOp, np.logical_or)],
    ids=["and", "or"],
)
def test_logical_binary(op, expected):
    rng = np.random.default_rng(3)
    types = [((2, 9), i1), ((1, 9), i1)]
    inputs = [draw(shape, t, rng) for shape, t in types]
    (result,) = legalized_matches_reference(module_of(op, types), inputs)
    np.testing.assert_array_equal(result, expected(*inputs))


def test_not():
    x = np.array([True, False, True, True, False])
    (result,) = legalized_matches_reference(module_of(graph.LogicalNotOp, [((5,), i1)]), [x])
    np.testing.assert_array_equal(result, ~x)


@pytest.mark.parametrize("element", [f32, i64, i32, i1], ids=str)
def test_where(element):
    rng = np.random.default_rng(4)
    types = [((2, 1, 7), i1), ((3, 7), element), ((1,), element)]
    inputs = [draw(shape, t, rng) for shape, t in types]
    (result,) = legalized_matches_reference(module_of(graph.WhereOp, types), inputs)
    assert result.shape == (2, 3, 7) and result.dtype == numpy_dtype(element)
    np.testing.assert_array_equal(result, np.where(*inputs))


ELEMENTS = [f32, i64, i32, i1]


@pytest.mark.parametrize("target", ELEMENTS, ids=str)
@pytest.mark.parametrize("source", ELEMENTS, ids=str)
def test_cast(source, target):
    x = draw((4, 5), source, np.random.default_rng(5))
    module = module_of(lambda v: graph.CastOp(v, target), [((4, 5), source)])
    (result,) = legalized_matches_reference(module, [x])
    assert result.dtype == numpy_dtype(target)


def test_cast_semantics():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.7, -2.7, -0.0, 0.0], np.float32)
    np.testing.assert_array_equal(
        ref.cast(x, np.int32), [0, 2**31 - 1, -(2**31), 2**31 - 1, -(2**31), 2, -2, 0, 0]
    )
    np.testing.assert_array_equal(ref.cast(x, np.int64)[3:5], [3_000_000_000, -3_000_000_000])
    np.testing.assert_array_equal(ref.cast(x, np.bool_), [1, 1, 1, 1, 1, 1, 1, 0, 0])
    big = np.array([2**40 + 5, -(2**31) - 1], np.int64)
    np.testing.assert_array_equal(ref.cast(big, np.int32), [5, 2**31 - 1])  # wraps
    np.testing.assert_array_equal(ref.cast(np.array([True, False]), np.float32), [1.0, 0.0])


@pytest.mark.parametrize("element", [i64, i32], ids=str)
@pytest.mark.parametrize(
    "op", [graph.AddOp, graph.SubOp, graph.MulOp, graph.MaxOp, graph.MinOp], ids=lambda o: o.name
)
def test_integer_binary_wraps(op, element):
    rng = np.random.default_rng(6)
    types = [((3, 6), element), ((6,), element)]
    inputs = [draw(shape, t, rng) for shape, t in types]
    (result,) = legalized_matches_reference(module_of(op, types), inputs)
    numpy_fn = {"graph.add": np.add, "graph.sub": np.subtract, "graph.mul": np.multiply}
    fn = numpy_fn.get(op.name, np.maximum if op is graph.MaxOp else np.minimum)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(result, fn(*inputs))
    assert result.dtype == numpy_dtype(element)


@pytest.mark.parametrize("element", [i64, i32], ids=str)
@pytest.mark.parametrize("op", [graph.ReluOp, graph.NegOp, graph.AbsOp], ids=lambda o: o.name)
def test_integer_unary(op, element):
    x = draw((11,), element, np.random.default_rng(7))
    (result,) = legalized_matches_reference(module_of(op, [((11,), element)]), [x])
    with np.errstate(over="ignore"):
        expected = {graph.ReluOp: np.maximum(x, 0), graph.NegOp: -x, graph.AbsOp: np.abs(x)}[op]
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("index_type", [i64, i32], ids=str)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather(axis, index_type):
    data = np.arange(5 * 4, dtype=np.float32).reshape(5, 4)
    size = data.shape[axis]
    raw = [0, 1, size - 1, -1, -size, size, -size - 1, 100, -100]
    indices = np.array(raw, numpy_dtype(index_type)).reshape(3, 3)
    types = [((5, 4), f32), ((3, 3), index_type)]
    module = module_of(lambda d, i: graph.GatherOp(d, i, axis), types)
    (result,) = legalized_matches_reference(module, [data, indices])
    clamped = np.array([0, 1, size - 1, size - 1, 0, size - 1, 0, size - 1, 0]).reshape(3, 3)
    np.testing.assert_array_equal(result, np.take(data, clamped, axis=axis))


def test_gather_of_integers_and_booleans():
    table = np.array([[1, -2], [3, 4], [2**62, -(2**62)]], np.int64)
    ids = np.array([[2, 0], [-1, 1]], np.int64)
    types = [((3, 2), i64), ((2, 2), i64)]
    module = module_of(lambda d, i: graph.GatherOp(d, i, 0), types)
    (result,) = legalized_matches_reference(module, [table, ids])
    np.testing.assert_array_equal(result, table[[[2, 0], [2, 1]]])
    flags = np.array([True, False, True])
    types = [((3,), i1), ((2, 2), i64)]
    module = module_of(lambda d, i: graph.GatherOp(d, i, 0), types)
    (result,) = legalized_matches_reference(module, [flags, ids])
    np.testing.assert_array_equal(result, flags[[[2, 0], [2, 1]]])


@pytest.mark.parametrize("element", [i64, i32, i1], ids=str)
def test_data_movement_keeps_the_element_type(element):
    rng = np.random.default_rng(8)
    x = draw((2, 3, 4), element, rng)
    ops = [
        lambda v: graph.TransposeOp(v, (2, 0, 1)),
        lambda v: graph.ReshapeOp(v, (4, 6)),
        lambda v: graph.SliceOp(v, (0, 2, 0), (2, 0, 4), (1, -1, 2)),
        lambda v: graph.ConcatOp([v, v], 1),
        lambda v: graph.BroadcastToOp(v, (3, 2, 3, 4)),
    ]
    for make in ops:
        module = module_of(make, [((2, 3, 4), element)])
        (result,) = legalized_matches_reference(module, [x])
        assert result.dtype == numpy_dtype(element)
