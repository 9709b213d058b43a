"""Fixtures of the tools' tests."""

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def ir_file(tmp_path, monkeypatch) -> Callable[[str], Path]:
    """Writes IR text to `graph.mlir` in the test's folder, whose compile cache is the test's
    own (`FUSION_CACHE_DIR`, which the tools the test starts inherit); gives the file's path."""
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path / "cache"))

    def write(text: str) -> Path:
        path = tmp_path / "graph.mlir"
        path.write_text(text)
        return path

    return write
