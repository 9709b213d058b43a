"""`row_major_equals`: whether stored bytes are those `row_major_chunks` would write, bit for
bit, for contiguous arrays and for transposed matrices (compared in bands, on several threads)."""

import time

import numpy as np
import pytest

from fusion_compiler.frontend import values
from fusion_compiler.frontend.values import row_major_chunks, row_major_equals

RNG = np.random.default_rng(0)


def _stored(array: np.ndarray) -> memoryview:
    return memoryview(b"".join(bytes(chunk) for chunk in row_major_chunks(array)))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "array",
    [
        RNG.standard_normal((300, 700)).astype(np.float32),  # contiguous
        RNG.standard_normal((700, 300)).astype(np.float32).T,  # a transposed Gemm weight
        RNG.standard_normal((4, 5, 6)).astype(np.float32).transpose(2, 0, 1),
        RNG.standard_normal(17).astype(np.float64),  # (stored as float32)
    ],
    ids=["contiguous", "transposed", "permuted", "float64"],
)
def test_equal_to_its_own_bytes_and_not_to_a_changed_copy(array, threads, monkeypatch):
    monkeypatch.setattr(values, "usable_cores", lambda: threads)
    monkeypatch.setattr(values, "PARALLEL_COPY_BYTES", 1 << 12)
    stored = _stored(array)
    assert row_major_equals(array, stored)
    for index in (0, len(stored) // 2, len(stored) - 1):  # (first band, middle, last tile)
        changed = bytearray(stored)
        changed[index] ^= 1
        assert not row_major_equals(array, memoryview(changed))
    assert not row_major_equals(array, stored[:-4])


def test_signed_zeros_and_nans_are_compared_by_their_bits():
    zeros = np.zeros((3, 300), np.float32).T
    assert not row_major_equals(zeros, _stored(-zeros))
    nans = np.full(20, np.nan, np.float32)
    assert row_major_equals(nans, _stored(nans))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(45, 2500), (2100, 1030), (3000, 1024), (1, 3000), (3000, 1)])
def test_a_transposed_matrix_is_copied_whole_in_c_order(shape, threads, monkeypatch):
    """The tiled copies (`_copy_band`'s tiles, bands on two cores) against numpy's: the last
    row tile and column tile partial; bands of fewer rows than `_SHORT_TILE_ROWS` (wide
    tiles, and 16-column ones where the source rows are 4 KiB apart); a matrix of one row or
    one column, whose transpose is contiguous already (written as it is)."""
    monkeypatch.setattr(values, "usable_cores", lambda: threads)
    monkeypatch.setattr(values, "PARALLEL_COPY_BYTES", 1 << 12)
    monkeypatch.setattr(values, "BAND_BYTES", 1 << 20)  # (several bands of rows)
    array = RNG.standard_normal(shape).astype(np.float32).T
    expected = np.ascontiguousarray(array).tobytes()
    assert bytes(_stored(array)) == expected
    assert values.dense_f32(array).data.data == expected


def test_a_band_stays_as_it_was_while_the_next_one_is_copied(monkeypatch):
    """`row_major_chunks` copies the next band in a thread while the caller holds this one:
    a band read once the copy of the next has finished is still its own bytes."""
    monkeypatch.setattr(values, "BAND_BYTES", 1 << 16)  # (bands of 16 rows: 13 of them)
    copied = []
    real_copy = values._copy_tiled

    def counted_copy(target, matrix):
        real_copy(target, matrix)
        copied.append(len(matrix))

    monkeypatch.setattr(values, "_copy_tiled", counted_copy)
    array = RNG.standard_normal((1024, 200)).astype(np.float32).T
    bands = len(range(0, array.shape[0], 16))
    expected = memoryview(np.ascontiguousarray(array).tobytes())
    offset = 0
    for index, chunk in enumerate(row_major_chunks(array)):
        deadline = time.monotonic() + 30
        while len(copied) < min(index + 2, bands) and time.monotonic() < deadline:
            time.sleep(0.001)  # (until the next band's copy, started before, has finished)
        assert len(copied) == min(index + 2, bands)
        assert bytes(chunk) == bytes(expected[offset : offset + len(chunk)])
        offset += len(chunk)
    assert offset == len(expected)
