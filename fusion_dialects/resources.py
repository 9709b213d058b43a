"""Large constants out of the IR text: `dense_resource` blobs and the weights file.

A `graph.constant` may hold `dense_resource<handle> : tensor<...>` instead of `dense<...>`
(the graph dialect's contract). The blob of a handle comes from

- the weights file named by the module's `graph.weights` attribute (a path relative to the
  `.mlir` file), which `fusion-import -o model.mlir` writes as `model.weights` next to it:
  raw little-endian elements, each blob at a 64-byte aligned offset, after a header
  (`WEIGHTS_MAGIC`, then one JSON line: the pair's tag, and handle → [offset, bytes]); the
  IR stays small and readable and parses in milliseconds, whatever the size of the weights.
  The IR's `graph.weights_tag` must equal the file's tag (`tagged_text`), so the weights of
  another import are refused rather than used; or
- MLIR's own `{-# dialect_resources: {builtin: {handle: "0x..."}} #-}` section of the file
  (a 4-byte alignment, then the elements, in hex).

`parse_source` resolves every `dense_resource` into a `dense` attribute holding the raw bytes
(never text: a weights file's blobs are read-only views of the mapped file, `WeightsFile`)
right after parsing, so the passes only ever see `dense`. A handle without a
blob, a blob of the wrong size or a weights file that is missing or damaged is a
`CompileError` naming it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import mmap
import os
import re
import time
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import (
    Builtin,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)

from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.host import file_identity

WEIGHTS_ATTR = "graph.weights"
"""The module attribute naming the weights file (relative to the IR file's folder)."""

WEIGHTS_TAG_ATTR = "graph.weights_tag"
"""The module attribute that pairs the IR with its weights file: the same tag is in the file's
header, and a weights file whose tag differs (written by another import, or the IR of an
import interrupted between its two files) is refused, never read as this model's weights."""

WEIGHTS_MAGIC = b"fusion-compiler weights 2\n"
"""The first line of a weights file; a JSON line follows: `{"tag": ..., "blobs": {handle:
[offset, bytes]}}`."""

WEIGHTS_MAGIC_1 = b"fusion-compiler weights 1\n"
"""Version 1 (no tag; the JSON line is the blobs' index), still read."""

BLOB_ALIGNMENT = 64

EXTERNAL_MIN_BYTES = 64
"""Constants of at least this many bytes (16 f32 elements) go to the weights file; smaller ones
(shapes, scalars) stay inline. Elements
parse slowly as text: with 4 KiB, the batch norms' vectors made 2.0 of the 2.1 MB of
densenet121's `.mlir`, and inception_v2's 162 vectors of 32 to 96 elements half of its
parse."""


def _builtin_resources() -> OpAsmDialectInterface:
    interface = Builtin.get_interface(OpAsmDialectInterface)
    assert interface is not None
    return interface


@contextlib.contextmanager
def isolated_resources() -> Iterator[dict[str, str]]:
    """Parses inside see an empty `builtin` blob storage, and yield what they put in it.

    xDSL keeps the blobs of `dialect_resources` in one storage per process and renames a
    handle that is already there (`w` becomes `w_0` the second time a file is parsed);
    isolating each parse keeps the handles as written."""
    interface = _builtin_resources()
    saved = interface._blob_storage
    interface._blob_storage = {}
    try:
        yield interface._blob_storage
    finally:
        interface._blob_storage = saved


def resource_constants(module: ModuleOp) -> Iterator:
    """The ops of `module` holding a `dense_resource` value property."""
    for op in module.walk():
        if isinstance(op.properties.get("value"), DenseResourceAttr):
            yield op


def resolve_resources(module: ModuleOp, filename: str, in_file: dict[str, str]) -> Path | None:
    """Replaces every `dense_resource` value of `module` (parsed from `filename`) by a dense
    attribute holding its blob, from `in_file` (a `dialect_resources` section) or from the
    module's weights file; then drops the `graph.weights` attribute. Returns the path of the
    weights file it read, if any."""
    weights_name = module.attributes.get(WEIGHTS_ATTR)
    weights = None
    if isinstance(weights_name, StringAttr):
        weights = WeightsFile(Path(filename).parent / weights_name.data)
    with weights or contextlib.nullcontext():
        if weights is not None:
            weights.check_tag(module.attributes.get(WEIGHTS_TAG_ATTR), filename)
        for op in resource_constants(module):
            resource = op.properties["value"]
            handle = resource.resource_handle.data
            data: bytes | memoryview | None = _in_file_blob(in_file, handle, op)
            if data is None and weights is not None:
                data = weights.blob(handle, op)
            if data is None:
                where = f"in {weights.path.name}" if weights else "(no dialect_resources entry)"
                raise CompileError(f"dense_resource<{handle}> has no blob {where}", op)
            op.properties["value"] = _dense(resource, data, op)
    for name in (WEIGHTS_ATTR, WEIGHTS_TAG_ATTR):
        if name in module.attributes:
            del module.attributes[name]
    return None if weights is None else weights.path


def _in_file_blob(in_file: dict[str, str], handle: str, op) -> bytes | None:
    text = in_file.get(handle)
    if not text:
        return None
    try:
        blob = bytes.fromhex(text[2:])
    except ValueError:
        raise CompileError(f"the blob of dense_resource<{handle}> is not hexadecimal", op) from None
    return blob[4:]  # MLIR's blobs start with their alignment (a 32-bit integer)


def _dense(resource: DenseResourceAttr, data: bytes | memoryview, op) -> DenseIntOrFPElementsAttr:
    typ = resource.type
    if not isinstance(typ, TensorType):
        raise CompileError(f"dense_resource must have a tensor type, got {typ}", op)
    try:
        element_size = typ.element_type.compile_time_size
    except (AttributeError, NotImplementedError):  # (xDSL stores integers of up to 64 bits)
        handle = resource.resource_handle.data
        raise CompileError(
            f"dense_resource<{handle}> has {typ.element_type} elements, which are not supported "
            "(a tensor's elements are floats, or integers of at most 64 bits)",
            op,
        ) from None
    count = typ.element_count()
    if len(data) != count * element_size:
        handle = resource.resource_handle.data
        raise CompileError(
            f"dense_resource<{handle}> holds {len(data)} bytes, but {typ} needs "
            f"{count * element_size}",
            op,
        )
    # (a read-only view stands for the bytes: xDSL and the passes read them through the
    # buffer protocol, `len`, `==`, `hash` and `hex`, which a view has)
    return DenseIntOrFPElementsAttr(typ, BytesAttr(cast(bytes, data)))


class WeightsFile:
    """A weights file, open for reading; `blob(handle)` is a read-only view of one blob.

    The file is mapped, not read: a blob is a `memoryview` of the operating system's file
    cache, so parsing copies no weight, and the pages are those the import wrote (a copy into
    new memory is what parsing cost: on a virtual machine whose fresh pages come from the
    host, 0.4-2 s for vgg19's 548 MB, and as much again at the peak). The views keep the map
    alive after `close`. `fusion-import` never overwrites the bytes of a blob an index
    referred to: it appends to the file or renames a new one into place
    (`weights_writer.WeightsWriter`), which leaves a mapped old file's blobs intact; a file
    otherwise overwritten in place while a model parsed from it is being compiled is not
    supported. Where the file system cannot map the file, each blob is read into bytes of
    its own. A mapped file is known by its map (`blob_place`) while the map lives."""

    HEADER_READ = 1 << 16
    """Bytes read at a time while looking for the end of the header line."""

    HEADER_MAX = 1 << 24

    def __init__(self, path: Path, descriptor: int | None = None):
        """Opens `path`, or the file open as `descriptor` (named `path`), which is not
        closed."""
        self.path = path
        try:
            self._descriptor = (
                os.open(path, os.O_RDONLY) if descriptor is None else os.dup(descriptor)
            )
        except OSError as err:
            raise CompileError(f"cannot read the weights file {path}: {err}") from None
        self._map: memoryview | None = None
        self._unmappable = False
        try:
            # (given a descriptor, the caller holds the file's lock: `weights_writer`)
            take_lock = descriptor is None
            with _shared_lock(self._descriptor, path) if take_lock else contextlib.nullcontext():
                stat = os.fstat(self._descriptor)
                self.size = stat.st_size
                self.identity = file_identity(stat)
                self.index = self._read_index()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Closes the file; the blobs already returned stay readable (they hold the map)."""
        if self._descriptor >= 0:
            os.close(self._descriptor)
            self._descriptor = -1
        self._map = None

    def __enter__(self) -> WeightsFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _read_index(self) -> dict[str, list[int]]:
        """handle → [offset, bytes], offsets made absolute; sets `tag` (None in version 1)."""
        magic = len(WEIGHTS_MAGIC)
        head = b""
        end = -1
        while end < 0 and len(head) < magic + self.HEADER_MAX:
            more = os.pread(self._descriptor, self.HEADER_READ, len(head))
            if not more:
                break
            head += more
            end = head.find(b"\n", magic)
        version = head[:magic]
        if version not in (WEIGHTS_MAGIC, WEIGHTS_MAGIC_1):
            raise CompileError(f"{self.path} is not a weights file written by fusion-import")
        if end < 0 and len(head) < magic + self.HEADER_MAX:  # (the file ends in its header)
            raise CompileError(f"the weights file {self.path} is truncated (in its header)")
        try:
            header = json.loads(head[magic:end])
            self.tag = header["tag"] if version == WEIGHTS_MAGIC else None
            index = header["blobs"] if version == WEIGHTS_MAGIC else header
            start = aligned(end + 1)
            self.data_start = start
            entries = {handle: [start + offset, size] for handle, (offset, size) in index.items()}
        except (ValueError, TypeError, AttributeError, KeyError):
            raise CompileError(f"{self.path}: the index of the weights file is damaged") from None
        for handle, (offset, size) in index.items():
            if not all(type(n) is int and n >= 0 for n in (offset, size)):  # (not 879.6, -1)
                raise CompileError(
                    f"{self.path}: the index of the weights file is damaged (blob '{handle}' "
                    f"at {offset!r}, {size!r} bytes)"
                )
        return entries

    def check_tag(self, expected: object, filename: str) -> None:
        """Refuses a weights file that was not written with the IR of `filename`, whose
        `graph.weights_tag` is `expected` (IR without a tag is not checked)."""
        if not isinstance(expected, StringAttr) or expected.data == self.tag:
            return
        raise CompileError(
            f"the weights file {self.path} does not belong to {filename} (it was written with "
            f"other IR: tag {self.tag}, the IR expects {expected.data}); import the model again"
        )

    def blob(self, handle: str, op) -> memoryview | None:
        """The bytes of `handle`'s blob, a read-only view of the mapped file (None when the
        index has no such handle)."""
        entry = self.index.get(handle)
        if entry is None:
            return None
        offset, size = entry
        if offset + size > self.size:
            raise CompileError(
                f"the weights file {self.path} is truncated (dense_resource<{handle}> "
                f"needs bytes {offset} to {offset + size}, the file has {self.size})",
                op,
            )
        mapped = self.mapped()
        if mapped is not None:
            return mapped[offset : offset + size]
        data = self._read(offset, size)  # (a file system that cannot map the file)
        if len(data) != size:
            raise CompileError(f"the weights file {self.path} changed while it was read", op)
        return memoryview(data)

    def mapped(self) -> memoryview | None:
        """The whole file mapped read-only, or None where it cannot be mapped."""
        if self._map is None and not self._unmappable:
            try:
                mapped = mmap.mmap(self._descriptor, self.size, access=mmap.ACCESS_READ)
            except (OSError, ValueError):
                self._unmappable = True
                return None
            self._map = memoryview(mapped)
            blobs = {offset: size for offset, size in self.index.values()}
            base = np.frombuffer(mapped, np.uint8).ctypes.data if self.size else 0
            _MAPPED[mapped] = _Mapping(self.path.resolve(), self.identity, base, blobs)
        return self._map

    def _read(self, offset: int, size: int) -> bytes:
        """`size` bytes from `offset`, fewer only at the end of the file (Linux reads at most
        2 GiB per call: a larger blob takes more)."""
        parts = []
        done = 0
        while done < size:
            more = os.pread(self._descriptor, size - done, offset + done)
            if not more:
                break
            parts.append(more)
            done += len(more)
        return b"".join(parts)


LOCK_WAIT_SECONDS = 120.0
"""How long a parse waits for an import that is updating the weights file in place."""


@contextlib.contextmanager
def _shared_lock(descriptor: int, path: Path) -> Iterator[None]:
    """A shared `flock` on the open weights file while its header and size are read: an
    import updating the file in place holds it exclusively (`weights_writer`) until its new
    header is written, so a parse sees the old header or the new one, never a mix. Waits at
    most `LOCK_WAIT_SECONDS`; where the file system has no `flock`, reads unlocked."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise CompileError(
                    f"the weights file {path} is being updated by an import that has not "
                    f"finished in {LOCK_WAIT_SECONDS:.0f} s; try again when it ends"
                ) from None
            time.sleep(0.01)
        except OSError:  # (no flock here)
            yield
            return
    try:
        yield
    finally:
        fcntl.flock(descriptor, fcntl.LOCK_UN)


@dataclass(frozen=True)
class BlobPlace:
    """Where a weights file's blob is: the file (resolved), its identity when it was mapped,
    and the blob's offset and size."""

    path: Path
    identity: tuple[int, ...]
    offset: int
    size: int


@dataclass(frozen=True)
class _Mapping:
    path: Path
    identity: tuple[int, ...]
    base: int
    blobs: dict[int, int]
    """offset → size of each blob of the index."""


_MAPPED: weakref.WeakKeyDictionary[mmap.mmap, _Mapping] = weakref.WeakKeyDictionary()
"""The weights files mapped in this process, while their maps live."""


def blob_place(array: np.ndarray) -> BlobPlace | None:
    """Where `array` is, when it is exactly the bytes of one blob of a mapped weights file (a
    constant bound as a view of them), else None."""
    base: object = array
    while isinstance(base, np.ndarray):
        base = base.base
    mapped = base.obj if isinstance(base, memoryview) else None
    mapping = _MAPPED.get(mapped) if isinstance(mapped, mmap.mmap) else None
    if mapping is None or not array.flags.c_contiguous:
        return None
    offset = array.ctypes.data - mapping.base
    if mapping.blobs.get(offset) != array.nbytes:
        return None
    return BlobPlace(mapping.path, mapping.identity, offset, array.nbytes)


def aligned(size: int) -> int:
    """`size` rounded up to a multiple of `BLOB_ALIGNMENT`."""
    return -(-size // BLOB_ALIGNMENT) * BLOB_ALIGNMENT


def handle_for(name: str, taken: set[str]) -> str:
    """A resource handle (an MLIR bare identifier) made from a value name, not in `taken`."""
    base = re.sub(r"[^A-Za-z0-9_.$]", "_", name) or "weight"
    if not re.match(r"[A-Za-z_]", base):
        base = f"w_{base}"
    handle, counter = base, 0
    while handle in taken:
        handle, counter = f"{base}_{counter}", counter + 1
    taken.add(handle)
    return handle


class HashingStream:
    """A text stream that feeds what is written to it into a hash (nothing is kept): a
    printer's output hashed without holding the text."""

    def __init__(self, digest: hashlib._Hash):
        self.digest = digest

    def write(self, text: str) -> int:
        self.digest.update(text.encode())
        return len(text)

    def flush(self) -> None:
        pass
