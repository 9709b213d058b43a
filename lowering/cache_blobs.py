"""The compile cache's blobs: large constants, each a file named by a hash of its bytes.

A blob is a file of the cache's `BLOB_FOLDER` holding one constant's raw bytes, named by
`content_digests` (a SHA-256 of its size and of its pieces' SHA-256s), so that every entry
holding the same bytes shares it: the file level's large constants (`file_cache`); or, a
result of a load entry's launch (`load_memo`), named by the key it is kept under, which
determines its bytes (the same kernel on the same inputs), and shared by every entry that
holds that result. Entries list the blobs they hold with the CRC-32 of
each `PIECE_BYTES` piece, which `map_blobs` checks (zlib's CRC-32, 5.6 GB/s here against
SHA-256's 1.7: it is there to catch a truncated or damaged file, not an adversary); a
damaged blob is deleted, so the next store writes it anew. `evict` keeps them and the file
level's constants files within the cache's budget, the least recently used deleted first.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import mmap
import os
import tempfile
import zlib
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import numpy as np

from fusion_compiler.host import usable_cores
from fusion_compiler.lowering import compile_cache

BLOB_FOLDER = "blobs"

BLOB_MIN_BYTES = 1 << 16
"""Constants of at least this many bytes are shared blobs (`BLOB_FOLDER`); smaller ones
(biases, scales: a file each would cost more than their bytes) go in the entry that holds
them (`file_cache`'s constants file, `load_memo`'s entry)."""

PIECE_BYTES = 16 << 20
"""Blobs are hashed in pieces of this many bytes, on every core (`content_digests`)."""

_Result = TypeVar("_Result")


def content_digests(raws: list[memoryview]) -> dict[int, tuple[str, list[int]]]:
    """The name and the CRC-32s (one per `PIECE_BYTES` piece, checked by `map_blobs`) of each of
    `raws`, by its id. The name is the SHA-256 of the size and of the SHA-256s of the pieces,
    which are hashed on every core (hashlib and zlib let go of the interpreter lock while they
    hash): one 411 MB weight would take 0.23 s on one core."""
    per_raw = _per_piece(raws, lambda data: (hashlib.sha256(data).digest(), zlib.crc32(data)))
    return {
        id(raw): (_name(raw, [sha for sha, _ in done]), [crc for _, crc in done])
        for raw, done in zip(raws, per_raw, strict=True)
    }


def content_names(raws: list[memoryview]) -> dict[int, str]:
    """The name `content_digests` gives each of `raws`, by its id, without the CRC-32s (the
    key of a load launch names its inputs: vgg19's 548 MB at zlib's 5.6 GB/s, about 0.1 s
    less)."""
    per_raw = _per_piece(raws, lambda data: hashlib.sha256(data).digest())
    return {id(raw): _name(raw, shas) for raw, shas in zip(raws, per_raw, strict=True)}


def piece_checksums(raws: list[memoryview]) -> dict[int, list[int]]:
    """The CRC-32s of each of `raws` (one per `PIECE_BYTES` piece: what `map_blobs` checks), by
    its id, computed on every core: `content_digests` without the names, for a blob named by
    what made it."""
    per_raw = _per_piece(raws, zlib.crc32)
    return {id(raw): crcs for raw, crcs in zip(raws, per_raw, strict=True)}


def _name(raw: memoryview, piece_shas: list[bytes]) -> str:
    """A blob's name: the SHA-256 of its size and of its pieces' SHA-256s."""
    name = hashlib.sha256(raw.nbytes.to_bytes(8, "little"))
    for sha in piece_shas:
        name.update(sha)
    return name.hexdigest()


def _per_piece(
    raws: list[memoryview], work: Callable[[memoryview], _Result]
) -> list[list[_Result]]:
    """`work` of each `PIECE_BYTES` piece of each of `raws`, as one list per raw, in order; on
    every core when the pieces hold more than `PIECE_BYTES`: small constants are hashed
    without starting threads (the load memo of a small model's compile: 8 -> 4 ms, medians of
    five; a test suite compiles thousands)."""
    pieces = [
        (index, raw[start : start + PIECE_BYTES])
        for index, raw in enumerate(raws)
        for start in range(0, raw.nbytes, PIECE_BYTES)
    ]
    if sum(raw.nbytes for raw in raws) <= PIECE_BYTES:
        done = [work(data) for _, data in pieces]
    else:
        with ThreadPoolExecutor(max(1, min(usable_cores(), len(pieces)))) as pool:
            done = list(pool.map(lambda piece: work(piece[1]), pieces))
    per_raw: list[list[_Result]] = [[] for _ in raws]
    for (index, _), result in zip(pieces, done, strict=True):
        per_raw[index].append(result)
    return per_raw


def store_blob(directory: Path, name: str, data: memoryview) -> bool:
    """Writes the blob `name` unless the cache holds it already (then it is marked recently
    used); whether the cache holds it now."""
    path = blob_path(directory, name)
    with contextlib.suppress(OSError):
        if path.stat().st_size == data.nbytes:
            os.utime(path)
            return True
    return compile_cache.store_file(path.parent, path, [data])


def blob_buffer(
    directory: Path, shape: Sequence[int], dtype: np.dtype
) -> tuple[np.ndarray, Path] | None:
    """An array of `shape` and `dtype` that is a new file of the blob folder, mapped for
    writing, and the file's path (a temporary name, until `keep_blob` gives it its blob's
    name); None when the folder cannot be written, or the system cannot reserve disk space
    (no `posix_fallocate`: macOS), and the caller takes memory instead.

    A kernel that writes its results here writes the blob itself: writing 392 MB into new
    memory and then into a file took 1.4-2.8 s on a virtual machine whose fresh pages come
    from the host, against 0.3-0.9 s (median 0.43) this way (seven runs each). The disk space
    is reserved first, so that a full disk fails here, not as a fault when a kernel writes."""
    if not hasattr(os, "posix_fallocate"):
        return None
    size = math.prod(shape) * np.dtype(dtype).itemsize
    folder = directory / BLOB_FOLDER
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=folder, prefix=".new.", suffix=".tmp")
    except OSError:
        return None
    path = Path(name)
    try:
        try:
            os.posix_fallocate(handle, 0, size)
            mapped = mmap.mmap(handle, size)
        finally:
            os.close(handle)
    except (OSError, ValueError):  # (no space, no mapping; ValueError: an empty size)
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    return np.frombuffer(mapped, np.dtype(dtype)).reshape(shape), path


def keep_blob(directory: Path, filled: Path, name: str) -> np.ndarray | None:
    """The file `filled` of `blob_buffer`, renamed to the blob `name`, mapped copy-on-write
    (as `map_blobs` maps it: a kernel writing into a bound constant would change its own
    page, never the cache's file); None when it cannot be (it is deleted)."""
    path = blob_path(directory, name)
    try:
        os.replace(filled, path)
        return np.memmap(path, dtype=np.uint8, mode="c")
    except (OSError, ValueError):  # (another process may evict it at once)
        with contextlib.suppress(OSError):
            filled.unlink()
        return None


def blob_path(directory: Path, name: str) -> Path:
    if len(name) != 64 or any(c not in "0123456789abcdef" for c in name):
        raise ValueError(f"{name!r} is not the name of a blob")
    return directory / BLOB_FOLDER / name


def map_blobs(directory: Path, described: dict[str, list[int]]) -> dict[str, np.ndarray] | None:
    """Each blob of `described` (name → the CRC-32 of each piece) mapped copy-on-write, or
    None if one is missing or damaged (a damaged one is deleted: the next store writes it
    anew). The pieces are checked on every core."""
    mapped: dict[str, np.ndarray] = {}
    for name in described:
        try:
            mapped[name] = np.memmap(blob_path(directory, name), dtype=np.uint8, mode="c")
        except (OSError, ValueError):  # (missing, or empty)
            return None
    checksums = _per_piece([blob.data for blob in mapped.values()], zlib.crc32)
    found = dict(zip(mapped, checksums, strict=True))
    for name, expected in described.items():
        path = blob_path(directory, name)
        if found[name] != list(expected):
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # (recently used: `evict` takes the oldest first)
    return mapped


BUDGET_VARIABLE = "FUSION_CACHE_CONSTANTS_MB"
DEFAULT_BUDGET_MB = 4096
"""The megabytes of constants files and blobs the cache keeps: past it, the least recently
used go first."""


def budget_bytes() -> int:
    """`FUSION_CACHE_CONSTANTS_MB` (default `DEFAULT_BUDGET_MB`), in bytes."""
    text = os.environ.get(BUDGET_VARIABLE, "").strip()
    if not text:
        return DEFAULT_BUDGET_MB << 20
    if not text.isdigit():
        raise ValueError(f"{BUDGET_VARIABLE} must be a whole number of megabytes, got {text!r}")
    return int(text) << 20


def evict(directory: Path, budget: int, keep: Collection[Path]) -> None:
    """Deletes the least recently used constants files (with their entries) and blobs of
    `directory` until the rest fit in `budget` bytes; those of `keep` (the ones an entry just
    stored uses) stay whatever their size. A process that maps a deleted file keeps its
    pages; one about to map it has a miss."""
    files = []
    for path in (*directory.glob("*.constants"), *(directory / BLOB_FOLDER).glob("*")):
        with contextlib.suppress(OSError):  # (another process may evict it first)
            stat = path.stat()
            files.append((stat.st_mtime_ns, path, stat.st_size))
    total = sum(size for _, _, size in files)
    for _, path, size in sorted(files):
        if total <= budget:
            break
        if path in keep:
            continue
        stale = [path]
        if path.suffix == ".constants":
            stale.append(compile_cache.entry_path(directory, path.name.removesuffix(".constants")))
        for doomed in stale:
            with contextlib.suppress(OSError):
                doomed.unlink()
        total -= size
