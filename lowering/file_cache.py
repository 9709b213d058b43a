"""The compile cache's file level: a model compiled from an IR file loads again unparsed.

A model entry (`compile_cache`) is keyed by the graph-level module, so a hit on it still
parses the file, runs the graph passes that compute with constants (`fold-constants`), copies
every constant out of the IR and runs the load entry that packs them: 0.3-1.5 s on the zoo's
models, most of it the parse. The file level skips all of that. Its key is the hash of the
file's text and of the folder it is in (the weights file is named relative to it), with
the pipeline and everything else a model key covers (`compile_cache.key_of_hash`). Its entry,
a checksummed cache entry like the others, names the model entry of the native code and
describes each graph-level function: parameters, results, kernels and its bound constants as
the compile left them (folded by the graph passes, packed by the load entry). The small
constants are raw in a file of their own beside the entry, `KEY.constants`, each at a 64-byte
aligned offset, with the file's size and CRC-32 in the entry. Each constant of at least
`BLOB_MIN_BYTES` is a blob (`cache_blobs`: a file named by a hash of its bytes),
shared by every entry that holds the same constant: a model whose weights were edited, or
the same model imported into another file, stores only the constants that changed (they were
all written again, vgg19's 548 MB for an edit of one op).

A hit maps those files copy-on-write (their pages are the operating system's file cache:
nothing is copied, and a kernel writing into a constant would change its private page only),
checks each one's CRC-32 (zlib's, 5.6 GB/s here against SHA-256's 1.7: it is there to catch a
truncated or damaged file, not an adversary; a damaged blob is deleted, so that the next store
writes it anew) and binds the model's functions to views of them.

The files a parse read besides the text (the weights file of `dense_resource` constants) are
recorded with their size, modification and change times and inode; a hit requires each one
unchanged, so new weights written to the weights file are a miss (then a model hit: the
native code does not depend on the weights). A missing or damaged entry, constants file or
model entry is a miss. The constants files and blobs are kept within a budget
(`FUSION_CACHE_CONSTANTS_MB`, default 4 GiB), the least recently used deleted first (`cache_blobs.evict`);
an entry whose blob went is a miss.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fusion_compiler.host import file_identity
from fusion_compiler.lowering import cache_blobs, compile_cache
from fusion_compiler.lowering.cache_blobs import (
    BLOB_MIN_BYTES,
    blob_path,
    content_digests,
    map_blobs,
    store_blob,
)
from fusion_compiler.lowering.compiled_model import CompiledFunction, CompiledModel, Parameter

FILE_PIPELINE = "file"
"""The pipeline part of a file entry's key is this, a colon, then the model's pipeline."""

ALIGNMENT = 64


@dataclass
class SourceFile:
    """An IR file as the compiler read it: its path, its text, and the other files its parse
    read (`read_files` of `parse_source`), filled in by the parse."""

    path: Path
    text: str
    read_files: list[Path] = field(default_factory=list)
    seen: list[list[int]] = field(default_factory=list)
    """The identity (`identity`) of each of `read_files` when the parse had read them."""

    def parsed(self) -> None:
        """Notes the identity of the files the parse read (called right after it)."""
        self.seen = [identity(path) for path in self.read_files]

    def key(self, pipeline: str) -> str:
        digest = hashlib.sha256(self.text.encode())
        digest.update(b"\0" + str(self.path.resolve().parent).encode())
        return compile_cache.key_of_hash(digest.hexdigest(), f"{FILE_PIPELINE}:{pipeline}")


def load(source: SourceFile, pipeline: str) -> CompiledModel | None:
    """The model compiled before from `source` with `pipeline`, or None (a miss)."""
    directory = compile_cache.cache_dir()
    if directory is None:
        return None
    key = source.key(pipeline)
    meta = compile_cache.read_meta(directory, key)
    if meta is None:
        return None
    try:
        if any(identity(Path(p)) != list(seen) for p, *seen in meta["read_files"]):
            return None
        constants = _map_constants(directory, key, meta["constants"])
        blobs = map_blobs(directory, meta["blobs"])
        if constants is None or blobs is None:
            return None
        native = compile_cache.load_native(directory, meta["model"])
        if native is None:
            return None
        functions = {
            f["name"]: _function(f, constants, blobs, native.kernels[f["name"]])
            for f in meta["functions"]
        }
    except (KeyError, TypeError, ValueError, OSError):
        return None
    return CompiledModel(native.jit, functions, from_cache=True, native_key=meta["model"])


def store(source: SourceFile, pipeline: str, model: CompiledModel) -> None:
    """Keeps `model`, compiled from `source` with `pipeline`, for `load`."""
    directory = compile_cache.cache_dir()
    if directory is None or not model.native_key:
        return
    key = source.key(pipeline)
    raws = {
        id(array): np.ascontiguousarray(array).reshape(-1).view(np.uint8).data
        for function in model.functions.values()
        for array in function.constants
    }
    known = model.blob_digests  # (the load entry's results: hashed by `load_memo` already)
    large = {array: raw for array, raw in raws.items() if raw.nbytes >= BLOB_MIN_BYTES}
    digests = content_digests([raw for array, raw in large.items() if array not in known])
    digests.update((id(raw), known[array]) for array, raw in large.items() if array in known)
    parts: list[memoryview] = []
    offset = 0
    checksum = 0
    blobs: dict[str, list[int]] = {}
    blob_data: dict[str, memoryview] = {}
    functions = []
    for function in model.functions.values():
        placed: list[list] = []
        for array in function.constants:
            raw = raws[id(array)]
            where: int | str
            if raw.nbytes >= BLOB_MIN_BYTES:
                where, blobs[where] = digests[id(raw)]
                blob_data[where] = raw
            else:
                padding = -offset % ALIGNMENT
                for part in (memoryview(bytes(padding)), raw):
                    parts.append(part)
                    checksum = zlib.crc32(part, checksum)
                offset += padding
                where = offset
                offset += raw.nbytes
            placed.append([where, list(array.shape), array.dtype.str])
        functions.append(
            {
                "name": function.name,
                "parameters": [
                    [p.name, list(p.shape), np.dtype(p.dtype).str] for p in function.parameters
                ],
                "results": [
                    [list(shape), np.dtype(dtype).str]
                    for shape, dtype in zip(function.results, function.result_dtypes, strict=True)
                ],
                "constants": placed,
            }
        )
    meta = {
        "model": model.native_key,
        "read_files": [
            [str(p.resolve()), *seen]
            for p, seen in zip(source.read_files, source.seen, strict=True)
        ],
        "constants": {"bytes": offset, "crc32": checksum},
        "blobs": blobs,
        "functions": functions,
    }
    constants_path = _constants_path(directory, key)
    stored = all(store_blob(directory, name, data) for name, data in blob_data.items())
    if stored and compile_cache.store_file(directory, constants_path, parts):
        compile_cache.store_meta(directory, key, meta)  # (after its constants: see `load`)
        kept = [constants_path, *(blob_path(directory, name) for name in blobs)]
        cache_blobs.evict(directory, cache_blobs.budget_bytes(), keep=kept)


def _constants_path(directory: Path, key: str) -> Path:
    return directory / f"{key}.constants"


def identity(path: Path) -> list[int]:
    """What changes when a file is written or replaced (`host.file_identity`), as JSON
    keeps it; empty when the file cannot be read."""
    try:
        return list(file_identity(path.stat()))
    except OSError:
        return []


def _map_constants(directory: Path, key: str, described: dict) -> np.ndarray | None:
    """The constants file of `key` mapped copy-on-write, if its size and CRC-32 hold."""
    path = _constants_path(directory, key)
    size = int(described["bytes"])
    if path.stat().st_size != size:
        return None
    mapped = np.memmap(path, dtype=np.uint8, mode="c") if size else np.empty(0, np.uint8)
    if zlib.crc32(mapped.data) != described["crc32"]:
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # (recently used: `evict` takes the oldest first)
    return mapped


def _function(
    data: dict, constants: np.ndarray, blobs: dict[str, np.ndarray], kernels: tuple[str, ...]
) -> CompiledFunction:
    parameters = tuple(
        Parameter(name, tuple(shape), np.dtype(dtype)) for name, shape, dtype in data["parameters"]
    )
    results = tuple(tuple(shape) for shape, _ in data["results"])
    dtypes = tuple(np.dtype(dtype) for _, dtype in data["results"])
    arrays = []
    for where, shape, dtype in data["constants"]:
        dtype = np.dtype(dtype)
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if isinstance(where, str):
            raw = blobs[where]
            if raw.size != size:
                raise ValueError("a blob of the wrong size")
        else:
            if where % ALIGNMENT or where + size > constants.size:
                raise ValueError("a constant outside the constants file")
            raw = constants[where : where + size]
        arrays.append(raw.view(dtype).reshape(shape))
    return CompiledFunction(data["name"], parameters, results, dtypes, tuple(arrays), kernels)
