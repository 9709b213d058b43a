"""Runs the whole lit suite (tests/filecheck) as one pytest test."""

import subprocess
import sys
from pathlib import Path

LIT_ROOT = Path(__file__).parent / "filecheck"


def test_lit_suite():
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import lit.main; lit.main.main()",
            "--verbose",
            "--order=lexical",
            str(LIT_ROOT),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
    assert "Passed" in result.stdout, result.stdout


def test_every_pass_has_its_lit_directory():
    from fusion_compiler.driver import PASSES

    missing = [name for name in PASSES if not (LIT_ROOT / name).is_dir()]
    assert not missing, f"passes without tests/filecheck/<pass-name>/: {missing}"
