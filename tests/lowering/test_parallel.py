"""`parallel` loops on libgomp's threads: results bit-identical to the serial build, any team
size, the serial stand-ins without libgomp, and every example natively.

Kernels here are small, so most tests lower with `parallel_threshold=0` to outline every
parallel loop; team sizes above the core count (3, 7) still exercise uneven and empty chunks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.loop.queries import parallel_work
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import DEFAULT_PIPELINE, UNFUSED_PIPELINE, compile_module
from fusion_compiler.lowering import compile_cache, llvm_codegen, threading_runtime
from fusion_compiler.lowering.jit import JitModule, host_target_machine
from fusion_compiler.lowering.parallel_to_llvm import PARALLEL_THRESHOLD
from fusion_compiler.lowering.threading_runtime import check_threading

ROOT = Path(__file__).resolve().parent.parent.parent
RNG = np.random.default_rng(2024)
TEAMS = (1, 2, 3, 7)


def _random(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _elementwise(rows: int, cols: int, first: int = 0, step: int = 1) -> str:
    """`c = a + b` on rows `first, first + step, ...` (a parallel loop), the others untouched."""
    memref = f"memref<{rows}x{cols}xf32>"
    return f"""
loop.func @add(%a: {memref}, %b: {memref}) outs(%c: {memref}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %first = arith.constant {first} : index
  %step = arith.constant {step} : index
  %rows = arith.constant {rows} : index
  %cols = arith.constant {cols} : index
  loop.for %i = %first to %rows step %step parallel {{
    loop.for %j = %c0 to %cols step %c1 vectorized {{
      %x = memref.load %a[%i, %j] : {memref}
      %y = memref.load %b[%i, %j] : {memref}
      %s = arith.addf %x, %y : f32
      memref.store %s, %c[%i, %j] : {memref}
    }}
  }}
  loop.return
}}
"""


GRAPH_ADD = """
func.func @main(%x: tensor<64xf32>, %y: tensor<64xf32>) -> tensor<64xf32> {
  %a = graph.add %x, %y : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  func.return %a : tensor<64xf32>
}
"""

MATMUL = """
loop.func @matmul(%a: memref<67x45xf32>, %b: memref<45x33xf32>) outs(%c: memref<67x33xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant 67 : index
  %n = arith.constant 33 : index
  %k = arith.constant 45 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %m step %c1 parallel {
    loop.for %j = %c0 to %n step %c1 {
      memref.store %zero, %c[%i, %j] : memref<67x33xf32>
    }
    loop.for %l = %c0 to %k step %c1 {
      loop.for %j = %c0 to %n step %c1 vectorized {
        %x = memref.load %a[%i, %l] : memref<67x45xf32>
        %y = memref.load %b[%l, %j] : memref<45x33xf32>
        %p = arith.mulf %x, %y : f32
        %o = memref.load %c[%i, %j] : memref<67x33xf32>
        %s = arith.addf %o, %p : f32
        memref.store %s, %c[%i, %j] : memref<67x33xf32>
      }
    }
  }
  loop.return
}
"""
"""Rows of `a @ b` by a parallel loop; each row's reduction stays on one thread."""

CAPTURES = """
loop.func @shift(%x: memref<5x40x16xf32>, %s: memref<1xf32>) outs(%y: memref<5x37x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %batch = arith.constant 5 : index
  %rows = arith.constant 37 : index
  %cols = arith.constant 16 : index
  %scale = memref.load %s[%c0] : memref<1xf32>
  loop.for %b = %c0 to %batch step %c1 {
    %shift = arith.remui %b, %c4 : index
    %bi = arith.index_cast %b : index to i32
    %offset = arith.sitofp %bi : i32 to f32
    loop.for %i = %c0 to %rows step %c1 parallel {
      %row = arith.addi %i, %shift : index
      loop.for %j = %c0 to %cols step %c1 {
        %v = memref.load %x[%b, %row, %j] : memref<5x40x16xf32>
        %w = arith.mulf %v, %scale : f32
        %r = arith.addf %w, %offset : f32
        memref.store %r, %y[%b, %i, %j] : memref<5x37x16xf32>
      }
    }
  }
  loop.return
}
"""
"""A parallel loop in a serial one, launched once per batch: it captures a scalar loaded
before the nest (`%scale`), and a float and two `index` values of the outer loop (`%offset`,
`%b`, `%shift`)."""


def _run(module: JitModule, name: str, team: int, *inputs: np.ndarray, out_shape) -> np.ndarray:
    module.set_num_threads(team)
    out = np.zeros(out_shape, np.float32)
    module.call_kernel(name, *inputs, out)
    return out


def _assert_every_team(module: JitModule, name: str, inputs, expected: np.ndarray) -> None:
    for team in TEAMS:
        out = _run(module, name, team, *inputs, out_shape=expected.shape)
        np.testing.assert_array_equal(out, expected, err_msg=f"{team} threads")


def _threaded_and_serial(jit, text: str) -> tuple[JitModule, JitModule]:
    return jit(text, parallel_threshold=0), jit(text, threads=False)


@pytest.mark.parametrize(("first", "step"), [(0, 1), (2, 3), (28, 5), (30, 1)])
def test_elementwise_matches_numpy_and_the_serial_build(jit, first, step):
    """Every row range, including a single row and none, split among every team size."""
    threaded, serial = _threaded_and_serial(jit, _elementwise(29, 70, first, step))
    a, b = _random(29, 70), _random(29, 70)
    expected = _run(serial, "add", 0, a, b, out_shape=(29, 70))
    want = np.zeros_like(a)
    want[first::step] = (a + b)[first::step]
    np.testing.assert_array_equal(expected, want)
    _assert_every_team(threaded, "add", (a, b), expected)


def test_matmul_rows_are_bit_identical_to_the_serial_build(jit):
    threaded, serial = _threaded_and_serial(jit, MATMUL)
    a, b = _random(67, 45), _random(45, 33)
    expected = _run(serial, "matmul", 0, a, b, out_shape=(67, 33))
    np.testing.assert_allclose(expected, a @ b, rtol=1e-5, atol=1e-5)
    _assert_every_team(threaded, "matmul", (a, b), expected)


def test_captured_scalar_and_index(jit):
    threaded, serial = _threaded_and_serial(jit, CAPTURES)
    x, s = _random(5, 40, 16), np.array([1.5], np.float32)
    expected = np.stack([x[b, b % 4 : b % 4 + 37] * s[0] + np.float32(b) for b in range(5)])
    shape = expected.shape
    np.testing.assert_array_equal(_run(serial, "shift", 0, x, s, out_shape=shape), expected)
    _assert_every_team(threaded, "shift", (x, s), expected)


def test_outlined_functions_and_launch_in_the_ir(lower, jit):
    lowered = str(lower(CAPTURES, parallel_threshold=0))
    assert "llvm.func internal @shift_par0(" in lowered
    assert "llvm.func internal @shift_par0_body(" in lowered
    assert "llvm.mlir.addressof @shift_par0 : !llvm.ptr" in lowered
    assert "llvm.call @GOMP_parallel(" in lowered
    assert "llvm.mlir.global external @__fusion_num_threads(0 : i32)" in lowered
    ir = jit(CAPTURES, parallel_threshold=0).llvm_ir
    assert "declare void @GOMP_parallel(ptr, ptr, i32, i32)" in ir
    assert "@shift_par0" in ir
    assert "@__fusion_num_threads = " in ir


def test_nested_parallel_loops_launch_once(lower):
    text = _elementwise(64, 300).replace("step %c1 vectorized", "step %c1 parallel")
    assert text.count("parallel") == 2
    lowered = str(lower(text, parallel_threshold=0))
    assert lowered.count("llvm.call @GOMP_parallel(") == 1
    assert "@add_par1" not in lowered


def test_small_or_disabled_loops_stay_serial(lower):
    small = str(lower(_elementwise(8, 64)))
    assert "GOMP_parallel" not in small and "__fusion_num_threads" not in small
    large = _elementwise(128, 128)
    assert "GOMP_parallel" in str(lower(large))
    assert "GOMP_parallel" not in str(lower(large, threads=False))


def test_parallel_work_counts_innermost_iterations(ctx):
    module = Parser(ctx, MATMUL).parse_module()
    loops = [op for op in module.walk() if isinstance(op, loop.ForOp)]
    (outer,) = (op for op in loops if op.loop_kind == loop.LoopKind.PARALLEL)
    assert parallel_work(outer) == 67 * (33 + 45 * 33)
    assert PARALLEL_THRESHOLD == 2**14


def test_thread_count_from_the_environment(jit, monkeypatch):
    monkeypatch.setenv("FUSION_NUM_THREADS", "3")
    module = jit(_elementwise(16, 16), parallel_threshold=0)
    assert module.num_threads == 3
    module.set_num_threads(0)
    assert module.num_threads == 0
    with pytest.raises(ValueError, match="at least 0"):
        module.set_num_threads(-1)
    monkeypatch.setenv("FUSION_NUM_THREADS", "all")
    with pytest.raises(ValueError, match="FUSION_NUM_THREADS must be a thread count"):
        jit(_elementwise(16, 16), parallel_threshold=0)


def test_serial_stand_ins_without_libgomp(jit, monkeypatch):
    monkeypatch.setattr(llvm_codegen, "openmp_available", lambda: False)
    module = jit(MATMUL, parallel_threshold=0)
    assert "declare void @GOMP_parallel" not in module.llvm_ir
    a, b = _random(67, 45), _random(45, 33)
    expected = _run(jit(MATMUL, threads=False), "matmul", 0, a, b, out_shape=(67, 33))
    _assert_every_team(module, "matmul", (a, b), expected)
    # A cached module built for one runtime is a cache miss under the other: the runtime is
    # part of every key, and code calling libgomp is refused where libgomp is missing.
    check_threading(jit(MATMUL, threads=False).llvm_ir)
    check_threading(module.llvm_ir)
    monkeypatch.undo()
    graph = parse_source(make_context(), GRAPH_ADD, "add.mlir")
    with_libgomp = compile_cache.cache_key(graph, DEFAULT_PIPELINE)
    monkeypatch.setattr(threading_runtime, "openmp_available", lambda: False)
    assert compile_cache.cache_key(graph, DEFAULT_PIPELINE) != with_libgomp
    monkeypatch.undo()
    with_gomp = jit(MATMUL, parallel_threshold=0)
    monkeypatch.setattr(threading_runtime, "openmp_available", lambda: False)
    with pytest.raises(RuntimeError, match="libgomp, which is not available"):
        check_threading(with_gomp.llvm_ir)


def test_object_code_reload_keeps_the_thread_count_global(jit):
    module = jit(MATMUL, parallel_threshold=0)
    again = JitModule(module.units, host_target_machine())
    a, b = _random(67, 45), _random(45, 33)
    expected = _run(module, "matmul", 1, a, b, out_shape=(67, 33))
    _assert_every_team(again, "matmul", (a, b), expected)


EXIT_RIGHT_AFTER_A_LAUNCH = """
import numpy as np
from xdsl.parser import Parser
from fusion_compiler.dialects.context import make_context
from fusion_compiler.lowering import ConvertLoopToLLVMPass, compile_llvm_module
ctx = make_context()
module = Parser(ctx, KERNEL).parse_module()
ConvertLoopToLLVMPass(parallel_threshold=0).apply(ctx, module)
jit = compile_llvm_module(module)
a = np.ones((29, 70), np.float32)
for _ in range(50):
    jit.call_kernel("add", a, a, np.empty_like(a))
"""


def test_exit_while_threads_spin(tmp_path):
    """libgomp stays mapped when LLVM unloads its libraries at exit: its idle threads may
    still be spinning in it (with active waiting, this crashed most such processes)."""
    script = tmp_path / "exit.py"
    script.write_text(f"KERNEL = {_elementwise(29, 70)!r}\n{EXIT_RIGHT_AFTER_A_LAUNCH}")
    env = {**os.environ, "OMP_WAIT_POLICY": "active", "PYTHONPATH": str(ROOT)}
    for _ in range(3):
        done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True)
        assert done.returncode == 0, done.stderr.decode()


# --- every example, natively, with its parallel loops on 1 thread and on every core ----------

EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))
LAUNCHING = {"conv_block", "ffn", "mlp", "resnet_block", "transformer_block"}
"""Examples with loops big enough for a thread team."""


def _inputs(function, seed: int) -> list[np.ndarray]:
    """As in test_examples_native: standard-normal inputs, variances in [0.5, 1.5]."""
    rng = np.random.default_rng(seed)
    return [
        rng.uniform(0.5, 1.5, p.shape).astype(np.float32)
        if p.name.rstrip("0123456789").endswith("var")
        else rng.standard_normal(p.shape).astype(np.float32)
        for p in function.parameters
    ]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_examples_on_every_core_match_one_thread_and_the_reference(path, tmp_path, monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path))
    module = parse_source(make_context(), path.read_text(), path.name)
    model = compile_module(module, DEFAULT_PIPELINE)
    if path.stem in LAUNCHING:
        assert "call void @GOMP_parallel(" in model.llvm_ir
    inputs = _inputs(model.functions["main"], seed=5)
    model.set_num_threads(1)
    single = model.run("main", *inputs)
    model.set_num_threads(0)
    assert model.num_threads == 0
    every = model.run("main", *inputs)
    for one, all_cores, want in zip(single, every, evaluate(module, "main", inputs), strict=True):
        np.testing.assert_array_equal(all_cores, one)
        scale = float(np.max(np.abs(want))) or 1.0
        np.testing.assert_allclose(all_cores, want, rtol=1e-4, atol=1e-4 * scale)


def test_a_cached_model_keeps_its_thread_count(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FUSION_NUM_THREADS", "1")
    path = ROOT / "examples" / "ffn.mlir"
    module = parse_source(make_context(), path.read_text(), path.name)
    fresh, cached = compile_module(module), compile_module(module)
    assert (fresh.from_cache, cached.from_cache) == (False, True)
    assert cached.num_threads == 1
    inputs = _inputs(fresh.functions["main"], seed=3)
    cached.set_num_threads(2)
    for one, two in zip(fresh.run("main", *inputs), cached.run("main", *inputs), strict=True):
        np.testing.assert_array_equal(two, one)


SPLIT_FOR_TWO_CORES = """
func.func @main(%x: tensor<1x512xf32>, %w: tensor<512x256xf32>, %b: tensor<256xf32>,
                %image: tensor<1x32x14x14xf32>, %filter: tensor<80x32x3x3xf32>)
    -> (tensor<1x256xf32>, tensor<1x80x14x14xf32>) {
  %m = graph.matmul %x, %w : (tensor<1x512xf32>, tensor<512x256xf32>) -> tensor<1x256xf32>
  %a = graph.add %m, %b : (tensor<1x256xf32>, tensor<256xf32>) -> tensor<1x256xf32>
  %r = graph.relu %a : tensor<1x256xf32>
  %c = graph.conv2d %image, %filter {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x32x14x14xf32>, tensor<80x32x3x3xf32>) -> tensor<1x80x14x14xf32>
  func.return %r, %c : tensor<1x256xf32>, tensor<1x80x14x14xf32>
}
"""


def test_loops_split_for_two_cores_match_one_thread_and_the_unfused_build(tmp_path, monkeypatch):
    """A matrix-vector product split into a chunk per core (reorder-reductions), and a
    convolution whose parallel loop is chosen for two cores (schedule-contractions): the same
    bits on one thread and on two as the unfused build, and near the reference."""
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path))
    module = parse_source(make_context(), SPLIT_FOR_TWO_CORES, "split.mlir")
    split = DEFAULT_PIPELINE.replace("schedule-kernels", "schedule-kernels{cores=2}")
    model = compile_module(module, split)
    unfused = compile_module(
        module, UNFUSED_PIPELINE.replace("schedule-kernels", "schedule-kernels{cores=1}")
    )
    assert "call void @GOMP_parallel(" in model.llvm_ir
    inputs = _inputs(model.functions["main"], seed=7)
    want = evaluate(module, "main", inputs)
    model.set_num_threads(1)
    single = model.run("main", *inputs)
    model.set_num_threads(2)
    double = model.run("main", *inputs)
    for one, two, serial, ref in zip(
        single, double, unfused.run("main", *inputs), want, strict=True
    ):
        np.testing.assert_array_equal(two, one)
        np.testing.assert_array_equal(one, serial)
        scale = float(np.max(np.abs(ref)))
        np.testing.assert_allclose(one, ref, rtol=1e-5, atol=1e-5 * scale)
