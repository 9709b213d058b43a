"""fusion-run --profile: the table on an example, the JSON, and the errors of its options.

The roofs are given (`--peak-gflops`, `--peak-gbps`) so that no test measures the machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "transformer_block.mlir"
ROOFS = ("--peak-gflops", "50", "--peak-gbps", "10")


def fusion_run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    code = "import sys; from fusion_compiler.tools.fusion_run import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd, check=False
    )


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path / "cache"))


def _table(stdout: str) -> list[list[str]]:
    lines = stdout.splitlines()
    (start,) = [i for i, line in enumerate(lines) if line.startswith("kernel ")]
    return [line.split() for line in lines[start + 1 :] if line.strip()]


def test_profile_prints_every_kernel_with_its_calls(tmp_path, cache):
    out = tmp_path / "profile.json"
    args = (str(EXAMPLE), "--random-inputs", "--profile", "--profile-runs", "2", *ROOFS)
    result = fusion_run(*args, "--profile-json", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "(profiling build)" in result.stdout
    assert "profile of @main: 2 runs on " in result.stdout
    assert "roofs (given): compute 50.0 GFLOP/s a core" in result.stdout
    launched = result.stdout.splitlines()[0].split(" (", 1)[1].split(")")[0].split(", ")
    rows = _table(result.stdout)
    calls = {row[0]: int(row[1]) for row in rows}
    assert calls == {name: launched.count(name) for name in launched}
    shares = sum(float(row[3].rstrip("%")) for row in rows)
    assert 50.0 < shares <= 100.0 + 0.05 * len(rows)  # printed to 0.1%
    assert all(row[8] in ("compute", "memory") for row in rows)
    data = json.loads(out.read_text())
    assert data["schema"] == "fusion-compiler-profile/1"
    assert [k["name"] for k in data["kernels"]] == [row[0] for row in rows]
    assert {k["name"]: k["calls"] for k in data["kernels"]} == calls


def test_profile_json_alone_implies_profile_and_top_shortens_the_table(tmp_path, cache):
    out = tmp_path / "p.json"
    result = fusion_run(
        str(EXAMPLE), "--random-inputs", "--profile-json", str(out), "--profile-top", "2",
        "--profile-runs", "1", *ROOFS, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert len(_table(result.stdout)) == 3  # two kernels and the "... more kernels" line
    assert "more kernels" in result.stdout
    assert len(json.loads(out.read_text())["kernels"]) > 2  # the JSON has them all


@pytest.mark.parametrize(
    "args, message",
    [
        (["--peak-gflops", "100"], "--peak-gflops: only with --profile"),
        (["--profile-runs", "3"], "--profile-runs: only with --profile"),
        (["--profile", "--profile-runs", "0"], "--profile-runs: expected a positive integer"),
        (["--profile", "--profile-top", "-1"], "--profile-top: expected a positive integer"),
        (["--profile", "--peak-gflops", "0"], "--peak-gflops: expected a positive number"),
        (["--profile", "--peak-gbps", "nan"], "--peak-gbps: expected a positive number"),
        (["--profile", "--peak-gbps", "inf"], "--peak-gbps: expected a positive number"),
        (["--profile-json", "."], "--profile-json .: is a directory"),
    ],
)
def test_bad_profile_options_are_user_errors(tmp_path, cache, args, message):
    result = fusion_run(str(EXAMPLE), "--random-inputs", *args, cwd=tmp_path)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert "compiled" not in result.stdout  # refused before compiling
