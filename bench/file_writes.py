"""What writing a new file costs this machine, by how it is written.

    python bench/file_writes.py [--megabytes 288] [--rounds 4] [--idle 5]
        [--ways pieces-256K,pieces-1M,pieces-2M,pieces-8M,mapping,memory]

Each way writes `--megabytes` of random bytes (made once, in memory written before) into a
new file of `--dir` (the system's temporary folder by default), which is then deleted; the
ways take turns, in the opposite order every other round, each after `--idle` seconds
without work (a virtual machine may hand freed memory back to its host meanwhile: free page
reporting, which makes new pages dear). The ways:

- pieces-N: `os.pwrite` calls of N bytes each (`host.write_at` writes `FILE_WRITE_BYTES`);
- mapping: the file's space allocated (`posix_fallocate`), the file mapped and the bytes
  copied into the mapping (as a packing launch writes a blob of the compile cache);
- memory: the bytes copied into new anonymous memory (no file), for comparison.

Prints each way's median seconds, its range, and its ratio to the first way's median.
"""

from __future__ import annotations

import argparse
import mmap
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from fusion_compiler.host import write_at

SUFFIXES = {"K": 1 << 10, "M": 1 << 20}


def piece_bytes(way: str) -> int:
    """The piece size of a `pieces-N` way (N in bytes, or with a K or M suffix)."""
    text = way.removeprefix("pieces-")
    scale = SUFFIXES.get(text[-1:], 1)
    return int(text.rstrip("KM")) * scale


def write_in_pieces(path: Path, data: np.ndarray, piece: int) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        write_at(descriptor, memoryview(data), 0, piece)
    finally:
        os.close(descriptor)


def write_through_mapping(path: Path, data: np.ndarray) -> None:
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.posix_fallocate(descriptor, 0, data.nbytes)
        mapped = mmap.mmap(descriptor, data.nbytes)
    finally:
        os.close(descriptor)
    target = np.frombuffer(mapped, np.uint8)
    target[:] = data
    del target
    mapped.close()


def write_into_memory(_: Path, data: np.ndarray) -> None:
    mapped = mmap.mmap(-1, data.nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    target = np.frombuffer(mapped, np.uint8)
    target[:] = data
    del target
    mapped.close()


def writer(way: str) -> Callable[[Path, np.ndarray], None]:
    if way.startswith("pieces-"):
        piece = piece_bytes(way)
        return lambda path, data: write_in_pieces(path, data, piece)
    return {"mapping": write_through_mapping, "memory": write_into_memory}[way]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=288)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--idle", type=float, default=5.0, help="seconds before each write")
    parser.add_argument("--ways", default="pieces-256K,pieces-1M,pieces-2M,pieces-8M,mapping")
    parser.add_argument("--dir", default=None, help="where the files are written")
    args = parser.parse_args(argv)
    ways = args.ways.split(",")
    writers = {way: writer(way) for way in ways}
    data = np.random.default_rng(0).integers(0, 256, args.megabytes << 20, np.uint8)
    seconds: dict[str, list[float]] = {way: [] for way in ways}
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        for index in range(args.rounds):
            for way in ways if index % 2 == 0 else ways[::-1]:
                time.sleep(args.idle)
                path = Path(folder) / "written.bin"
                start = time.perf_counter()
                writers[way](path, data)
                seconds[way].append(time.perf_counter() - start)
                path.unlink(missing_ok=True)
    first = statistics.median(seconds[ways[0]])
    print(f"{args.megabytes} MB into a new file, {args.rounds} rounds, {args.idle:g} s idle")
    for way in ways:
        median = statistics.median(seconds[way])
        low, high = min(seconds[way]), max(seconds[way])
        print(f"{way:12s} {median:.3f} s ({low:.3f}-{high:.3f})  x{median / first:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
