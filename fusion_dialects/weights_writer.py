"""Writing weights files: the constants of a module moved out of its text (`resources` reads
them back).

`externalize_constants` moves a module's large constants into a weights file and pairs the
two with a tag (`tagged_text`); `WeightsWriter` writes a weights file blob by blob, as
`fusion-import` makes the weights, and, given the file an earlier import wrote at the same
path, writes only the blobs that changed (`_Reused`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Operation

from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.dialects.printing import ModulePrinter
from fusion_compiler.dialects.resources import (
    EXTERNAL_MIN_BYTES,
    WEIGHTS_ATTR,
    WEIGHTS_MAGIC,
    WEIGHTS_TAG_ATTR,
    WeightsFile,
    aligned,
    handle_for,
)
from fusion_compiler.host import file_identity, write_at


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
            written = writer.add(  # (`handle` again: it is free)
                handle, [data], len(data), same_as=partial(same_bytes, data)
            )
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


def write_weights(path: Path, blobs: list[tuple[str, bytes]], tag: str) -> None:
    """Writes a weights file of `blobs` (handle, bytes), paired with IR of `tag`
    (`WeightsWriter`)."""
    with WeightsWriter(path, WeightsWriter.room_for([(h, len(d)) for h, d in blobs])) as writer:
        for handle, data in blobs:
            if writer.add(handle, [data], len(data)) != handle:
                raise ValueError(f"the handle {handle!r} is given twice, or is no identifier")
        writer.commit(tag)


class WeightsWriter:
    """A weights file in the making: each blob is written as soon as it is given (`add`),
    into a temporary file beside `path`, after room left for the header; `commit` writes the
    header into that room (its JSON line padded with blanks to fill it) and renames the file
    into place, so a reader never sees a partial file. `fusion-import` gives it the weights
    as it imports them, straight from the `.onnx` file's pages: no copy of them is held in
    memory (vgg19: 548 MB less at the import's peak). A header that outgrows its room moves
    the blobs once, into a file with more. Abandoned (`discard`, or leaving its `with` block
    uncommitted), nothing is left behind.

    With `reuse`, a weights file already at `path` (the model imported there before) is
    updated rather than replaced, when it can be (`_Reused`): a blob whose bytes equal those
    of the old file's blob of the same handle is not written again, a changed or new one is
    appended after the old file's end, and `commit` writes the new header into the old
    file's room (the file locked meanwhile: a parse reads its header under a shared lock, so
    it waits and sees the old header or the new one). Bytes an index has referred to are
    never overwritten, so a process that mapped the old file (a model compiled from it,
    running) keeps its weights; the blobs no index refers to any more stay as garbage until
    an import finds more garbage than live bytes and writes the file anew. Re-importing an
    edited model thus writes only what changed: vgg19's re-import with one op changed writes
    no weight, where a new file is 548 MB of new pages (about a second on these virtual
    machines).

    The header line holds the pair's tag and maps each handle to [offset, bytes], offsets
    counted from the first 64-byte boundary after the header (`WeightsFile` reads it)."""

    def __init__(self, path: Path, header_room: int = 1 << 16, reuse: bool = False):
        self.path = Path(path)
        self._index: dict[str, list[int]] = {}
        self._reused = _Reused.open(self.path) if reuse else None
        self._kept: list[tuple[int, int]] = []
        """(offset in the file, bytes) of each old blob kept, updating an old file."""
        self.updated: tuple[tuple[int, ...], tuple[int, ...], list[tuple[int, int]]] | None = None
        """Once an old file is updated in place: its identity before and after
        (`host.file_identity`) and the blobs kept, byte for byte (`weight_names`)."""
        self._stream: io.BufferedRandom | None
        self._temporary: Path | None = None
        if self._reused is not None:
            self._stream = self._reused.stream
            self._room = self._reused.room
            self._end = self._reused.end
        else:
            self._room = aligned(header_room)
            descriptor, temporary = tempfile.mkstemp(
                dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
            )
            self._temporary = Path(temporary)
            self._stream = os.fdopen(descriptor, "w+b")
            self._end = 0
        """Where the next blob goes, counted from the end of the header's room."""

    @staticmethod
    def room_for(blobs: list[tuple[str, int]]) -> int:
        """The room the header of a file of `blobs` (handle, bytes) takes, exactly."""
        index, offset = {}, 0
        for handle, size in blobs:
            index[handle] = [offset, size]
            offset = aligned(offset + size)
        fields = json.dumps({"tag": "0" * TAG_LENGTH, "blobs": index}, separators=(",", ":"))
        return aligned(len(WEIGHTS_MAGIC) + len(fields) + 1)

    @property
    def blobs(self) -> list[tuple[str, int]]:
        """(handle, bytes) of each blob, in the order they were added."""
        return [(handle, size) for handle, (_, size) in self._index.items()]

    def add(
        self,
        name: str,
        chunks: Iterable[bytes | memoryview],
        size: int,
        same_as: Callable[[memoryview], bool] | None = None,
    ) -> str:
        """Writes a blob of `size` bytes, given as `chunks` in order, under a handle made
        from `name` (`handle_for`); returns the handle. Updating an old file, the old blob of
        the handle is kept instead when `same_as` says its bytes (given) are the blob's: the
        caller compares as it can at least cost (a transposed weight tile by tile, never
        copied out); without `same_as` the blob is written."""
        stream = self._open_stream()
        handle = handle_for(name, set(self._index))
        stream.flush()  # (the blobs are written around its buffer)
        old = None if self._reused is None else self._reused.blob(handle, size)
        if old is not None and same_as is not None and same_as(old.data):
            self._index[handle] = [old.offset, size]
            self._kept.append((self._room + old.offset, size))
            return handle
        descriptor = stream.fileno()
        written = 0
        with naming_errors(self.path):
            for chunk in chunks:
                written += write_at(descriptor, chunk, self._room + self._end + written)
        if written != size:
            raise ValueError(f"the blob of {handle!r} has {written} bytes, not {size}")
        self._index[handle] = [self._end, size]
        self._end = aligned(self._end + size)
        return handle

    def commit(self, tag: str) -> None:
        """Writes the header (pairing the file with IR of `tag`) and moves the file into
        place at `path` (or, updating the old file, writes the header into its room)."""
        with naming_errors(self.path):
            self._commit(tag)

    def _commit(self, tag: str) -> None:
        stream = self._open_stream()
        fields = json.dumps({"tag": tag, "blobs": self._index}, separators=(",", ":"))
        header = WEIGHTS_MAGIC + fields.encode()
        if len(header) + 1 > self._room:
            self._move_blobs(aligned(len(header) + 1))
            stream = self._open_stream()
        padded = header + b" " * (self._room - len(header) - 1) + b"\n"
        if self._reused is not None:
            stream.flush()
            unchanged = self._end == self._reused.end and padded == os.pread(
                stream.fileno(), self._room, 0
            )
            if not unchanged:  # (the same model imported again leaves the file untouched)
                write_at(stream.fileno(), memoryview(padded), 0)
            if os.fstat(stream.fileno()).st_size < self._room + self._end:
                os.ftruncate(stream.fileno(), self._room + self._end)
            after = file_identity(os.fstat(stream.fileno()))
            self.updated = (self._reused.identity, after, self._kept)
            self._reused.close(keep=True)
            self._stream = self._reused = None
            return
        stream.seek(0)
        stream.write(padded)
        stream.truncate(self._room + self._end)
        stream.close()
        self._stream = None
        assert self._temporary is not None
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self._temporary, 0o666 & ~umask)  # as open() would have made it, not 0600
        os.replace(self._temporary, self.path)

    def discard(self) -> None:
        """Drops the temporary file, or what was appended to the old file: nothing changes
        at `path`."""
        if self._reused is not None:
            self._reused.close(keep=False)
            self._stream = self._reused = None
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if self._temporary is not None:
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
        """Copies the blobs into a new temporary file whose header has `room` bytes (an
        old file being updated is left as it was)."""
        old = self._open_stream()
        descriptor, temporary = tempfile.mkstemp(
            dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
        )
        new = os.fdopen(descriptor, "w+b")
        old.flush()
        old.seek(self._room)
        new.seek(room)
        shutil.copyfileobj(old, new, 16 << 20)
        self.discard()
        self._stream, self._temporary, self._room = new, Path(temporary), room


@contextlib.contextmanager
def naming_errors(path: Path) -> Iterator[None]:
    """Gives an `OSError` raised without a file name (a write on a full disk: `ENOSPC` from
    `pwrite`) the name of the file being written, `path`, so that a tool can say which."""
    try:
        yield
    except OSError as err:
        if err.filename is None and err.errno is not None:
            raise OSError(err.errno, err.strerror, str(path)) from err
        raise


def same_bytes(data: bytes | memoryview, old: bytes | memoryview) -> bool:
    """Whether two byte views are equal, compared a mebibyte at a time (a comparison of
    whole blobs would make a boolean per byte: vgg19's 411 MB weight, 411 MB of new
    pages)."""
    data, old = memoryview(data).cast("B"), memoryview(old).cast("B")
    if data.nbytes != old.nbytes:
        return False
    piece = 1 << 20
    for start in range(0, data.nbytes, piece):
        new_part = np.frombuffer(data[start : start + piece], np.uint8)
        if not np.array_equal(new_part, np.frombuffer(old[start : start + piece], np.uint8)):
            return False
    return True


class _OldBlob:
    """A blob of the weights file being updated: its offset (from the end of the header's
    room) and its bytes, a view of the mapped file."""

    def __init__(self, offset: int, data: memoryview):
        self.offset = offset
        self.data = data


class _Reused:
    """The weights file an earlier import wrote at a path, open for an update in place: the
    file locked (`flock`, so two imports never append to it at once), mapped for reading its
    blobs, and its stream for appending. `open` returns None, and the import writes a new
    file, when there is no such file, when it is of version 1, truncated, cannot be mapped,
    is locked by another import, or holds more garbage (bytes no blob of its index covers)
    than live blobs (then a new file takes, once, what an update would keep adding to); and
    when `path` is a symbolic link or the file has other hard links (its other names would
    see the update)."""

    def __init__(self, stream: io.BufferedRandom, old: WeightsFile):
        self.stream = stream
        self.old = old
        self.identity = old.identity
        """The file's identity before the update (it is locked: no other import changes it)."""
        self.room = old.data_start
        self.end = aligned(max(0, old.size - self.room))
        """Where appended blobs go: after the old file's last byte."""

    @classmethod
    def open(cls, path: Path) -> _Reused | None:
        try:  # (a link is replaced, as before: the file it names may be another's)
            descriptor = os.open(path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None
        stream = os.fdopen(descriptor, "r+b")
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            old = WeightsFile(path, descriptor=descriptor)
        except (OSError, CompileError):
            stream.close()
            return None
        if os.fstat(descriptor).st_nlink != 1:  # (a hard link: the file has other names)
            old.close()
            stream.close()
            return None
        live = sum(size for _, size in old.index.values())
        whole = all(offset + size <= old.size for offset, size in old.index.values())
        usable = old.tag is not None and whole and old.mapped() is not None
        if not usable or old.size - old.data_start - live > live:
            old.close()
            stream.close()
            return None
        return cls(stream, old)

    def blob(self, handle: str, size: int) -> _OldBlob | None:
        """The old file's blob of `handle` if it has `size` bytes."""
        entry = self.old.index.get(handle)
        if entry is None or entry[1] != size:
            return None
        data = self.old.blob(handle, None)
        assert data is not None
        return _OldBlob(entry[0] - self.room, data)

    def close(self, keep: bool) -> None:
        """Closes the file, releasing its lock; without `keep`, first cuts what was
        appended (bytes no index refers to)."""
        if not keep:
            self.stream.flush()
            os.ftruncate(self.stream.fileno(), self.old.size)
        self.old.close()
        self.stream.close()
