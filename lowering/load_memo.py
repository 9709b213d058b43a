"""The packed weights of a load entry, kept in the compile cache by what they are made of.

A function whose launches pack its weights (prepack-weights' packing kernels: any launch on
constants only) has a *load entry* (`lower_graph`), which runs those launches once when the
model is bound, and binds their results as further inputs of the entry. When the launches
can run apart (`load_launches`), they do, and each one's results are kept under a key made of
all they depend on: the cache key of its kernel's unit (the kernel's loop-level IR, with the
unit pipeline, the CPU and the compiler's source: `compile_cache.key_of_hash`) and, per input,
its dtype, shape and a SHA-256 of its bytes (for a blob of a weights file, the name the
cache's record of the file holds while the file is unchanged, `weight_names`). A model
compiled again with one op edited, or one weight, or the same weights in another file, maps
the packed weights it already has from the cache and packs only the others: vgg19's load
entry packs 548 MB in 0.7-0.9 s, hashing its inputs took 0.28 s (the records spare it), and
the file cache then has no result left to hash.

A result of at least `BLOB_MIN_BYTES` is a blob (`cache_blobs`: a file named by the launch's
key and the result's position, which determine its bytes, so they are not hashed; shared with
the file cache's entries that hold the result), mapped copy-on-write (the entry's kernels
only read it) once the CRC-32s of its pieces are checked; smaller ones are in the launch's
entry itself. A launch that runs writes each such result straight into a new blob file
(`cache_blobs.blob_buffer`), renamed to its blob's name once written: no copy of it is made
in memory. A missing or damaged blob, or entry, is a miss: the launch runs. Without the
cache, or when the launches cannot run apart, the load entry runs whole.

A compile that waits for a background worker (an op edit's new kernel, `schedule_workers`)
makes these lookups meanwhile (`Prefetch`, a thread: naming the inputs, reading the entries,
mapping and checking the blobs), and the binding takes what they found.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

import numpy as np

from fusion_compiler.lowering import cache_blobs, compile_cache, weight_names
from fusion_compiler.lowering.cache_blobs import (
    BLOB_MIN_BYTES,
    blob_buffer,
    blob_path,
    content_names,
    evict,
    keep_blob,
    map_blobs,
    piece_checksums,
    store_blob,
)
from fusion_compiler.lowering.compile_cache import LoadBinding
from fusion_compiler.lowering.jit import JitModule, aligned_empty
from fusion_compiler.lowering.load_launches import LoadLaunch

LOAD_PIPELINE = "load-results"
"""The pipeline part of the cache key of a load entry's results."""

LOAD_FORMAT = "load results 1"

Digests = dict[int, tuple[str, list[int]]]
"""A blob's name and the CRC-32 of each of its pieces (`cache_blobs.content_digests`), by the
`id` of the array it holds."""


def bind_results(
    jit: JitModule,
    binding: LoadBinding,
    inputs: list[np.ndarray],
    directory: Path,
    prefetched: Prefetch | None = None,
) -> tuple[list[np.ndarray], Digests]:
    """The results of `binding`'s load entry on `inputs` (its `load_sources`), made by its
    launches one by one, each from the cache when it holds its results, else run and kept
    there; and the names of the results that are blobs, by their ids (`file_cache.store`
    need not hash them again). What `prefetched` found is taken, not looked up again."""
    if prefetched is not None:
        prefetched.wait()
    ahead = {} if prefetched is None else prefetched.names_of(inputs)
    names, recorded = _names(directory, inputs, ahead)
    if recorded < len(inputs):
        weight_names.remember(directory, inputs, names)
    described = _described(inputs, names)
    results: list[np.ndarray | None] = [None] * len(binding.results)
    digests: Digests = {}
    stored = False
    for launch in binding.launches:
        key = _launch_key(launch, [described[i] for i in launch.inputs])
        specs = [binding.results[j] for j in launch.outputs]
        kept = None if prefetched is None else prefetched.found.pop(key, None)
        if kept is None:
            kept = load(directory, key, specs)
        if kept is None:
            outputs, files = _new_outputs(directory, specs)
            try:
                jit.call_kernel(launch.kernel, *(inputs[i] for i in launch.inputs), *outputs)
                kept, stored = store(directory, key, outputs, files), True
            finally:
                for unkept in files.values():  # (the kernel failed, or the store)
                    unkept.unlink(missing_ok=True)
        for index, array in zip(launch.outputs, kept[0], strict=True):
            results[index] = array
        digests.update(kept[1])
    if stored:  # (within the cache's budget, these results' blobs kept)
        kept_names = {name for name, _ in digests.values()}
        evict(directory, cache_blobs.budget_bytes(), [blob_path(directory, n) for n in kept_names])
    assert all(result is not None for result in results)  # (`load_launches`: each is written)
    return results, digests  # type: ignore[return-value]


class Prefetch:
    """The lookups of some load entries' launches (`bind_results`' before it runs any), made
    by a thread started here, while this process waits for a background worker: each input's
    name (by where its bytes are: the arrays are held until the binding), and what `load`
    found under each launch's key. An op edit of vgg19 spent 0.11-0.14 s binding its
    constants after 0.15-0.23 s of waiting, mapping and checking its packed weights; 0.014 s
    with them looked up meanwhile (one timeline). Anything that fails here is left to the
    binding, which looks it up again."""

    def __init__(self, directory: Path, work: list[tuple[LoadBinding, list[np.ndarray]]]):
        self.names: dict[tuple[int, int], str] = {}
        """Each input's name by its bytes' address and size."""
        self.found: dict[str, tuple[list[np.ndarray], Digests]] = {}
        """What `load` found, by launch key (misses are not kept)."""
        self._work = work
        self._thread = threading.Thread(target=self._look_up, args=(directory,), daemon=True)
        self._thread.start()

    def wait(self) -> None:
        self._thread.join()

    def names_of(self, inputs: list[np.ndarray]) -> dict[int, str]:
        """The names found for those of `inputs` whose bytes are where a named input's were,
        by position."""
        found = ((index, self.names.get(_place(array))) for index, array in enumerate(inputs))
        return {index: name for index, name in found if name is not None}

    def _look_up(self, directory: Path) -> None:
        try:
            for binding, inputs in self._work:
                names, _ = _names(directory, inputs, {})
                self.names.update((_place(a), n) for a, n in zip(inputs, names, strict=True))
                described = _described(inputs, names)
                for launch in binding.launches:
                    key = _launch_key(launch, [described[i] for i in launch.inputs])
                    kept = load(directory, key, [binding.results[j] for j in launch.outputs])
                    if kept is not None:
                        self.found[key] = kept
        except Exception:  # noqa: BLE001 - an optimisation: the binding does it again
            return


def _names(
    directory: Path, inputs: list[np.ndarray], ahead: dict[int, str]
) -> tuple[list[str], int]:
    """Each input's name: the one its weights file's record gives (`weight_names`), else the
    one `ahead` gives (by position), else a hash of its bytes; and how many the records
    gave."""
    raws = [_raw(array) for array in inputs]
    known = weight_names.known_names(directory, inputs)
    hashed = content_names(
        [raw for index, raw in enumerate(raws) if index not in known and index not in ahead]
    )
    names = [
        known.get(index) or ahead.get(index) or hashed[id(raw)] for index, raw in enumerate(raws)
    ]
    return names, len(known)


def _place(array: np.ndarray) -> tuple[int, int]:
    return array.ctypes.data, array.nbytes


def _described(inputs: list[np.ndarray], names: list[str]) -> list[list]:
    """Each input as a launch key describes it: dtype, shape and name."""
    return [
        [array.dtype.str, list(array.shape), name]
        for array, name in zip(inputs, names, strict=True)
    ]


def _launch_key(launch: LoadLaunch, inputs: list[list]) -> str:
    """The key of `launch`'s results on inputs described by dtype, shape and digest."""
    text = json.dumps([launch.unit, launch.kernel, inputs], separators=(",", ":"))
    return compile_cache.key_of_hash(hashlib.sha256(text.encode()).hexdigest(), LOAD_PIPELINE)


def load(
    directory: Path, key: str, specs: list[tuple[tuple[int, ...], str]]
) -> tuple[list[np.ndarray], Digests] | None:
    """The arrays kept under `key`, of `specs` (shape, dtype name) (and the names of those
    that are blobs, by their ids), or None."""
    entry = compile_cache.read_data(directory, key)
    if entry is None or entry[0].get("format") != LOAD_FORMAT:
        return None
    meta, data = entry
    try:
        placed = meta["results"]
        if len(placed) != len(specs):
            return None
        named = {str(p[1]): [int(c) for c in p[2]] for p in placed if p[0] == "blob"}
        blobs = map_blobs(directory, named) if named else {}
        if blobs is None:
            return None
        results: list[np.ndarray] = []
        digests: Digests = {}
        for where, (shape, dtype) in zip(placed, specs, strict=True):
            typed = np.dtype(dtype)
            size = int(np.prod(shape, dtype=np.int64)) * typed.itemsize
            if where[0] == "blob":
                raw = blobs[str(where[1])]
            else:
                start = int(where[1])
                raw = np.frombuffer(data, np.uint8, count=size, offset=start)
            if raw.size != size:
                return None
            if where[0] == "blob":
                array = raw.view(typed).reshape(shape)
                digests[id(array)] = (str(where[1]), named[str(where[1])])
            else:
                array = aligned_empty(shape, typed)
                array.reshape(-1).view(np.uint8)[...] = raw
            results.append(array)
    except (KeyError, TypeError, ValueError, IndexError, OSError):
        return None
    return results, digests


def _new_outputs(
    directory: Path, specs: list[tuple[tuple[int, ...], str]]
) -> tuple[list[np.ndarray], dict[int, Path]]:
    """Arrays for a launch's results: each one that will be a blob a new blob file mapped for
    writing (`cache_blobs.blob_buffer`), the others (and a blob that cannot be made) in
    memory; and the files, by the ids of their arrays."""
    outputs: list[np.ndarray] = []
    files: dict[int, Path] = {}
    for shape, dtype in specs:
        typed = np.dtype(dtype)
        made = None
        if int(np.prod(shape, dtype=np.int64)) * typed.itemsize >= BLOB_MIN_BYTES:
            made = blob_buffer(directory, shape, typed)
        if made is None:
            outputs.append(aligned_empty(shape, typed))
        else:
            outputs.append(made[0])
            files[id(made[0])] = made[1]
    return outputs, files


def store(
    directory: Path, key: str, results: list[np.ndarray], files: dict[int, Path]
) -> tuple[list[np.ndarray], Digests]:
    """Keeps `results` under `key` (`load`): the arrays to bind (a result written into a blob
    file, `files` (by array id), is renamed to its blob and mapped again copy-on-write, which
    removes the entry from `files`; the others are written) and the names of those that are
    blobs, by the ids of those arrays."""
    raws = [_raw(array) for array in results]
    checksums = piece_checksums([raw for raw in raws if raw.nbytes >= BLOB_MIN_BYTES])
    named = {
        id(raw): (_result_name(key, index), checksums[id(raw)])
        for index, raw in enumerate(raws)
        if id(raw) in checksums
    }
    placed: list[list] = []
    small: list[bytes] = []
    offset = 0
    for raw in raws:
        if id(raw) in named:
            name, crcs = named[id(raw)]
            placed.append(["blob", name, crcs])
        else:
            placed.append(["inline", offset])
            small.append(raw.tobytes())
            offset += raw.nbytes
    kept = list(results)
    stored = True
    for index, (array, raw) in enumerate(zip(results, raws, strict=True)):
        if id(raw) not in named:
            continue
        name = named[id(raw)][0]
        filled = files.pop(id(array), None)
        if filled is None:
            stored = stored and store_blob(directory, name, raw)
            continue
        mapped = keep_blob(directory, filled, name)
        if mapped is None:  # (the written file is gone: the array still holds its bytes)
            stored = False
        else:
            kept[index] = mapped.view(array.dtype).reshape(array.shape)
    if stored:
        meta = {"format": LOAD_FORMAT, "results": placed}
        compile_cache.store_data(directory, key, meta, b"".join(small))
    digests = {
        id(array): named[id(raw)] for array, raw in zip(kept, raws, strict=True) if id(raw) in named
    }
    return kept, digests


def _result_name(key: str, index: int) -> str:
    """The name of the blob of result `index` of the launch kept under `key`: the key
    determines its bytes, so they need no hash of their own (vgg19's packed weights, 548 MB:
    0.2 s on two cores)."""
    return hashlib.sha256(f"{key}:{index}".encode()).hexdigest()


def _raw(array: np.ndarray) -> memoryview:
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8).data
