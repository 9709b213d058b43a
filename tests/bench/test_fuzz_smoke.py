"""Smoke tests of `bench/fuzz.py` (the fuzzer itself runs outside the test suite): a few
seeds of each mode end to end in subprocesses, seeds are reproducible, the shrinker keeps a
failure while making the graph smaller, and the mutants (of text and of ONNX files) end with
diagnostics."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import fuzz  # noqa: E402
from fuzz_mutants import lit_mutant, lit_mutant_source, mutant, saved_passes  # noqa: E402
from fuzz_shrink import shrink  # noqa: E402

SMALL_SEEDS = (31, 43)
"""Seeds whose graphs have 5 ops (`fuzz.node_count`): cheap to compile."""


def run_fuzz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH / "fuzz.py"), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )


def records(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_graph_mode_checks_each_seed_and_the_digests_across_processes(tmp_path):
    log = tmp_path / "graphs.jsonl"
    for seed in SMALL_SEEDS:
        result = run_fuzz("graphs", "--start", str(seed), "--count", "1", "--log", str(log))
        assert result.returncode == 0, result.stderr[-3000:]
    done = [r for r in records(log) if r["status"] != "start"]
    assert [(r["seed"], r["status"]) for r in done] == [(s, "ok") for s in SMALL_SEEDS]
    result = run_fuzz("digests", "--log", str(log), "--every", "1")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "2 seeds recomputed in a second process, 0 differ" in result.stdout


@pytest.mark.parametrize(
    ("mode", "count", "every"),
    [
        ("mutants", 6, 5),
        ("lit-mutants", 12, 6),
        ("onnx-mutants", 20, 0),
        ("onnx-attributes", 12, 0),
    ],
)
def test_a_mutant_mode_ends_every_mutant_with_a_diagnostic(tmp_path, mode, count, every):
    if mode.startswith("onnx-"):
        pytest.importorskip("onnx")
    log = tmp_path / "mutants.jsonl"
    args = (mode, "--start", "0", "--count", str(count), "--subprocess-every", str(every))
    result = run_fuzz(*args, "--log", str(log))
    assert result.returncode == 0, result.stderr[-3000:]
    done = [r for r in records(log) if r["status"] != "start"]
    assert len(done) == count and all(r["status"] == "ok" for r in done), done
    assert f"{mode}: {count} run, 0 failed" in result.stdout


def test_onnx_graph_mode_compares_valid_models_with_onnxruntime(tmp_path):
    pytest.importorskip("onnxruntime")
    from fuzz_onnx_graphs import draw_model

    log = tmp_path / "onnx_graphs.jsonl"
    result = run_fuzz("onnx-graphs", "--start", "0", "--count", "8", "--log", str(log))
    assert result.returncode == 0, result.stderr[-3000:]
    done = [r for r in records(log) if r["status"] != "start"]
    assert len(done) == 8 and all(r["status"] == "ok" for r in done), done
    assert sum(r["outcome"] == "ok" for r in done) >= 4, done  # (compiled and compared)
    assert "onnx-graphs: 8 run, 0 failed" in result.stdout
    first, again = draw_model(5), draw_model(5)  # (a seed is one model: the same bytes)
    assert first[0].SerializeToString() == again[0].SerializeToString()
    assert all(np.array_equal(first[1][k], again[1][k]) for k in first[1])


def test_a_lit_mutant_comes_from_a_lit_input_with_a_pipeline_of_its_run_lines():
    from fusion_compiler.driver import DEFAULT_PIPELINE

    sources = [lit_mutant_source(seed) for seed in range(40)]
    assert all(name.startswith(("tests/filecheck/", "examples/")) for _, name, _ in sources)
    assert any(passes is None for _, _, passes in sources)  # (parse, verify and print only)
    for text, name, passes in sources:
        if passes is not None and name.startswith("tests/"):
            assert passes == DEFAULT_PIPELINE or passes in (ROOT / name).read_text()
        assert "// RUN:" not in text and "// CHECK" not in text


def test_a_saved_lit_mutant_names_its_pipeline(tmp_path, monkeypatch):
    """The header `_save_mutant` writes is what the regression test reads back."""
    monkeypatch.setattr(fuzz, "ROOT", tmp_path)
    monkeypatch.setattr(fuzz, "MUTANT_REGRESSIONS", tmp_path / "mutants")
    record = {"mode": "lit-mutant", "seed": 9, "source": "x.mlir", "passes": "fuse-ops"}
    saved = tmp_path / fuzz._save_mutant({**record, "mutations": ["cut at 3"]}, "func")
    assert saved.name == "lit_seed9.mlir" and saved_passes(saved.read_text()) == "fuse-ops"
    record = {"mode": "lit-mutant", "seed": 10, "source": "x.mlir", "passes": ""}
    saved = tmp_path / fuzz._save_mutant({**record, "mutations": []}, "func")
    assert saved_passes(saved.read_text()) == ""  # (fusion-opt without -p)
    record = {"mode": "mutant", "seed": 11, "source": "x.mlir", "mutations": []}
    saved = tmp_path / fuzz._save_mutant(record, "func")
    assert saved.name == "seed11.mlir" and saved_passes(saved.read_text()) is None


def test_a_damaged_onnx_file_is_reproducible_and_damaged():
    pytest.importorskip("onnx")
    from fuzz_onnx import onnx_mutant, onnx_sources

    sources = onnx_sources()
    assert onnx_mutant(5, sources) == onnx_mutant(5, sources)
    data, _, whats, _ = onnx_mutant(5, sources)
    assert whats and data not in {source.read_bytes() for source in sources}
    names = {onnx_mutant(seed, sources)[1] for seed in range(40)}
    assert any(name.startswith("onnx/backend/test/data/") for name in names)


def test_an_attribute_mutant_is_reproducible_and_out_of_range():
    pytest.importorskip("onnx")
    from fuzz_onnx import OUT_OF_RANGE, attribute_mutant

    mutants = [attribute_mutant(seed) for seed in range(30)]
    assert mutants == [attribute_mutant(seed) for seed in range(30)]
    whats = [m[2][0] for m in mutants if m is not None]
    assert len(whats) >= 10
    assert all(int(what.rsplit(" -> ", 1)[1]) in OUT_OF_RANGE for what in whats)


def test_seeds_are_reproducible():
    assert fuzz.graph_of(123) == fuzz.graph_of(123)
    assert fuzz.graph_of(123) != fuzz.graph_of(124)
    assert 5 <= fuzz.node_count(123) <= 80
    text, _ = fuzz.mutant_source(7)
    assert mutant(text, 7) == mutant(text, 7)
    assert lit_mutant_source(7) == lit_mutant_source(7)
    text, _, _ = lit_mutant_source(7)
    assert lit_mutant(text, 7) == lit_mutant(text, 7)


def test_the_shrinker_keeps_the_failure_and_drops_the_rest():
    spec = next(fuzz.graph_of(s) for s in range(200) if fuzz.node_count(s) >= 20)
    target = next(n.op for n in spec.nodes if n.op not in ("constant", "abs", "add"))

    def fails(candidate) -> str | None:  # "fails" while an op `target` is left
        return "has it" if any(n.op == target for n in candidate.nodes) else None

    small = shrink(spec, fails, budget=120)
    assert fails(small) == "has it"
    assert len(small.nodes) < len(spec.nodes)
    assert sum(n.op != "constant" for n in small.nodes) <= 2


def test_a_returned_constant_is_copied_by_a_kernel_no_op_has():
    """Fuzz seed 1626 returned a constant: lower-graph copies it into the output with a
    kernel of its own, which the checker counted as an op's kernel ("one kernel per op
    unfused" failed). Counted without the copies, the graph passes."""
    from graph_checks import check_graph
    from graph_spec import GraphSpec, Node, Ref

    spec = GraphSpec(
        args=((2, 3),),
        nodes=(Node("constant", (), ((2, 3), 7)), Node("relu", (Ref("arg", 0),))),
        outputs=(Ref("node", 0), Ref("node", 1)),
    )
    check_graph(spec)


def _parsed(text: str):
    from fusion_compiler.dialects.context import make_context
    from fusion_compiler.dialects.diagnostics import parse_source

    return parse_source(make_context(), text, "<test>")


def test_the_rounding_spread_widens_the_tolerance_only_where_the_graph_cancels():
    """Seed 6701: `lrn(v) - v` cancels, so one ulp of `lrn(v)` moves the result by many of its
    own ulps; the spread (every op's result moved by 2-4 ulps) sees that: a result one ulp of
    `v` off passes, one 16 ulps of `v` off does not. A product does not cancel: its spread is a few of its own ulps, and a
    result 3e-4 off is still rejected."""
    import numpy as np
    import pytest
    from graph_checks import assert_close, reference_and_spread

    lrn = _parsed((ROOT / "tests/regressions/graphs/seed6701.mlir").read_text())
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(-1, 1, (2, 4, 6, 5)), rng.uniform(-1, 1, (4, 1, 1, 1))]
    inputs = [x.astype(np.float32) for x in inputs]
    (reference,), spread = reference_and_spread(lrn, inputs)
    v = (np.abs(reference) / 7.5e-5) ** (1 / 3)  # |lrn(v) - v| ~ 7.5e-5 |v|^3
    one_ulp_of_v = np.spacing(v.astype(np.float32)).astype(np.float64)
    nonzero = reference != 0  # the padded border is 0 in every evaluation
    assert np.all(spread[0][nonzero] >= one_ulp_of_v[nonzero] / 2)
    assert_close([reference - np.sign(reference) * one_ulp_of_v], [reference], "lrn", spread)
    with pytest.raises(AssertionError, match="beyond"):
        assert_close([reference - 16 * one_ulp_of_v], [reference], "lrn", spread)

    product = _parsed(
        """func.func @main(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
          %p = graph.mul %a, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
          func.return %p : tensor<64xf32>
        }"""
    )
    a, b = (rng.uniform(0.5, 1, 64).astype(np.float32) for _ in range(2))
    (reference,), spread = reference_and_spread(product, [a, b])
    assert np.all(spread[0] <= 4 * np.spacing(reference))
    assert_close([reference * (1 + 2.0**-22)], [reference], "product", spread)
    with pytest.raises(AssertionError, match="beyond"):
        assert_close([reference * (1 + 3e-4)], [reference], "product", spread)


def test_a_concat_done_in_place_is_no_missing_launch():
    """Fuzz seeds 8585 and 8613: lower-graph wrote a concat's operands into its buffer and
    dropped its launch, which the checker counted as an op without a kernel ("one kernel per
    op unfused" failed; the numbers were right). A lone concat's launch may now be missing;
    every other kernel must still be launched."""
    from graph_checks import check_graph
    from graph_spec import GraphSpec, Node, Ref

    spec = GraphSpec(
        args=((1, 3, 4),),
        nodes=(
            Node("relu", (Ref("arg", 0),)),
            Node("sigmoid", (Ref("arg", 0),)),
            Node("concat", (Ref("node", 0), Ref("node", 1)), (1,)),
            Node("tanh", (Ref("node", 2),)),
            Node("reduce_sum", (Ref("node", 2),), ((2,), True)),
        ),
        outputs=(Ref("node", 3), Ref("node", 4)),
    )
    check_graph(spec)


def test_a_crash_is_reported_with_the_stack_faulthandler_printed():
    crashed = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", "import ctypes\nctypes.string_at(0)"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert crashed.returncode != 0
    report = fuzz.fault_report("some warning\n" + crashed.stderr)
    assert report.startswith("Fatal Python error: Segmentation fault | ")
    assert 'File "<string>", line 2 in <module>' in report and "Extension modules" not in report
    assert fuzz.fault_report("no fatal error here\n") == ""
