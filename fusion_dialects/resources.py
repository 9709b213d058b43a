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
import hashlib
import io
import json
import mmap
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import cast

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
from xdsl.ir import Operation

from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.dialects.printing import ModulePrinter
from fusion_compiler.host import usable_cores

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
    element_size = typ.element_type.compile_time_size
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
    alive after `close`. `fusion-import` replaces a weights file by renaming a new one into
    place, which leaves a mapped old file intact; a file overwritten in place while a model
    parsed from it is being compiled is not supported. Where the file system cannot map the
    file, each blob is read into bytes of its own."""

    HEADER_READ = 1 << 16
    """Bytes read at a time while looking for the end of the header line."""

    HEADER_MAX = 1 << 24

    def __init__(self, path: Path):
        self.path = path
        try:
            self._descriptor = os.open(path, os.O_RDONLY)
        except OSError as err:
            raise CompileError(f"cannot read the weights file {path}: {err}") from None
        self._map: memoryview | None = None
        self._unmappable = False
        try:
            self.size = os.fstat(self._descriptor).st_size
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
            start = _aligned(end + 1)
            return {handle: [start + offset, size] for handle, (offset, size) in index.items()}
        except (ValueError, TypeError, AttributeError, KeyError):
            raise CompileError(f"{self.path}: the index of the weights file is damaged") from None

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
        mapped = self._mapped()
        if mapped is not None:
            return mapped[offset : offset + size]
        data = self._read(offset, size)  # (a file system that cannot map the file)
        if len(data) != size:
            raise CompileError(f"the weights file {self.path} changed while it was read", op)
        return memoryview(data)

    def _mapped(self) -> memoryview | None:
        """The whole file mapped read-only, or None where it cannot be mapped."""
        if self._map is None and not self._unmappable:
            try:
                self._map = memoryview(
                    mmap.mmap(self._descriptor, self.size, access=mmap.ACCESS_READ)
                )
            except (OSError, ValueError):
                self._unmappable = True
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


def _aligned(size: int) -> int:
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


def externalize_constants(
    module: ModuleOp, weights: Path | WeightsWriter, generic: bool = False
) -> str | None:
    """Moves every constant of at least `EXTERNAL_MIN_BYTES` of `module` into a weights file
    (at the path `weights`, or the file `weights` is writing, which may hold blobs already:
    `fusion-import` writes the weights there as it makes them), leaving `dense_resource`
    handles and the module's `graph.weights` and `graph.weights_tag` attributes; smaller
    constants stay inline. The file is written atomically. Returns the module's text
    (`generic`: in the generic format), which the tag had to print anyway, or None, and no
    file, when no constant is large."""
    large: list[tuple[Operation, DenseIntOrFPElementsAttr, str]] = []
    taken = set() if isinstance(weights, Path) else {handle for handle, _ in weights.blobs}
    for op in list(module.walk()):
        value = op.properties.get("value")
        if op.name != "graph.constant" or not isinstance(value, DenseIntOrFPElementsAttr):
            continue
        if len(value.data.data) >= EXTERNAL_MIN_BYTES:
            handle = handle_for(op.results[0].name_hint or "weight", taken)
            large.append((op, value, handle))
    if isinstance(weights, Path):
        sizes = [(handle, len(value.data.data)) for _, value, handle in large]
        writer = WeightsWriter(weights, WeightsWriter.room_for(sizes))
    else:
        writer = weights
    try:
        for op, value, handle in large:
            data = value.data.data
            written = writer.add(handle, [data], len(data))  # (`handle` again: it is free)
            op.properties["value"] = DenseResourceAttr.from_params(written, value.type)
        if not writer.blobs:
            writer.discard()
            return None
        module.attributes[WEIGHTS_ATTR] = StringAttr(writer.path.name)
        text, tag = tagged_text(module, writer.blobs, generic)
        writer.commit(tag)
        return text
    except BaseException:
        writer.discard()
        raise


TAG_LENGTH = 32


def tagged_text(
    module: ModuleOp, blobs: list[tuple[str, int]], generic: bool = False
) -> tuple[str, str]:
    """The text of `module` (its constants already handles) holding the tag that pairs it
    with the weights file of `blobs` (handle, bytes), and that tag: a hash of the module's
    text with the tag all zeros and of the blobs' handles and sizes (not of their bytes,
    which would cost a second pass over the weights). The module is printed once and the tag
    written into the text (and set on the module): printing it apart, in the generic format,
    took longer than the print of the file (densenet121's import: 0.12 s of 0.51). Two
    imports whose IR and index agree may swap weights files harmlessly: the IR is the same,
    so either file is its weights."""
    zeros = "0" * TAG_LENGTH
    module.attributes[WEIGHTS_TAG_ATTR] = StringAttr(zeros)
    text = _printed(module, generic)
    digest = hashlib.sha256(text.encode())
    digest.update(json.dumps([[handle, size] for handle, size in blobs]).encode())
    tag = digest.hexdigest()[:TAG_LENGTH]
    module.attributes[WEIGHTS_TAG_ATTR] = StringAttr(tag)
    placeholder = f'{WEIGHTS_TAG_ATTR} = "{zeros}"'
    if text.count(placeholder) == 1:
        return text.replace(placeholder, f'{WEIGHTS_TAG_ATTR} = "{tag}"'), tag
    return _printed(module, generic), tag  # (a printer that spells it otherwise)


def _printed(module: ModuleOp, generic: bool) -> str:
    stream = io.StringIO()
    ModulePrinter(stream=stream, print_generic_format=generic).print_op(module)
    stream.write("\n")
    return stream.getvalue()


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


def write_weights(path: Path, blobs: list[tuple[str, bytes]], tag: str) -> None:
    """Writes a weights file of `blobs` (handle, bytes), paired with IR of `tag`
    (`WeightsWriter`)."""
    with WeightsWriter(path, WeightsWriter.room_for([(h, len(d)) for h, d in blobs])) as writer:
        for handle, data in blobs:
            if writer.add(handle, [data], len(data)) != handle:
                raise ValueError(f"the handle {handle!r} is given twice, or is no identifier")
        writer.commit(tag)


WRITE_PIECE_BYTES = 4 << 20
"""A chunk of a blob is written in pieces of at least this many bytes, on every core: the
import of vgg19 (548 MB) took 0.97-2.27 s (median 1.85) writing on one core, 0.97-2.40
(1.10) on two (in one process, its modules loaded first; eight rounds alternating; Zen 3).
On a virtual machine, filling new pages of the file cache is most of the cost of a write."""


def _write_at(descriptor: int, chunk: bytes | memoryview, offset: int) -> int:
    """Writes `chunk` at `offset` of the open file `descriptor`; returns its length. A large
    chunk is written in pieces on every core (the file's new pages are filled in parallel:
    the kernel lets go of the interpreter lock while it copies)."""
    data = memoryview(chunk).cast("B")
    pieces = min(usable_cores(), data.nbytes // WRITE_PIECE_BYTES)
    if pieces < 2:
        _write_all(descriptor, data, offset)
        return data.nbytes
    step = -(-data.nbytes // pieces)
    with ThreadPoolExecutor(pieces) as pool:
        done = [
            pool.submit(_write_all, descriptor, data[start : start + step], offset + start)
            for start in range(0, data.nbytes, step)
        ]
        for piece in done:
            piece.result()
    return data.nbytes


def _write_all(descriptor: int, data: memoryview, offset: int) -> None:
    while data.nbytes:
        count = os.pwrite(descriptor, data, offset)
        data, offset = data[count:], offset + count


class WeightsWriter:
    """A weights file in the making: each blob is written as soon as it is given (`add`),
    into a temporary file beside `path`, after room left for the header; `commit` writes the
    header into that room (its JSON line padded with blanks to fill it) and renames the file
    into place, so a reader never sees a partial file. `fusion-import` gives it the weights
    as it imports them, straight from the `.onnx` file's pages: no copy of them is held in
    memory (vgg19: 548 MB less at the import's peak). A header that outgrows its room moves
    the blobs once, into a file with more. Abandoned (`discard`, or leaving its `with` block
    uncommitted), nothing is left behind.

    The header line holds the pair's tag and maps each handle to [offset, bytes], offsets
    counted from the first 64-byte boundary after the header (`WeightsFile` reads it)."""

    def __init__(self, path: Path, header_room: int = 1 << 16):
        self.path = Path(path)
        self._room = _aligned(header_room)
        descriptor, temporary = tempfile.mkstemp(
            dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
        )
        self._temporary = Path(temporary)
        self._stream: io.BufferedRandom | None = os.fdopen(descriptor, "w+b")
        self._index: dict[str, list[int]] = {}
        self._end = 0
        """Where the next blob goes, counted from the end of the header's room."""

    @staticmethod
    def room_for(blobs: list[tuple[str, int]]) -> int:
        """The room the header of a file of `blobs` (handle, bytes) takes, exactly."""
        index, offset = {}, 0
        for handle, size in blobs:
            index[handle] = [offset, size]
            offset = _aligned(offset + size)
        fields = json.dumps({"tag": "0" * TAG_LENGTH, "blobs": index}, separators=(",", ":"))
        return _aligned(len(WEIGHTS_MAGIC) + len(fields) + 1)

    @property
    def blobs(self) -> list[tuple[str, int]]:
        """(handle, bytes) of each blob, in the order they were added."""
        return [(handle, size) for handle, (_, size) in self._index.items()]

    def add(self, name: str, chunks: Iterable[bytes | memoryview], size: int) -> str:
        """Writes a blob of `size` bytes, given as `chunks` in order, under a handle made
        from `name` (`handle_for`); returns the handle."""
        stream = self._open_stream()
        handle = handle_for(name, set(self._index))
        stream.flush()  # (the blobs are written around its buffer)
        written = 0
        for chunk in chunks:
            written += _write_at(stream.fileno(), chunk, self._room + self._end + written)
        if written != size:
            raise ValueError(f"the blob of {handle!r} has {written} bytes, not {size}")
        self._index[handle] = [self._end, size]
        self._end = _aligned(self._end + size)
        return handle

    def commit(self, tag: str) -> None:
        """Writes the header (pairing the file with IR of `tag`) and moves the file into
        place at `path`."""
        stream = self._open_stream()
        fields = json.dumps({"tag": tag, "blobs": self._index}, separators=(",", ":"))
        header = WEIGHTS_MAGIC + fields.encode()
        if len(header) + 1 > self._room:
            self._move_blobs(_aligned(len(header) + 1))
            stream = self._open_stream()
        stream.seek(0)
        stream.write(header + b" " * (self._room - len(header) - 1) + b"\n")
        stream.truncate(self._room + self._end)
        stream.close()
        self._stream = None
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self._temporary, 0o666 & ~umask)  # as open() would have made it, not 0600
        os.replace(self._temporary, self.path)

    def discard(self) -> None:
        """Drops the temporary file (nothing is written at `path`)."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        with contextlib.suppress(OSError):
            os.unlink(self._temporary)

    def __enter__(self) -> WeightsWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._stream is not None:  # (not committed)
            self.discard()

    def _open_stream(self) -> io.BufferedRandom:
        if self._stream is None:
            raise ValueError(f"the weights file {self.path} is committed or discarded")
        return self._stream

    def _move_blobs(self, room: int) -> None:
        """Copies the blobs into a new temporary file whose header has `room` bytes."""
        old = self._open_stream()
        descriptor, temporary = tempfile.mkstemp(
            dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
        )
        new = os.fdopen(descriptor, "w+b")
        old.seek(self._room)
        new.seek(room)
        shutil.copyfileobj(old, new, 16 << 20)
        old.close()
        with contextlib.suppress(OSError):
            os.unlink(self._temporary)
        self._stream, self._temporary, self._room = new, Path(temporary), room
