"""`host`: the versions of installed packages, read without `importlib.metadata`; large
files written in small pieces."""

from __future__ import annotations

import os
import sys
from importlib.metadata import version

import numpy as np
import pytest

from fusion_compiler import host
from fusion_compiler.host import FILE_WRITE_BYTES, installed_version, write_at


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


def _recording_short_writes(monkeypatch) -> list[int]:
    """`os.pwrite` recorded, each call writing at most 1000 bytes fewer than it is given (a
    short write, which the callers must continue)."""
    sizes: list[int] = []
    real = os.pwrite

    def pwrite(descriptor, data, offset):
        sizes.append(len(data))
        return real(descriptor, memoryview(data)[: max(1, len(data) - 1000)], offset)

    monkeypatch.setattr(host.os, "pwrite", pwrite)
    return sizes


def test_a_large_write_goes_in_small_pieces_and_whole(tmp_path, monkeypatch):
    data = np.random.default_rng(0).random((3 * FILE_WRITE_BYTES + 12344) // 4, np.float32)
    path = tmp_path / "file"
    path.write_bytes(b"head")
    sizes = _recording_short_writes(monkeypatch)
    descriptor = os.open(path, os.O_RDWR)
    try:
        written = write_at(descriptor, memoryview(data), 4)  # (float elements: as bytes)
    finally:
        os.close(descriptor)
    assert path.read_bytes() == b"head" + data.tobytes()
    assert written == data.nbytes
    assert len(sizes) > 4 and max(sizes) <= FILE_WRITE_BYTES
