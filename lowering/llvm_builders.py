"""Small builders of `llvm` dialect ops shared by the lowering patterns.

Intrinsics are always called through `llvm.call_intrinsic` with their fully mangled name
(`llvm.sqrt.f32`), never through xDSL's `llvm.intr.*` ops: those are translated to
unmangled declarations (`@llvm.sqrt`), and a module that used one intrinsic at two types
would get a single declaration for both.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache, lru_cache
from typing import cast
from weakref import WeakKeyDictionary

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    UnrealizedConversionCastOp,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolOpInterface, SymbolTable

from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.lowering.llvm_types import POINTER, intrinsic_suffix, is_float, llvm_type
from fusion_compiler.passes.analysis.ir_walk import walk_ops


def converted(value: SSAValue, target_type: Attribute) -> tuple[list[Operation], SSAValue]:
    """`value` as a value of `target_type` during the lowering, when types are converted op by
    op: `value` itself if it has that type already (a loop's induction variable is `i64` once
    its loop is lowered), the source of the `unrealized_conversion_cast` that made `value` if
    the source has it (a buffer argument is a cast of its pointer), else a new cast, returned
    to be inserted (`reconcile_casts` removes the casts when every op is converted)."""
    if value.type == target_type:
        return [], value
    owner = value.owner
    if isinstance(owner, UnrealizedConversionCastOp) and len(owner.inputs) == 1:
        source = owner.inputs[0]
        if source.type == target_type:
            return [], source
    cast_op = conversion_cast(value, target_type)
    return [cast_op], cast_op.results[0]


def conversion_cast(value: SSAValue, target_type: Attribute) -> UnrealizedConversionCastOp:
    """`builtin.unrealized_conversion_cast %value : ... to target_type`, made without xDSL's
    generic builder (`UnrealizedConversionCastOp.get` checks its operands against the op's
    definition: four times the cost, and the lowering makes thousands of casts)."""
    return UnrealizedConversionCastOp.create(operands=[value], result_types=[target_type])


def reconcile_casts(module: Operation) -> None:
    """Removes the `unrealized_conversion_cast`s of a converted module: each use of a chain of
    casts that ends at its start's type uses the start instead, then the unused casts go.
    (xDSL's `reconcile_unrealized_casts` does the same through its greedy rewrite driver, at
    a seventh of the speed.) A cast still used afterwards is left: the translation names it.
    (A cast's inputs are read as its generic `operands`: the named accessor costs more than
    the rest of the walk.)"""
    casts = [op for op in walk_ops(module) if isinstance(op, UnrealizedConversionCastOp)]
    for cast_op in casts:
        if len(cast_op.operands) != 1 or len(cast_op.results) != 1:
            continue
        result = cast_op.results[0]
        source = cast_op.operands[0]
        while source.type != result.type:
            owner = source.owner
            if not isinstance(owner, UnrealizedConversionCastOp) or len(owner.operands) != 1:
                break
            source = owner.operands[0]
        if source.type == result.type:
            result.replace_all_uses_with(source)
    unused = [op for op in reversed(casts) if not op.results[0].uses]
    while unused:
        cast_op = unused.pop()
        sources = [value.owner for value in cast_op.operands]
        Rewriter.erase_op(cast_op)
        unused += [
            source
            for source in sources
            if isinstance(source, UnrealizedConversionCastOp)
            and source.parent is not None
            and not source.results[0].uses
        ]


def replace_op(
    rewriter: PatternRewriter,
    op: Operation,
    new_ops: Sequence[Operation],
    new_results: Sequence[SSAValue],
) -> None:
    """What `rewriter.replace(op, new_ops, new_results)` does (the same IR, the same name
    hints), without the notifications a greedy driver's worklist listens to: the lowering's
    phases visit each op once (`convert_loop_to_llvm._walk`) and listen to nothing. Used by
    the most numerous rewrites (arithmetic, loads, stores): densenet121's arithmetic phase
    0.51 -> 0.43 s of CPU."""
    block = op.parent
    assert block is not None
    block.insert_ops_before(new_ops, op)
    for old, new in zip(op.results, new_results, strict=True):
        old.replace_all_uses_with(new)
        if not new.name_hint:
            new.name_hint = old.name_hint
    if len(new_results) == 1 and (hint := new_results[0].name_hint) is not None:
        for new_op in new_ops:
            for result in new_op.results:
                if not result.name_hint:
                    result.name_hint = hint
    block.erase_op(op)
    rewriter.has_done_action = True


# Address arithmetic and memory accesses are the most numerous ops a kernel lowers to, so
# they are built with `create` from properties made once per kind (attributes are immutable
# values, which ops may share), skipping the checks of the ops' constructors: a third of
# their cost.


@cache
def _gep_properties(raw_indices: tuple[int, ...], element_type: Attribute) -> dict[str, Attribute]:
    return {
        "rawConstantIndices": DenseArrayBase.from_list(i32, raw_indices),
        "elem_type": element_type,
        "noWrapFlags": IntegerAttr(0, 32),
        "inbounds": UnitAttr(),
    }


def element_pointer(
    pointer: SSAValue, subscripts: Sequence[SSAValue | int], element_type: Attribute
) -> llvm.GEPOp:
    """`llvm.getelementptr inbounds %pointer[subscripts...] : element_type`, each subscript an
    `i64` value or a constant (an int that fits in 32 bits)."""
    raw = tuple(s if isinstance(s, int) else llvm.GEP_USE_SSA_VAL for s in subscripts)
    return llvm.GEPOp.create(
        operands=[pointer, *(s for s in subscripts if not isinstance(s, int))],
        result_types=[POINTER],
        properties=_gep_properties(raw, element_type),
    )


def offset_pointer(pointer: SSAValue, offset: int, element_type: Attribute) -> llvm.GEPOp:
    """`llvm.getelementptr inbounds %pointer[offset] : element_type`, a constant offset."""
    return llvm.GEPOp.create(
        operands=[pointer],
        result_types=[POINTER],
        properties=_gep_properties((offset,), element_type),
    )


@cache
def _access_properties(alignment: int | None) -> dict[str, Attribute]:
    if alignment is None:  # (as the ops' constructors leave it: LLVM takes the type's)
        return {"ordering": IntegerAttr(0, i64)}
    return {"ordering": IntegerAttr(0, i64), "alignment": IntegerAttr(alignment, i64)}


def load(address: SSAValue, value_type: Attribute, alignment: int | None) -> llvm.LoadOp:
    """`llvm.load %address {alignment}` of a `value_type` (no alignment: the type's)."""
    return llvm.LoadOp.create(
        operands=[address], result_types=[value_type], properties=_access_properties(alignment)
    )


def store(value: SSAValue, address: SSAValue, alignment: int | None) -> llvm.StoreOp:
    """`llvm.store %value, %address {alignment}` (no alignment: the type's)."""
    return llvm.StoreOp.create(operands=[value, address], properties=_access_properties(alignment))


def constant(value: int | float, builtin_type: Attribute) -> llvm.ConstantOp:
    """`llvm.mlir.constant` of a scalar; `index` constants become `i64`."""
    lowered = llvm_type(builtin_type)
    # (keyed by the float's hex form: -0.0 and 0.0 are equal, and hash alike, as floats)
    key = float(value).hex() if is_float(lowered) else int(value)
    return llvm.ConstantOp.create(
        result_types=[lowered], properties={"value": _constant_value(key, lowered)}
    )


@lru_cache(maxsize=4096)
def _constant_value(key: int | str, lowered: Attribute) -> IntegerAttr | FloatAttr:
    """The value attribute of a constant (shared: kernels repeat a few constants many times)."""
    if isinstance(key, str):
        return FloatAttr(float.fromhex(key), cast(AnyFloat, lowered))
    assert isinstance(lowered, IntegerType)
    return IntegerAttr(key, lowered, truncate_bits=True)


def bitcast(value: SSAValue, target_type: Attribute) -> llvm.BitcastOp:
    """`llvm.bitcast %value : target_type`."""
    return llvm.BitcastOp.create(operands=[value], result_types=[target_type])


_NO_SIGNED_WRAP = {
    "overflowFlags": IntegerAttr(llvm.OverflowAttr([llvm.OverflowFlag.NO_SIGNED_WRAP]).to_int(), 32)
}


def add_no_signed_wrap(lhs: SSAValue, rhs: SSAValue) -> llvm.AddOp:
    """`llvm.add %lhs, %rhs overflow<nsw>`."""
    return llvm.AddOp.create(
        operands=[lhs, rhs], result_types=[lhs.type], properties=_NO_SIGNED_WRAP
    )


@cache
def _icmp_properties(predicate: str) -> dict[str, Attribute]:
    flag = llvm.ICmpPredicateFlag(predicate)
    return {"predicate": IntegerAttr(flag.to_int(), 64)}


def icmp(predicate: str, lhs: SSAValue, rhs: SSAValue) -> llvm.ICmpOp:
    """`llvm.icmp "predicate" %lhs, %rhs` (`slt`, `eq`, ...: `llvm.ICmpPredicateFlag`)."""
    return llvm.ICmpOp.create(
        operands=[lhs, rhs], result_types=[i1], properties=_icmp_properties(predicate)
    )


def branch(destination: Block, arguments: Sequence[SSAValue] = ()) -> llvm.BrOp:
    """`llvm.br ^destination(arguments...)`."""
    return llvm.BrOp.create(operands=arguments, successors=[destination])


_COND_BR_NO_ARGUMENTS = {"operandSegmentSizes": DenseArrayBase.from_list(i32, [1, 0, 0])}


def conditional_branch(condition: SSAValue, then_block: Block, else_block: Block) -> llvm.CondBrOp:
    """`llvm.cond_br %condition, ^then_block, ^else_block` (no block arguments)."""
    return llvm.CondBrOp.create(
        operands=[condition],
        successors=[then_block, else_block],
        properties=_COND_BR_NO_ARGUMENTS,
    )


@cache
def _call_segments(arity: int) -> dict[str, Attribute]:
    return {
        "op_bundle_sizes": DenseArrayBase.from_list(i32, []),
        "operandSegmentSizes": DenseArrayBase.from_list(i32, [arity, 0]),
    }


_NO_FAST_MATH = llvm.FastMathAttr(None)
_C_CALLING_CONVENTION = llvm.CallingConventionAttr("ccc")
_NO_TAIL_CALL = llvm.TailCallKindAttr(llvm.TailCallKind.NONE)


def call(
    callee: str | SymbolRefAttr, args: Sequence[SSAValue], output: Attribute | None = None
) -> llvm.CallOp:
    """`llvm.call @callee(args)` returning `output` (nothing when None): the op
    `llvm.CallOp(callee, *args, return_type=output)` builds, made with `create`."""
    segments = _call_segments(len(args))
    properties = {
        "callee": callee if isinstance(callee, SymbolRefAttr) else SymbolRefAttr(callee),
        "fastmathFlags": _NO_FAST_MATH,
        "CConv": _C_CALLING_CONVENTION,
        "op_bundle_sizes": segments["op_bundle_sizes"],
        "operandSegmentSizes": segments["operandSegmentSizes"],
        "TailCallKind": _NO_TAIL_CALL,
    }
    return llvm.CallOp.create(
        operands=args, result_types=[] if output is None else [output], properties=properties
    )


def intrinsic(
    name: str,
    args: Sequence[SSAValue],
    result_type: Attribute | None,
    overload_types: Sequence[Attribute] | None = None,
) -> llvm.CallIntrinsicOp:
    """A call of the LLVM intrinsic `llvm.<name>.<suffixes>` (of no result when
    `result_type` is None: then `overload_types` are given).

    The suffixes are those of `overload_types`, by default of the result type:
    `intrinsic("fma", ...)` on `f32` calls `llvm.fma.f32`; `llvm.fptosi.sat` is overloaded
    on the result and the operand type: `overload_types=(i32, f32)` → `llvm.fptosi.sat.i32.f32`.
    """
    if overload_types is None:
        assert result_type is not None, "an intrinsic without a result names its overloads"
        overload_types = (result_type,)
    types = overload_types
    mangled = ".".join(["llvm", name, *(intrinsic_suffix(t) for t in types)])
    segments = _call_segments(len(args))
    properties = {
        "intrin": StringAttr(mangled),
        "op_bundle_sizes": segments["op_bundle_sizes"],
        "operandSegmentSizes": segments["operandSegmentSizes"],
        "fastmathFlags": _NO_FAST_MATH,
    }
    results = [] if result_type is None else [llvm_type(result_type)]
    return llvm.CallIntrinsicOp.create(operands=args, result_types=results, properties=properties)


def enclosing_module(op: Operation) -> ModuleOp:
    module = op.get_toplevel_object()
    if not isinstance(module, ModuleOp):
        raise ValueError(f"{op.name} is not inside a builtin.module")
    return module


_SYMBOLS: WeakKeyDictionary[ModuleOp, dict[str, Operation]] = WeakKeyDictionary()
"""The top-level symbols of each module lowered now (`indexed_symbols`), by name."""


@contextmanager
def indexed_symbols(module: ModuleOp) -> Iterator[None]:
    """Within it, `find_symbol` looks `module`'s top-level symbols up in a dictionary, which
    `add_symbol` keeps complete as the lowering adds symbols, rather than by xDSL's
    `SymbolTable.lookup_symbol`, which scans the module's ops at every lookup: lowering
    densenet121 as one module made 1,433 lookups among about 600 functions (quadratic in
    the model's size). A symbol found that is no longer in the module under its name (a
    kernel lowered since: `loop.func` replaced by `llvm.func`) makes the index again."""
    _SYMBOLS[module] = _symbols_of(module)
    try:
        yield
    finally:
        _SYMBOLS.pop(module, None)


def _symbols_of(module: ModuleOp) -> dict[str, Operation]:
    table: dict[str, Operation] = {}
    for op in module.body.block.ops:
        name = _symbol_name(op)
        if name is not None:
            table.setdefault(name, op)  # (the first, as `lookup_symbol` finds it)
    return table


def _symbol_name(op: Operation) -> str | None:
    interface = op.get_trait(SymbolOpInterface)
    if interface is None:
        return None
    symbol = interface.get_sym_attr_name(op)
    return None if symbol is None else symbol.data


def find_symbol(module: ModuleOp, name: str) -> Operation | None:
    """The top-level op of `module` that defines the symbol `name`, if any
    (`SymbolTable.lookup_symbol`, in constant time within `indexed_symbols`)."""
    table = _SYMBOLS.get(module)
    if table is None:
        return SymbolTable.lookup_symbol(module, name)
    found = table.get(name)
    if found is None or (found.parent is module.body.block and _symbol_name(found) == name):
        return found
    table.clear()
    table.update(_symbols_of(module))
    return table.get(name)


def add_symbol(module: ModuleOp, op: Operation) -> None:
    """Records `op`, just inserted at the top level of `module`, for `find_symbol`."""
    table = _SYMBOLS.get(module)
    name = _symbol_name(op)
    if table is not None and name is not None:
        table.setdefault(name, op)


def declare_function(
    rewriter: PatternRewriter,
    anchor: Operation,
    name: str,
    inputs: Sequence[Attribute],
    output: Attribute | None = None,
) -> None:
    """Declares the external C function `name` in `anchor`'s module, once."""
    module = enclosing_module(anchor)
    function_type = llvm.LLVMFunctionType([llvm_type(t) for t in inputs], output)
    existing = find_symbol(module, name)
    if existing is not None:
        if not _is_declaration_of(existing, function_type):
            raise CompileError(f"@{name} clashes with the C library function '{name}'", existing)
        return
    declaration = llvm.FuncOp(name, function_type, linkage=llvm.LinkageAttr("external"))
    rewriter.insert(declaration, InsertPoint.at_end(module.body.block))
    add_symbol(module, declaration)


def _is_declaration_of(op: Operation, function_type: llvm.LLVMFunctionType) -> bool:
    return isinstance(op, llvm.FuncOp) and not op.body.blocks and op.function_type == function_type


def call_function(
    rewriter: PatternRewriter,
    anchor: Operation,
    name: str,
    args: Sequence[SSAValue],
    output: Attribute | None = None,
) -> llvm.CallOp:
    """`llvm.call @name(args)`, declaring `name` in the module if needed (not inserted)."""
    declare_function(rewriter, anchor, name, [arg.type for arg in args], output)
    return call(name, args, output)
