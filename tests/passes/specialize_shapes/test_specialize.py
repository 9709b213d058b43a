"""specialize-shapes: the Python function, its errors, and numerics.

The reference evaluator runs a dynamic module as it is (its ops' semantics need no static
types), so a specialised module must compute exactly what the dynamic one computes on the
same arrays, and the native build of the specialised module what the reference does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import CompileError, parse_source
from fusion_compiler.dialects.graph.dynamic import DYNAMIC_OPS
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import PassManager, compile_module, parse_file
from fusion_compiler.errors import PassOptionError
from fusion_compiler.passes.specialize_shapes import (
    dynamic_problem,
    is_dynamic_module,
    parse_shapes,
    specialize_shapes,
)

ATTENTION = """
func.func @main(%x: tensor<?x?x16xf32>, %wq: tensor<16x16xf32>) -> tensor<?x?x2x8xf32> {
  %q = graph.matmul %x, %wq : (tensor<?x?x16xf32>, tensor<16x16xf32>) -> tensor<?x?x16xf32>
  %kt = graph.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<?x?x16xf32>) -> tensor<?x16x?xf32>
  %s = graph.matmul %q, %kt : (tensor<?x?x16xf32>, tensor<?x16x?xf32>) -> tensor<?x?x?xf32>
  %p = graph.softmax %s {axis = -1 : i64} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %o = graph.matmul %p, %x : (tensor<?x?x?xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %shape = graph.shape_of %o : (tensor<?x?x16xf32>) -> tensor<3xi64>
  %lead = graph.slice %shape {starts = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 1>} : (tensor<3xi64>) -> tensor<2xi64>
  %heads = graph.constant dense<[2, -1]> : tensor<2xi64>
  %target = graph.concat %lead, %heads {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  %y = graph.dynamic_reshape %o, %target : (tensor<?x?x16xf32>, tensor<4xi64>) -> tensor<?x?x2x8xf32>
  func.return %y : tensor<?x?x2x8xf32>
}
"""


def _parse(text: str):
    return parse_source(make_context(), text, "test.mlir")


def _inputs(batch: int, seq: int) -> list[np.ndarray]:
    rng = np.random.default_rng(batch * 100 + seq)
    x = rng.standard_normal((batch, seq, 16)).astype(np.float32)
    w = (rng.standard_normal((16, 16)) / 4).astype(np.float32)
    return [x, w]


@pytest.mark.parametrize("batch, seq", [(1, 3), (2, 7)])
def test_specialised_module_computes_what_the_dynamic_one_does(batch, seq):
    dynamic = _parse(ATTENTION)
    inputs = _inputs(batch, seq)
    (expected,) = evaluate(dynamic, "main", inputs)
    assert expected.shape == (batch, seq, 2, 8)
    static = specialize_shapes(dynamic.clone(), {"x": (batch, seq, 16)})
    assert not is_dynamic_module(static)
    assert not any(isinstance(op, DYNAMIC_OPS) for op in static.walk())
    static.verify()
    (actual,) = evaluate(static, "main", inputs)
    assert np.array_equal(actual, expected)  # the same ops on the same arrays: the same bits


def test_native_build_of_a_specialised_module_matches_the_reference():
    module = specialize_shapes(_parse(ATTENTION), [(2, 5, 16), (16, 16)])
    inputs = _inputs(2, 5)
    (reference,) = evaluate(module, "main", inputs)
    (native,) = compile_module(module, cache=False).run("main", *inputs)
    # float32 kernels against the float32 reference (sums of 16 and 5 terms): within 1e-5 of
    # the output's scale, far tighter than fusion-run --check's 1e-4.
    assert np.max(np.abs(native - reference)) <= 1e-5 * np.max(np.abs(reference))


def test_pass_and_function_agree():
    by_pass = _parse(ATTENTION)
    PassManager('specialize-shapes{shapes="x=2x4x16"}').run(by_pass)
    by_function = specialize_shapes(_parse(ATTENTION), {"x": (2, 4, 16)})
    assert str(by_pass) == str(by_function)


def test_static_module_is_unchanged():
    text = """
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = graph.relu %x : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
"""
    module = _parse(text)
    before = str(module)
    assert dynamic_problem(module) is None
    assert str(specialize_shapes(module)) == before


EXAMPLES = sorted((Path(__file__).parents[3] / "examples").glob("*.mlir"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_static_examples_are_unchanged(example):
    module = parse_file(example)
    before = str(module)
    assert not is_dynamic_module(module)
    assert str(specialize_shapes(module)) == before
    legalized = PassManager("legalize-ops,specialize-shapes").run(parse_file(example))
    assert "graph.call_loop" in str(legalized)  # kernel calls are left as they are


def test_shapes_option_syntax():
    assert parse_shapes("x=2x16, mask=2x16,s=scalar") == {
        "x": (2, 16),
        "mask": (2, 16),
        "s": (),
    }
    for bad in ("x", "=2", "x=2xb", "x=-1"):
        with pytest.raises(PassOptionError, match="is not NAME=DIMS"):
            parse_shapes(bad)


@pytest.mark.parametrize(
    "shapes, message",
    [
        ({"y": (1, 2, 16)}, r"@main has no argument 'y' \(arguments: x, wq\)"),
        ({"x": (1, 2, 8)}, r"argument %x of type tensor<\?x\?x16xf32> cannot have the shape 1x2x8"),
        ({}, r"argument %x has the dynamic type tensor<\?x\?x16xf32> and no shape was given"),
        ([(1, 2, 16)], r"@main takes 2 arguments, got 1 shapes"),
    ],
)
def test_errors_name_the_argument(shapes, message):
    with pytest.raises(CompileError, match=message):
        specialize_shapes(_parse(ATTENTION), shapes)


def test_a_shape_violating_the_model_is_an_error_at_the_op():
    text = ATTENTION.replace("dense<[2, -1]>", "dense<[3, -1]>")
    with pytest.raises(CompileError, match=r"graph.dynamic_reshape: cannot reshape 2x5x16") as err:
        specialize_shapes(_parse(text), {"x": (2, 5, 16)})
    assert err.value.position is not None and err.value.position.line == 12
