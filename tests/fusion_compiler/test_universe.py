"""xDSL's own tools see the project's dialects and passes once the package is installed (the
`xdsl.universe` entry point)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from xdsl.universe import Universe

from fusion_compiler.driver import PASSES

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_multiverse_has_every_pass_and_both_dialects():
    multiverse = Universe.get_multiverse()
    assert set(PASSES) <= set(multiverse.all_passes)
    assert {"graph", "loop"} <= set(multiverse.all_dialects)


@pytest.mark.skipif(shutil.which("xdsl-opt") is None, reason="xdsl-opt is not on PATH")
def test_xdsl_opt_runs_fuse_ops():
    result = subprocess.run(
        [
            "xdsl-opt",
            str(EXAMPLES / "conv_block.mlir"),
            "-p",
            "legalize-ops,annotate-pattern,fuse-ops,fuse-tir,schedule-kernels",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "loop.func @fused_conv2d_add_relu" in result.stdout
    assert "parallel" in result.stdout  # schedule-kernels' stages ran (mark-loop-kinds)
