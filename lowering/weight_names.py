"""The names of a weights file's blobs, kept in the compile cache by the file's identity.

The load memo names each input of a packing launch by a SHA-256 of its bytes
(`cache_blobs.content_names`): vgg19's 548 MB of weights took 0.3 s to hash on two cores,
every time its model was compiled again, an op edit included. An input that is a blob of a
mapped weights file (`resources.blob_place`) is named here instead, from a small record per
weights file (`weight-names/`, JSON: the file's path and identity, and the name of each
blob by its offset and size) written after a compile hashed them. The record is used only
while the file's identity (device, inode, size, modification and change times) is the one
it was written for: the trust the cache's file level already puts in a file it read
(`file_cache`), so a weights file written again, by an import or by hand, is hashed again.

`fusion-import` updating a weights file in place (`WeightsWriter`'s `reuse`) changes its
identity but knows which blobs it kept, byte for byte: `carry_forward` moves their names to
the new identity, so an op edit's re-import and compile hash no weight, and a weight edit's
only the edited one. The records are an optimisation: one that cannot be read or written is
no record.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from fusion_compiler.dialects.resources import BlobPlace, blob_place
from fusion_compiler.host import file_identity
from fusion_compiler.lowering.cache_files import atomic_write

FOLDER = "weight-names"
FORMAT = "weight names 1"


def known_names(directory: Path, arrays: Sequence[np.ndarray]) -> dict[int, str]:
    """The names the records give `arrays` that are blobs of a weights file whose identity is
    still the one the record holds, by position in `arrays`."""
    names: dict[int, str] = {}
    records: dict[Path, dict[str, str] | None] = {}
    for index, array in enumerate(arrays):
        place = blob_place(array)
        if place is None:
            continue
        if place.path not in records:
            records[place.path] = _read(directory, place.path, place.identity)
        record = records[place.path]
        name = None if record is None else record.get(_slot(place))
        if name is not None:
            names[index] = name
    return names


def remember(directory: Path, arrays: Sequence[np.ndarray], names: Sequence[str]) -> None:
    """Records the `names` of those `arrays` that are blobs of a weights file, for the file's
    identity, if the file still has it (it was not written since it was mapped)."""
    by_file: dict[tuple[Path, tuple[int, ...]], dict[str, str]] = {}
    for array, name in zip(arrays, names, strict=True):
        place = blob_place(array)
        if place is not None:
            by_file.setdefault((place.path, place.identity), {})[_slot(place)] = name
    for (path, identity), found in by_file.items():
        with contextlib.suppress(OSError):
            if file_identity(path.stat()) != identity:
                continue
            record = _read(directory, path, identity) or {}
            if not found.items() <= record.items():
                _write(directory, path, identity, record | found)


def carry_forward(
    directory: Path,
    path: Path,
    before: tuple[int, ...],
    after: tuple[int, ...],
    kept: Sequence[tuple[int, int]],
) -> None:
    """After an update of the weights file `path` in place from identity `before` to
    `after` that left the blobs at `kept` (offset, size) byte for byte as they were: their
    names, when the record was for `before`, recorded for `after`."""
    path = path.resolve()
    record = _read(directory, path, before)
    if record is None or before == after:
        return
    slots = {f"{offset}:{size}" for offset, size in kept}
    with contextlib.suppress(OSError):
        _write(directory, path, after, {s: n for s, n in record.items() if s in slots})


def _slot(place: BlobPlace) -> str:
    return f"{place.offset}:{place.size}"


def _record_path(directory: Path, path: Path) -> Path:
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:32]
    return directory / FOLDER / f"{digest}.json"


def _read(directory: Path, path: Path, identity: tuple[int, ...]) -> dict[str, str] | None:
    """The names recorded for the weights file `path` if the record is for `identity`."""
    try:
        record = json.loads(_record_path(directory, path).read_text())
        if (
            record.get("format") == FORMAT
            and record.get("path") == str(path)
            and tuple(record.get("identity", ())) == identity
        ):
            return {str(slot): str(name) for slot, name in record["names"].items()}
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        pass
    return None


def _write(directory: Path, path: Path, identity: tuple[int, ...], names: dict[str, str]) -> None:
    target = _record_path(directory, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    record = {"format": FORMAT, "path": str(path), "identity": list(identity), "names": names}
    atomic_write(target, json.dumps(record, sort_keys=True).encode())
