"""The installed package layout: every package folder is listed under the `fusion_compiler`
namespace in pyproject.toml, and no generic top-level name is installed."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _setuptools_table() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_folder_is_installed_under_the_namespace():
    table = _setuptools_table()
    listed = set(table["packages"])
    for name, folder in table["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder)
            dotted = ".".join((name, *relative.parts))
            assert dotted in listed, f"{init.parent} is not listed in pyproject.toml's packages"


def test_only_the_namespace_is_installed_at_the_top_level():
    assert {name.split(".")[0] for name in _setuptools_table()["packages"]} == {"fusion_compiler"}
