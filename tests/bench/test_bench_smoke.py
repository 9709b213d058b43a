"""Smoke tests of `bench/`: the benchmark script end to end on its smallest case, the cases'
numpy implementations, and the ONNX exporter against the reference evaluator.

No timing is asserted anywhere: performance is what `bench/run_benchmarks.py` reports.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.reference.evaluator import evaluate

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from cases import CASES, function_module, random_inputs  # noqa: E402

SMALLEST = "add_relu_1024"


def run_script(tmp_path: Path, *extra: str, env: dict[str, str] | None = None):
    markdown = tmp_path / "RESULTS.md"
    command = [sys.executable, str(BENCH / "run_benchmarks.py"), "--cases", SMALLEST]
    command += ["--repeats", "1", "--threads", "1", "--markdown", str(markdown), *extra]
    result = subprocess.run(
        command, capture_output=True, text=True, check=False, env=env, cwd=tmp_path
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout, markdown.read_text()


def test_script_prints_and_writes_the_table(tmp_path):
    stdout, markdown = run_script(tmp_path)
    assert "## Single-threaded" in markdown
    assert "| case | fused ms | unfused ms | numpy ms | onnxruntime ms |" in markdown
    (row,) = [line for line in markdown.splitlines() if line.startswith(f"| {SMALLEST} |")]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[8] == "1/2"  # kernels: add and relu fuse into one
    assert "(!)" not in row  # every implementation agrees with the reference
    assert row in stdout
    assert "cores" in markdown and "numpy" in markdown


def test_script_runs_without_onnxruntime(tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    for name in ("onnx", "onnxruntime"):
        (shim / f"{name}.py").write_text("raise ImportError('hidden by the test')\n")
    env = {**os.environ, "PYTHONPATH": str(shim)}
    stdout, markdown = run_script(tmp_path, env=env)
    assert "onnxruntime: not installed" in stdout
    (row,) = [line for line in markdown.splitlines() if line.startswith(f"| {SMALLEST} |")]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[4] == "–" and cells[7] == "–"


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.name != "add_relu_4096"], ids=lambda c: c.name
)
def test_case_implementations_agree_with_the_reference(case):
    """numpy op by op and, when installed, onnxruntime on the exported module."""
    module = case.build()
    inputs = random_inputs(module)
    (reference,) = evaluate(module, "main", inputs)
    tolerance = 1e-4 * float(np.max(np.abs(reference)))
    got = case.numpy(*inputs)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, reference, rtol=1e-4, atol=tolerance)
    pytest.importorskip("onnx")
    np.testing.assert_allclose(run_onnx(module, inputs), reference, rtol=1e-4, atol=tolerance)


def run_onnx(module, inputs, opset: int | None = None) -> np.ndarray:
    ort = pytest.importorskip("onnxruntime")
    from onnx_export import OPSET, export_function

    model = export_function(module, "main", opset or OPSET)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {arg.name: x for arg, x in zip(session.get_inputs(), inputs, strict=True)}
    (output,) = session.run(None, feeds)
    return output


def _dense_graph(x, w, b, gamma, beta):
    mm = graph.MatmulOp(x, w)
    biased = graph.AddOp(mm.result, b)
    gelu = graph.GeluOp(biased.result)
    heads = graph.ReshapeOp(gelu.result, (2, 3, 4))
    moved = graph.TransposeOp(heads.result, (1, 0, 2))
    soft = graph.SoftmaxOp(moved.result, axis=-1)
    moved_back = graph.TransposeOp(soft.result, (1, 0, 2))
    flat = graph.ReshapeOp(moved_back.result, (2, 12))
    diff = graph.SubOp(flat.result, biased.result)
    norm = graph.LayerNormOp(diff.result, gamma, beta)
    ops = [mm, biased, gelu, heads, moved, soft, moved_back, flat, diff, norm]
    return [*ops, graph.TanhOp(norm.result)]


def _conv_graph(x, w, bias):
    conv = graph.Conv2DOp(x, w, padding=(1, 2, 1, 0), strides=(1, 2))
    shifted = graph.AddOp(conv.result, bias)
    relu = graph.ReluOp(shifted.result)
    mean = graph.ReduceMeanOp(relu.result, (2, 3), keepdims=True)
    gate = graph.SigmoidOp(mean.result)
    exp = graph.ExpOp(gate.result)
    scaled = graph.DivOp(relu.result, exp.result)
    clipped = graph.ClipOp(scaled.result, 0.0, 6.0)
    peak = graph.ReduceMaxOp(clipped.result, (1,), keepdims=False)
    return [conv, shifted, relu, mean, gate, exp, scaled, clipped, peak]


def _pool_graph(x):
    largest = graph.MaxPool2DOp(x, (3, 3), (2, 2), (0, 0, 1, 1))
    mean = graph.AvgPool2DOp(x, (3, 3), (2, 2), (1, 1, 1, 1), count_include_pad=False)
    with_pad = graph.AvgPool2DOp(x, (2, 3), (1, 2), (1, 0, 0, 1), count_include_pad=True)
    sums = [graph.ReduceSumOp(op.result, (2, 3), keepdims=True) for op in (largest, mean, with_pad)]
    first = graph.AddOp(sums[0].result, sums[1].result)
    return [largest, mean, with_pad, *sums, first, graph.AddOp(first.result, sums[2].result)]


SMALL_GRAPHS = {
    "dense": ({"x": (2, 8), "w": (8, 12), "b": (12,), "gamma": (12,), "beta": (12,)}, _dense_graph),
    "conv": ({"x": (1, 3, 6, 7), "w": (4, 3, 3, 3), "bias": (1, 4, 1, 1)}, _conv_graph),
    "pool": ({"x": (1, 2, 7, 8)}, _pool_graph),
}


@pytest.mark.parametrize("opset", [18, 20])
@pytest.mark.parametrize("name", list(SMALL_GRAPHS))
def test_exporter_round_trips_a_small_graph(name, opset):
    """ONNX → onnxruntime gives the reference evaluator's numbers (opset 18: gelu via Erf)."""
    pytest.importorskip("onnx")
    args, body = SMALL_GRAPHS[name]
    module = function_module(args, body)
    inputs = random_inputs(module, seed=3)
    (reference,) = evaluate(module, "main", inputs)
    np.testing.assert_allclose(run_onnx(module, inputs, opset), reference, rtol=1e-5, atol=1e-6)


def test_exporter_names_what_it_cannot_export():
    pytest.importorskip("onnx")
    from onnx_export import ExportError, export_function

    module = function_module({"x": (1, 2, 4, 4)}, lambda x: [graph.GlobalAvgPool2DOp(x)])
    with pytest.raises(ExportError, match="no ONNX export for graph.global_avg_pool2d"):
        export_function(module)
    with pytest.raises(ExportError, match="opset 17 is not supported"):
        export_function(module, opset=17)


def test_packed_matmul_kernel_computes_the_product():
    """bench/packed_matmul.py's hand-scheduled kernel (the target for register tiling)."""
    from packed_matmul import packed_kernel

    from fusion_compiler.dialects.context import make_context
    from fusion_compiler.dialects.diagnostics import parse_source
    from fusion_compiler.lowering.convert_loop_to_llvm import ConvertLoopToLLVMPass
    from fusion_compiler.lowering.jit import aligned_empty
    from fusion_compiler.lowering.llvm_codegen import compile_llvm_module

    ctx = make_context()
    module = parse_source(ctx, packed_kernel(8, 12, 32, 4, 16), "packed.mlir")
    ConvertLoopToLLVMPass().apply(ctx, module)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 12), np.float32)
    b = rng.standard_normal((12, 32), np.float32)
    c = aligned_empty((8, 32))
    compile_llvm_module(module).call_kernel("mm", a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    with pytest.raises(SystemExit, match="does not divide"):
        packed_kernel(8, 12, 32, 3, 16)


def test_pipeline_ab_prints_paired_medians_and_checks_the_bits(capsys):
    """`bench/pipeline_ab.py` on an example: a table row per thread count, and the builds
    compared bit for bit (collapse-nests changes no result)."""
    import pipeline_ab

    example = ROOT / "examples" / "add_exp_squeeze.mlir"
    change = "schedule-kernels=schedule-kernels{collapse=false}"
    argv = [str(example), "--change", change, "--rounds", "1", "--calls", "1", "--threads", "1"]
    assert pipeline_ab.main(argv) == 0
    out = capsys.readouterr().out
    assert "the same bits" in out
    assert out.strip().splitlines()[-1].startswith("| 1 | ")
    with pytest.raises(SystemExit, match="--change needs OLD=NEW"):
        pipeline_ab.main([str(example), "--change", "no-such-pass=x"])
