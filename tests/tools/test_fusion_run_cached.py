"""fusion-run of a file the cache holds: the model and what the run reads of the IR (the
parameters, each argument's facts, the memory bound: `run_facts`) come from the cache and the
file is not parsed; everything the run prints and writes is what a run from the parse gives."""

import subprocess
import sys

import numpy as np
import pytest

GRAPH = """func.func @main(%x: tensor<4x8xf32>, %t: tensor<9x8xf32>, %ids: tensor<2x5xi64>) -> (tensor<4x8xf32>, tensor<2x5x8xf32>) {
  %s = graph.sqrt %x : tensor<4x8xf32>
  %g = graph.gather %t, %ids {axis = 0 : i64} : (tensor<9x8xf32>, tensor<2x5xi64>) -> tensor<2x5x8xf32>
  func.return %s, %g : tensor<4x8xf32>, tensor<2x5x8xf32>
}
"""

NO_PARSE = "import fusion_compiler.tools.fusion_run as run\nrun.read_module = None\n"
"""Makes a run that parses the file fail (`read_module` is what parses it: checked below, a
run that needs the IR fails with it)."""


def fusion_run(*args, cwd, parse=True):
    script = "" if parse else NO_PARSE
    script += "import sys; from fusion_compiler.tools.fusion_run import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, cwd=cwd
    )


@pytest.fixture
def graph(ir_file):
    return ir_file(GRAPH)


def _without_timing(stdout: str) -> str:
    """The output with the compile's origin and seconds left out of the `runs` line."""
    return "\n".join(line.split("; ")[0] for line in stdout.splitlines())


def test_a_second_run_parses_nothing_and_gives_the_same(graph, tmp_path):
    args = (str(graph), "--random-inputs", "--seed", "4")
    first = fusion_run(*args, "--outputs", "first.npz", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "compiled in" in first.stdout
    assert "arg0 (%x) feeds graph.sqrt's operand" in first.stdout
    second = fusion_run(*args, "--outputs", "second.npz", cwd=tmp_path, parse=False)
    assert second.returncode == 0, second.stderr
    assert "from cache in" in second.stdout
    assert _without_timing(second.stdout) == _without_timing(first.stdout)
    with np.load(tmp_path / "first.npz") as a, np.load(tmp_path / "second.npz") as b:
        assert sorted(a) == sorted(b) == ["out0", "out1"]
        for name in a:
            np.testing.assert_array_equal(a[name], b[name])


def test_inputs_are_checked_as_from_the_parse(graph, tmp_path):
    """An index outside the gathered axis is refused with the same message, and missing or
    extra arrays too, whether the run parsed the file or not."""
    assert fusion_run(str(graph), "--random-inputs", cwd=tmp_path).returncode == 0
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 2, (4, 8)).astype(np.float32)
    t = rng.standard_normal((9, 8)).astype(np.float32)
    ids = np.zeros((2, 5), np.int64)
    ids[1, 3] = 9
    np.savez(tmp_path / "bad.npz", arg0=x, arg1=t, arg2=ids)
    np.savez(tmp_path / "short.npz", arg0=x, arg1=t)
    messages = {}
    for archive in ("bad.npz", "short.npz"):
        cached = fusion_run(str(graph), "--inputs", archive, cwd=tmp_path, parse=False)
        parsed = fusion_run(str(graph), "--inputs", archive, "--no-cache", cwd=tmp_path)
        assert cached.returncode == parsed.returncode == 1
        assert cached.stderr == parsed.stderr
        messages[archive] = cached.stderr
    bad = "index 9 at (1, 3) is out of range for axis 0 of graph.gather's data of size 9"
    assert bad in messages["bad.npz"]
    assert messages["short.npz"] == "error: --inputs short.npz: missing arg2 or ids\n"
    ids[1, 3] = -9
    np.savez(tmp_path / "good.npz", arg0=x, arg1=t, arg2=ids)
    good = fusion_run(str(graph), "--inputs", "good.npz", "--outputs", "y.npz", cwd=tmp_path)
    assert good.returncode == 0, good.stderr
    with np.load(tmp_path / "y.npz") as y:
        np.testing.assert_array_equal(y["out0"], np.sqrt(x))
        np.testing.assert_array_equal(y["out1"], t[ids])


def test_what_needs_the_ir_parses_and_a_lost_record_is_a_parse(graph, tmp_path):
    """`--check` and `--bench` read the IR: they parse the file, the model still loads from
    the cache; a record of another format (a damaged or foreign one) makes the run parse."""
    from fusion_compiler.driver import DEFAULT_PIPELINE, cache_pipeline, read_source
    from fusion_compiler.lowering import compile_cache
    from fusion_compiler.tools import run_facts

    assert fusion_run(str(graph), "--random-inputs", cwd=tmp_path).returncode == 0
    for option in ("--check", "--bench"):
        extra = [option] if option == "--check" else [option, "1"]
        result = fusion_run(str(graph), "--random-inputs", *extra, cwd=tmp_path, parse=False)
        assert result.returncode == 3 and "'NoneType' object is not callable" in result.stderr
        result = fusion_run(str(graph), "--random-inputs", *extra, cwd=tmp_path)
        assert result.returncode == 0 and "from cache" in result.stdout
    key = run_facts.key(read_source(graph), cache_pipeline(DEFAULT_PIPELINE), "main")
    compile_cache.store_meta(compile_cache.cache_dir(), key, {"format": "another"})
    assert fusion_run(str(graph), "--random-inputs", cwd=tmp_path, parse=False).returncode == 3
    again = fusion_run(str(graph), "--random-inputs", cwd=tmp_path)
    assert again.returncode == 0 and "from cache" in again.stdout
    assert fusion_run(str(graph), "--random-inputs", cwd=tmp_path, parse=False).returncode == 0


COMPILING_MODULES = (
    "xdsl.dialects.llvm",  # (the context registers these two: a parse that meets one loads it)
    "xdsl.dialects.arith",
    "fusion_compiler.dialects.reference.evaluator",
    "fusion_compiler.passes.fold_constants",
    "fusion_compiler.passes.legalize_ops",
    "fusion_compiler.passes.schedule",
    "fusion_compiler.lowering.lower_graph",
    "fusion_compiler.lowering.native_units",
    "fusion_compiler.lowering.convert_loop_to_llvm",
)
"""Modules a compile imports (a miss loads each; checked, so that the list stays true)."""


def test_a_run_from_the_cache_imports_no_ir_machinery(graph, tmp_path):
    """A miss imports the compiler (`COMPILING_MODULES`); a run from the cache imports neither
    xDSL nor the dialects, the passes, the lowering or the reference evaluator: it needs the
    model, its facts and numpy (`fusion-run`'s imports were 0.32 s of a 0.5-0.6 s run of
    resnet50 or vgg19 the cache held, Zen 5)."""
    script = (
        "import sys; from fusion_compiler.tools.fusion_run import main\n"
        "status = main(sys.argv[1:])\n"
        f"compiling = [m for m in {COMPILING_MODULES!r} if m in sys.modules]\n"
        "ir = [m for m in sys.modules if m.split('.')[0] == 'xdsl'"
        " or m.startswith(('fusion_compiler.dialects.graph', 'fusion_compiler.passes'))]\n"
        "print(','.join(compiling)); print(len(ir)); sys.exit(status)\n"
    )

    def loaded() -> tuple[list[str], int]:
        done = subprocess.run(
            [sys.executable, "-c", script, str(graph), "--random-inputs"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            check=True,
        )
        compiling, ir = done.stdout.splitlines()[-2:]
        return [m for m in compiling.split(",") if m], int(ir)

    compiling, ir = loaded()  # (the first run parses and compiles)
    assert compiling == list(COMPILING_MODULES) and ir > 0
    assert loaded() == ([], 0)
