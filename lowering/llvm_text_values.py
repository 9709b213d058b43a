"""Types, constants and argument attributes spelled as LLVM IR (`llvm_text` prints with them)."""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    VectorType,
)
from xdsl.ir import Attribute, Operation


class LLVMTextError(Exception):
    """An op or type the printer does not translate."""


# --- types and constants ----------------------------------------------------------------------


def type_text(type_: Attribute) -> str:
    """The LLVM spelling of an `llvm` dialect (or builtin) type."""
    text = _TYPE_TEXT.get(type_)
    if text is None:
        text = _type_text(type_)
        _TYPE_TEXT[type_] = text
    return text


_TYPE_TEXT: dict[Attribute, str] = {}


_FLOAT_TYPES: dict[type[Attribute], str] = {
    Float16Type: "half",
    Float32Type: "float",
    Float64Type: "double",
}


def _type_text(type_: Attribute) -> str:
    if isinstance(type_, IntegerType):
        return f"i{type_.width.data}"
    if type(type_) in _FLOAT_TYPES:
        return _FLOAT_TYPES[type(type_)]
    if isinstance(type_, llvm.LLVMPointerType):
        space = type_.addr_space
        return (
            f"ptr addrspace({space.data})" if isinstance(space, IntAttr) and space.data else "ptr"
        )
    if isinstance(type_, llvm.LLVMArrayType):
        return f"[{type_.size.data} x {type_text(type_.type)}]"
    if isinstance(type_, VectorType) and type_.get_num_dims() == 1:
        if type_.get_num_scalable_dims():
            raise LLVMTextError(f"scalable vectors are not supported: {type_}")
        return f"<{type_.get_shape()[0]} x {type_text(type_.element_type)}>"
    if isinstance(type_, llvm.LLVMStructType):
        return "{" + ", ".join(type_text(t) for t in type_.types.data) + "}"
    if isinstance(type_, llvm.LLVMVoidType):
        return "void"
    raise LLVMTextError(f"type not supported: {type_}")


def _hex_double(value: float) -> str:
    return f"0x{struct.unpack('<Q', struct.pack('<d', value))[0]:016X}"


def scalar_text(type_: Attribute, value: int | float) -> str:
    """A scalar constant of `type_`: an integer in decimal (`true`/`false` for `i1`), a float
    exactly, in hexadecimal (an `f32` rounded to single precision first, as LLVM expects)."""
    if isinstance(type_, IntegerType):
        if type_.width.data == 1:
            return "true" if int(value) & 1 else "false"
        return str(int(value))
    if isinstance(type_, Float32Type):
        return _hex_double(struct.unpack("<f", struct.pack("<f", value))[0])
    if isinstance(type_, Float64Type):
        return _hex_double(float(value))
    raise LLVMTextError(f"constants of type {type_} are not supported")


def constant_text(type_: Attribute, value: Attribute) -> str:
    """The constant `value` (an integer, float or dense attribute) of `type_`, untyped."""
    if isinstance(value, IntegerAttr):
        return scalar_text(type_, value.value.data)
    if isinstance(value, FloatAttr):
        return scalar_text(type_, value.value.data)
    if isinstance(value, DenseIntOrFPElementsAttr):
        if isinstance(type_, VectorType):
            element, brackets = type_.element_type, "<>"
        elif isinstance(type_, llvm.LLVMArrayType):
            element, brackets = type_.type, "[]"
        else:
            raise LLVMTextError(f"a dense constant of type {type_} is not supported")
        element_text = type_text(element)
        items = ", ".join(f"{element_text} {scalar_text(element, v)}" for v in value.get_values())
        return f"{brackets[0]}{items}{brackets[1]}"
    raise LLVMTextError(f"constant attribute not supported: {value}")


def zero_text(type_: Attribute) -> str:
    if isinstance(type_, IntegerType | Float16Type | Float32Type | Float64Type):
        return scalar_text(type_, 0)
    if isinstance(type_, llvm.LLVMPointerType):
        return "null"
    return "zeroinitializer"


def quoted(name: str) -> str:
    return '"' + name.replace("\\", "\\5C").replace('"', "\\22") + '"'


# --- attributes of functions and their arguments ----------------------------------------------

_ARGUMENT_FLAGS = {
    "llvm.inreg": "inreg",
    "llvm.nest": "nest",
    "llvm.noalias": "noalias",
    "llvm.nocapture": "captures(none)",
    "llvm.nofree": "nofree",
    "llvm.nonnull": "nonnull",
    "llvm.noundef": "noundef",
    "llvm.returned": "returned",
    "llvm.signext": "signext",
    "llvm.zeroext": "zeroext",
}
"""The unit attributes of an argument, with their LLVM spelling (those xDSL translates)."""

_ARGUMENT_INTS = {
    "llvm.align": "align",
    "llvm.dereferenceable": "dereferenceable",
    "llvm.dereferenceable_or_null": "dereferenceable_or_null",
}


def argument_attributes(attributes: Mapping[str, Attribute]) -> str:
    words = []
    for name, value in attributes.items():
        if name in _ARGUMENT_FLAGS:
            words.append(_ARGUMENT_FLAGS[name])
        elif name in _ARGUMENT_INTS and isinstance(value, IntegerAttr):
            words.append(f"{_ARGUMENT_INTS[name]}({value.value.data})")
    return "".join(f" {word}" for word in sorted(words))


def flag_words(words: Sequence[str]) -> str:
    """Flags (`nsw`, `fast`, ...) each after a space."""
    return "".join(f" {word}" for word in words)


def fast_math_flags(op: Operation) -> str:
    """An op's fast-math flags, each after a space (none when it has no `fastmathFlags`)."""
    flags = op.properties.get("fastmathFlags")
    return flag_words([f.value for f in flags.data]) if isinstance(flags, llvm.FastMathAttr) else ""
