"""Where the compile cache is, and how its files are written: what a tool that only writes a
record into the cache needs (`fusion-import`: `weight_names`), without `compile_cache`'s
imports (the JIT, llvmlite: 0.3 s)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from fusion_compiler.host import write_at

CACHE_VARIABLE = "FUSION_CACHE_DIR"


def cache_dir() -> Path | None:
    """Where compiled models are kept, or None when caching is off."""
    configured = os.environ.get(CACHE_VARIABLE)
    if configured is not None:
        return Path(configured) if configured else None
    return Path.home() / ".cache" / "fusion-compiler"


def atomic_write(path: Path, data: bytes | Sequence[memoryview]) -> None:
    """Writes `data` (bytes, or buffers written one after the other) to `path` through a
    temporary file renamed into place: readers see the old file or the whole new one, and an
    interrupted write leaves no partial `path`."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        try:
            offset = 0
            for part in [memoryview(data)] if isinstance(data, bytes) else data:
                offset += write_at(handle, part, offset)  # (in pieces: `host.FILE_WRITE_BYTES`)
        finally:
            os.close(handle)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
