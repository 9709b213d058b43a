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


def test_a_pipeline_takes_the_environments_passes_and_the_projects_first(monkeypatch):
    """A pass the project does not have (xDSL's `dce`) comes from the environment; a name both
    have is the project's; an unknown one is named in the error."""
    from fusion_compiler import driver
    from fusion_compiler.dialects.diagnostics import CompileError

    (dce,) = driver.parse_pipeline("dce")
    assert type(dce).__module__.startswith("xdsl.")
    environment = dict(driver._environment_passes())
    monkeypatch.setattr(
        driver, "_environment_passes", lambda: {**environment, **{"fuse-ops": None}}
    )
    (fuse_ops,) = driver.parse_pipeline("fuse-ops")
    assert type(fuse_ops) is PASSES["fuse-ops"]()
    with pytest.raises(CompileError, match=r"Unrecognized passes: \['no-such-pass'\]"):
        driver.parse_pipeline("fuse-ops,no-such-pass")
