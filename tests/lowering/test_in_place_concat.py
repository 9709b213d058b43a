"""Concats in place (`lowering/in_place.py`): the models compute the same numbers with the
concat launches dropped, in the fused and the unfused build, and the dropped launches are
exactly the concats whose operands all qualify."""

from __future__ import annotations

import numpy as np
import pytest

from fusion_compiler.api import parse
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import DEFAULT_PIPELINE, UNFUSED_PIPELINE, compile_module

RNG = np.random.default_rng(3)


def _dense(array: np.ndarray) -> str:
    return (
        "dense<" + np.array2string(array, separator=", ", threshold=10**9).replace("\n", "") + ">"
    )


def _weights(*shape: int) -> str:
    return _dense((RNG.standard_normal(shape) * 0.3).astype(np.float32))


CONV = "strides = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64"

FIRE_AND_CHAIN = f"""func.func @main(%x: tensor<1x3x6x6xf32>) -> tensor<1x10x6x6xf32> {{
  %w1 = graph.constant {_weights(4, 3, 1, 1)} : tensor<4x3x1x1xf32>
  %w2 = graph.constant {_weights(4, 3, 3, 3)} : tensor<4x3x3x3xf32>
  %w3 = graph.constant {_weights(2, 8, 1, 1)} : tensor<2x8x1x1xf32>
  %a0 = graph.conv2d %x, %w1 {{{CONV}, padding = array<i64: 0, 0, 0, 0>}} : (tensor<1x3x6x6xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x6x6xf32>
  %a = graph.relu %a0 : tensor<1x4x6x6xf32>
  %b0 = graph.conv2d %x, %w2 {{{CONV}, padding = array<i64: 1, 1, 1, 1>}} : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %b = graph.relu %b0 : tensor<1x4x6x6xf32>
  %c = graph.concat %a, %b {{axis = 1 : i64}} : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x8x6x6xf32>
  %d = graph.conv2d %c, %w3 {{{CONV}, padding = array<i64: 0, 0, 0, 0>}} : (tensor<1x8x6x6xf32>, tensor<2x8x1x1xf32>) -> tensor<1x2x6x6xf32>
  %e = graph.concat %c, %d {{axis = 1 : i64}} : (tensor<1x8x6x6xf32>, tensor<1x2x6x6xf32>) -> tensor<1x10x6x6xf32>
  func.return %e : tensor<1x10x6x6xf32>
}}"""
"""SqueezeNet's fire module (two convolutions of one input, concatenated) and DenseNet's
chain (a concat of that concat and a convolution of it), returned: every value of the tree
is written into the output buffer."""

KEPT = """func.func @main(%x: tensor<2x3x4xf32>, %y: tensor<1x3x4xf32>) -> (tensor<2x6x4xf32>, tensor<3x3x4xf32>, tensor<1x6x4xf32>) {
  %a = graph.exp %x : tensor<2x3x4xf32>
  %b = graph.tanh %x : tensor<2x3x4xf32>
  %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
  %s = graph.sigmoid %y : tensor<1x3x4xf32>
  %d = graph.concat %s, %y {axis = 0 : i64} : (tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<2x3x4xf32>
  %e = graph.concat %d, %s {axis = 0 : i64} : (tensor<2x3x4xf32>, tensor<1x3x4xf32>) -> tensor<3x3x4xf32>
  %f = graph.concat %s, %s {axis = 1 : i64} : (tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<1x6x4xf32>
  func.return %c, %e, %f : tensor<2x6x4xf32>, tensor<3x3x4xf32>, tensor<1x6x4xf32>
}"""
"""Three concats keep their launch: `%c` along channels at batch 2 (its parts are not
contiguous), `%d` of an argument, `%f` of one value twice. `%e` is written in place all the
same: `%d` (the kept concat writes it there) and `%s` are its parts."""


def _inputs(module) -> list[np.ndarray]:
    main = next(op for op in module.ops if op.sym_name.data == "main")
    return [RNG.standard_normal(arg.type.get_shape()).astype(np.float32) for arg in main.args]


@pytest.mark.parametrize("pipeline", [DEFAULT_PIPELINE, UNFUSED_PIPELINE], ids=["fused", "unfused"])
def test_concats_written_in_place_compute_the_reference(pipeline):
    module = parse(FIRE_AND_CHAIN)
    inputs = _inputs(module)
    (expected,) = evaluate(module, "main", inputs)
    model = compile_module(module, pipeline, cache=False)
    assert not [name for name in model.kernels("main") if "concat" in name]
    (actual,) = model.run("main", *inputs)
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


def test_concats_that_cannot_be_written_in_place_keep_their_launch():
    module = parse(KEPT)
    inputs = _inputs(module)
    expected = evaluate(module, "main", inputs)
    unfused = compile_module(module, UNFUSED_PIPELINE, cache=False)
    fused = compile_module(module, DEFAULT_PIPELINE, cache=False)
    assert sum("concat" in name for name in unfused.kernels("main")) == 3
    for model in (unfused, fused):
        for actual, want in zip(model.run("main", *inputs), expected, strict=True):
            np.testing.assert_allclose(actual, want, rtol=1e-6, atol=1e-7)


def test_a_concat_replayed_from_the_schedule_memo_is_still_written_in_place(tmp_path, monkeypatch):
    """The memo puts stubs in place of kernels scheduled before; a concat's stub keeps the
    mark lower-graph reads, so an edited model drops the same launches."""
    from fusion_compiler.lowering import compile_cache

    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path))
    compile_module(parse(FIRE_AND_CHAIN), UNFUSED_PIPELINE)
    edited = parse(FIRE_AND_CHAIN.replace("%b = graph.relu", "%b = graph.sigmoid"))
    model = compile_module(edited, UNFUSED_PIPELINE)
    assert not [name for name in model.kernels("main") if "concat" in name]
    inputs = _inputs(edited)
    (expected,) = evaluate(edited, "main", inputs)
    np.testing.assert_allclose(model.run("main", *inputs)[0], expected, rtol=1e-5, atol=1e-6)


def test_an_edited_model_replays_its_concats(tmp_path, monkeypatch):
    """A concat written in place has no launch, but its unit is compiled all the same, so the
    schedule memo's record of it is usable: an edit elsewhere does not schedule it again."""
    from fusion_compiler.lowering import compile_cache, schedule_memo, schedule_workers

    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path))
    # (the edit's new kernels are scheduled here, not by a background worker: noted)
    monkeypatch.setattr(schedule_workers, "BACKGROUND_MIN_OPS", 10**9)
    compile_module(parse(FIRE_AND_CHAIN))
    pending: list[list[str]] = []
    replay = schedule_memo.ScheduleMemo.replay

    def noting_replay(self, module, *args):
        replay(self, module, *args)
        pending.append(list(self._pending))

    monkeypatch.setattr(schedule_memo.ScheduleMemo, "replay", noting_replay)
    edited = parse(FIRE_AND_CHAIN.replace("%b = graph.relu", "%b = graph.sigmoid"))
    model = compile_module(edited)
    (names,) = pending
    assert names and not [name for name in names if "concat" in name]
    inputs = _inputs(edited)
    (expected,) = evaluate(edited, "main", inputs)
    np.testing.assert_allclose(model.run("main", *inputs)[0], expected, rtol=1e-5, atol=1e-6)


NEG_CAT = """
loop.func @neg(%a: memref<1x2x8xf32>) outs(%b: memref<1x2x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      %0 = memref.load %a[%c0, %i, %j] : memref<1x2x8xf32>
      %1 = arith.negf %0 : f32
      memref.store %1, %b[%c0, %i, %j] : memref<1x2x8xf32>
    }
  }
  loop.return
}
loop.func @cat(%a: memref<1x2x8xf32>, %b: memref<1x2x8xf32>) outs(%c: memref<1x4x8xf32>) attributes {fusion.concat_axis = 1 : i64} {
  loop.return
}
func.func @main(%x: tensor<1x2x8xf32>) -> tensor<1x4x8xf32> {
  %a = graph.call_loop @neg(%x) : (tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  %b = graph.call_loop @neg(%a) : (tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  %c = graph.call_loop @cat(%a, %b) : (tensor<1x2x8xf32>, tensor<1x2x8xf32>) -> tensor<1x4x8xf32>
  func.return %c : tensor<1x4x8xf32>
}
"""
"""A concat of two intermediates, which lower-graph writes in place (its body is not read)."""


def test_the_in_place_answer_is_kept_until_a_launch_changes(monkeypatch):
    """Every scheduling pass asks `in_place_kernels`: the module keeps the answer, and a
    changed launch (here the concat's operand replaced by the graph's argument, which has a
    buffer of its own) makes it computed again, and different."""
    from fusion_compiler.lowering import lower_graph

    module = parse(NEG_CAT)
    computed = []
    entries = lower_graph._entries
    monkeypatch.setattr(lower_graph, "_entries", lambda f: computed.append(f) or entries(f))
    assert lower_graph.in_place_kernels(module) == {"cat"}
    assert lower_graph.in_place_kernels(module) == {"cat"}
    assert len(computed) == 1
    main = next(
        op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == "main"
    )
    launches = [op for op in main.body.block.ops if op.name == "graph.call_loop"]
    launches[2].operands = (main.body.block.args[0], launches[2].operands[1])
    assert lower_graph.in_place_kernels(module) == set()
    assert len(computed) == 2
