"""The premise of the compile cache's model key (`compile_cache.model_key`): after the graph
passes a pipeline starts with, no pass reads the elements of a `graph.constant` of more than
one element, so a model with other weights lowers to the same loop-level module (constants
are buffer arguments) and may share its compiled code. A one-element constant is no weight:
legalize-ops makes it a literal of the kernels it feeds, and the key covers its value."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.dialects.builtin import ModuleOp, TensorType

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.driver import (
    BLAS_PIPELINE,
    DEFAULT_PIPELINE,
    PassManager,
    compile_module,
    lower_to_entries,
    split_graph_passes,
)
from fusion_compiler.errors import MissingLibraryError
from fusion_compiler.lowering import compile_cache
from fusion_compiler.passes.fold_constants.elements import dense_of

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from graph_spec import build_module  # noqa: E402
from random_graphs import graphs  # noqa: E402

CONV_BN = """
func.func @main(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %w = graph.constant dense<0.25> : tensor<8x8x3x3xf32>
  %b = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %s = graph.constant dense<1.5> : tensor<8xf32>
  %v = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %c = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %n = graph.batch_norm %c, %s, %b, %b, %v {epsilon = 1.0e-05 : f32} : (tensor<1x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %r = graph.relu %n : tensor<1x8x6x6xf32>
  func.return %r : tensor<1x8x6x6xf32>
}
"""


def reweighted(module: ModuleOp, seed: int) -> ModuleOp:
    """A copy of `module` whose every weight (a constant of more than one element) has new,
    random elements (a splat stays a splat only by chance: dense attributes of other byte
    sizes are part of the test)."""
    rng = np.random.default_rng(seed)
    copy = module.clone()
    for op in copy.walk():
        if isinstance(op, graph.ConstantOp) and not op.is_scalar:
            typ = op.result.type
            assert isinstance(typ, TensorType)
            array = rng.standard_normal(typ.get_shape()).astype(np.float32) + 2.0
            op.properties["value"] = dense_of(array, typ)
    return copy


def loop_level(module: ModuleOp, pipeline: str) -> str:
    graph_passes, rest = split_graph_passes(pipeline)
    folded = module.clone()
    if graph_passes:
        PassManager(graph_passes).run(folded)
    lowered, _ = lower_to_entries(folded, rest)
    return str(lowered)


def assert_weight_independent(module: ModuleOp, pipeline: str) -> None:
    want = loop_level(module, pipeline)
    assert loop_level(reweighted(module, 1), pipeline) == want


EXAMPLES = sorted(
    p for p in (ROOT / "examples").glob("*.mlir") if "graph.constant" in p.read_text()
)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("pipeline", [DEFAULT_PIPELINE, BLAS_PIPELINE])
def test_examples_lower_the_same_whatever_their_weights(path, pipeline):
    module = parse_source(make_context(), path.read_text(), str(path))
    try:
        assert_weight_independent(module, pipeline)
    except MissingLibraryError:  # (the README's install has no blas extra; CI's has)
        pytest.skip("the blas extra (scipy-openblas32) is not installed")


def test_batch_norm_folded_into_a_convolution_lowers_the_same_whatever_its_weights():
    assert_weight_independent(
        parse_source(make_context(), CONV_BN, "conv_bn.mlir"), DEFAULT_PIPELINE
    )


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(graphs())
def test_random_graphs_lower_the_same_whatever_their_weights(spec):
    assert_weight_independent(build_module(spec), DEFAULT_PIPELINE)


def test_a_model_with_new_weights_skips_the_passes(tmp_path, monkeypatch):
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path / "cache"))
    # (random weights: equal constants would be merged by fold-constants, another structure)
    module = reweighted(parse_source(make_context(), CONV_BN, "conv_bn.mlir"), 4)
    first = compile_module(module)
    x = np.random.default_rng(0).standard_normal((1, 8, 6, 6)).astype(np.float32)
    other = reweighted(module, 3)
    want = compile_module(other, cache=False).run("main", x)[0]

    def no_passes(*args, **kwargs):
        raise AssertionError("a model hit runs no pass")

    monkeypatch.setattr("fusion_compiler.driver.lower_to_entries", no_passes)
    second = compile_module(other)
    assert second.from_cache
    np.testing.assert_array_equal(second.run("main", x)[0], want)
    assert not np.array_equal(first.run("main", x)[0], want)


SCALED = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = graph.constant dense<SCALE> : tensor<f32>
  %y = graph.mul %x, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
"""


def test_a_scalar_constant_is_part_of_the_key_and_of_the_code(tmp_path, monkeypatch):
    """The kernel holds the scalar as a literal: another scalar is another model entry (a hit
    would run the first model's code)."""
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path / "cache"))
    halve, triple = (
        parse_source(make_context(), SCALED.replace("SCALE", value), "scaled.mlir")
        for value in ("5.000000e-01", "3.000000e+00")
    )
    assert compile_cache.model_key(halve, DEFAULT_PIPELINE) != compile_cache.model_key(
        triple, DEFAULT_PIPELINE
    )
    assert "arith.constant 5.000000e-01 : f32" in loop_level(halve, DEFAULT_PIPELINE)
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    np.testing.assert_array_equal(compile_module(halve).run("main", x)[0], x * 0.5)
    second = compile_module(triple)
    assert not second.from_cache
    np.testing.assert_array_equal(second.run("main", x)[0], x * 3)
