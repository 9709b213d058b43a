"""Profiling builds: timers around every launch in the native entry, counted statically
(`profiling`, `profile_to_llvm`), read back by `CompiledModel.profile` (`profile_report`),
against roofs (`machine_roofs`). No test depends on how long anything takes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fusion_compiler import driver
from fusion_compiler.errors import ArgumentError
from fusion_compiler.lowering import machine_roofs
from fusion_compiler.lowering.machine_roofs import Roofs
from fusion_compiler.lowering.profile_report import SCHEMA, KernelProfile, Profile

# A matmul and a softmax; a second entry launching one kernel twice (softmaxes do not fuse).
GRAPH = """
func.func @main(%x: tensor<16x32xf32>, %w: tensor<32x24xf32>) -> tensor<16x24xf32> {
  %m = "graph.matmul"(%x, %w) : (tensor<16x32xf32>, tensor<32x24xf32>) -> tensor<16x24xf32>
  %s = "graph.softmax"(%m) <{axis = 1 : i64}> : (tensor<16x24xf32>) -> tensor<16x24xf32>
  func.return %s : tensor<16x24xf32>
}
func.func @other(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = "graph.softmax"(%x) <{axis = 0 : i64}> : (tensor<8xf32>) -> tensor<8xf32>
  %z = "graph.softmax"(%y) <{axis = 0 : i64}> : (tensor<8xf32>) -> tensor<8xf32>
  func.return %z : tensor<8xf32>
}
"""

ROOFS = Roofs(core_gflops=100.0, gbps=10.0, source="given")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def module():
    from fusion_compiler.dialects.context import make_context
    from fusion_compiler.dialects.diagnostics import parse_source

    return parse_source(make_context(), GRAPH, "<test>")


@pytest.fixture
def inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in ((16, 32), (32, 24))]


def test_a_normal_build_carries_no_timing_code(module, cache):
    normal = driver.compile_module(module, cache=False)
    profiled = driver.compile_module(module, cache=False, profile=True)
    for text in (normal.llvm_ir, normal.assembly):
        assert "clock_gettime" not in text and "__fusion_profile" not in text
    assert "clock_gettime" in profiled.llvm_ir
    assert "@__fusion_profile_main" in profiled.llvm_ir
    assert "@__fusion_profile_other" in profiled.llvm_ir


def test_profiling_builds_are_cached_apart_from_normal_ones(module, inputs, cache):
    normal = driver.compile_module(module)
    profiled = driver.compile_module(module, profile=True)
    assert not normal.from_cache and not profiled.from_cache
    again, profiled_again = (
        driver.compile_module(module),
        driver.compile_module(module, profile=True),
    )
    assert again.from_cache and profiled_again.from_cache
    assert "clock_gettime" not in again.llvm_ir and "clock_gettime" in profiled_again.llvm_ir
    with pytest.raises(ArgumentError, match="compiled without profiling"):
        again.profile("main", *inputs)
    profile = profiled_again.profile("main", *inputs, roofs=ROOFS)  # counters survive the cache
    assert [k.name for k in profile.kernels] and all(k.flops for k in profile.kernels)


def test_results_of_a_profiling_build_are_those_of_the_normal_one(module, inputs, cache):
    normal = driver.compile_module(module, cache=False)
    profiled = driver.compile_module(module, cache=False, profile=True)
    (expected,) = normal.run("main", *inputs)
    (got,) = profiled.run("main", *inputs)
    np.testing.assert_array_equal(got, expected)


def test_the_profile_names_every_kernel_with_its_calls_and_static_costs(module, inputs, cache):
    model = driver.compile_module(module, profile=True)
    profile = model.profile("main", *inputs, runs=3, roofs=ROOFS)
    assert profile.runs == 3 and profile.function == "main"
    launched = model.kernels("main")
    assert sorted(k.name for k in profile.kernels) == sorted(set(launched))
    calls = {k.name: k.calls for k in profile.kernels}
    assert calls == {name: launched.count(name) for name in launched}
    flops = {k.name: k.flops for k in profile.kernels}
    assert flops["matmul"] == 2 * 16 * 32 * 24
    assert flops["softmax"] == 6 * 16 * 24  # max, sub, exp, sum, reciprocal, multiply
    shares = sum(profile.share(k) for k in profile.kernels)
    assert 0.5 < shares <= 1.0 + 1e-9  # launches lie inside the run; the gaps are clock reads
    times = [k.seconds for k in profile.kernels]
    assert times == sorted(times, reverse=True)


def test_repeated_launches_are_summed_per_kernel(module, cache):
    model = driver.compile_module(module, profile=True)
    profile = model.profile("other", np.ones(8, np.float32), runs=2, roofs=ROOFS)
    (softmax,) = profile.kernels
    assert softmax.calls == 2  # per run
    assert softmax.bytes == 2 * (4 * 8 + 4 * 8)
    assert softmax.flops == 2 * 6 * 8  # max, sub, exp, sum, reciprocal, multiply


def test_profile_arguments_are_checked(module, inputs, cache):
    model = driver.compile_module(module, profile=True)
    with pytest.raises(ArgumentError, match="runs must be at least 1"):
        model.profile("main", *inputs, runs=0)
    with pytest.raises(ArgumentError, match="no function @nope"):
        model.profile("nope", *inputs)
    with pytest.raises(ArgumentError, match="argument #0"):
        model.profile("main", inputs[1], inputs[0])


def test_the_json_follows_its_schema(module, inputs, cache):
    model = driver.compile_module(module, profile=True)
    data = json.loads(json.dumps(model.profile("main", *inputs, roofs=ROOFS).to_json()))
    assert data["schema"] == SCHEMA
    top = {"function": str, "runs": int, "threads": int, "run_ms": float, "kernel_ms": float}
    for key, kind in top.items():
        assert isinstance(data[key], kind), key
    assert data["roofs"] == {
        "core_gflops": 100.0,
        "compute_gflops": 100.0 * data["threads"],
        "memory_gbps": 10.0,
        "balance_flops_per_byte": 10.0 * data["threads"],
        "source": "given",
    }
    fields = {
        "name": str,
        "calls": int,
        "total_ms": float,
        "share": float,
        "flops": int,
        "bytes": int,
        "gflops_per_s": (float, type(None)),
        "gb_per_s": (float, type(None)),
        "intensity": float,
        "bound": str,
        "roof_fraction": (float, type(None)),
    }
    assert data["kernels"]
    for kernel in data["kernels"]:
        assert set(kernel) == set(fields)
        for key, kind in fields.items():
            assert isinstance(kernel[key], kind), key
        assert kernel["bound"] in ("compute", "memory")


def _profile(flops: int | None, bytes_: int, seconds: float) -> tuple[Profile, KernelProfile]:
    kernel = KernelProfile("k", 1, seconds, flops, bytes_)
    roofs = Roofs(core_gflops=50.0, gbps=20.0, source="given")
    return Profile("main", 1, 2, seconds, (kernel,), roofs), kernel


def test_the_bounding_roof_is_chosen_by_intensity_against_balance():
    # roofs: 2 threads x 50 = 100 GFLOP/s, 20 GB/s: balance 5 FLOP/byte
    profile, kernel = _profile(flops=10**9, bytes_=10**8, seconds=0.1)  # 10 FLOP/byte
    assert profile.balance == 5.0
    assert profile.bound(kernel) == "compute"
    assert profile.roof_fraction(kernel) == pytest.approx(10.0 / 100.0)  # 10 GFLOP/s
    profile, kernel = _profile(flops=10**8, bytes_=10**8, seconds=0.01)  # 1 FLOP/byte
    assert profile.bound(kernel) == "memory"
    assert profile.roof_fraction(kernel) == pytest.approx(10.0 / 20.0)  # 10 GB/s
    profile, kernel = _profile(flops=None, bytes_=10**8, seconds=0.01)
    assert profile.bound(kernel) is None and profile.roof_fraction(kernel) is None
    assert "–" in profile.table()


def test_the_table_has_one_line_per_kernel_and_a_top_option(module, inputs, cache):
    model = driver.compile_module(module, profile=True)
    profile = model.profile("main", *inputs, roofs=ROOFS)
    lines = profile.table().splitlines()
    assert lines[0].startswith("profile of @main: 1 run on ")
    assert lines[1].startswith("roofs (given): compute 100.0 GFLOP/s a core")
    assert lines[2].split() == [
        "kernel", "calls", "total", "ms", "share", "MFLOP", "MB", "GFLOP/s", "GB/s", "bound",
        "%", "of", "roof",
    ]  # fmt: skip
    assert len(lines) == 3 + len(profile.kernels)
    top = profile.table(top=1).splitlines()
    assert len(top) == 5 and top[-1].startswith(f"... {len(profile.kernels) - 1} more kernels")


def test_roofs_are_measured_once_per_machine_and_thread_count(cache, monkeypatch):
    monkeypatch.setattr(machine_roofs, "_measured", {})
    measured = []
    monkeypatch.setattr(
        machine_roofs, "measure_core_gflops", lambda: measured.append("fma") or 80.0
    )
    monkeypatch.setattr(
        machine_roofs, "measure_gbps", lambda t: measured.append(f"stream{t}") or 10.0 * t
    )
    assert machine_roofs.machine_roofs(1) == Roofs(80.0, 10.0, "measured")
    assert machine_roofs.machine_roofs(1) == Roofs(80.0, 10.0, "cached")
    assert machine_roofs.machine_roofs(2) == Roofs(80.0, 20.0, "measured")
    assert measured == ["fma", "stream1", "stream2"]
    (path,) = cache.glob("roofs-*.json")
    assert json.loads(path.read_text())["gbps"] == {"1": 10.0, "2": 20.0}
    assert machine_roofs.machine_roofs(1, 5.0, 6.0) == Roofs(5.0, 6.0, "given")
    assert machine_roofs.machine_roofs(1, gbps=6.0) == Roofs(80.0, 6.0, "given and cached")
    path.write_text("not json")  # a damaged file is measured again
    assert machine_roofs.machine_roofs(1).source == "measured"


def test_the_built_in_measurement_gives_positive_roofs(monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", "")
    monkeypatch.setattr(machine_roofs, "_measured", {})
    monkeypatch.setattr(machine_roofs, "STREAM_ROWS", 256)  # 4 MiB buffers: quick
    roofs = machine_roofs.machine_roofs(1)
    assert roofs.core_gflops > 0 and roofs.gbps > 0 and roofs.source == "measured"


def test_the_public_model_profiles_ir_and_onnx(cache, inputs):
    import fusion_compiler as fc

    model = fc.compile(GRAPH, profile=True)
    profile = model.profile(*inputs, runs=2, roofs=ROOFS)
    assert profile.function == "main" and {k.name for k in profile.kernels} == set(model.kernels)
    by_name = model.profile(x=inputs[0], w=inputs[1], roofs=ROOFS)
    assert by_name.runs == 1
    with pytest.raises(ArgumentError, match="compiled without profiling"):
        fc.compile(GRAPH).profile(*inputs)
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(proto)
    relu = fc.compile(proto, profile=True).profile(np.ones((4, 8), np.float32), roofs=ROOFS)
    (kernel,) = relu.kernels
    assert (kernel.calls, kernel.flops, kernel.bytes) == (1, 32, 2 * 4 * 32)
