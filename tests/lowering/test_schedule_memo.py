"""The schedule memo (`lowering/schedule_memo.py`): a model with one op changed schedules only
the kernels that changed, and is compiled to the same units, bit for bit, as without the memo;
a record whose unit is gone or damaged is never trusted."""

from __future__ import annotations

import json

import numpy as np
import pytest
from xdsl.dialects.builtin import BFloat16Type, FunctionType, MemRefType, f16, f32, i1, i8, i64
from xdsl.parser import Parser

from fusion_compiler.driver import DEFAULT_PIPELINE, compile_module
from fusion_compiler.lowering import compile_cache, schedule_memo, schedule_workers
from fusion_compiler.lowering.native_units import stub_digest
from fusion_compiler.lowering.schedule_memo import _context, _memref_function_type
from fusion_compiler.passes.schedule.contraction_schedule import ScheduleContractionsPass
from fusion_compiler.passes.schedule.kernel_pass import schedulable_kernels

TWO_CONVS = """
func.func @main(%x: tensor<1x48x14x14xf32>) -> tensor<1x32x14x14xf32> {
  %w1 = graph.constant dense<0.5> : tensor<32x48x3x3xf32>
  %w2 = graph.constant dense<0.25> : tensor<32x32x3x3xf32>
  %c1 = graph.conv2d %x, %w1 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x48x14x14xf32>, tensor<32x48x3x3xf32>) -> tensor<1x32x14x14xf32>
  %r1 = graph.relu %c1 : tensor<1x32x14x14xf32>
  %c2 = graph.conv2d %r1, %w2 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x32x14x14xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x14x14xf32>
  %r2 = graph.relu %c2 : tensor<1x32x14x14xf32>
  func.return %r2 : tensor<1x32x14x14xf32>
}
"""
"""Two convolutions of constant weights: prepack-weights gives each a packing kernel."""

SECOND_A_SIGMOID = TWO_CONVS.replace("%r2 = graph.relu", "%r2 = graph.sigmoid")
"""The second kernel changed; the first (and its packing) the same."""


@pytest.fixture(autouse=True)
def fixed_host(fixed_tile_host):
    """The plans (and so the packing kernels) do not depend on the machine."""


@pytest.fixture
def memo_counts(monkeypatch):
    """The kernels each compile replayed from the memo, the kernels schedule-contractions
    scheduled (not counting stubs), and the unit keys of each model stored."""
    counts: dict[str, list] = {"replayed": [], "scheduled": [], "units": []}
    replay = schedule_memo.ScheduleMemo.replay

    def counting_replay(self, module, *args):
        replay(self, module, *args)
        counts["replayed"].append(self.replayed)

    schedule = ScheduleContractionsPass.apply

    def counting_schedule(self, ctx, module):
        kernels = schedulable_kernels(module, register_tiled=True)
        counts["scheduled"].append(sum(stub_digest(k) is None for k in kernels))
        schedule(self, ctx, module)

    model_bytes = compile_cache._model_bytes

    def noting_units(kernels, bindings, unit_keys):
        counts["units"].append(list(unit_keys))
        return model_bytes(kernels, bindings, unit_keys)

    monkeypatch.setattr(schedule_memo.ScheduleMemo, "replay", counting_replay)
    monkeypatch.setattr(ScheduleContractionsPass, "apply", counting_schedule)
    monkeypatch.setattr(compile_cache, "_model_bytes", noting_units)
    # (an edit's new kernel is scheduled here, not by a background worker: counted)
    monkeypatch.setattr(schedule_workers, "BACKGROUND_MIN_OPS", 10**9)
    return counts


def _input() -> np.ndarray:
    return np.random.default_rng(1).standard_normal((1, 48, 14, 14)).astype(np.float32)


def test_an_edited_model_replays_the_kernels_it_shares(
    tmp_path, monkeypatch, memo_counts, parse_random_weights
):
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path / "cache"))
    compile_module(parse_random_weights(TWO_CONVS))
    assert memo_counts["replayed"] == [0]
    edited = parse_random_weights(SECOND_A_SIGMOID)
    model = compile_module(edited)
    # The first convolution (and its packing kernel) came from the memo: one kernel replayed,
    # and schedule-contractions saw one kernel to schedule, not two.
    assert memo_counts["replayed"] == [0, 1]
    assert memo_counts["scheduled"][-1] == 1
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path / "fresh"))
    fresh = compile_module(edited)
    assert memo_counts["replayed"][-1] == 0
    # The same units, so the same code, as a compile that knew nothing before.
    assert memo_counts["units"][1] == memo_counts["units"][2]
    x = _input()
    (got,) = model.run("main", x)
    (want,) = fresh.run("main", x)
    assert got.tobytes() == want.tobytes()
    (unfused,) = compile_module(edited, cache=False).run("main", x)
    assert got.tobytes() == unfused.tobytes()


def test_fuse_tir_builds_only_the_kernels_of_groups_without_a_record(
    tmp_path, monkeypatch, parse_random_weights
):
    from fusion_compiler.passes import fuse_tir

    built: list[str] = []
    build = fuse_tir.build_fused_kernel

    def noting_build(function, *args):
        built.append(function.sym_name.data)
        return build(function, *args)

    monkeypatch.setattr(fuse_tir, "build_fused_kernel", noting_build)
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path))
    compile_module(parse_random_weights(TWO_CONVS))
    assert built == ["fused_conv2d_relu", "fused_conv2d_relu_1"]
    built.clear()
    compile_module(parse_random_weights(SECOND_A_SIGMOID))
    assert built == ["fused_conv2d_sigmoid"]  # the first group's kernel is the memo's stub


def test_the_records_name_the_packing_kernels(tmp_path, monkeypatch, parse_random_weights):
    monkeypatch.setattr(compile_cache, "_store", compile_cache._store)
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path))
    compile_module(parse_random_weights(TWO_CONVS))
    records = []
    for path in tmp_path.glob("*.entry"):
        parsed = compile_cache._parse_entry(path.read_bytes())
        assert parsed is not None
        if parsed[0].get("format") == schedule_memo.MEMO_FORMAT:
            records.append(schedule_memo.Record.of_data(parsed[0]))
    assert len(records) == 2  # one per kernel
    for record in records:
        assert record is not None
        # Each convolution reads its packed weights instead of the constant.
        (packing,) = record.packings
        assert packing.base.startswith("prepack")
        assert packing.sources == (1,)
        assert (0, 0) in record.inputs and (-1, 0) in record.inputs
    json.dumps([r.data() for r in records if r is not None])


def test_a_damaged_unit_is_compiled_again(tmp_path, monkeypatch, memo_counts, parse_random_weights):
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path))
    compile_module(parse_random_weights(TWO_CONVS))
    for key in memo_counts["units"][0]:  # every unit: the memo's records stay
        path = tmp_path / f"{key}.entry"
        path.write_bytes(path.read_bytes()[:100])
    edited = parse_random_weights(SECOND_A_SIGMOID)
    model = compile_module(edited)
    # The first attempt replayed the first convolution; its unit would not load, so the
    # compile started again without the memo (which replays nothing).
    assert memo_counts["replayed"] == [0, 1]
    (want,) = compile_module(edited, cache=False).run("main", _input())
    assert model.run("main", _input())[0].tobytes() == want.tobytes()


def test_a_missing_unit_is_not_replayed(tmp_path, monkeypatch, memo_counts, parse_random_weights):
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path))
    compile_module(parse_random_weights(TWO_CONVS))
    for key in memo_counts["units"][0]:
        (tmp_path / f"{key}.entry").unlink()
    compile_module(parse_random_weights(SECOND_A_SIGMOID))
    assert memo_counts["replayed"] == [0, 0]


@pytest.mark.parametrize(
    "pipeline,applies",
    [
        (DEFAULT_PIPELINE, True),
        (DEFAULT_PIPELINE + "{unroll-jam=2}", True),
        (DEFAULT_PIPELINE.replace(",schedule-kernels", ""), False),
        ("schedule-kernels", False),
    ],
)
def test_the_memo_applies_to_pipelines_ending_with_schedule_kernels(pipeline, applies):
    parts = schedule_memo.split_schedule(pipeline)
    assert (parts is not None) == applies
    if parts is not None:
        assert parts[1].startswith("schedule-kernels")


def test_a_records_kernel_type_reads_back_as_the_parser_reads_it():
    types = [
        FunctionType.from_lists([MemRefType(f32, [1, 64, 56, 56]), MemRefType(i64, [])], []),
        FunctionType.from_lists([MemRefType(f32, [4])], [MemRefType(i1, [3])]),
        FunctionType.from_lists(
            [MemRefType(f16, [2, 3])], [MemRefType(BFloat16Type(), [7]), MemRefType(i8, [1])]
        ),
        FunctionType.from_lists([], []),
    ]
    for function_type in types:
        text = str(function_type)
        assert _memref_function_type(text) == Parser(_context(), text).parse_attribute()
        assert _memref_function_type(text) == function_type
    # anything else is left to the parser
    assert _memref_function_type("(memref<4xf32, strided<[2]>>) -> ()") is None
    assert _memref_function_type("(memref<?xf32>) -> ()") is None
    assert _memref_function_type("(tensor<4xf32>) -> ()") is None
