"""Smoke test of `bench/transformer_zoo.py`: one model, one round, through `main` (the table
row has its columns and a ratio)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import transformer_zoo  # noqa: E402


def test_one_round_of_one_model(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path))
    assert transformer_zoo.main(["--models", "vit", "--rounds", "1"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| vit")]
    assert len(rows) == 1
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert len(cells) == 8 and float(cells[-1]) > 0
    assert float(cells[4]) <= transformer_zoo.RTOL  # the check against onnxruntime
