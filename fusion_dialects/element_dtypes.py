"""The numpy dtype of buffer (or tensor) elements of an element type, and back: the one home of
that mapping, which every stage and tool asks (the importer, the passes that fold constants, the
LLVM lowering, the reference evaluator, the compiled model, `fusion-run`'s inputs).

`numpy_dtype`: `i1` is `bool`: one byte holding 0 or 1, which is how LLVM stores an `i1` in
memory, and what numpy and ONNX call a boolean tensor; `iN` is `intN` (N >= 8), `index` is
`int64`; `element_type` is the way back (from a numpy dtype to its element type). It needs only
the builtin types: a tool that reads graph-level IR need not load the loop dialect for it.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, IndexType, IntegerType
from xdsl.ir import Attribute

_FLOAT_DTYPES: dict[type[Attribute], np.dtype] = {
    Float16Type: np.dtype(np.float16),
    Float32Type: np.dtype(np.float32),
    Float64Type: np.dtype(np.float64),
}


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype of buffer (or tensor) elements of `element_type`; `TypeError` for an
    element type without one."""
    dtype = _FLOAT_DTYPES.get(type(element_type))
    if dtype is not None:
        return dtype
    if isinstance(element_type, IndexType):
        return np.dtype(np.int64)
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        if width == 1:
            return np.dtype(np.bool_)
        if width in (8, 16, 32, 64):
            return np.dtype(f"int{width}")
    raise TypeError(f"no numpy dtype for element type {element_type}")


def element_type(dtype: np.dtype) -> Attribute:
    """The element type whose buffers hold `dtype` (the inverse of `numpy_dtype`: `bool` is
    `i1`, `intN` is `iN`); `TypeError` for a dtype without one."""
    dtype = np.dtype(dtype)
    for typ, float_dtype in _FLOAT_DTYPES.items():
        if dtype == float_dtype:
            return typ()
    if dtype == np.bool_:
        return IntegerType(1)
    if dtype.kind == "i" and dtype.itemsize in (1, 2, 4, 8):
        return IntegerType(8 * dtype.itemsize)
    raise TypeError(f"no element type for numpy dtype {dtype}")
