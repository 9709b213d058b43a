"""fusion-run end to end: inputs, outputs, --check, --bench, --no-fusion, and errors."""

import subprocess
import sys
from pathlib import Path

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
def graph(ir_file):
    return ir_file(GRAPH)


def test_random_inputs_check_and_bench(graph, tmp_path):
    result = fusion_run(
        str(graph), "--random-inputs", "--seed", "3", "--check", "--bench", "3", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "runs 1 kernel (fused_add_sigmoid)" in result.stdout
    assert "check out0: OK: max abs error" in result.stdout
    assert "bench (median of 3, fused and unfused alternating): fused" in result.stdout
    assert "unfused" in result.stdout


def test_bench_of_a_file_after_fuse_tir_does_not_interpret_its_kernels(graph, tmp_path):
    """A file written after fuse-tir holds `loop.func` kernels, which the reference evaluator
    would interpret element by element (hours for a model's convolution): `--bench` times
    the native builds only and says so; `--check`, asked for, still compares."""
    from fusion_compiler.driver import FUSION_PIPELINE

    fused = tmp_path / "fused.mlir"
    written = subprocess.run(
        [
            sys.executable,
            "-m",
            "fusion_compiler.tools.fusion_opt",
            str(graph),
            "-p",
            FUSION_PIPELINE,
            "-o",
            str(fused),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert written.returncode == 0, written.stderr
    assert "loop.func" in fused.read_text()
    result = fusion_run(
        str(fused),
        "--random-inputs",
        "--check",
        "--bench",
        "2",
        "--pipeline",
        "schedule-kernels",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "check out0: OK" in result.stdout
    assert "no unfused build to compare: the pipeline does not fuse" in result.stdout
    assert "reference evaluator not timed" in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("pipeline", "unfused"),
    [
        ("legalize-ops,fuse-ops,fuse-tir", "legalize-ops,fuse-ops{opt-level=0},fuse-tir"),
        ("fuse-ops{opt-level=1}", "fuse-ops{opt-level=0}"),
        (
            "fuse-ops-by-pattern{patterns=blas},legalize-ops,fuse-ops,fuse-tir",
            "fuse-ops-by-pattern{patterns=blas},legalize-ops,fuse-ops{opt-level=0},fuse-tir",
        ),
        ("schedule-kernels", "schedule-kernels"),
    ],
)
def test_bench_compares_with_the_same_pipeline_unfused(pipeline, unfused):
    from fusion_compiler.tools.fusion_run import unfused_pipeline

    assert unfused_pipeline(pipeline) == unfused


def test_bench_of_the_unfused_build_compares_with_nothing(graph, tmp_path):
    result = fusion_run(str(graph), "--random-inputs", "--no-fusion", "--bench", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "bench (median of 2): " in result.stdout
    assert "(2 kernels); no unfused build to compare" in result.stdout


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


SCALAR_GRAPH = """func.func @main(%x: tensor<4x8xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
  %a = graph.add %x, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %a : tensor<4x8xf32>
}
"""


@pytest.fixture
def scalar_graph(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "scalar.mlir"
    path.write_text(SCALAR_GRAPH)
    return path


def _good_inputs() -> dict[str, np.ndarray]:
    return {"arg0": np.ones((4, 8), np.float32), "arg1": np.float32(2)}


def test_a_scalar_argument_is_read_from_npz(scalar_graph, tmp_path):
    np.savez(tmp_path / "in.npz", **_good_inputs())
    result = fusion_run(str(scalar_graph), "--inputs", "in.npz", "--outputs", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    with np.load(tmp_path / "out") as out:  # written to the name given, not out.npz
        np.testing.assert_array_equal(out["out0"], np.full((4, 8), 3, np.float32))


def _write(path, content) -> None:
    if isinstance(content, dict):
        np.savez(path, **content)
    elif isinstance(content, np.ndarray):
        with open(path, "wb") as stream:
            np.save(stream, content)
    else:
        path.write_bytes(content)


def _truncated() -> bytes:
    import io

    buffer = io.BytesIO()
    np.savez(buffer, **_good_inputs())
    return buffer.getvalue()[:300]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            {**_good_inputs(), "arg0": np.ones((4, 9), np.float32)},
            "arg0 (%x): expected shape (4, 8) dtype float32, got shape (4, 9) dtype float32",
        ),
        (
            {**_good_inputs(), "arg0": np.ones((4, 8))},
            "arg0 (%x): expected shape (4, 8) dtype float32, got shape (4, 8) dtype float64",
        ),
        (
            {**_good_inputs(), "arg2": np.ones(3)},
            "unexpected array(s) arg2 (the function takes 2: arg0 (%x), arg1 (%s))",
        ),
        ({"arg0": np.ones((4, 8), np.float32)}, "missing arg1"),
        (np.ones(3), "expected an .npz archive (np.savez), got a single array"),
        (b"", "not a readable .npz archive"),
        (b"hello", "not a readable .npz archive (np.savez): not a zip archive"),
        (_truncated(), "not a readable .npz archive"),
    ],
    ids=["shape", "dtype", "extra", "missing", "npy", "empty", "text", "truncated"],
)
def test_bad_inputs_are_user_errors_before_compiling(scalar_graph, tmp_path, content, message):
    _write(tmp_path / "in.npz", content)
    result = fusion_run(str(scalar_graph), "--inputs", "in.npz", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert f"error: --inputs in.npz: {message}" in result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert "compiled" not in result.stdout  # found before compiling
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    ("args", "environment", "message"),
    [
        (["--seed", "-5"], {}, "--seed: expected a non-negative integer, got -5"),
        (["--bench", "-3"], {}, "--bench: expected a non-negative integer, got -3"),
        ([], {"FUSION_NUM_THREADS": "abc"}, "FUSION_NUM_THREADS must be a thread count"),
        (["--outputs", "."], {}, "--outputs .: is a directory, expected a file name"),
    ],
    ids=["seed", "bench", "threads", "outputs-directory"],
)
def test_bad_options_are_user_errors(graph, tmp_path, monkeypatch, args, environment, message):
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    result = fusion_run(str(graph), "--random-inputs", *args, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert message in result.stderr
    assert "internal error" not in result.stderr
    assert "compiled" not in result.stdout


def test_an_onnx_model_is_sent_to_fusion_import(tmp_path):
    (tmp_path / "model.onnx").write_bytes(b"\x08\x07\x12\x04test\x80\xff")
    result = fusion_run("model.onnx", "--random-inputs", cwd=tmp_path)
    assert result.returncode == 1
    assert "model.onnx: an ONNX model; import it into the graph dialect first" in result.stderr
    assert "fusion-import model.onnx -o model.mlir" in result.stderr


def test_a_binary_file_is_not_graph_ir(tmp_path):
    (tmp_path / "model.mlir").write_bytes(b"\x08\x07\x12\x80\xff")
    result = fusion_run("model.mlir", cwd=tmp_path)
    assert result.returncode == 1
    assert "model.mlir: not a text file of graph IR (byte 3 is not UTF-8)" in result.stderr


def test_an_empty_file_has_no_main(tmp_path):
    (tmp_path / "empty.mlir").write_text("// nothing here\n")
    result = fusion_run("empty.mlir", cwd=tmp_path)
    assert result.returncode == 1
    assert "empty.mlir: no function @main (the module has no functions)" in result.stderr


def test_a_use_before_its_definition_is_a_verify_error(tmp_path):
    (tmp_path / "dom.mlir").write_text(
        """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.relu %y : tensor<4xf32>
  %y = graph.exp %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
"""
    )
    result = fusion_run("dom.mlir", "--random-inputs", cwd=tmp_path)
    assert result.returncode == 1
    assert "dom.mlir:2:3: error: graph.relu: operand #0 does not dominate this use" in (
        result.stderr
    )


def test_a_tensor_too_large_for_memory_is_refused_before_compiling(tmp_path):
    (tmp_path / "big.mlir").write_text(
        """func.func @main(%x: tensor<100000x100000x100xf32>) -> tensor<100000x100000x100xf32> {
  %a = graph.relu %x : tensor<100000x100000x100xf32>
  func.return %a : tensor<100000x100000x100xf32>
}
"""
    )
    result = fusion_run("big.mlir", "--random-inputs", cwd=tmp_path)
    assert result.returncode == 1
    assert "@main needs at least 7450.6 GiB of memory (inputs 3725.3 GiB, outputs" in (
        result.stderr
    )
    assert "this machine has" in result.stderr and "compiled" not in result.stdout


def test_a_closed_pipe_ends_quietly(graph, tmp_path):
    """`fusion-run ... | head -1`: no 'Broken pipe' error."""
    command = (
        f"{sys.executable} -c 'import sys; from fusion_compiler.tools.fusion_run import main; "
        f"sys.exit(main())' {graph} --random-inputs --check --bench 2 | head -c 1"
    )
    result = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert result.stderr == ""
    assert result.returncode == 0


BATCH_NORM = """func.func @main(%x: tensor<2x3x4x4xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>,
                %m: tensor<3xf32>, %v: tensor<3xf32>, %p: tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> {
  %n = "graph.batch_norm"(%x, %g, %b, %m, %v) <{epsilon = 1.0e-05 : f32}> : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %s = graph.sqrt %p : tensor<2x3x4x4xf32>
  %y = graph.add %n, %s : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  func.return %y : tensor<2x3x4x4xf32>
}
"""


def test_random_inputs_respect_the_domain_of_their_ops(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "bn.mlir").write_text(BATCH_NORM)
    result = fusion_run("bn.mlir", "--random-inputs", "--check", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "arg4 (%v) feeds graph.batch_norm's variance: drawn uniformly" in result.stdout
    assert "arg5 (%p) feeds graph.sqrt's operand: drawn uniformly" in result.stdout
    assert "arg0" not in result.stdout
    assert "check out0: OK" in result.stdout and "NaN" not in result.stdout
    assert "Warning" not in result.stderr


def test_check_accepts_nan_and_inf_where_the_reference_has_them(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "log.mlir").write_text(
        """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.log %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""
    )
    np.savez(tmp_path / "in.npz", arg0=np.array([-1, 0, np.inf, 2], np.float32))
    result = fusion_run("log.mlir", "--inputs", "in.npz", "--check", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert "check out0: OK: max abs error 0" in result.stdout
    assert "1 NaN, 1 +Inf, 1 -Inf in the same places as the reference" in result.stdout


EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.mlir"))


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_checks_ok_on_random_inputs_without_warnings(example, tmp_path, monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path / "cache"))
    result = fusion_run(str(example), "--random-inputs", "--check", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "check out0: OK" in result.stdout and "MISMATCH" not in result.stdout
    assert "NaN" not in result.stdout and "Inf" not in result.stdout
    assert result.stderr == ""  # no RuntimeWarning, no LLVM warning


DYNAMIC = """func.func @main(%x: tensor<?x8xf32>, %b: tensor<8xf32>) -> tensor<?x2x4xf32> {
  %a = graph.add %x, %b : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %s = graph.shape_of %a : (tensor<?x8xf32>) -> tensor<2xi64>
  %n = graph.slice %s {starts = array<i64: 0>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<2xi64>) -> tensor<1xi64>
  %k = graph.constant dense<[2, 4]> : tensor<2xi64>
  %t = graph.concat %n, %k {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
  %y = graph.dynamic_reshape %a, %t : (tensor<?x8xf32>, tensor<3xi64>) -> tensor<?x2x4xf32>
  func.return %y : tensor<?x2x4xf32>
}
"""


@pytest.fixture
def dynamic_graph(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "dynamic.mlir"
    path.write_text(DYNAMIC)
    return path


def test_dynamic_file_with_input_shape(dynamic_graph, tmp_path):
    result = fusion_run(
        str(dynamic_graph), "--random-inputs", "--input-shape", "x=3x8", "--check",
        "--outputs", "out.npz", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "check out0: OK" in result.stdout
    with np.load(tmp_path / "out.npz") as out:
        assert out["out0"].shape == (3, 2, 4)


def test_dynamic_file_takes_the_shapes_of_the_inputs(dynamic_graph, tmp_path):
    x = np.arange(40, dtype=np.float32).reshape(5, 8)
    b = np.ones(8, np.float32)
    np.savez(tmp_path / "in.npz", arg0=x, arg1=b)
    result = fusion_run(
        str(dynamic_graph), "--inputs", "in.npz", "--outputs", "o.npz", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    with np.load(tmp_path / "o.npz") as out:
        np.testing.assert_array_equal(out["out0"], (x + b).reshape(5, 2, 4))


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--random-inputs"],
            "argument %x has a dynamic shape: give it with --input-shape x=DIMS",
        ),
        (
            ["--random-inputs", "--input-shape", "x=3x9"],
            "argument %x of type tensor<?x8xf32> cannot have the shape 3x9",
        ),
        (
            ["--random-inputs", "--input-shape", "y=3x8"],
            "@main has no argument 'y' (arguments: x, b)",
        ),
    ],
    ids=["no-shape", "wrong-static-dimension", "unknown-argument"],
)
def test_dynamic_file_errors(dynamic_graph, tmp_path, args, message):
    result = fusion_run(str(dynamic_graph), *args, cwd=tmp_path)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr
