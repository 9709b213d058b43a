"""Intrinsic calls and inline assembly spelled as LLVM IR: the `llvm_text` printer's handlers
of the ops that call an intrinsic (declared once per module, mangled by its types)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IntAttr,
    IntegerType,
    VectorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from fusion_compiler.lowering.llvm_text_values import (
    LLVMTextError,
    fast_math_flags,
    quoted,
    type_text,
)

if TYPE_CHECKING:
    from fusion_compiler.lowering.llvm_text import _Printer


def call_intrinsic(p: _Printer, op: llvm.CallIntrinsicOp) -> str:
    if op.op_bundle_operands or op.op_bundle_sizes:
        raise LLVMTextError("llvm.call_intrinsic with operand bundles is not translated")
    return intrinsic_call(p, op, op.intrin.data, op.args)


def intrinsic_suffix(type_: Attribute) -> str:
    """The mangling of an overloaded intrinsic's type: `f32`, `v8f32`, `i64`, `p0`."""
    if isinstance(type_, VectorType):
        return f"v{type_.get_shape()[0]}{intrinsic_suffix(type_.element_type)}"
    if isinstance(type_, Float16Type | Float32Type | Float64Type):
        return f"f{type_.bitwidth}"
    if isinstance(type_, IntegerType):
        return f"i{type_.width.data}"
    if isinstance(type_, llvm.LLVMPointerType):
        space = type_.addr_space
        return f"p{space.data if isinstance(space, IntAttr) else 0}"
    raise LLVMTextError(f"no intrinsic is overloaded on {type_}")


def intrinsic_call(
    p: _Printer,
    op: Operation,
    name: str,
    arguments: Sequence[SSAValue],
    overloads: Sequence[Attribute] = (),
) -> str:
    """A call of the intrinsic `name` mangled by `overloads` (none: `name` is mangled
    already), declared once per module; its result, if any, is `op`'s."""
    mangled = ".".join([name, *(intrinsic_suffix(t) for t in overloads)])
    result = type_text(op.results[0].type) if op.results else "void"
    p.declare_intrinsic(mangled, result, [type_text(a.type) for a in arguments])
    values = ", ".join(p.typed(a) for a in arguments)
    text = f"call{fast_math_flags(op)} {result} @{quoted(mangled)}({values})"
    return (p.result(op) if op.results else "  ") + text


def overloaded(name: str) -> Callable[[_Printer, Operation], str]:
    """An intrinsic overloaded on its result's type (`llvm.sqrt.f32`, `llvm.pow.v8f32`)."""
    return lambda p, op: intrinsic_call(p, op, name, op.operands, [op.results[0].type])


def vector_reduce(name: str) -> Callable[[_Printer, Operation], str]:
    """A reduction intrinsic, overloaded on its vector's type."""
    return lambda p, op: intrinsic_call(p, op, name, op.operands, [op.operands[1].type])


def fma(p: _Printer, op: llvm.FMAOp) -> str:
    return intrinsic_call(p, op, "llvm.fma", [op.a, op.b, op.c], [op.res.type])


def masked_store(p: _Printer, op: llvm.MaskedStoreOp) -> str:
    name = f"llvm.masked.store.{intrinsic_suffix(op.value.type)}.{intrinsic_suffix(op.data.type)}"
    types = [type_text(op.value.type), type_text(op.data.type), "i32", type_text(op.mask.type)]
    p.declare_intrinsic(name, "void", types)
    alignment = f"i32 {op.alignment.value.data}"
    values = ", ".join([p.typed(op.value), p.typed(op.data), alignment, p.typed(op.mask)])
    return f"  call void @{quoted(name)}({values})"


def inline_asm(p: _Printer, op: llvm.InlineAsmOp) -> str:
    result = type_text(op.res.type) if op.res is not None else "void"
    side = " sideeffect" if op.has_side_effects is not None else ""
    arguments = ", ".join(p.typed(a) for a in op.operands_)
    asm, constraints = quoted(op.asm_string.data), quoted(op.constraints.data)
    text = f"call {result} asm{side} {asm}, {constraints}({arguments})"
    return (p.result(op) if op.res is not None else "  ") + text
