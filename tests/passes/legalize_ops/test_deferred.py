"""Deferred kernels (`passes/legalize_ops/deferred.py`): a kernel legalize-ops defers is built,
when it is needed, into exactly the kernel it would have built at once; a compile that
defers kernels gives the same units, bit for bit, as one that does not; and a deferred
kernel left unbuilt is never compiled."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from fusion_compiler.api import parse
from fusion_compiler.dialects.loop import FuncOp as KernelOp
from fusion_compiler.driver import DEFAULT_PIPELINE, PassManager, compile_module
from fusion_compiler.lowering import compile_cache, schedule_memo
from fusion_compiler.lowering.ir_hash import module_hash
from fusion_compiler.passes.analysis.kernel_sources import source_digest
from fusion_compiler.passes.legalize_ops import deferred

BENCH = Path(__file__).resolve().parents[3] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from graph_spec import build_module  # noqa: E402
from random_graphs import draw_graph  # noqa: E402

EXAMPLES = sorted((Path(__file__).resolve().parents[3] / "examples").glob("*.mlir"))

CONCATS = """func.func @main(%x: tensor<1x4x5x5xf32>, %y: tensor<1x6x5x5xf32>) -> tensor<1x10x5x5xf32> {
  %h = graph.constant dense<2.0> : tensor<f32>
  %a = graph.mul %x, %h : (tensor<1x4x5x5xf32>, tensor<f32>) -> tensor<1x4x5x5xf32>
  %b = graph.relu %y : tensor<1x6x5x5xf32>
  %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<1x4x5x5xf32>, tensor<1x6x5x5xf32>) -> tensor<1x10x5x5xf32>
  func.return %c : tensor<1x10x5x5xf32>
}"""
"""A literal (the scalar `%h`) and a concat (whose kernel carries its axis)."""


def _modules():
    for path in EXAMPLES:
        yield path.name, parse(path.read_text())
    yield "concats", parse(CONCATS)
    for seed in range(12):
        yield f"random graph {seed}", build_module(draw_graph(seed))


@pytest.mark.parametrize(
    "name,module", list(_modules()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_a_deferred_kernel_is_built_as_legalize_ops_builds_it(name, module):
    PassManager("fold-constants").run(module)
    eager = module.clone()
    PassManager("legalize-ops,annotate-pattern").run(eager)
    eager_kernels = {k.sym_name.data: k for k in eager.ops if isinstance(k, KernelOp)}
    kinds = {source_digest(eager, k): k.pattern_kind for k in eager_kernels.values()}
    deferred.offer_kinds(module, kinds.get)
    PassManager("legalize-ops").run(module)
    waiting = deferred.deferred_kernels(module)
    assert len(waiting) == len(eager_kernels)
    for kernel in waiting:
        assert list(kernel.body.block.ops)[0].name == "loop.return"  # no body yet
        deferred.materialize(module, kernel)
    assert not deferred.deferred_kernels(module)
    assert module_hash(module) == module_hash(eager)


TWO_CONVS = """
func.func @main(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %w1 = graph.constant dense<0.5> : tensor<16x16x3x3xf32>
  %w2 = graph.constant dense<0.25> : tensor<16x16x1x1xf32>
  %c1 = graph.conv2d %x, %w1 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %r1 = graph.relu %c1 : tensor<1x16x8x8xf32>
  %c2 = graph.conv2d %r1, %w2 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x8x8xf32>
  %r2 = graph.relu %c2 : tensor<1x16x8x8xf32>
  func.return %r2 : tensor<1x16x8x8xf32>
}
"""
EDITED = TWO_CONVS.replace("%r2 = graph.relu", "%r2 = graph.sigmoid")


@pytest.fixture
def noted(monkeypatch):
    """The kernels each legalize-ops deferred, and the unit keys of each model stored."""
    seen: dict[str, list] = {"deferred": [], "units": []}
    defer = deferred.defer

    def noting_defer(module, kernel, made_from, kind):
        seen["deferred"].append(kernel.sym_name.data)
        defer(module, kernel, made_from, kind)

    model_bytes = compile_cache._model_bytes

    def noting_units(kernels, bindings, unit_keys):
        seen["units"].append(list(unit_keys))
        return model_bytes(kernels, bindings, unit_keys)

    monkeypatch.setattr(
        "fusion_compiler.passes.legalize_ops.kernels.defer", noting_defer, raising=True
    )
    monkeypatch.setattr(compile_cache, "_model_bytes", noting_units)
    return seen


def _input() -> np.ndarray:
    return np.random.default_rng(3).standard_normal((1, 16, 8, 8)).astype(np.float32)


def test_an_edited_model_defers_the_kernels_it_shares(tmp_path, monkeypatch, noted):
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path / "cache"))
    compile_module(parse(TWO_CONVS))
    assert noted["deferred"] == []  # nothing known yet
    model = compile_module(parse(EDITED))
    # both convolutions and the relu were compiled before: only the sigmoid is built now
    assert sorted(noted["deferred"]) == ["conv2d", "conv2d_1", "relu"]
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path / "fresh"))
    fresh = compile_module(parse(EDITED))
    assert noted["units"][1] == noted["units"][2]
    assert model.run("main", _input())[0].tobytes() == fresh.run("main", _input())[0].tobytes()


def test_a_deferred_kernel_left_unbuilt_compiles_the_model_again(tmp_path, monkeypatch, noted):
    """Were the memo to leave a deferred kernel unbuilt, its empty body would compute nothing:
    the driver finds it before fuse-tir (or after lower-graph) and compiles the module again
    without the memo."""
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path))
    compile_module(parse(TWO_CONVS))
    monkeypatch.setattr(schedule_memo, "materialize", lambda module, kernel: None)
    misses = []
    compile_native = compile_cache.Compile.run

    def noting_run(self, memo, *args):
        misses.append(memo is None)
        return compile_native(self, memo, *args)

    monkeypatch.setattr(compile_cache.Compile, "run", noting_run)
    model = compile_module(parse(EDITED))
    assert misses == [False, True]  # with the memo, then again without it
    (want,) = compile_module(parse(EDITED), cache=False).run("main", _input())
    assert model.run("main", _input())[0].tobytes() == want.tobytes()


def test_kinds_are_offered_only_to_pipelines_that_analyse_what_legalize_ops_makes():
    fusion = DEFAULT_PIPELINE.split(",schedule-kernels")[0].replace("fold-constants,", "")
    assert schedule_memo.lazy_legalize_holds(fusion)
    assert not schedule_memo.lazy_legalize_holds(
        fusion.replace("annotate-pattern", "annotate-pattern{force=true}")
    )
    assert not schedule_memo.lazy_legalize_holds(fusion.replace("annotate-pattern,", ""))
    assert not schedule_memo.lazy_legalize_holds(fusion.replace(",fuse-tir", ""))
