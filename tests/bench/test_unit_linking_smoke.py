"""Smoke test of `bench/unit_linking.py`: a model linked from units computes the same bits as
the same model compiled in one unit, and the row is formatted. No timing is asserted."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.unit_linking import measure  # noqa: E402


def test_linked_and_single_unit_builds_agree():
    row = measure(ROOT / "examples" / "mlp.mlir", runs=1)
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[0] == "mlp" and len(cells) == 8
    assert cells[-1] == "yes"
