"""`llvm_builders`: values converted during the lowering, the casts' removal, and the builders
of addresses and accesses made with `create`."""

from __future__ import annotations

import gc

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    IndexType,
    IntAttr,
    ModuleOp,
    UnrealizedConversionCastOp,
    f32,
    i32,
    i64,
)
from xdsl.ir import Block, Region
from xdsl.utils.test_value import create_ssa_value

from fusion_compiler.collector import collector_paused
from fusion_compiler.lowering.llvm_builders import (
    converted,
    element_pointer,
    load,
    reconcile_casts,
    store,
)

POINTER = llvm.LLVMPointerType()


def _cast(value, to):
    return UnrealizedConversionCastOp.get([value], [to])


def test_converted_reuses_a_value_of_the_type():
    value = create_ssa_value(i64)
    assert converted(value, i64) == ([], value)


def test_converted_looks_through_the_cast_that_made_the_value():
    pointer = create_ssa_value(POINTER)
    buffer = _cast(pointer, IndexType())  # stands for the memref view of a pointer
    assert converted(buffer.results[0], POINTER) == ([], pointer)


def test_converted_casts_otherwise():
    index = create_ssa_value(IndexType())
    ops, value = converted(index, i64)
    assert len(ops) == 1 and isinstance(ops[0], UnrealizedConversionCastOp)
    assert value.type == i64 and ops[0].inputs[0] is index


def _module_with(*ops):
    block = Block(arg_types=[i64])
    block.add_ops(ops)
    return ModuleOp(Region(block)), block


def test_reconcile_casts_removes_chains_that_return_to_their_type():
    block = Block(arg_types=[i64])
    start = block.args[0]
    there = _cast(start, IndexType())
    back = _cast(there.results[0], i64)
    user = llvm.AddOp(back.results[0], back.results[0])
    block.add_ops([there, back, user])
    module = ModuleOp(Region(block))
    reconcile_casts(module)
    assert [op.name for op in block.ops] == ["llvm.add"]
    assert user.operands[0] is start and user.operands[1] is start
    module.verify()


def test_reconcile_casts_keeps_a_cast_still_needed():
    block = Block(arg_types=[i64])
    to_i32 = UnrealizedConversionCastOp.get([block.args[0]], [i32])
    unused = _cast(block.args[0], IndexType())
    user = llvm.AddOp(to_i32.results[0], to_i32.results[0])
    block.add_ops([to_i32, unused, user])
    reconcile_casts(ModuleOp(Region(block)))
    assert [op.name for op in block.ops] == ["builtin.unrealized_conversion_cast", "llvm.add"]


def test_address_and_access_builders_verify():
    block = Block(arg_types=[POINTER, i64, i64, f32])
    pointer, row, column, value = block.args
    rows = llvm.LLVMArrayType(IntAttr(8), f32)
    address = element_pointer(pointer, [row, column], rows)
    read = load(address.result, f32, 4)
    write = store(value, address.result, 4)
    block.add_ops([address, read, write])
    for op in (address, read, write):
        op.verify()
    assert address.inbounds is not None and address.elem_type == rows
    assert tuple(address.rawConstantIndices.iter_values()) == (llvm.GEP_USE_SSA_VAL,) * 2
    assert read.alignment is not None and read.alignment.value.data == 4


def test_collector_paused_restores_the_state_it_found():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still holds it
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()
