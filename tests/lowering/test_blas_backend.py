"""The blas backend: pattern dispatch of matrix products to OpenBLAS, against the reference.

OpenBLAS sums the K products of each element in its own order (blocked, with FMAs), so the
BLAS build agrees with the float64-then-rounded reference to ~1e-5 relative for K up to a few
thousand, like our own kernels: the examples' tolerance (rtol 1e-4, atol 1e-4 × max |ref|)
holds with margin. Tests that need the library skip without the `blas` extra; the error
without it is tested with the package name pointed at one that does not exist.
"""

from pathlib import Path

import numpy as np
import pytest

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import BLAS_FUSION_PIPELINE, BLAS_PIPELINE, compile_module
from fusion_compiler.errors import MissingLibraryError
from fusion_compiler.lowering import blas_library
from fusion_compiler.tools import fusion_run

EXAMPLES = Path(__file__).parent.parent.parent / "examples"
MATMUL_EXAMPLES = sorted(p for p in EXAMPLES.glob("*.mlir") if "graph.matmul" in p.read_text())

needs_blas = pytest.mark.skipif(
    not blas_library.is_installed(), reason="the blas extra (scipy-openblas32) is not installed"
)


def assert_close(actual, reference):
    scale = float(np.max(np.abs(reference))) or 1.0
    np.testing.assert_allclose(actual, reference, rtol=1e-4, atol=1e-4 * scale)


def run_against_reference(text: str, pipeline: str, seed: int = 3):
    module = parse_source(make_context(), text, "test.mlir")
    model = compile_module(module, pipeline, cache=False)
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(p.shape).astype(np.float32) for p in model.main.parameters]
    for got, want in zip(model.run("main", *inputs), evaluate(module, "main", inputs), strict=True):
        assert_close(got, want)
    return model


def test_the_matmul_examples_are_found():
    assert {p.stem for p in MATMUL_EXAMPLES} >= {"ffn", "mlp", "transformer_block"}


@needs_blas
@pytest.mark.parametrize("path", MATMUL_EXAMPLES, ids=[p.stem for p in MATMUL_EXAMPLES])
@pytest.mark.parametrize("pipeline", [BLAS_FUSION_PIPELINE, BLAS_PIPELINE], ids=["tvm", "default"])
def test_examples_with_blas_dispatch_match_the_reference(path, pipeline):
    model = run_against_reference(path.read_text(), pipeline)
    assert any(name.endswith("_blas") for name in model.kernels("main"))


@needs_blas
def test_activation_epilogues_inside_the_composite():
    text = (EXAMPLES / "mlp.mlir").read_text()
    pipeline = BLAS_PIPELINE.replace("patterns=blas", "patterns=blas-activations")
    model = run_against_reference(text, pipeline)
    assert model.kernels("main") == ["fused_matmul_add_relu_blas"] * 3


BATCHED = """
func.func @main(%a: tensor<{a}xf32>, %b: tensor<{b}xf32>) -> tensor<{c}xf32> {{
  %c = graph.matmul %a, %b : (tensor<{a}xf32>, tensor<{b}xf32>) -> tensor<{c}xf32>
  func.return %c : tensor<{c}xf32>
}}
"""


@needs_blas
@pytest.mark.parametrize(
    "a, b, c",
    [
        ("3x5x7", "3x7x4", "3x5x4"),
        ("1x5x7", "3x7x4", "3x5x4"),
        ("2x3x5x7", "7x4", "2x3x5x4"),
        ("2x1x5x7", "1x3x7x4", "2x3x5x4"),
    ],
)
def test_batched_products_broadcast_their_batch_axes(a, b, c):
    model = run_against_reference(BATCHED.format(a=a, b=b, c=c), BLAS_PIPELINE)
    assert model.kernels("main") == ["fused_matmul_blas"]


TRANSPOSED = """
func.func @main(%a: tensor<{a}xf32>, %b: tensor<{b}xf32>) -> tensor<{c}xf32> {{
  %at = graph.transpose %a {{perm = array<i64: {pa}>}} : (tensor<{a}xf32>) -> tensor<{at}xf32>
  %bt = graph.transpose %b {{perm = array<i64: {pb}>}} : (tensor<{b}xf32>) -> tensor<{bt}xf32>
  %c = graph.matmul %at, %bt : (tensor<{at}xf32>, tensor<{bt}xf32>) -> tensor<{c}xf32>
  func.return %c : tensor<{c}xf32>
}}
"""


@needs_blas
@pytest.mark.parametrize(
    "a, pa, at, b, pb, bt, c",
    [
        ("7x5", "1, 0", "5x7", "4x7", "1, 0", "7x4", "5x4"),  # both transposed
        ("5x3x7", "1, 0, 2", "3x5x7", "4x3x7", "1, 2, 0", "3x7x4", "3x5x4"),  # heads
        ("3x7x5", "0, 2, 1", "3x5x7", "3x4x7", "0, 2, 1", "3x7x4", "3x5x4"),
    ],
)
def test_transposed_operands_are_read_by_strides(a, pa, at, b, pb, bt, c):
    text = TRANSPOSED.format(a=a, pa=pa, at=at, b=b, pb=pb, bt=bt, c=c)
    model = run_against_reference(text, BLAS_PIPELINE)
    assert model.kernels("main") == ["fused_transpose_transpose_matmul_blas"]


@needs_blas
def test_a_transpose_blas_cannot_read_stays_outside():
    # perm [2, 0, 1] of 7x3x5 gives 5x7x3 with strides (1, 15, 5): no unit stride in the
    # matrix axes, so the product reads a copy made by the transpose kernel.
    text = TRANSPOSED.format(
        a="7x3x5", pa="2, 0, 1", at="5x7x3", b="5x4x3", pb="0, 2, 1", bt="5x3x4", c="5x7x4"
    )
    model = run_against_reference(text, BLAS_PIPELINE)
    assert model.kernels("main") == ["transpose", "fused_transpose_matmul_blas"]


@needs_blas
def test_thread_counts_give_the_same_result():
    text = (EXAMPLES / "ffn.mlir").read_text()
    model = run_against_reference(text, BLAS_PIPELINE)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(p.shape).astype(np.float32) for p in model.main.parameters]
    model.set_num_threads(1)
    (one,) = model.run("main", *inputs)
    model.set_num_threads(2)
    (two,) = model.run("main", *inputs)
    assert_close(one, two)


@pytest.fixture
def no_library(monkeypatch):
    monkeypatch.setattr(blas_library, "PACKAGE", "no_such_openblas_package")
    blas_library.find_library.cache_clear()
    yield
    blas_library.find_library.cache_clear()


def test_a_missing_library_is_one_error_naming_the_extra(no_library):
    module = parse_source(make_context(), (EXAMPLES / "ffn.mlir").read_text(), "ffn.mlir")
    with pytest.raises(MissingLibraryError, match=r"pip install 'fusion-compiler\[blas\]'"):
        compile_module(module, BLAS_PIPELINE, cache=False)


def test_fusion_run_reports_a_missing_library_without_traceback(no_library, capsys):
    argv = [str(EXAMPLES / "ffn.mlir"), "--random-inputs", "--no-cache", "--pipeline"]
    assert fusion_run.main([*argv, BLAS_PIPELINE]) == 1
    err = capsys.readouterr().err
    assert "pip install 'fusion-compiler[blas]'" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_fusion_run_reports_an_unknown_pattern_table(capsys):
    argv = [str(EXAMPLES / "ffn.mlir"), "--random-inputs", "--no-cache"]
    assert fusion_run.main([*argv, "--pipeline", "fuse-ops-by-pattern{patterns=nope}"]) == 1
    err = capsys.readouterr().err
    assert "unknown pattern table 'nope' (registered tables: blas" in err
    assert "Traceback" not in err


@needs_blas
def test_a_cached_blas_build_loads_the_library_again(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path))
    module = parse_source(make_context(), (EXAMPLES / "mlp.mlir").read_text(), "mlp.mlir")
    first = compile_module(module, BLAS_PIPELINE)
    second = compile_module(module, BLAS_PIPELINE)
    assert not first.from_cache and second.from_cache
    inputs = [np.ones(p.shape, np.float32) for p in second.main.parameters]
    (a,) = first.run("main", *inputs)
    (b,) = second.run("main", *inputs)
    np.testing.assert_array_equal(a, b)


SOFTMAX_AFTER = """
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %c = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %s = graph.softmax %c {axis = -1 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %s : tensor<4x4xf32>
}
"""


@pytest.mark.parametrize(
    "name, message",
    [
        ("blas.matmul_softmax", "odd.mlir:4:3: error: lower-graph: the blas backend cannot apply "),
        ("mylib.matmul_softmax", "error: lower-graph: no backend 'mylib' (backends: blas)"),
    ],
)
def test_composites_no_backend_can_compute_are_clear_errors(name, message):
    from fusion_compiler.dialects.diagnostics import CompileError
    from fusion_compiler.passes.patterns import FusionPattern, is_op, register_patterns, wildcard

    product = is_op("graph.matmul")(wildcard(), wildcard())
    register_patterns("test-odd", [FusionPattern(name, is_op("graph.softmax")(product))])
    module = parse_source(make_context(), SOFTMAX_AFTER, "odd.mlir")
    pipeline = "fuse-ops-by-pattern{patterns=test-odd annotate-codegen=true},legalize-ops"
    with pytest.raises(CompileError) as err:
        compile_module(module, pipeline, cache=False)
    assert message in err.value.format()
