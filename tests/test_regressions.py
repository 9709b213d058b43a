"""Every graph and IR mutant `bench/fuzz.py` found a bug with, shrunk and kept as a test.

- `tests/regressions/graphs/*.mlir`: compiled fused and unfused, run natively on inputs in
  [-1, 1], compared with the reference semantics (the fuzzer's tolerance,
  `bench/graph_checks.py`).
- `tests/regressions/mutants/*.mlir`: damaged IR; `fusion-opt` and `fusion-run --random-inputs
  --check` must end with a diagnostic (exit status 0 or 1 and a message, no internal error, no
  traceback), run in-process as the fuzzer runs them (`bench/fuzz_mutants.py`); a lit mutant
  (`lit_seed*.mlir`) through `fusion-opt` alone, with the pipeline its header names.
- `tests/regressions/onnx/*.onnx`: damaged ONNX files (a note beside each says what was done
  to which model); `fusion-import` must end with a diagnostic, printing the module and writing
  it to a file with its weights (`bench/fuzz_onnx.py`); an attribute mutant
  (`attribute_seed*.onnx`) must also compile, or end with a `CompileError`.
- `tests/regressions/onnx_graphs/*.onnx`: valid ONNX models the compiler got wrong; compiled
  and run natively on the inputs kept beside each (`.npz`), and a static one also from the
  files `fusion-import` writes, compared with the model's outputs computed in float64 (the
  fuzzer's tolerance, `bench/fuzz_onnx_graphs.py`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from fuzz_mutants import run_in_process, saved_passes  # noqa: E402
from graph_checks import assert_close, reference_and_spread  # noqa: E402

from fusion_compiler.dialects.context import make_context  # noqa: E402
from fusion_compiler.dialects.diagnostics import parse_source  # noqa: E402
from fusion_compiler.driver import DEFAULT_PIPELINE, UNFUSED_PIPELINE, compile_module  # noqa: E402

REGRESSIONS = ROOT / "tests" / "regressions"
GRAPHS = sorted((REGRESSIONS / "graphs").glob("*.mlir"))
MUTANTS = sorted((REGRESSIONS / "mutants").glob("*.mlir"))
DAMAGED_ONNX = sorted((REGRESSIONS / "onnx").glob("*.onnx"))
ONNX_GRAPHS = sorted((REGRESSIONS / "onnx_graphs").glob("*.onnx"))


@pytest.mark.parametrize("path", GRAPHS, ids=[p.stem for p in GRAPHS])
def test_regression_graph_matches_the_reference(path: Path) -> None:
    module = parse_source(make_context(), path.read_text(), str(path))
    main = next(op for op in module.ops if getattr(op, "sym_name", None).data == "main")
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(-1, 1, arg.type.get_shape()).astype(np.float32) for arg in main.args]
    reference, spread = reference_and_spread(module, inputs)
    for pipeline in (UNFUSED_PIPELINE, DEFAULT_PIPELINE):
        model = compile_module(module, pipeline, cache=False)
        assert_close(model.run("main", *inputs), reference, pipeline, spread)


@pytest.mark.parametrize("path", MUTANTS, ids=[p.stem for p in MUTANTS])
def test_regression_mutant_ends_with_a_diagnostic(path: Path) -> None:
    outcome = run_in_process(path, saved_passes(path.read_text()))
    assert not any(outcome.values()), outcome


@pytest.mark.parametrize("path", DAMAGED_ONNX, ids=[p.stem for p in DAMAGED_ONNX])
def test_regression_damaged_onnx_ends_with_a_diagnostic(path: Path) -> None:
    pytest.importorskip("onnx")
    from fuzz_onnx import import_in_process

    assert import_in_process(path, to_file=False) is None
    assert import_in_process(path, to_file=True) is None
    if path.name.startswith("attribute_"):  # (an attribute mutant that imports is compiled)
        from fuzz_onnx import compile_in_process

        assert compile_in_process(path) is None


@pytest.mark.parametrize("path", ONNX_GRAPHS, ids=[p.stem for p in ONNX_GRAPHS])
def test_regression_onnx_graph_matches_its_float64_outputs(path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from fuzz_onnx_graphs import command_line_outputs, compiled_outputs, differences

    model = onnx.load(str(path))
    saved = np.load(path.with_suffix(".npz"))
    input_sets = []
    while any(key.startswith(f"input{len(input_sets)}:") for key in saved):
        prefix = f"input{len(input_sets)}:"
        input_sets.append({k.removeprefix(prefix): saved[k] for k in saved if k.startswith(prefix)})
    runs = compiled_outputs(model, input_sets)
    if len(input_sets) == 1:  # (a static model: also through fusion-import's files)
        runs.append(command_line_outputs(model, input_sets[0]))
    for index, actual_outputs in enumerate(runs):
        for info, actual in zip(model.graph.output, actual_outputs, strict=True):
            expected = saved[f"output{min(index, len(input_sets) - 1)}:{info.name}"]
            assert actual.shape == expected.shape, info.name
            wrong = differences(actual, expected.astype(np.float32))
            assert not wrong.any(), (index, info.name, actual, expected)
