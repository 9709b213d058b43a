"""Facts of the machine this process runs on that more than one stage reads: its cores, and
what its file system says of a file."""

from __future__ import annotations

import os


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask; the machine's count where the OS
    has no such call)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def file_identity(stat: os.stat_result) -> tuple[int, ...]:
    """What changes when a file is written or replaced: device, inode, size, modification and
    change times (what the compile cache trusts of a file it read: `file_cache.identity`,
    `weight_names`; a weights file's, `resources`)."""
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns
