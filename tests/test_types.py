"""mypy over the installed package, as part of the test run (configuration: pyproject.toml).

The stage folders install under the `fusion_compiler` namespace (pyproject.toml's
`package-dir`), which mypy cannot follow through an editable install; so the test lays the
package out as it is installed, with symbolic links into the repository, in a temporary
directory, and checks it there. Errors are reported with repository paths. No incremental
cache is kept: about 10 s of CPU.
"""

import importlib.util
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def installed_layout(target: Path) -> dict[str, str]:
    """Link every package folder of pyproject.toml's `package-dir` to where it is installed,
    under `target`; the installed prefix of each folder, keyed by the folder."""
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    prefixes = {}
    for name, folder in sorted(table["package-dir"].items()):
        installed = target.joinpath(*name.split("."))
        if name == "fusion_compiler":
            installed.mkdir(parents=True)
            for entry in (ROOT / folder).iterdir():
                if entry.suffix == ".py":
                    (installed / entry.name).symlink_to(entry)
        else:
            installed.symlink_to(ROOT / folder, target_is_directory=True)
        prefixes[folder] = str(installed.relative_to(target))
    return prefixes


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_mypy(tmp_path):
    layout = tmp_path / "layout"
    prefixes = installed_layout(layout)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            os.devnull,
            "-p",
            "fusion_compiler",
        ],
        cwd=layout,
        capture_output=True,
        text=True,
        check=False,
    )
    report = result.stdout + result.stderr
    for folder, prefix in sorted(prefixes.items(), key=lambda item: -len(item[1])):
        report = report.replace(prefix + "/", folder + "/")
    assert result.returncode == 0, report
