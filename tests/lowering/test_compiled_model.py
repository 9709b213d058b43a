"""The compiled-model API: native results equal the reference; arguments are checked; weights
are bound as buffers; the compile cache makes the second compile of a model a lookup."""

import gc
import re

import llvmlite.binding as llvm
import numpy as np
import pytest

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import UNFUSED_PIPELINE, compile_module
from fusion_compiler.errors import ArgumentError
from fusion_compiler.lowering import compile_cache

SOURCE = """
func.func @main(%x: tensor<8x32xf32>, %w: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %b = graph.constant dense<BIAS> : tensor<16xf32>
  %m = graph.matmul %x, %w : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %a = graph.add %m, %b : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %r = graph.relu %a : tensor<8x16xf32>
  func.return %r : tensor<8x16xf32>
}
func.func @second(%x: tensor<1000xf32>) -> (tensor<1000xf32>, tensor<1000xf32>) {
  %e = graph.exp %x : tensor<1000xf32>
  %t = graph.tanh %e : tensor<1000xf32>
  func.return %t, %x : tensor<1000xf32>, tensor<1000xf32>
}
"""
BIAS = np.linspace(-1.0, 1.0, 16, dtype=np.float32) + np.float32(0.123456789)


def _module(bias=BIAS):
    text = SOURCE.replace("BIAS", "[" + ", ".join(repr(float(v)) for v in bias) + "]")
    return parse_source(make_context(), text, "model.mlir")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path / "cache"))
    return tmp_path / "cache"


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((8, 32), np.float32), rng.standard_normal((32, 16), np.float32)]


def test_results_match_the_reference(cache_dir):
    module = _module()
    model = compile_module(module)
    x, w = _inputs()
    (got,) = model.run("main", x, w)
    (want,) = evaluate(module, "main", [x, w])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert model.kernels("main") == ["fused_matmul_add_relu"]


def test_a_function_outlives_the_model_it_was_taken_from(cache_dir):
    function = compile_module(_module()).main  # (the model itself is dropped at once)
    gc.collect()
    x, w = _inputs()
    (want,) = evaluate(_module(), "main", [x, w])
    np.testing.assert_allclose(function(x, w)[0], want, rtol=1e-5, atol=1e-5)


def test_every_function_is_compiled_and_passthrough_results_are_copies(cache_dir):
    model = compile_module(_module())
    x = np.linspace(-3, 3, 1000, dtype=np.float32)
    t, same = model.second(x)
    np.testing.assert_allclose(t, np.tanh(np.exp(x)), rtol=2e-6, atol=1e-7)
    np.testing.assert_array_equal(same, x)
    assert same is not x


def test_unfused_build_launches_one_kernel_per_op(cache_dir):
    model = compile_module(_module(), UNFUSED_PIPELINE)
    assert model.kernels("main") == ["matmul", "add", "relu"]


@pytest.mark.parametrize(
    "arrays, message",
    [
        (lambda x, w: [x], "@main takes 2 arguments, got 1"),
        (lambda x, w: [x.astype(np.float64), w], r"argument #0 \(%x\): expected dtype float32"),
        (lambda x, w: [x, w.T.copy()], r"argument #1 \(%w\): expected shape \(32, 16\)"),
        (
            lambda x, w: [x, np.asfortranarray(w)],
            r"argument #1 \(%w\): the array must be C-contiguous",
        ),
        (lambda x, w: [x, [1.0]], r"argument #1 \(%w\): expected a numpy array"),
    ],
)
def test_bad_arguments_are_named(cache_dir, arrays, message):
    model = compile_module(_module())
    with pytest.raises(ArgumentError, match=message):
        model.run("main", *arrays(*_inputs()))


class _Tagged(np.ndarray):
    """An ndarray subclass, as user code makes them."""


def test_read_only_views_and_subclasses_are_passed_by_their_own_address(cache_dir):
    """The call takes each argument's address through the buffer protocol, or through
    `ndarray.ctypes` for read-only arrays: views at an offset, read-only arrays and ndarray
    subclasses give the results their copies give."""
    model = compile_module(_module())
    x, w = _inputs()
    (want,) = model.run("main", x, w)
    rows = np.concatenate([np.zeros((3, 32), np.float32), x])[3:]  # a view at an offset
    frozen = w.copy()
    frozen.flags.writeable = False
    (got,) = model.run("main", rows, frozen)
    np.testing.assert_array_equal(got, want)
    (got,) = model.run("main", x.view(_Tagged), w)
    np.testing.assert_array_equal(got, want)


def test_outputs_and_bound_weights_are_64_byte_aligned(cache_dir):
    model = compile_module(_module())
    (y,) = model.run("main", *_inputs())
    assert y.ctypes.data % 64 == 0 and y.flags.c_contiguous and y.flags.writeable
    assert all(c.ctypes.data % 64 == 0 for c in model.functions["main"].constants)


def test_weights_are_bound_not_embedded(cache_dir):
    model = compile_module(_module())
    assert "0.123456" not in model.llvm_ir
    assert "1.12345" not in model.llvm_ir
    assert len(model.functions["main"].constants) == 1


def test_second_compile_comes_from_the_cache(cache_dir):
    first = compile_module(_module())
    second = compile_module(_module())
    assert not first.from_cache and second.from_cache
    x, w = _inputs(1)
    np.testing.assert_array_equal(first.run("main", x, w)[0], second.run("main", x, w)[0])
    assert second.kernels("main") == first.kernels("main")
    uncached = compile_module(_module(), cache=False)
    assert not uncached.from_cache


def test_an_edited_compiler_misses_the_cache(cache_dir, monkeypatch):
    compile_module(_module())
    monkeypatch.setattr(compile_cache, "compiler_fingerprint", lambda: "an edited pass")
    assert not compile_module(_module()).from_cache


def test_the_compiler_fingerprint_covers_every_pass_and_lowering():
    root = compile_cache.Path(compile_cache.__file__).resolve().parent.parent
    sources = [
        p for package in compile_cache.COMPILER_PACKAGES for p in (root / package).rglob("*.py")
    ]
    assert root / "passes" / "schedule" / "output_reuse.py" in sources
    assert root / "lowering" / "contraction.py" in sources
    assert len(compile_cache.compiler_fingerprint()) == 64


def test_a_model_whose_weights_changed_reuses_its_compiled_code(cache_dir):
    first = compile_module(_module())
    changed = compile_module(_module(-BIAS))
    assert not first.from_cache and changed.from_cache  # a model hit (`model_key`)
    x, w = _inputs()
    want = evaluate(_module(-BIAS), "main", [x, w])[0]
    np.testing.assert_allclose(changed.run("main", x, w)[0], want, rtol=1e-5, atol=1e-5)
    assert not np.allclose(first.run("main", x, w)[0], want)


def test_caching_can_be_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, "")
    assert compile_cache.cache_dir() is None
    assert not compile_module(_module()).from_cache


@pytest.mark.skipif(
    "+avx2" not in llvm.get_host_cpu_features().flatten(), reason="the host has no AVX2"
)
def test_elementwise_kernels_use_wide_vector_registers(cache_dir):
    # xmm registers would prove nothing: scalar SSE code uses them too.
    model = compile_module(_module())
    assert re.search(r"\bv\w+ps\s+.*%[yz]mm", model.assembly)


PACKED_WEIGHT = """
func.func @main(%x: tensor<1x32xf32>) -> tensor<1x16xf32> {
  %w = graph.constant dense<"0xHEX"> : tensor<32x16xf32>
  %m = graph.matmul %x, %w : (tensor<1x32xf32>, tensor<32x16xf32>) -> tensor<1x16xf32>
  func.return %m : tensor<1x16xf32>
}
"""


def test_a_weight_only_the_load_entry_reads_is_not_copied_first(cache_dir, monkeypatch):
    """The load entry packs the constant B of a matrix-vector product once (on every host: a
    weight's panel is packed whatever the tile model prices, `vector_product_rows`); what it
    reads is a view of the IR's bytes (no copy of the weight that the model then drops), and
    the results are those of a copy, and of the reference."""
    from fusion_compiler.lowering import compiled_model

    weight = np.random.default_rng(3).standard_normal((32, 16)).astype(np.float32)
    text = PACKED_WEIGHT.replace("HEX", weight.tobytes().hex().upper())
    module = parse_source(make_context(), text, "packed.mlir")
    copied = []
    real = compiled_model._bound_array
    monkeypatch.setattr(compiled_model, "_bound_array", lambda v: copied.append(v) or real(v))
    model = compile_module(module, cache=False)
    assert model.functions["main"].constants  # (the packed panels)
    assert copied == []  # B went to the load entry as a view
    x = np.random.default_rng(4).standard_normal((1, 32)).astype(np.float32)
    (y,) = model.run("main", x)
    monkeypatch.setattr(compiled_model, "_load_input", real)
    (z,) = compile_module(module, cache=False).run("main", x)
    assert np.array_equal(y, z)
    np.testing.assert_allclose(y, x.astype(np.float64) @ weight, rtol=1e-5, atol=1e-5)


ADDED_WEIGHT = """
func.func @main(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %w = graph.constant dense<"0xHEX"> : tensor<8x64xf32>
  %y = graph.add %x, %w : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %y : tensor<8x64xf32>
}
"""


def test_a_weight_from_a_weights_file_is_bound_as_a_view_of_its_pages(tmp_path, cache_dir):
    """The entry reads the weights file's mapped pages (64-byte aligned): no copy, read-only."""
    from fusion_compiler.dialects.weights_writer import externalize_constants
    from fusion_compiler.driver import compile_file

    weight = np.random.default_rng(5).standard_normal((8, 64)).astype(np.float32)
    module = parse_source(
        make_context(), ADDED_WEIGHT.replace("HEX", weight.tobytes().hex().upper()), "m.mlir"
    )
    inline = module.clone()
    externalize_constants(module, tmp_path / "model.weights")
    (tmp_path / "model.mlir").write_text(str(module))
    model = compile_file(tmp_path / "model.mlir", cache=False)
    (bound,) = model.functions["main"].constants
    assert not bound.flags.writeable and bound.ctypes.data % 64 == 0
    assert np.array_equal(bound, weight)
    x = np.random.default_rng(6).standard_normal((8, 64)).astype(np.float32)
    (y,) = model.run("main", x)
    (copied,) = compile_module(inline, cache=False).functions["main"].constants
    assert copied.flags.writeable  # (inline text: a copy, as before)
    assert np.array_equal(y, x + weight)


def test_a_binding_that_does_not_fit_the_native_entry_is_an_error(monkeypatch):
    """The model binds the graph-level function's constants to its entry's trailing inputs;
    were a pass to add or drop one, the entry would be handed its output where a constant goes
    (and write past an array): the model refuses to bind instead. (Here the model describes
    each constant twice.)"""
    from fusion_compiler.lowering import compiled_model

    describe = compiled_model._describe_function

    def doubled(*args):
        described = describe(*args)
        described.constants = (*described.constants, *described.constants)
        return described

    monkeypatch.setattr(compiled_model, "_describe_function", doubled)
    with pytest.raises(
        RuntimeError, match="@main would pass 5 buffers to a native entry that takes 4"
    ):
        compile_module(_module(), cache=False)
