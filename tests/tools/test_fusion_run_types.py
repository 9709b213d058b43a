"""fusion-run with integer and boolean tensors: npz inputs and outputs of their dtypes, random
integers and booleans, exact --check of integer outputs; a wrong dtype and an index outside
the gathered axis are clear errors; arrays may be named like the parameters."""

import subprocess
import sys

import numpy as np
import pytest

from fusion_compiler.tools.run_check import compare_exact

GRAPH = """func.func @main(%ids: tensor<2x5xi64>, %t: tensor<9x3xf32>, %m: tensor<2x5xi1>)
    -> (tensor<2x5x3xf32>, tensor<2x5xi32>, tensor<2x5xi1>) {
  %g = graph.gather %t, %ids {axis = 0 : i64} : (tensor<9x3xf32>, tensor<2x5xi64>) -> tensor<2x5x3xf32>
  %c = graph.cast %ids : (tensor<2x5xi64>) -> tensor<2x5xi32>
  %s = graph.add %c, %c : (tensor<2x5xi32>, tensor<2x5xi32>) -> tensor<2x5xi32>
  %n = graph.not %m : tensor<2x5xi1>
  func.return %g, %s, %n : tensor<2x5x3xf32>, tensor<2x5xi32>, tensor<2x5xi1>
}
"""


def fusion_run(*args, cwd):
    command = "import sys; from fusion_compiler.tools.fusion_run import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", command, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


@pytest.fixture
def graph(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", "")
    path = tmp_path / "graph.mlir"
    path.write_text(GRAPH)
    return path


def test_integer_inputs_outputs_and_exact_check(graph, tmp_path):
    ids = np.array([[0, 8, -9, -1, 5], [3, 3, 7, -3, 4]], np.int64)  # negatives count from the end
    table = np.arange(27, dtype=np.float32).reshape(9, 3)
    mask = np.array([[True, False, True, False, False]] * 2)
    np.savez(tmp_path / "in.npz", ids=ids, t=table, arg2=mask)  # by name or by position
    result = fusion_run(
        str(graph), "--inputs", "in.npz", "--outputs", "out.npz", "--check", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "check out1: OK: int32, equal to the reference" in result.stdout
    assert "check out2: OK: bool, equal to the reference" in result.stdout
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_array_equal(out["out0"], table[ids])
        assert out["out1"].dtype == np.int32 and out["out2"].dtype == np.bool_
        np.testing.assert_array_equal(out["out1"], 2 * ids.astype(np.int32))
        np.testing.assert_array_equal(out["out2"], ~mask)


def test_random_integer_and_boolean_inputs(graph, tmp_path):
    result = fusion_run(str(graph), "--random-inputs", "--seed", "1", "--check", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count(": OK") == 3


def test_wrong_dtype_is_a_clear_error(graph, tmp_path):
    ids = np.zeros((2, 5), np.int32)
    np.savez(
        tmp_path / "in.npz", arg0=ids, arg1=np.zeros((9, 3), np.float32), arg2=ids.astype(bool)
    )
    result = fusion_run(str(graph), "--inputs", "in.npz", cwd=tmp_path)
    assert result.returncode == 1
    assert "arg0 (%ids): expected shape (2, 5) dtype int64, got shape (2, 5) dtype int32" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("bad", [9, -10, 100])
def test_an_index_outside_the_gathered_axis_is_a_clear_error(graph, tmp_path, bad):
    """The kernels clamp such an index (never a wild read): fusion-run refuses it instead of
    printing a row the user did not ask for."""
    ids = np.zeros((2, 5), np.int64)
    ids[1, 3] = bad
    table = np.zeros((9, 3), np.float32)
    np.savez(tmp_path / "in.npz", arg0=ids, arg1=table, arg2=np.zeros((2, 5), bool))
    result = fusion_run(str(graph), "--inputs", "in.npz", cwd=tmp_path)
    assert result.returncode == 1
    assert (
        f"arg0 (%ids): index {bad} at (1, 3) is out of range for axis 0 of graph.gather's "
        "data of size 9 (valid: -9 to 8)" in result.stderr
    )
    assert "Traceback" not in result.stderr and "compiled" not in result.stdout


def test_an_array_given_by_name_and_position_is_an_error(graph, tmp_path):
    ids = np.zeros((2, 5), np.int64)
    table = np.zeros((9, 3), np.float32)
    np.savez(tmp_path / "in.npz", arg0=ids, ids=ids, t=table, m=np.zeros((2, 5), bool))
    result = fusion_run(str(graph), "--inputs", "in.npz", cwd=tmp_path)
    assert result.returncode == 1
    assert "arg0 (%ids) is given twice, as arg0 and ids" in result.stderr


def test_exact_comparison():
    a = np.array([1, 2, 3], np.int64)
    assert compare_exact(a, a.copy()).ok
    outcome = compare_exact(a, np.array([1, 0, 3], np.int64))
    assert not outcome.ok and "1 elements differ" in outcome.describe()
    assert not compare_exact(a.astype(np.int32), a).ok


def test_random_indices_are_drawn_inside_the_gathered_axis():
    from fusion_compiler.tools.run_inputs import ArgumentSpec, _random_integers

    spec = ArgumentSpec(0, "ids", (400,), np.dtype(np.int64))
    drawn = _random_integers(np.random.default_rng(0), spec, (3, "axis 0"))
    assert drawn.min() >= -3 and drawn.max() <= 2
    empty = _random_integers(np.random.default_rng(0), spec, (0, "axis 0"))  # no valid index
    assert empty.shape == (400,)
