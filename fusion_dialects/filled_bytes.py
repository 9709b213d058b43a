"""`bytes` objects filled in place: a dense attribute's raw bytes made without a copy.

xDSL's dense attributes hold `bytes`. A constant computed into a numpy array and then turned
into `bytes` (`tobytes`) is written twice into new memory; CPython's C API lets the creator
of a new, uninitialised `bytes` object (`PyBytes_FromStringAndSize(NULL, n)`) fill it before
anyone else sees it, so the array can be the object's own storage: the import's transposed
Gemm weights (`frontend.values`) and fold-constants' scaled weights (`held_array`) are
computed straight into the bytes their attributes hold.
"""

from __future__ import annotations

import ctypes

import numpy as np

_new_bytes = ctypes.pythonapi.PyBytes_FromStringAndSize
_new_bytes.argtypes = (ctypes.c_void_p, ctypes.c_ssize_t)
_new_bytes.restype = ctypes.py_object
_bytes_address = ctypes.pythonapi.PyBytes_AsString
_bytes_address.argtypes = (ctypes.py_object,)
_bytes_address.restype = ctypes.c_void_p


def bytes_to_fill(size: int) -> np.ndarray:
    """A writable uint8 array of `size` bytes that is the storage of a new `bytes` object
    (`filled_bytes` gives it). Fill the array before the object is used (hashed, compared,
    held by an attribute), and write nothing into it after."""
    data = _new_bytes(None, size)
    storage = (ctypes.c_char * size).from_address(_bytes_address(data))
    storage.owner = data  # type: ignore[attr-defined]  # (the array keeps the object alive)
    return np.frombuffer(memoryview(storage).cast("B"), np.uint8)


def filled_bytes(array: np.ndarray) -> bytes | None:
    """The `bytes` object whose whole storage `array` is (an array of `bytes_to_fill`, or a
    view of all of it), else None."""
    base: object = array
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    data = getattr(base, "owner", None)
    if not isinstance(data, bytes) or len(data) != array.nbytes:
        return None
    if not array.flags.c_contiguous or _bytes_address(data) != array.ctypes.data:
        return None
    return data
