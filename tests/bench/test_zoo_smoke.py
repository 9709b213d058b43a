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

from bench import timing as zoo_timing  # noqa: E402  (the timer zoo.py uses)


def test_paired_runs_take_turns_after_a_warm_up_of_each(monkeypatch):
    monkeypatch.setattr(zoo_timing, "SETTLE_SECONDS", 0.0)
    calls = []
    medians = zoo.paired_medians([lambda: calls.append("a"), lambda: calls.append("b")], 3, 1e9)
    # one warm-up round, then three rounds of turns: 2 untimed and 3 timed calls of each
    assert calls == ["a", "b"] + (["a"] * 5 + ["b"] * 5) * 3
    assert len(medians) == 2 and all(m >= 0 for m in medians)


def test_the_budget_limits_the_rounds_to_at_least_one(monkeypatch):
    monkeypatch.setattr(zoo_timing, "SETTLE_SECONDS", 0.0)
    calls = []
    zoo.paired_medians([lambda: calls.append("a")], 100, 0.0)
    assert calls == ["a"] * 6


def test_turns_on_thread_teams_settle_for_longer(monkeypatch):
    monkeypatch.setattr(zoo_timing, "SETTLE_SECONDS", 0.0)
    monkeypatch.setattr(zoo_timing, "TEAM_SETTLE_SECONDS", 0.02)
    one, team = [], []
    zoo.paired_medians([lambda: one.append("a")], 1, 1e9, threads=1)
    zoo.paired_medians([lambda: team.append("a")], 1, 1e9, threads=2)
    assert len(one) == 1 + 5  # the warm-up, 2 settling calls, 3 timed
    assert len(team) > 1 + 5  # settling went on for 20 ms of calls


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
