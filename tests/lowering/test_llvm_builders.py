"""`llvm_builders`: values converted during the lowering, the casts' removal, and the builders
of addresses and accesses made with `create`."""

from __future__ import annotations

import gc

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    IndexType,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    UnrealizedConversionCastOp,
    f32,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.utils.test_value import create_ssa_value

from fusion_compiler.collector import collector_paused
from fusion_compiler.lowering.llvm_builders import (
    add_no_signed_wrap,
    add_symbol,
    bitcast,
    branch,
    call,
    conditional_branch,
    converted,
    element_pointer,
    find_symbol,
    icmp,
    indexed_symbols,
    intrinsic,
    load,
    reconcile_casts,
    replace_op,
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


def _same_op(made: Operation, constructed: Operation) -> None:
    """`made` (a builder's `create`) is the op `constructed` (xDSL's constructor): the same
    name, operands, results, successors and properties, in the same order, so that the
    printed IR and the LLVM IR are the same bytes."""
    assert made.name == constructed.name
    assert list(made.operands) == list(constructed.operands)
    assert [r.type for r in made.results] == [r.type for r in constructed.results]
    assert list(made.successors) == list(constructed.successors)
    assert list(made.properties.items()) == list(constructed.properties.items())
    assert made.attributes == constructed.attributes


def test_builders_made_with_create_are_the_constructors_ops():
    block = Block(arg_types=[i64, i64, POINTER, f32, llvm.LLVMPointerType()])
    a, b, pointer, x, _ = block.args
    target, other = Block(), Block()
    region = Region([block, target, other])  # (successors must be blocks of a region)
    assert region.blocks
    nsw = llvm.OverflowAttr([llvm.OverflowFlag.NO_SIGNED_WRAP])
    _same_op(add_no_signed_wrap(a, b), llvm.AddOp(a, b, overflow=nsw))
    predicate = IntegerAttr(llvm.ICmpPredicateFlag("slt").to_int(), 64)
    _same_op(icmp("slt", a, b), llvm.ICmpOp(a, b, predicate))
    condition = icmp("eq", a, b).res
    _same_op(
        conditional_branch(condition, target, other),
        llvm.CondBrOp(condition, target, (), other, ()),
    )
    _same_op(branch(target, [a, b]), llvm.BrOp(target, a, b))
    _same_op(branch(target), llvm.BrOp(target))
    _same_op(bitcast(pointer, POINTER), llvm.BitcastOp(pointer, POINTER))
    _same_op(call("f", [a, x], f32), llvm.CallOp("f", a, x, return_type=f32))
    _same_op(call("g", []), llvm.CallOp("g"))
    _same_op(
        intrinsic("fma", [x, x, x], f32), llvm.CallIntrinsicOp("llvm.fma.f32", [x, x, x], [f32])
    )
    _same_op(load(pointer, i32, None), llvm.LoadOp(pointer, i32))
    _same_op(load(pointer, i32, 4), llvm.LoadOp(pointer, i32, alignment=4))
    _same_op(store(a, pointer, None), llvm.StoreOp(a, pointer))


def test_replace_op_leaves_what_the_rewriter_leaves():
    def replaced(with_rewriter: bool) -> str:
        block = Block(arg_types=[i64, i64])
        block.args[0].name_hint = "x"
        old = llvm.AddOp(block.args[0], block.args[1])
        old.res.name_hint = "sum"
        user = llvm.MulOp(old.res, old.res)
        block.add_ops([old, user])
        module = ModuleOp(Region(block))
        new = [llvm.SubOp(block.args[0], block.args[1]), llvm.XOrOp(block.args[0], block.args[1])]
        rewriter = PatternRewriter(old)
        if with_rewriter:
            rewriter.replace(old, new, [new[1].res])
        else:
            replace_op(rewriter, old, new, [new[1].res])
        assert rewriter.has_done_action
        module.verify()
        return str(module)

    assert replaced(with_rewriter=False) == replaced(with_rewriter=True)
    assert "%sum" in replaced(with_rewriter=False)


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


def _declaration(name: str) -> llvm.FuncOp:
    return llvm.FuncOp(name, llvm.LLVMFunctionType([]), linkage=llvm.LinkageAttr("external"))


def test_indexed_symbols_follow_what_the_lowering_adds_replaces_and_erases():
    """Within `indexed_symbols`, `find_symbol` answers as `SymbolTable.lookup_symbol` does:
    an added symbol is found, a replaced one is the new op, an erased one is gone (the index
    is made again when a symbol found is no longer the module's), and outside it the module
    is scanned."""
    first, second = _declaration("f"), _declaration("g")
    module = ModuleOp([first, second])
    with indexed_symbols(module):
        assert find_symbol(module, "f") is first and find_symbol(module, "h") is None
        added = _declaration("h")
        module.body.block.add_op(added)
        add_symbol(module, added)
        assert find_symbol(module, "h") is added
        replacement = _declaration("f")
        module.body.block.insert_op_before(replacement, first)
        module.body.block.erase_op(first)
        assert find_symbol(module, "f") is replacement
        module.body.block.erase_op(second)
        assert find_symbol(module, "g") is None
    late = _declaration("k")
    module.body.block.add_op(late)
    assert find_symbol(module, "k") is late  # (no index: the module is scanned)
