"""Smoke test of `bench/file_writes.py`: every way writes the whole file, and the report
names each way with its ratio to the first."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.file_writes import main, piece_bytes, writer  # noqa: E402


@pytest.mark.parametrize("way", ["pieces-256K", "pieces-3", "mapping"])
def test_each_way_writes_the_whole_file(tmp_path, way):
    data = np.random.default_rng(1).integers(0, 256, 100_003, np.uint8)
    writer(way)(tmp_path / "f", data)
    assert (tmp_path / "f").read_bytes() == data.tobytes()


def test_piece_sizes():
    assert piece_bytes("pieces-256K") == 256 << 10
    assert piece_bytes("pieces-2M") == 2 << 20
    assert piece_bytes("pieces-100") == 100


def test_the_report_names_every_way(tmp_path, capsys):
    ways = "pieces-1M,mapping,memory"
    args = ["--megabytes", "1", "--rounds", "2", "--idle", "0", "--ways", ways]
    assert main([*args, "--dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("1 MB into a new file, 2 rounds")
    assert [line.split()[0] for line in lines[1:]] == ways.split(",")
    assert lines[1].endswith("x1.00")
    assert list(tmp_path.iterdir()) == []
