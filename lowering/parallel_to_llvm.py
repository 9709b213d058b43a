"""`parallel` loops → outlined functions run by every thread of an OpenMP team.

The outermost `loop.for ... parallel` of a nest, when it has enough work, is moved into
internal functions and launched through libgomp, the OpenMP runtime that ships with gcc:

    kernel @k                                  @k_par0(%ctx: !llvm.ptr)     (the trampoline)
    ---------                                  ------------------------
    %ctx = alloca 2 x ptr       (entry block)  %a = load ctx[0]; %x = load ctx[1]
    store %a → ctx[0]                          call @k_par0_body(%a, %x)
    store %x → ctx[1]
    %n = load @__fusion_num_threads            @k_par0_body(%a: ptr noalias, %x: f32)
    GOMP_parallel(@k_par0, %ctx, %n, 0)        ----------------------------------------
                                               constants used by the loop, cloned
                                               %t = omp_get_thread_num()
                                               %T = omp_get_num_threads()
                                               [lo, hi) = chunk %t of %T of the range
                                               loop.for %i = %lo to %hi step %s {body}

- *Captures*: the values the loop uses but does not define. `arith.constant`s are cloned
  into the body function (so that LLVM still sees constant bounds, strides and trip counts);
  every other value gets one 8-byte slot of a context array on the caller's stack (allocated
  once, in the kernel's entry block): buffers as pointers, `index` values as `i64`, floats
  and integers as themselves. The context lives until `GOMP_parallel` returns, which is
  after every thread has finished. `GOMP_parallel` calls a `void (*)(void *)`, so the
  trampoline unpacks the slots into the arguments of the body function, whose buffers are
  `noalias` like the kernel's (they are the kernel's buffers): LLVM inlines the body into
  the trampoline, keeps the aliasing facts as scoped metadata, and vectorises the loop as
  in the serial build, without run-time alias checks.
- *Chunks*: a static schedule. The loop's `n` iterations are split into `T` contiguous
  chunks whose sizes differ by at most one: thread `t` runs iterations
  `[t*q + min(t, r), (t+1)*q + min(t+1, r))` with `q, r = divmod(n, T)`. Each iteration
  runs exactly once, on one thread, with the same body as the serial build, so the results
  are bit-identical: `parallel` loops (marked by `schedule-kernels`, `loop_kinds`) write
  disjoint slices of their buffers, and no reduction is ever split across threads.
- *Thread count*: `GOMP_parallel`'s `num_threads` is read from the module's global
  `@__fusion_num_threads` (i32, 0 = OpenMP's default: `OMP_NUM_THREADS` or every core), which
  `fusion_compiler.lowering.jit.JitModule.set_num_threads` writes.
- *Profitability*: forking and joining a team costs a few microseconds, so a loop is only
  outlined when one launch runs at least `threshold` innermost iterations
  (`parallel_work`, default `PARALLEL_THRESHOLD`); smaller or non-constant loops stay serial.
- Parallel loops nested in an outlined one, or in a parallel loop kept serial, run serially;
  so do parallel loops whose body allocates a local buffer (`loop.alloc`).

`GOMP_parallel`, `omp_get_thread_num` and `omp_get_num_threads` are declared as external
functions; `fusion_compiler.lowering.jit` loads libgomp into the process, or, when it is missing, links serial
stand-ins (one thread) into the module, so the same IR runs either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnrealizedConversionCastOp,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.loop.attributes import PRIVATE_BUFFER_ATTR, WIDE_VECTORS_ATTR
from fusion_compiler.dialects.loop.op_builders import index_constant
from fusion_compiler.dialects.loop.queries import loop_range, parallel_work, trip_count
from fusion_compiler.lowering.llvm_builders import (
    add_symbol,
    call,
    call_function,
    constant,
    conversion_cast,
    enclosing_module,
    find_symbol,
    load,
    offset_pointer,
    store,
)
from fusion_compiler.lowering.llvm_types import POINTER, llvm_type, storage_bytes
from fusion_compiler.lowering.loop_to_llvm import BUFFER_ARG_ATTRS
from fusion_compiler.lowering.threading_runtime import (
    GOMP_PARALLEL,
    NUM_THREADS,
    NUM_THREADS_GLOBAL,
    THREAD_NUM,
)
from fusion_compiler.passes.analysis.ir_walk import region_ops, walk_ops

PARALLEL_THRESHOLD = 2**14
"""The fewest innermost iterations one launch must run to be worth a team of threads.
`bench/parallel_threshold.py` on an idle 2-core machine: a launch costs ~1.2 us; a one-add
body breaks even at ~2^15 elements (2^14: 5.7 us serial, 6.4 us on 2 threads), an exp body at
~2^13 (2^14: 11.1 vs 8.9 us, 2^16: 35 vs 21 us). At 2^14 compute-bound loops gain and
memory-bound ones lose under a microsecond; with more cores, the gains grow faster than the
launch cost."""

INTERNAL = llvm.LinkageAttr("internal")

SLOT_BYTES = 8
"""Every captured value takes one slot: a pointer, an `i64`, or a smaller scalar."""

# ---------------------------------------------------------------------------------------------
# Predicates and estimates (never mutate IR)
# ---------------------------------------------------------------------------------------------


def _in_parallel_loop(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, loop.ForOp) and parent.loop_kind == loop.LoopKind.PARALLEL:
            return True
        parent = parent.parent_op()
    return False


def _shared_buffer(op: Operation) -> bool:
    """Whether `op` allocates a local buffer whose values may flow between iterations (one
    not marked `PRIVATE_BUFFER_ATTR`)."""
    return isinstance(op, loop.AllocOp) and PRIVATE_BUFFER_ATTR not in op.attributes


def should_outline(loop_op: loop.ForOp, threshold: int) -> bool:
    """Whether `loop_op` is the outermost parallel loop of its nest, with no local buffer in
    its body but iteration-private ones (each thread gets its own) and at least `threshold`
    innermost iterations."""
    if loop_op.loop_kind != loop.LoopKind.PARALLEL or _in_parallel_loop(loop_op):
        return False
    if any(_shared_buffer(op) for op in walk_ops(loop_op)):
        return False
    work = parallel_work(loop_op)
    return work is not None and work >= threshold


def captured_values(loop_op: loop.ForOp) -> list[SSAValue]:
    """The values `loop_op` (bounds included) uses but does not define, in order of use.

    One walk: in pre-order every value is defined (by an op visited before, or as an argument
    of a block whose op was visited before) before it is used."""
    captured: dict[SSAValue, None] = {}
    defined: set[SSAValue] = set()
    for op in walk_ops(loop_op):
        for operand in op.operands:
            if operand not in defined:
                captured.setdefault(operand)
        defined.update(op.results)
        for region in op.regions:
            for block in region.blocks:
                defined.update(block.args)
    return list(captured)


def _is_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, arith.ConstantOp)


# ---------------------------------------------------------------------------------------------
# The outlined functions
# ---------------------------------------------------------------------------------------------


def _slot(context: SSAValue, index: int, value_type: Attribute) -> llvm.GEPOp:
    """The address of slot `index` as a pointer to `value_type` (lowered): a one-index GEP
    over that type, since xDSL 0.75's translation types a GEP's result as a pointer to its
    source element type, so a store through a struct-field GEP would not type-check."""
    lowered = llvm_type(value_type)
    size = SLOT_BYTES if isinstance(lowered, llvm.LLVMPointerType) else storage_bytes(lowered)
    return offset_pointer(context, index * SLOT_BYTES // size, lowered)


def _trampoline(name: str, slots: Sequence[SSAValue]) -> llvm.FuncOp:
    """`void name(void *context)`, what `GOMP_parallel` calls: loads the slots and passes
    them to `name_body`."""
    entry = Block(arg_types=[POINTER])
    ops: list[Operation] = []
    for index, value in enumerate(slots):
        address = _slot(entry.args[0], index, value.type)
        ops += [address, load(address.result, llvm_type(value.type), None)]
    loaded = [op.results[0] for op in ops if isinstance(op, llvm.LoadOp)]
    entry.add_ops([*ops, call(f"{name}_body", loaded), llvm.ReturnOp()])
    function_type = llvm.LLVMFunctionType([POINTER])
    return llvm.FuncOp(name, function_type, INTERNAL, body=Region(entry))


def thread_chunk(
    thread: SSAValue, threads: SSAValue, loop_op: loop.ForOp, lb: SSAValue, step: SSAValue
) -> tuple[list[Operation], SSAValue, SSAValue]:
    """The bounds `[lo, hi)` of `thread`'s contiguous share of the iterations of `loop_op`,
    whose bounds are constants (`should_outline`), as `index` arithmetic on its `lb` and
    `step` (see the module docstring): the trip count is a constant, and a zero `lb` or a unit
    `step` takes no arithmetic. (LLVM would fold it all the same, but each op made here is one
    more to build, lower and translate.)"""
    ops: list[Operation] = []

    def emitted(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0]

    bounds, trips = loop_range(loop_op), trip_count(loop_op)
    assert bounds is not None and trips is not None
    first, _, stride = bounds
    count = emitted(index_constant(trips))
    quotient = emitted(arith.DivSIOp(count, threads))
    remainder = emitted(arith.RemSIOp(count, threads))
    next_thread = emitted(arith.AddiOp(thread, emitted(index_constant(1))))
    limits: list[SSAValue] = []
    for which in (thread, next_thread):  # thread * quotient + min(thread, remainder)
        scaled = emitted(arith.MuliOp(which, quotient))
        start = emitted(arith.AddiOp(scaled, emitted(arith.MinSIOp(which, remainder))))
        if stride != 1:
            start = emitted(arith.MuliOp(start, step))
        if first != 0:
            start = emitted(arith.AddiOp(lb, start))
        limits.append(start)
    return ops, limits[0], limits[1]


def _thread_index(rewriter: PatternRewriter, anchor: Operation, name: str) -> list[Operation]:
    call = call_function(rewriter, anchor, name, [], i32)
    assert call.returned is not None
    return [call, arith.IndexCastOp(call.returned, IndexType())]


def _is_distinct_buffer(value: SSAValue) -> bool:
    """Whether `value` is a local buffer or a kernel's (`noalias`) buffer argument."""
    owner = value.owner
    if isinstance(owner, loop.AllocOp):
        return True
    return (
        isinstance(owner, UnrealizedConversionCastOp)
        and isinstance(owner.inputs[0], BlockArgument)
        and isinstance(owner.inputs[0].owner.parent_op(), llvm.FuncOp)
    )


def _argument_attributes(slots: Sequence[SSAValue]) -> ArrayAttr[DictionaryAttr]:
    """`noalias` buffer arguments when every captured buffer is a distinct one (as they are
    in the kernel), so that LLVM vectorises without run-time alias checks."""
    buffers = [value for value in slots if isinstance(value.type, MemRefType)]
    distinct = all(_is_distinct_buffer(value) for value in buffers)
    return ArrayAttr(
        BUFFER_ARG_ATTRS if distinct and value in buffers else DictionaryAttr({}) for value in slots
    )


def _name_hint(value: SSAValue) -> str | None:
    """The name of a captured value, or of the kernel argument a buffer is cast from."""
    owner = value.owner
    if isinstance(owner, UnrealizedConversionCastOp):
        return owner.inputs[0].name_hint
    return value.name_hint


def _buffer_arguments(
    entry: Block, slots: Sequence[SSAValue]
) -> tuple[list[Operation], dict[SSAValue, SSAValue]]:
    """What stands for each captured value in the body function: its argument, through a
    cast back to its memref type for a buffer (`index` values stay `i64` arguments)."""
    casts: list[Operation] = []
    mapping: dict[SSAValue, SSAValue] = {}
    for arg, value in zip(entry.args, slots, strict=True):
        arg.name_hint = _name_hint(value)
        mapping[value] = arg
        if isinstance(value.type, MemRefType):
            cast = conversion_cast(arg, value.type)
            casts.append(cast)
            mapping[value] = cast.results[0]
    return casts, mapping


def _body_function(
    rewriter: PatternRewriter,
    loop_op: loop.ForOp,
    name: str,
    constants: Sequence[SSAValue],
    slots: Sequence[SSAValue],
) -> llvm.FuncOp:
    """`name_body(captured values...)`: computes the thread's chunk and runs the loop on it."""
    arg_types = [llvm_type(value.type) for value in slots]
    entry = Block(arg_types=arg_types)
    clones = [value.owner.clone() for value in constants]  # type: ignore[union-attr]
    casts, mapping = _buffer_arguments(entry, slots)
    mapping |= dict(zip(constants, (c.results[0] for c in clones), strict=True))
    thread = _thread_index(rewriter, loop_op, THREAD_NUM)
    threads = _thread_index(rewriter, loop_op, NUM_THREADS)
    lb, step = mapping[loop_op.lb], mapping[loop_op.step]
    chunk, lo, hi = thread_chunk(thread[-1].results[0], threads[-1].results[0], loop_op, lb, step)
    serial = loop.ForOp(lo, hi, step, rewriter.move_region_contents_to_new_regions(loop_op.body))
    # (one walk, not one scan of every use per captured value)
    for inner in region_ops(serial.body):
        if isinstance(inner, loop.ForOp) and inner.loop_kind == loop.LoopKind.PARALLEL:
            inner.kind = loop.LoopKindAttr(loop.LoopKind.SERIAL)
        operands = inner.operands
        for index, operand in enumerate(operands):
            replacement = mapping.get(operand)
            if replacement is not None:
                operands[index] = replacement
    entry.add_ops([*clones, *casts, *thread, *threads, *chunk, serial, llvm.ReturnOp()])
    return llvm.FuncOp(
        f"{name}_body",
        llvm.LLVMFunctionType(arg_types),
        INTERNAL,
        body=Region(entry),
        other_props={"arg_attrs": _argument_attributes(slots)},
    )


# ---------------------------------------------------------------------------------------------
# The launch in the caller
# ---------------------------------------------------------------------------------------------


def _kernel_of(op: Operation) -> llvm.FuncOp:
    parent = op.parent_op()
    while not isinstance(parent, llvm.FuncOp):
        assert parent is not None, "a parallel loop outside a lowered kernel"
        parent = parent.parent_op()
    return parent


def outlined_name(module: ModuleOp, kernel: llvm.FuncOp) -> tuple[str, Operation]:
    """`<kernel>_par<k>` for the first free `k`, and the op to insert the new functions after
    (the kernel, or the previous outlined body), so names and order are deterministic."""
    previous: Operation = kernel
    index = 0
    while True:
        name = f"{kernel.sym_name.data}_par{index}"
        if find_symbol(module, name) is None:
            return name, previous
        previous = find_symbol(module, f"{name}_body") or previous
        index += 1


def _num_threads(rewriter: PatternRewriter, module: ModuleOp) -> list[Operation]:
    """A load of `@__fusion_num_threads`, declaring the global (0) on first use."""
    if find_symbol(module, NUM_THREADS_GLOBAL) is None:
        variable = llvm.GlobalOp(i32, NUM_THREADS_GLOBAL, "external", value=IntegerAttr(0, i32))
        rewriter.insert(variable, InsertPoint.at_start(module.body.block))
        add_symbol(module, variable)
    address = llvm.AddressOfOp(NUM_THREADS_GLOBAL, POINTER)
    return [address, load(address.result, i32, 4)]


def _context(rewriter: PatternRewriter, kernel: llvm.FuncOp, slots: Sequence[SSAValue]) -> SSAValue:
    """The context: one 8-byte slot per captured value, on the stack, allocated in the
    kernel's entry block (once per launch site, even when the launch is in a loop)."""
    entry = kernel.body.blocks.first
    assert entry is not None
    count = constant(max(1, len(slots)), i64)
    # Pointer slots: llvmlite types the alloca as an opaque pointer, which every slot's GEP
    # may then use at its own type (an `i64` alloca would be typed `i64*`).
    alloca = llvm.AllocaOp(count, POINTER, alignment=SLOT_BYTES)
    rewriter.insert([count, alloca], InsertPoint.at_start(entry))
    return alloca.res


def _pack(context: SSAValue, slots: Sequence[SSAValue]) -> list[Operation]:
    ops: list[Operation] = []
    for index, value in enumerate(slots):
        stored = value
        if isinstance(value.type, MemRefType):
            cast = conversion_cast(value, POINTER)
            ops.append(cast)
            stored = cast.results[0]
        address = _slot(context, index, value.type)
        ops += [address, store(stored, address.result, None)]
    return ops


def outline_parallel_loop(loop_op: loop.ForOp, rewriter: PatternRewriter) -> None:
    """Moves `loop_op` into new internal functions and replaces it by its launch."""
    kernel = _kernel_of(loop_op)
    module = enclosing_module(kernel)
    name, after = outlined_name(module, kernel)
    captured = captured_values(loop_op)
    constants = [value for value in captured if _is_constant(value)]
    slots = [value for value in captured if not _is_constant(value)]

    trampoline = _trampoline(name, slots)
    body = _body_function(rewriter, loop_op, name, constants, slots)
    if WIDE_VECTORS_ATTR in kernel.attributes:  # the tiles inside are sized for full vectors
        body.attributes[WIDE_VECTORS_ATTR] = kernel.attributes[WIDE_VECTORS_ATTR]
    rewriter.insert([trampoline, body], InsertPoint.after(after))
    add_symbol(module, trampoline)
    add_symbol(module, body)

    context = _context(rewriter, kernel, slots)
    function = llvm.AddressOfOp(name, POINTER)
    threads = _num_threads(rewriter, module)
    flags = constant(0, i32)
    launch = call_function(
        rewriter,
        kernel,
        GOMP_PARALLEL,
        [function.result, context, threads[-1].results[0], flags.result],
    )
    rewriter.replace(loop_op, [*_pack(context, slots), function, *threads, flags, launch], [])


@dataclass(frozen=True)
class LowerParallelForPattern(RewritePattern):
    """Outlines the outermost `parallel` loop of a nest and launches it on a thread team
    (see the module docstring); other loops are left to `LowerForPattern`."""

    threshold: int = PARALLEL_THRESHOLD

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.ForOp, rewriter: PatternRewriter, /) -> None:
        if should_outline(op, self.threshold):
            outline_parallel_loop(op, rewriter)
