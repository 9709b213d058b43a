"""The one table that maps builtin types to the types of xDSL's `llvm` dialect.

| builtin type                  | LLVM dialect type      | note                                  |
|-------------------------------|------------------------|---------------------------------------|
| `index`                       | `i64`                  | `INDEX_BITWIDTH`                      |
| `iN` (signless, si, ui)       | `iN`                   | LLVM integers are signless            |
| `f16` `f32` `f64`             | same                   |                                       |
| `memref<...>`                 | `!llvm.ptr`            | a bare pointer to the first element   |
| `i1` in memory                | `i8`                   | `memory_type`: one byte, 0 or 1       |
| `!llvm.*`                     | same                   | already converted                     |

A statically shaped memref is lowered to a bare pointer: shape, strides and offset are
compile-time constants, read from the memref type wherever an access is linearised.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntAttr,
    IntegerType,
    MemRefType,
)
from xdsl.dialects.llvm import LLVMPointerType, LLVMVoidType
from xdsl.ir import Attribute
from xdsl.utils.exceptions import DiagnosticException

INDEX_BITWIDTH = 64
"""`index` values are 64-bit integers in generated code."""


POINTER = LLVMPointerType()
"""The opaque pointer type (types are immutable values: one instance serves every op)."""

_INDEX = IntegerType(INDEX_BITWIDTH)


@cache
def _signless_of_width(bitwidth: int) -> IntegerType:
    return IntegerType(bitwidth)


def _signless(integer: Attribute) -> Attribute:
    assert isinstance(integer, IntegerType)
    return _signless_of_width(integer.bitwidth)


_TYPE_TABLE: dict[type[Attribute], Callable[[Attribute], Attribute]] = {
    IndexType: lambda _: _INDEX,
    IntegerType: _signless,
    Float16Type: lambda t: t,
    Float32Type: lambda t: t,
    Float64Type: lambda t: t,
    MemRefType: lambda _: POINTER,
    LLVMPointerType: lambda t: t,
    LLVMVoidType: lambda t: t,
}


def llvm_type(builtin_type: Attribute) -> Attribute:
    """The LLVM dialect type of `builtin_type`; idempotent on converted types."""
    convert = _TYPE_TABLE.get(type(builtin_type))
    if convert is None:
        raise DiagnosticException(f"unsupported type {builtin_type}")
    return convert(builtin_type)


def memory_type(element_type: Attribute) -> Attribute:
    """The LLVM type a buffer element is loaded and stored as: `i8` for `i1` (a byte holding 0
    or 1, numpy's `bool`; loaded with a `trunc`, stored with a `zext`), so that a vectorised
    loop reads bytes rather than LLVM's bit-packed `<N x i1>` vectors; `llvm_type` otherwise."""
    lowered = llvm_type(element_type)
    if isinstance(lowered, IntegerType) and lowered.bitwidth == 1:
        return IntegerType(8)
    return lowered


def bitwidth(builtin_type: Attribute) -> int:
    """The width in bits of a scalar type once lowered (`index` is `INDEX_BITWIDTH`)."""
    lowered = llvm_type(builtin_type)
    if isinstance(lowered, IntegerType | Float16Type | Float32Type | Float64Type):
        return lowered.bitwidth
    raise DiagnosticException(f"{builtin_type} is not a scalar type")


def storage_bytes(element_type: Attribute) -> int:
    """The bytes one element occupies in a buffer (`i1` takes a whole byte)."""
    return max(1, (bitwidth(element_type) + 7) // 8)


def intrinsic_suffix(builtin_type: Attribute) -> str:
    """The type suffix LLVM mangles into overloaded intrinsic names: `f32`, `i64`, `p0`..."""
    lowered = llvm_type(builtin_type)
    if isinstance(lowered, LLVMPointerType):
        space = lowered.addr_space
        return f"p{space.data if isinstance(space, IntAttr) else 0}"
    kind = "i" if isinstance(lowered, IntegerType) else "f"
    return f"{kind}{bitwidth(lowered)}"


def is_float(builtin_type: Attribute) -> bool:
    return isinstance(builtin_type, Float16Type | Float32Type | Float64Type)


def is_scalar(builtin_type: Attribute) -> bool:
    """Whether `builtin_type` is an `index`, integer or float type the table lowers."""
    return isinstance(
        builtin_type, IndexType | IntegerType | Float16Type | Float32Type | Float64Type
    )
