"""Kernels scheduled and compiled by worker processes (`lowering/schedule_workers.py`): the same
units, bit for bit, as a compile in one process, with or without the cache; the records they
make serve a later compile; a kernel a worker cannot schedule is scheduled by the parent."""

from __future__ import annotations

import numpy as np
import pytest

from fusion_compiler.dialects import graph, loop
from fusion_compiler.dialects.diagnostics import verify_module
from fusion_compiler.driver import DEFAULT_PIPELINE, PassManager, compile_module
from fusion_compiler.host import JOBS_VARIABLE
from fusion_compiler.lowering import compile_cache, native_units, schedule_memo, schedule_workers
from fusion_compiler.passes.analysis.launches import kernel_launches

CONV = (
    "graph.conv2d {x}, {w} {{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, "
    "dilation = array<i64: 1, 1>, groups = 1 : i64}} : "
    "(tensor<1x{c}x12x12xf32>, tensor<{o}x{c}x3x3xf32>) -> tensor<1x{o}x12x12xf32>"
)

THREE_CONVS = f"""
func.func @main(%x: tensor<1x8x12x12xf32>, %b: tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32> {{
  %w1 = graph.constant dense<0.5> : tensor<16x8x3x3xf32>
  %w2 = graph.constant dense<0.25> : tensor<16x16x3x3xf32>
  %w3 = graph.constant dense<0.125> : tensor<16x16x3x3xf32>
  %c1 = {CONV.format(x="%x", w="%w1", c=8, o=16)}
  %r1 = graph.relu %c1 : tensor<1x16x12x12xf32>
  %c2 = {CONV.format(x="%r1", w="%w2", c=16, o=16)}
  %s2 = graph.add %c2, %b : (tensor<1x16x12x12xf32>, tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32>
  %r2 = graph.relu %s2 : tensor<1x16x12x12xf32>
  %c3 = {CONV.format(x="%r2", w="%w3", c=16, o=16)}
  %r3 = graph.sigmoid %c3 : tensor<1x16x12x12xf32>
  %m = graph.max_pool2d %r3 {{kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, ceil_mode = false}} : (tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32>
  func.return %m : tensor<1x16x12x12xf32>
}}
"""
"""Three convolutions of constant weights (one with a residual input), a pooling: kernels of
several kinds, with packing kernels."""

ONE_OP_CHANGED = THREE_CONVS.replace("%r3 = graph.sigmoid", "%r3 = graph.tanh")


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [
        rng.standard_normal((1, 8, 12, 12)).astype(np.float32),
        rng.standard_normal((1, 16, 12, 12)).astype(np.float32),
    ]


@pytest.fixture(autouse=True)
def fixed_host(fixed_tile_host):
    """The plans (and so the packing kernels, the units) do not depend on the machine."""


@pytest.fixture
def noted(monkeypatch):
    """The unit keys of each model stored, and the kernels each use of the workers scheduled."""
    notes: dict[str, list] = {"units": [], "ahead": []}
    model_bytes = compile_cache._model_bytes

    def noting_units(kernels, bindings, unit_keys):
        notes["units"].append(list(unit_keys))
        return model_bytes(kernels, bindings, unit_keys)

    call = schedule_workers.ScheduleWorkers.__call__

    def noting_call(self, module, pending):
        made = call(self, module, pending)
        notes["ahead"].append(len(made))
        return made

    monkeypatch.setattr(compile_cache, "_model_bytes", noting_units)
    monkeypatch.setattr(schedule_workers.ScheduleWorkers, "__call__", noting_call)
    return notes


def _workers(monkeypatch, jobs: int) -> None:
    monkeypatch.setenv(JOBS_VARIABLE, str(jobs))
    monkeypatch.setattr(schedule_workers, "SCHEDULE_PARALLEL_MIN_OPS", 0)


def _run(model) -> bytes:
    (result,) = model.run("main", *_inputs())
    return result.tobytes()


def test_workers_compile_the_units_one_process_compiles(
    tmp_path, monkeypatch, noted, parse_random_weights
):
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path / "workers"))
    _workers(monkeypatch, 2)
    parallel = compile_module(parse_random_weights(THREE_CONVS))
    assert noted["ahead"] == [4]  # every kernel scheduled by a worker
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path / "serial"))
    monkeypatch.setenv(JOBS_VARIABLE, "1")
    serial = compile_module(parse_random_weights(THREE_CONVS))
    assert noted["ahead"] == [4, 0]
    assert noted["units"][0] == noted["units"][1]  # the same units, so the same code
    assert _run(parallel) == _run(serial)
    unfused = compile_module(
        parse_random_weights(THREE_CONVS), "fold-constants,legalize-ops", cache=False
    )
    assert _run(parallel) == _run(unfused)


def test_workers_compile_without_the_cache(monkeypatch, noted, parse_random_weights):
    _workers(monkeypatch, 2)
    parallel = compile_module(parse_random_weights(THREE_CONVS), cache=False)
    assert noted["ahead"] == [4]
    monkeypatch.setenv(JOBS_VARIABLE, "1")
    serial = compile_module(parse_random_weights(THREE_CONVS), cache=False)
    assert _run(parallel) == _run(serial)


def test_the_records_workers_make_serve_an_edited_model(
    tmp_path, monkeypatch, noted, parse_random_weights
):
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path))
    _workers(monkeypatch, 2)
    compile_module(parse_random_weights(THREE_CONVS))
    replayed = []
    replay = schedule_memo.ScheduleMemo.replay

    def counting_replay(self, module, *args):
        replay(self, module, *args)
        replayed.append(self.replayed)

    monkeypatch.setattr(schedule_memo.ScheduleMemo, "replay", counting_replay)
    edited = compile_module(parse_random_weights(ONE_OP_CHANGED))
    # The other three kernels came from the records the workers made; the third alone was new,
    # scheduled by one worker in the background, which compiled it while this process went on.
    assert replayed == [3]
    assert noted["ahead"] == [4, 1]
    assert _run(edited) == _run(compile_module(parse_random_weights(ONE_OP_CHANGED), cache=False))


def _edit_in_background(tmp_path, monkeypatch, parse_random_weights, **failing):
    """The edited model compiled after THREE_CONVS, its new kernel in a background worker
    (whose functions named in `failing` then raise)."""
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path))
    _workers(monkeypatch, 2)
    compile_module(parse_random_weights(THREE_CONVS))
    monkeypatch.setattr(schedule_workers, "BACKGROUND_MIN_OPS", 0)

    def fail(*args):
        raise RuntimeError("a worker failed")

    for name in failing:
        monkeypatch.setattr(schedule_workers, name, fail)
    return compile_module(parse_random_weights(ONE_OP_CHANGED))


def test_a_kernel_compiled_in_the_background_gives_the_same_units(
    tmp_path, monkeypatch, noted, parse_random_weights
):
    edited = _edit_in_background(tmp_path, monkeypatch, parse_random_weights)
    assert noted["ahead"] == [4, 1]
    monkeypatch.setenv(JOBS_VARIABLE, "1")
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path / "fresh"))
    serial = compile_module(parse_random_weights(ONE_OP_CHANGED))
    assert noted["units"][1] == noted["units"][2]
    assert _run(edited) == _run(serial)


def test_a_background_worker_that_fails_to_compile_leaves_a_correct_model(
    tmp_path, monkeypatch, noted, parse_random_weights
):
    """The worker sends the record, then fails to compile the unit: the units it promised are
    missing, and the model is compiled again without the memo."""
    edited = _edit_in_background(tmp_path, monkeypatch, parse_random_weights, compile_one=True)
    assert noted["ahead"] == [4, 1]
    assert _run(edited) == _run(compile_module(parse_random_weights(ONE_OP_CHANGED), cache=False))


def test_a_kernel_the_background_worker_cannot_schedule_is_scheduled_here(
    tmp_path, monkeypatch, noted, parse_random_weights
):
    edited = _edit_in_background(tmp_path, monkeypatch, parse_random_weights, schedule_alone=True)
    assert noted["ahead"] == [4, 0]  # (no record: this process scheduled the kernel)
    assert _run(edited) == _run(compile_module(parse_random_weights(ONE_OP_CHANGED), cache=False))


def test_a_kernel_a_worker_cannot_schedule_is_scheduled_here(
    monkeypatch, noted, parse_random_weights
):
    _workers(monkeypatch, 2)
    schedule = schedule_workers.schedule_and_compile

    def failing_on_pooling(kernel, calls, *args):
        if "max_pool" in kernel.sym_name.data:
            raise RuntimeError("a worker failed")
        return schedule(kernel, calls, *args)

    monkeypatch.setattr(schedule_workers, "schedule_and_compile", failing_on_pooling)
    model = compile_module(parse_random_weights(THREE_CONVS), cache=False)
    assert noted["ahead"] == [3]
    monkeypatch.setenv(JOBS_VARIABLE, "1")
    assert _run(model) == _run(compile_module(parse_random_weights(THREE_CONVS), cache=False))


def test_a_launch_module_launches_the_kernel_on_its_constants(parse_random_weights):
    module = parse_random_weights(THREE_CONVS)
    PassManager(DEFAULT_PIPELINE.rsplit(",", 1)[0]).run(module)  # fused, not scheduled
    launches = kernel_launches(module)
    (kernel,) = [
        op for op in module.ops if isinstance(op, loop.FuncOp) and "add" in op.sym_name.data
    ]
    calls = launches[kernel.sym_name.data]
    alone = schedule_workers.launch_module(kernel, calls)
    moved, function = list(alone.ops)
    assert moved is kernel
    (launch,) = [op for op in function.walk() if isinstance(op, graph.CallLoopOp)]
    # The weights are a constant (a copy of the same value); the activations and the residual
    # input are the function's arguments.
    constants = [i for i, v in enumerate(launch.inputs) if isinstance(v.owner, graph.ConstantOp)]
    assert len(constants) == 1
    (index,) = constants
    assert launch.inputs[index].owner.value == calls[0].inputs[index].owner.value
    assert len(function.body.block.args) == len(launch.inputs) - 1 == 2
    assert [r.type for r in launch.outputs] == [r.type for r in calls[0].outputs]
    verify_module(alone)


TWO_CONVS_CONCATENATED = f"""
func.func @main(%x: tensor<1x8x12x12xf32>) -> tensor<1x32x12x12xf32> {{
  %w1 = graph.constant dense<0.5> : tensor<16x8x3x3xf32>
  %w2 = graph.constant dense<0.25> : tensor<16x8x3x3xf32>
  %c1 = {CONV.format(x="%x", w="%w1", c=8, o=16)}
  %r1 = graph.relu %c1 : tensor<1x16x12x12xf32>
  %c2 = {CONV.format(x="%x", w="%w2", c=8, o=16)}
  %r2 = graph.sigmoid %c2 : tensor<1x16x12x12xf32>
  %y = graph.concat %r1, %r2 {{axis = 1 : i64}} : (tensor<1x16x12x12xf32>, tensor<1x16x12x12xf32>) -> tensor<1x32x12x12xf32>
  func.return %y : tensor<1x32x12x12xf32>
}}
"""


def test_a_concat_written_in_place_is_neither_scheduled_nor_compiled(
    monkeypatch, noted, parse_random_weights
):
    """Only the convolutions go to the workers: the concat, written in place, never runs, so
    no worker schedules it, this process's units (kernels, stubs, entries) hold none of it,
    and its launch is dropped."""
    _workers(monkeypatch, 2)
    split = native_units.split_units
    compiled_here: list[str] = []

    def noting_split(module):
        units = split(module)
        compiled_here.extend(op.sym_name.data for unit in units for op in unit.ops)
        return units

    monkeypatch.setattr(native_units, "split_units", noting_split)
    model = compile_module(parse_random_weights(TWO_CONVS_CONCATENATED), cache=False)
    assert noted["ahead"] == [2]  # the two convolutions
    assert compiled_here and "main" in compiled_here
    assert not [name for name in compiled_here if "concat" in name]
    assert not [name for name in model.kernels("main") if "concat" in name]
    monkeypatch.setenv(JOBS_VARIABLE, "1")
    x = _inputs()[0]
    (got,) = model.run("main", x)
    (want,) = compile_module(parse_random_weights(TWO_CONVS_CONCATENATED), cache=False).run(
        "main", x
    )
    assert got.tobytes() == want.tobytes()
