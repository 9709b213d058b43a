"""`filled_bytes`: a `bytes` object filled in place through a numpy array of its storage."""

from __future__ import annotations

import numpy as np

from fusion_compiler.dialects.filled_bytes import bytes_to_fill, filled_bytes


def test_the_array_is_the_storage_of_the_bytes():
    array = bytes_to_fill(64).view(np.float32).reshape(4, 4)
    array[...] = np.arange(16).reshape(4, 4)
    data = filled_bytes(array)
    assert isinstance(data, bytes) and data == np.arange(16, dtype=np.float32).tobytes()
    assert filled_bytes(array.reshape(-1)) is data  # (a view of all of it)


def test_other_arrays_have_none():
    array = bytes_to_fill(64).view(np.float32)
    assert filled_bytes(array[1:]) is None  # (a part)
    assert filled_bytes(array.reshape(4, 4).T) is None  # (not in C order)
    assert filled_bytes(np.zeros(16, np.float32)) is None
    assert filled_bytes(bytes_to_fill(0)) == b""
