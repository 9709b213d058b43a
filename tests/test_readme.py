"""The README's Python examples run as written (from the repository root)."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_block_runs(code):
    if "BLAS_PIPELINE" in code and importlib.util.find_spec("scipy_openblas32") is None:
        pytest.skip("the blas extra (scipy-openblas32) is not installed")
    if "import onnx" in code:
        pytest.importorskip("onnx")  # the optional extra
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def test_readme_has_a_quick_start_of_two_commands():
    text = (ROOT / "README.md").read_text()
    quick_start = text.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line for line in quick_start.splitlines() if line.strip()]
    assert len(commands) == 2
    assert commands[1].endswith("pytest")


def test_readme_pattern_dispatch_commands_run():
    """The command lines of the pattern-dispatch section run as written (the install aside)."""
    if importlib.util.find_spec("scipy_openblas32") is None:
        pytest.skip("the blas extra (scipy-openblas32) is not installed")
    text = (ROOT / "README.md").read_text()
    section = text.split("## Pattern dispatch to BLAS", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line and not line.startswith("pip ")]
    assert [c.split()[0] for c in commands] == ["fusion-opt", "fusion-run"]
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    outputs = []
    for command in commands:
        result = subprocess.run(
            command, shell=True, cwd=ROOT, capture_output=True, text=True, check=False, env=env
        )
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout)
    assert 'graph.composite = "blas.matmul_bias"' in outputs[0]
    assert "check out0: OK" in outputs[1]
