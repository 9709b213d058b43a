"""`host`: the versions of installed packages, read without `importlib.metadata`."""

from __future__ import annotations

import sys
from importlib.metadata import version

import pytest

from fusion_compiler.host import installed_version


@pytest.mark.parametrize(
    "name", ["xdsl", "llvmlite", "numpy", "fusion-compiler", "fusion_compiler"]
)
def test_the_version_is_the_one_importlib_metadata_gives(name):
    assert installed_version(name) == version(name)


def test_a_package_not_installed_is_unknown():
    assert installed_version("no-such-distribution-here") == "unknown"


def test_the_first_folder_of_the_path_that_has_one_answers(tmp_path, monkeypatch):
    (tmp_path / "Some_Package-1.2.3.dist-info").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(tmp_path), *sys.path])
    assert installed_version("some.package") == "1.2.3"


def test_two_versions_in_one_folder_are_left_to_importlib_metadata(tmp_path, monkeypatch):
    """Neither folder's name answers: what `importlib.metadata` reads in them does (their
    METADATA says 9.9, which no folder name does)."""
    for folder in ("pkg_twice-1.0.dist-info", "pkg_twice-2.0.dist-info"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "METADATA").write_text("Name: pkg-twice\nVersion: 9.9\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert installed_version("pkg-twice") == version("pkg-twice") == "9.9"
