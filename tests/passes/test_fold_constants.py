"""fold-constants on whole graphs: what it folds, that the folded graph computes what the
unfolded one does, and that the pipelines keep their promises with it.

Numerics of the batch-norm folding are checked against the reference evaluator of the
*unfolded* graph, at the tolerance `fusion-run --check` uses (rtol 1e-4, atol 1e-4 × the
output's scale): folding rounds the scaled weights and the shift to float32 (a relative error
of at most 2^-24 on each, far below the float32 accumulation error of a 576-term convolution
the native kernels already carry), and the measured error of the folded native build stays
the same order as the unfolded one's (`test_folding_adds_rounding_only`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import CompileError, parse_source
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import (
    DEFAULT_PIPELINE,
    UNFUSED_PIPELINE,
    PassManager,
    compile_module,
    split_graph_passes,
)
from fusion_compiler.errors import PassOptionError
from fusion_compiler.passes.fold_constants import FoldConstantsPass
from fusion_compiler.passes.fold_constants.elements import dense_of, held_array

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _parse(text: str) -> ModuleOp:
    return parse_source(make_context(), text, "test.mlir")


def _main(module: ModuleOp) -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp))


def _bind(module: ModuleOp, arrays: dict[int, np.ndarray]) -> ModuleOp:
    """`module` with arguments `arrays` of `@main` made `graph.constant`s (weights)."""
    main = _main(module)
    block = main.body.block
    for index in sorted(arrays, reverse=True):
        arg = block.args[index]
        constant = graph.ConstantOp(dense_of(arrays[index], arg.type))
        constant.results[0].name_hint = arg.name_hint
        block.insert_op_before(constant, block.first_op)
        arg.replace_all_uses_with(constant.results[0])
        block.erase_arg(arg)
    main.update_function_type()
    return module


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in _main(module).walk() if op.name.startswith("graph."))


def _folded(module: ModuleOp) -> ModuleOp:
    folded = module.clone()
    PassManager("fold-constants").run(folded)
    return folded


def resnet_block(seed: int = 0) -> tuple[ModuleOp, list[np.ndarray]]:
    """examples/resnet_block.mlir with its weights and batch-norm parameters as constants
    (He-scaled weights, parameters in ranges that keep activations of order one), and x."""
    module = _parse((EXAMPLES / "resnet_block.mlir").read_text())
    rng = np.random.default_rng(seed)
    arrays: dict[int, np.ndarray] = {}
    for arg in _main(module).body.block.args[1:]:
        shape = tuple(arg.type.get_shape())
        name = arg.name_hint.rstrip("0123456789")
        if name == "w":
            values = rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:]))
        elif name == "mean":
            values = rng.standard_normal(shape) * 0.5
        elif name == "bias":
            values = rng.standard_normal(shape) * 0.2
        else:  # scale, var
            values = rng.uniform(0.5, 1.5, shape)
        arrays[arg.index] = values.astype(np.float32)
    x = rng.standard_normal((1, 64, 56, 56)).astype(np.float32)
    return _bind(module, arrays), [x]


# --- the pass ---------------------------------------------------------------------------------------


def test_pass_name_and_option_range():
    assert FoldConstantsPass.name == "fold-constants"
    with pytest.raises(PassOptionError, match="growth-limit"):
        PassManager("fold-constants{growth-limit=-1}")


def test_default_pipelines_fold_first():
    for pipeline in (DEFAULT_PIPELINE, UNFUSED_PIPELINE):
        assert pipeline.startswith("fold-constants,legalize-ops,")


def test_resnet_block_batch_norms_fold_into_the_convolutions():
    module, _ = resnet_block()
    assert _ops(_folded(module)) == Counter(
        {"graph.constant": 4, "graph.conv2d": 2, "graph.add": 3, "graph.relu": 2}
    )


def test_folding_is_deterministic():
    module, _ = resnet_block()
    assert str(_folded(module)) == str(_folded(module))


def test_folds_of_constants_are_the_reference_bit_for_bit():
    """A folded op holds exactly what the reference evaluator computes for it."""
    module = _parse(
        """
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %w = graph.constant dense<[[0.5, -1.0, 2.0, 3.5], [1.25, 0.1, -0.3, 7.0], [2.0, 2.0, 1.0, -4.0]]> : tensor<3x4xf32>
  %t = graph.transpose %w {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %e = graph.tanh %t : tensor<4x3xf32>
  %s = graph.sigmoid %e : tensor<4x3xf32>
  %p = graph.pow %s, %t : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = graph.add %x, %p : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}
"""
    )
    folded = _folded(module)
    assert _ops(folded) == Counter({"graph.constant": 1, "graph.add": 1})
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    (expected,) = evaluate(module, "main", [x])
    (actual,) = evaluate(folded, "main", [x])
    np.testing.assert_array_equal(actual, expected)


# --- numerics: folded native against the unfolded reference -----------------------------------------


def _max_error(actual: np.ndarray, expected: np.ndarray) -> float:
    """max |actual - expected| / max |expected|."""
    scale = float(np.max(np.abs(expected)))
    return float(np.max(np.abs(actual.astype(np.float64) - expected))) / scale


@pytest.fixture(scope="module")
def resnet_block_runs(tmp_path_factory):
    """(reference of the unfolded graph, folded fused native, folded unfused native,
    unfolded native) on the constant-weight resnet block."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FUSION_CACHE_DIR", str(tmp_path_factory.mktemp("fusion-cache")))
        module, inputs = resnet_block()
        (reference,) = evaluate(module, "main", inputs)
        fused = compile_module(module, DEFAULT_PIPELINE)
        unfused = compile_module(module, UNFUSED_PIPELINE)
        unfolded = compile_module(module, DEFAULT_PIPELINE.replace("fold-constants,", ""))
        assert fused.kernels("main") == ["fused_conv2d_add_relu", "fused_conv2d_add_add_relu"]
        return (
            reference,
            fused.run("main", *inputs)[0],
            unfused.run("main", *inputs)[0],
            unfolded.run("main", *inputs)[0],
        )


def test_folded_native_matches_the_unfolded_reference(resnet_block_runs):
    reference, fused, _, _ = resnet_block_runs
    assert np.std(reference) > 0.1  # not a vacuous comparison
    scale = float(np.max(np.abs(reference)))
    np.testing.assert_allclose(fused, reference, rtol=1e-4, atol=1e-4 * scale)


def test_folded_fused_and_unfused_agree_bit_for_bit(resnet_block_runs):
    _, fused, unfused, _ = resnet_block_runs
    np.testing.assert_array_equal(fused, unfused)


def test_folding_adds_rounding_only(resnet_block_runs):
    """The folded build is within a few times the unfolded build's own error (float32
    accumulation over 576 terms, twice) of the reference: 2e-6 relative to the output's
    scale bounds both on this block (measured: see the README)."""
    reference, fused, _, unfolded = resnet_block_runs
    assert _max_error(unfolded, reference) < 2e-6
    assert _max_error(fused, reference) < 2e-6


# --- the driver: folding before the compile cache ----------------------------------------------------


def test_split_graph_passes():
    assert split_graph_passes("fold-constants{growth-limit=3},legalize-ops,fuse-ops") == (
        "fold-constants{growth-limit=3}",
        "legalize-ops,fuse-ops",
    )
    assert split_graph_passes("legalize-ops,fuse-ops") == ("", "legalize-ops,fuse-ops")
    with pytest.raises(CompileError, match="fold-constants must come first"):
        split_graph_passes("legalize-ops,fold-constants")
    assert split_graph_passes("fold-constants") == ("fold-constants", "")


def test_a_cache_hit_binds_the_folded_weights(tmp_path, monkeypatch):
    """The second compile comes from the cache and still runs on the folded weights (the
    unfolded ones would not even match the code's buffers)."""
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path))
    module = _parse(
        (Path(__file__).resolve().parents[1] / "filecheck" / "fold-constants" / "batch-norm.mlir")
        .read_text()
        .split("// -----")[0]
    )
    x = np.random.default_rng(0).standard_normal((1, 1, 4, 4)).astype(np.float32)
    (expected,) = evaluate(module, "after_conv", [x])
    cold = compile_module(module, DEFAULT_PIPELINE)
    hit = compile_module(module, DEFAULT_PIPELINE)
    assert not cold.from_cache and hit.from_cache
    for compiled in (cold, hit):
        (actual,) = compiled.run("after_conv", x)
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6)


def test_an_array_handed_over_is_held_not_copied():
    """`dense_of(..., take=True)` of a `held_array` (a batch norm's scaled weight): the
    attribute holds the bytes the array is the storage of, and the array is made read-only;
    an array the caller keeps, or one not of `held_array`, is copied."""
    typ = TensorType(f32, [128, 256])
    values = np.arange(128 * 256, dtype=np.float32).reshape(128, 256)
    taken = held_array((128, 256))
    taken[...] = values
    held = dense_of(taken, typ, take=True).data.data
    assert isinstance(held, bytes) and np.shares_memory(np.frombuffer(held, np.uint8), taken)
    assert not taken.flags.writeable
    assert held == values.tobytes() and hash(held) == hash(values.tobytes())

    unheld = held_array((8,))
    unheld[...] = np.arange(8)
    for kept, take in ((values.copy(), False), (values.copy(), True), (unheld, False)):
        shape = list(kept.shape)
        copied = dense_of(kept, TensorType(f32, shape), take).data.data
        assert copied == kept.tobytes()
        assert not np.shares_memory(np.frombuffer(copied, np.uint8), kept)


@pytest.mark.parametrize("contraction", ["conv", "matmul"])
def test_a_large_weight_is_scaled_bit_for_bit(contraction):
    """A batch norm folded into a weight of several megabytes: each scaled element is the
    float64 product rounded once, whether the channel is the weight's first axis (conv2d's O)
    or its last (matmul's N)."""
    if contraction == "conv":
        x_shape, w_shape, out_shape = (1, 128, 4, 4), (512, 128, 3, 3), (1, 512, 2, 2)
        body = "graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}"
    else:
        x_shape, w_shape, out_shape = (2, 1024), (1024, 1024), (2, 1024)
        body = "graph.matmul %x, %w"
    channels = out_shape[1]
    t = lambda shape: f"tensor<{'x'.join(map(str, shape))}xf32>"  # noqa: E731
    vector = t((channels,))
    text = f"""func.func @main(%x: {t(x_shape)}, %w: {t(w_shape)}, %s: {vector}, %b: {vector}, %m: {vector}, %v: {vector}) -> {t(out_shape)} {{
  %y = {body} : ({t(x_shape)}, {t(w_shape)}) -> {t(out_shape)}
  %n = graph.batch_norm %y, %s, %b, %m, %v {{epsilon = 1.000000e-05 : f32}} : ({t(out_shape)}, {vector}, {vector}, {vector}, {vector}) -> {t(out_shape)}
  func.return %n : {t(out_shape)}
}}"""
    rng = np.random.default_rng(3)
    w = rng.standard_normal(w_shape).astype(np.float32)
    scale, bias, mean = (rng.standard_normal(channels).astype(np.float32) for _ in range(3))
    var = rng.uniform(0.5, 1.5, channels).astype(np.float32)
    module = _bind(_parse(text), {1: w, 2: scale, 3: bias, 4: mean, 5: var})
    (bn,) = [op for op in _main(module).walk() if isinstance(op, graph.BatchNormOp)]
    epsilon = bn.epsilon.value.data  # (as the pass reads it)
    folded = _folded(module)
    assert _ops(folded)["graph.batch_norm"] == 0
    (weight,) = [
        op
        for op in _main(folded).walk()
        if isinstance(op, graph.ConstantOp) and tuple(op.result.type.get_shape()) == w_shape
    ]
    inv = scale.astype(np.float64) / np.sqrt(var.astype(np.float64) + epsilon)
    axis = 0 if contraction == "conv" else 1
    factors = inv.reshape([channels if i == axis else 1 for i in range(len(w_shape))])
    expected = (w.astype(np.float64) * factors).astype(np.float32)
    actual = np.frombuffer(weight.value.data.data, np.float32).reshape(w_shape)
    assert actual.tobytes() == expected.tobytes()
