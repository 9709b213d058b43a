"""fusion-run end to end: inputs, outputs, --check, --bench, --no-fusion, and errors."""

import subprocess
import sys

import numpy as np
import pytest

GRAPH = """func.func @main(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %a = graph.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %s = graph.sigmoid %a : tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
"""


def fusion_run(*args, cwd):
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from fusion_compiler.tools.fusion_run import main; sys.exit(main())",
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


@pytest.fixture
def graph(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "graph.mlir"
    path.write_text(GRAPH)
    return path


def test_random_inputs_check_and_bench(graph, tmp_path):
    result = fusion_run(
        str(graph), "--random-inputs", "--seed", "3", "--check", "--bench", "3", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "runs 1 kernel (fused_add_sigmoid)" in result.stdout
    assert "check out0: max abs error" in result.stdout and ": OK" in result.stdout
    assert "bench (median of 3, fused and unfused alternating): fused" in result.stdout
    assert "unfused" in result.stdout


def test_inputs_and_outputs_files(graph, tmp_path):
    x = np.arange(32, dtype=np.float32).reshape(4, 8) / 10
    b = np.ones(8, np.float32)
    np.savez(tmp_path / "in.npz", arg0=x, arg1=b)
    result = fusion_run(
        str(graph), "--inputs", "in.npz", "--outputs", "out.npz", "--no-fusion", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "runs 2 kernels (add, sigmoid)" in result.stdout
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_allclose(out["out0"], 1 / (1 + np.exp(-(x + b))), rtol=1e-6)


def test_missing_inputs_are_an_error(graph, tmp_path):
    np.savez(tmp_path / "in.npz", arg0=np.zeros((4, 8), np.float32))
    result = fusion_run(str(graph), "--inputs", "in.npz", cwd=tmp_path)
    assert result.returncode == 1
    assert "missing arg1" in result.stderr
    assert "Traceback" not in result.stderr


def test_no_inputs_given(graph, tmp_path):
    result = fusion_run(str(graph), cwd=tmp_path)
    assert result.returncode == 1
    assert "give --inputs IN.npz or --random-inputs" in result.stderr


def test_bad_ir_reports_a_position(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text(
        GRAPH.replace("tensor<8xf32>) -> tensor<4x8xf32>", "tensor<5xf32>) -> tensor<4x8xf32>", 1)
    )
    result = fusion_run(str(path), "--random-inputs", cwd=tmp_path)
    assert result.returncode == 1
    assert "bad.mlir:2:22: error: operand is used with type tensor<8xf32>" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_entry(graph, tmp_path):
    result = fusion_run(str(graph), "--entry", "nope", "--random-inputs", cwd=tmp_path)
    assert result.returncode == 1
    assert "no function @nope" in result.stderr
