"""`WeightsWriter` updating the weights file of an earlier import in place (`reuse`): equal
blobs are not written again, changed ones are appended, bytes an index referred to are never
overwritten, and where an update is not possible or not worth it a new file replaces the old."""

import fcntl
import os

import numpy as np
import pytest

from fusion_compiler.dialects.resources import WeightsFile, aligned
from fusion_compiler.dialects.weights_writer import WeightsWriter, same_bytes, write_weights
from fusion_compiler.host import file_identity

TAG = "t" * 32
RNG = np.random.default_rng(0)
A = RNG.standard_normal(1000).astype(np.float32).tobytes()
B = RNG.standard_normal(3000).astype(np.float32).tobytes()
C = RNG.standard_normal(500).astype(np.float32).tobytes()


def _changed(data: bytes, at: int) -> bytes:
    edited = bytearray(data)
    edited[at] ^= 0xFF
    return bytes(edited)


def _write(path, blobs, reuse=True, tag=TAG, room=1 << 12):
    """Writes `blobs` (name, bytes or a list of chunks) as a weights file at `path`, each
    compared with its old blob as the importer compares (`same_bytes`)."""
    with WeightsWriter(path, room, reuse=reuse) as writer:
        for name, data in blobs:
            chunks = data if isinstance(data, list) else [data]
            whole = b"".join(chunks)
            writer.add(name, chunks, len(whole), same_as=lambda old, w=whole: same_bytes(w, old))
        writer.commit(tag)


def _contents(path) -> dict[str, bytes]:
    with WeightsFile(path) as weights:
        return {handle: bytes(weights.blob(handle, None)) for handle in weights.index}


def test_a_reimport_of_the_same_weights_writes_nothing(tmp_path):
    """Not even the header, when it is the same: the file keeps its modification time, so
    the cache's file level still hits."""
    path = tmp_path / "model.weights"
    _write(path, [("a", A), ("b", B)])
    before = os.stat(path)
    _write(path, [("a", A), ("b", B)])
    assert file_identity(os.stat(path)) == file_identity(before)
    _write(path, [("a", A), ("b", B)], tag="u" * 32)
    after = os.stat(path)
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size)
    assert _contents(path) == {"a": A, "b": B}
    assert WeightsFile(path).tag == "u" * 32


def test_a_changed_weight_is_appended_and_the_old_bytes_stay(tmp_path):
    """A process that mapped the old file (a compiled model, running) keeps its weights: the
    changed blob goes after the old file's end, and the old blob's bytes are untouched."""
    path = tmp_path / "model.weights"
    _write(path, [("a", A), ("b", B), ("c", C)])
    old = WeightsFile(path)
    old_b = old.blob("b", None)
    size = os.stat(path).st_size
    new_b = _changed(B, 100)
    _write(path, [("a", A), ("b", new_b), ("c", C)])
    assert os.stat(path).st_size == size + aligned(len(B))
    assert _contents(path) == {"a": A, "b": new_b, "c": C}
    assert bytes(old_b) == B
    with WeightsFile(path) as new:
        assert new.index["a"] == old.index["a"] and new.index["c"] == old.index["c"]


def test_a_blob_changed_in_a_later_chunk_is_written_whole(tmp_path):
    """A blob given in chunks (a transposed weight's bands) that differs from the old one
    only in its last chunk is written whole, every chunk in its place."""
    path = tmp_path / "model.weights"
    _write(path, [("b", [B[:4000], B[4000:8000], B[8000:]])])
    new_b = _changed(B, 9000)
    _write(path, [("b", [new_b[:4000], new_b[4000:8000], new_b[8000:]])])
    assert _contents(path) == {"b": new_b}


def test_new_renamed_and_resized_blobs(tmp_path):
    path = tmp_path / "model.weights"
    _write(path, [("a", A), ("b", B)])
    _write(path, [("a", A[:400]), ("c", C), ("b", B)])
    assert _contents(path) == {"a": A[:400], "c": C, "b": B}


def test_too_much_garbage_makes_a_new_file(tmp_path):
    """Garbage (bytes no blob of the index covers) beyond the live bytes: a new file, without
    it, replaces the old one."""
    path = tmp_path / "model.weights"
    _write(path, [("a", A), ("b", B)])
    inode = os.stat(path).st_ino
    _write(path, [("a", A), ("b", _changed(B, 1))])
    assert os.stat(path).st_ino == inode  # 12 KB of garbage, 16 KB live: updated
    _write(path, [("a", A), ("b", _changed(B, 2))])
    assert os.stat(path).st_ino == inode  # 12 + 12 KB of garbage: updated once more
    _write(path, [("a", A), ("b", _changed(B, 3))])
    stat = os.stat(path)
    assert stat.st_ino != inode
    assert _contents(path) == {"a": A, "b": _changed(B, 3)}
    assert stat.st_size == WeightsFile(path).data_start + aligned(len(A)) + aligned(len(B))


def test_a_file_another_import_is_updating_is_replaced_instead(tmp_path):
    path = tmp_path / "model.weights"
    _write(path, [("a", A)])
    inode = os.stat(path).st_ino
    other = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(other, fcntl.LOCK_EX)
        _write(path, [("a", A), ("c", C)])
    finally:
        os.close(other)
    assert os.stat(path).st_ino != inode
    assert _contents(path) == {"a": A, "c": C}


def test_an_abandoned_update_leaves_the_old_file_as_it_was(tmp_path):
    path = tmp_path / "model.weights"
    _write(path, [("a", A), ("b", B)])
    before = path.read_bytes()
    with WeightsWriter(path, reuse=True) as writer:
        writer.add("a", [A], len(A))
        writer.add("b", [_changed(B, 5)], len(B))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.weights"]


def test_a_header_that_outgrows_the_old_room_makes_a_new_file(tmp_path):
    path = tmp_path / "model.weights"
    _write(path, [("a", A)], room=64)
    inode = os.stat(path).st_ino
    names = [(f"weight_with_a_long_name_{i}", C) for i in range(8)]
    _write(path, [("a", A), *names], room=64)
    assert os.stat(path).st_ino != inode
    assert _contents(path) == {"a": A, **dict(names)}


@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_a_linked_file_is_replaced_not_updated(tmp_path, link):
    """The file a link names may be another model's: the import replaces the link's name
    with a new file, and the linked file stays as it was."""
    shared = tmp_path / "shared.weights"
    _write(shared, [("a", A)])
    before = shared.read_bytes()
    path = tmp_path / "model.weights"
    if link == "symbolic":
        path.symlink_to(shared)
    else:
        os.link(shared, path)
    _write(path, [("a", A), ("c", C)])
    assert shared.read_bytes() == before
    assert not path.is_symlink() and os.stat(path).st_ino != os.stat(shared).st_ino
    assert _contents(path) == {"a": A, "c": C}


@pytest.mark.parametrize("old", ["missing", "version 1", "not weights", "truncated"])
def test_without_an_updatable_file_a_new_one_is_written(tmp_path, old):
    path = tmp_path / "model.weights"
    if old == "version 1":
        from fusion_compiler.dialects.resources import WEIGHTS_MAGIC_1

        path.write_bytes(WEIGHTS_MAGIC_1 + b'{"a": [0, 4]}\n' + b"\0" * 60 + b"abcd")
    elif old == "not weights":
        path.write_text("something else\n")
    elif old == "truncated":
        _write(path, [("a", A), ("b", B)])
        os.truncate(path, os.stat(path).st_size - 100)  # (the end of b)
    _write(path, [("a", A), ("b", B)])
    assert _contents(path) == {"a": A, "b": B}


def test_without_reuse_the_file_is_replaced(tmp_path):
    path = tmp_path / "model.weights"
    write_weights(path, [("a", A)], TAG)
    inode = os.stat(path).st_ino
    _write(path, [("a", A)], reuse=False)
    assert os.stat(path).st_ino != inode
    assert _contents(path) == {"a": A}


def test_without_a_comparison_a_blob_is_written(tmp_path):
    path = tmp_path / "model.weights"
    _write(path, [("a", A)])
    size = os.stat(path).st_size
    with WeightsWriter(path, 1 << 12, reuse=True) as writer:
        writer.add("a", [A], len(A))
        writer.commit(TAG)
    assert os.stat(path).st_size == size + aligned(len(A))
    assert _contents(path) == {"a": A}


def test_a_given_comparison_decides_without_reading_the_chunks(tmp_path):
    """`same_as` (the importer's tile-by-tile comparison of a transposed weight) is asked
    instead of the chunks; they are read only when the blob is written."""
    path = tmp_path / "model.weights"
    _write(path, [("a", A)])
    asked = []

    def unread():
        raise AssertionError("the chunks of an equal blob are not read")
        yield A

    def same_as(old: memoryview) -> bool:
        asked.append(bytes(old))
        return bytes(old) == A

    with WeightsWriter(path, 1 << 12, reuse=True) as writer:
        writer.add("a", unread(), len(A), same_as=same_as)
        writer.commit(TAG)
    assert asked == [A]
    edited = _changed(A, 7)
    with WeightsWriter(path, 1 << 12, reuse=True) as writer:
        writer.add("a", [edited], len(A), same_as=lambda old: bytes(old) == edited)
        writer.commit(TAG)
    assert _contents(path) == {"a": edited}
    with WeightsWriter(path, 1 << 12, reuse=True) as writer:
        writer.add("a", [A], len(A), same_as=lambda old: bytes(old) == A)
        writer.commit(TAG)
    assert _contents(path) == {"a": A}


def test_a_parse_waits_for_an_update_in_place_and_reads_its_header(tmp_path, monkeypatch):
    """An import updating a weights file holds its lock until the new header is written: a
    parse reading the header meanwhile waits, then sees the new header (never a mix), or
    after `LOCK_WAIT_SECONDS` says why it gave up."""
    import threading

    from fusion_compiler.dialects import resources
    from fusion_compiler.dialects.diagnostics import CompileError

    path = tmp_path / "model.weights"
    _write(path, [("a", A), ("b", B)])
    edited = _changed(B, 3)
    writer = WeightsWriter(path, 1 << 12, reuse=True)
    writer.add("a", [A], len(A))
    writer.add("b", [edited], len(B))
    monkeypatch.setattr(resources, "LOCK_WAIT_SECONDS", 0.05)
    with pytest.raises(CompileError, match="being updated by an import"):
        WeightsFile(path)
    monkeypatch.setattr(resources, "LOCK_WAIT_SECONDS", 60.0)
    read: list[dict[str, bytes]] = []
    reader = threading.Thread(target=lambda: read.append(_contents(path)))
    reader.start()
    reader.join(0.2)
    assert reader.is_alive() and not read  # (waiting for the lock)
    writer.commit(TAG)
    reader.join(10)
    assert read == [{"a": A, "b": edited}]
