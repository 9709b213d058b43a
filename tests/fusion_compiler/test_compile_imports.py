"""What a compile with the default pipeline loads: only what it uses. A new process pays for
every module it imports (a compile from the command line, a test's subprocess)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mlp.mlir"


@pytest.fixture(scope="module")
def loaded() -> set[str]:
    """The modules a new process has loaded after compiling an example without the cache."""
    script = (
        "import sys\n"
        "from fusion_compiler.driver import compile_file\n"
        f"compile_file({str(EXAMPLE)!r}, cache=False)\n"
        "print('\\n'.join(sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_no_backend_without_a_composite(loaded):
    """lower-graph loads the backends (and the pattern language they match with) only for a
    module that calls a composite."""
    assert not {m for m in loaded if "blas_backend" in m or ".passes.patterns" in m}


def test_no_lookup_of_the_environments_passes(loaded):
    """Reading every installed package's entry points (through `importlib.metadata`) is left
    to a pipeline that names a pass the project does not have."""
    assert not {"xdsl.universe", "importlib.metadata"} & loaded
