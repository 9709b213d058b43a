"""Smoke tests of `bench/zoo.py`'s pairing and table (no model is compiled: `measure_model`
runs in `tests/frontend/test_zoo_native.py`'s helpers and in the script itself)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("onnx")

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import zoo  # noqa: E402


def test_paired_runs_take_turns_after_a_warm_up_of_each():
    calls = []
    medians = zoo.paired_medians([lambda: calls.append("a"), lambda: calls.append("b")], 3, 1e9)
    # one warm-up round, then three rounds; each timed call follows an untimed one of its own
    assert calls == ["a", "b"] + ["a", "a", "b", "b"] * 3
    assert len(medians) == 2 and all(m >= 0 for m in medians)


def test_the_budget_limits_the_rounds_to_at_least_one():
    calls = []
    zoo.paired_medians([lambda: calls.append("a")], 100, 0.0)
    assert calls == ["a", "a", "a"]


def test_each_thread_count_has_ours_theirs_and_their_ratio():
    row = zoo.Row("squeezenet", ours_ms={1: 30.0, zoo.CORES: 20.0}, ort_ms={1: 10.0})
    cells = dict(zip(zoo.header(), zoo.table_row(row), strict=True))
    assert cells["ours 1 thread ms"] == "30"
    assert cells["ort 1 thread ms"] == "10"
    assert cells["ours/ort 1 thread"] == "3.00"
    if zoo.CORES > 1:
        assert cells[f"ours {zoo.CORES} threads ms"] == "20"
        assert cells[f"ours/ort {zoo.CORES} threads"] == "–"  # no onnxruntime time
    assert zoo.markdown_table([row]).count("\n") == 2
