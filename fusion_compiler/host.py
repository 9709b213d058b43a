"""Facts of the machine this process runs on that more than one stage reads: its cores, what
its file system says of a file, how to write a large file, and the versions of the packages
installed."""

from __future__ import annotations

import os
import re
import sys


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask; the machine's count where the OS
    has no such call)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


JOBS_VARIABLE = "FUSION_COMPILE_JOBS"
"""Set to a positive count, the worker processes a compile uses (`compile_jobs`)."""


def compile_jobs() -> int:
    """The worker processes to compile with: `FUSION_COMPILE_JOBS`, else the usable CPUs."""
    text = os.environ.get(JOBS_VARIABLE, "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"{JOBS_VARIABLE} must be a positive job count, got {text!r}")
        return int(text)
    return usable_cores()


def file_identity(stat: os.stat_result) -> tuple[int, ...]:
    """What changes when a file is written or replaced: device, inode, size, modification and
    change times (what the compile cache trusts of a file it read: `file_cache.identity`,
    `weight_names`; a weights file's, `resources`)."""
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns


FILE_WRITE_BYTES = 256 << 10
"""The most bytes one system call writes into a file (`write_at`). The page cache of a file
takes folios about as large as the writes that fill it, and on the virtual machines we run
on (which hand freed 2 MB blocks back to their host: free page reporting) 2 MB ones cost
several times what small ones do. 288 MB written into a new file after five idle seconds
(`python bench/file_writes.py --rounds 3`, Zen 5, medians): 0.08 s in pieces of 256 KB,
0.37 s of 1 MB, 0.87 s of 2 MB, 0.74 s of 8 MB, 0.52 s through a mapping of the file; into
new memory, no file, 0.18 s. vgg19's import from `.onnx` (548 MB of weights written in
pieces of 4 MB or more before): 1.21 -> 0.42 s (medians of eight fresh processes, paired)."""


def write_at(
    descriptor: int, data: bytes | memoryview, offset: int, piece: int = FILE_WRITE_BYTES
) -> int:
    """Writes all of `data` at `offset` of the open file `descriptor`, in pieces of at most
    `piece` bytes (other sizes: `bench/file_writes.py`); returns the bytes written."""
    view = memoryview(data).cast("B")
    done = 0
    while done < view.nbytes:
        done += os.pwrite(descriptor, view[done : done + piece], offset + done)
    return done


def installed_version(distribution: str) -> str:
    """The version of the installed `distribution` (as `importlib.metadata.version` gives it),
    or "unknown". It is read from the name of its `.dist-info` folder
    (`<name>-<version>.dist-info`, as installers name it) in the first folder of `sys.path`
    that has one: importing `importlib.metadata` costs 19-21 ms (it loads the `email`
    package), a tenth of a cache hit in a new process (the cache key holds the versions).
    Where that folder does not say (no such folder, or two in one place), `importlib.metadata`
    answers."""
    wanted = re.sub(r"[-_.]+", "_", distribution).lower() + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # (a zip file, a folder gone)
            continue
        found = [n for n in names if n.endswith(".dist-info") and n.lower().startswith(wanted)]
        if len(found) == 1:
            return found[0][len(wanted) : -len(".dist-info")]
        if found:
            break
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "unknown"
