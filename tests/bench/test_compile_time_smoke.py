"""Smoke test of `bench/compile_time.py` on a tiny model: stages reported, the second compile
a cache hit (in the worker and in a new process), the table formatted. No timing is asserted."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.compile_time import (  # noqa: E402
    STEPS,
    cli_hit,
    markdown_table,
    median_row,
    process_hit,
    run_worker,
    stage_line,
)


def tiny_model(path: Path) -> None:
    weights = np.linspace(-1, 1, 16 * 16 * 3 * 3, dtype=np.float32).reshape(16, 16, 3, 3)
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["y"]),
        ],
        "tiny",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 16, 8, 8])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 16, 8, 8])],
        [numpy_helper.from_array(weights, "w")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), str(path))


def test_the_worker_reports_every_stage_and_the_hit(tmp_path):
    model = tmp_path / "tiny.onnx"
    tiny_model(model)
    cache = tmp_path / "cache"
    mlir = model.with_suffix(".mlir")
    cold = run_worker(model, mlir, cache, skip_import=False)
    stages = [name for name, _ in cold["stages"]]
    assert stages[:4] == ["import", "parse", "fold-constants", "legalize-ops"]
    compiled = stages[stages.index("convert-loop-to-llvm") :]
    assert compiled[:4] == [
        "convert-loop-to-llvm",
        "llvm-translate",
        "llvm-optimize",
        "llvm-codegen",
    ]
    # what a compile does besides its passes and units: each step of an op edit accounted for
    for stage in ("verify", "split-units", "cache-load", "cache-store", "link", "bind-constants"):
        assert stage in stages
    assert stages[-2:] == ["bind-constants", "file-cache-store"]
    assert not cold["from_cache"] and cold["peak_mb"] > 0
    assert cold["cache_mb"] > 0  # (the units, the model entry, the file entry)
    assert (tmp_path / "tiny.weights").exists()  # the conv weights left the IR text
    hit = run_worker(model, mlir, cache, skip_import=True)
    # a hit of the file level: nothing parsed or folded (the folded weights are in the cache)
    assert hit["from_cache"] and [name for name, _ in hit["stages"]] == ["file hit"]
    assert hit["cache_mb"] == 0
    # a whole new process that loads it (it fails unless its compile is a hit)
    process = process_hit(mlir, cache, runs=1)
    assert process["total"] > 0 and process["imports"] > 0
    # and a run from the command line (it fails unless it loads the model from the cache)
    cli = cli_hit(mlir, cache, runs=1)
    assert cli["total"] > 0 and cli["first"] > 0
    row = {
        "model": "tiny",
        "weights_mb": 0.002,
        "cold": cold,
        "hit": hit,
        "hit process": process,
        "fusion-run": cli,
        "edit": cold,
        "op edit": cold,
    }
    assert markdown_table([row]).splitlines()[2].startswith("| tiny | 0 |")
    assert "tiny cold: total" in stage_line("tiny cold", cold)


def test_rounds_give_the_median_round_of_each_step_and_paired_shares():
    """`--rounds`: per step the round of median time; an edit's share, the median of each
    round's edit over that round's cold compile (not the median edit over the median cold)."""
    colds, edits = (2.0, 4.0, 3.0), (1.0, 1.0, 0.9)  # shares 0.5, 0.25, 0.3
    runs = []
    for cold, edit in zip(colds, edits, strict=True):
        run = {step: {"total": 1.0, "round": cold} for step in STEPS}
        run["cold"] = {"total": cold, "round": cold}
        run["edit"] = {"total": edit, "round": cold}
        runs.append(run)
    row = median_row("m", 1.0, runs)
    assert row["rounds"] == 3
    assert row["cold"]["total"] == 3.0
    assert row["edit"]["total"] == 1.0 and row["edit"]["round"] in (2.0, 4.0)
    assert row["edit share"] == pytest.approx(0.3)  # (not 1.0 / 3.0, the medians' ratio)
    assert row["op edit share"] == pytest.approx(1 / 3)  # (1.0 over 2, 4 and 3)
    two = median_row("m", 1.0, runs[:2])
    assert two["cold"]["total"] == 2.0  # (the lower of two: a round that happened)
