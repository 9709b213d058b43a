"""`prepack-weights`: a panel that a kernel packs from a constant at every launch is packed
once, when the model is loaded, by a packing kernel of its own.

schedule-contractions vectorises a contraction along its output channels or columns and
packs the operand read along them (a convolution's weights, a matmul's `B`) into contiguous
panels, at the start of every launch (`contraction_pack_schedule.py`). For a model's weights
that is a strided gather of every weight per inference: resnet50 reads and writes its 100 MB
of weights once more per run, and where a layer has few output pixels (13 x 13, 7 x 7, or the
single pixel of a classifier) the packing costs as much as the contraction itself.

When every launch of the kernel passes a `graph.constant` as the packed operand, the nest
that fills the panel moves into a kernel of its own, `@prepack_<shape>`, that writes the
panels of every iteration of the loops they depend on (the column tiles) into one buffer of
shape `[iterations..., panel shape]`. The graph-level function calls it on the constant and
passes its result to the kernel, which reads that buffer instead of packing (the operand the
kernel no longer reads is dropped from it):

```
loop.func @k(%x, %w) outs(%y) {                 loop.func @k(%x, %wp) outs(%y) {
  loop.for %jt = 0 to 64 step 32 {                loop.for %jt = 0 to 64 step 32 {
    %p = loop.alloc {fusion.private}                %t = arith.divui %jt, 32
    loop.for %c { loop.for %jj {          ==>       ... %wp[%t, %c, %jj] ...
      %p[%c, %jj] = %w[%jt + %jj, %c] } }         }
    ... %p[%c, %jj] ...                           loop.func @prepack_64xK(%w) outs(%wp) {
  }                                                 loop.for %t = 0 to 2 { loop.for %c {
                                                      loop.for %jj {
%y = graph.call_loop @k(%x, %w)                         %wp[%t, %c, %jj] = %w[%t * 32 + %jj, %c]
                                                    }}}
                                                  %wp = graph.call_loop @prepack_64xK(%w)
                                                  %y = graph.call_loop @k(%x, %wp)
```

lower-graph runs a call whose operands are all constants once, when the model is loaded
(`lowering/lower_graph.py`): the packing leaves the inference path, as onnxruntime prepacks
its weights when a session is created. Identical packing kernels are made once.

Conditions (anything else is left as it is): the buffer is a private `loop.alloc` of a
register-tiled kernel; one loop nest (the fill) holds every store into it and no read of
it, and every read comes after the fill in its block; the fill reads only kernel inputs that
every `graph.call_loop` of the kernel passes a `graph.constant` for, computes only indices and
selects (no arithmetic on the values it copies), and its other operands are constants,
induction variables of constant-bound loops around it, or index arithmetic on those; the
prepacked buffer holds at most `MAX_GROWTH` times the elements of the operands it is packed
from. A kernel nobody calls (a kernel-level test) is not changed.

Results: the packed buffer holds, for every iteration of the loops around the fill, the
values the panel held in that iteration (the same loads, copied): the kernel computes the
same bits.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.printer import Printer

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.loop import (
    REGISTER_TILED_ATTR,
    AllocOp,
    ForOp,
    FuncOp,
    LoopKind,
    YieldOp,
)
from fusion_compiler.dialects.loop.attributes import PRIVATE_BUFFER_ATTR, ROLLED_LOOP_ATTR
from fusion_compiler.passes.analysis.ir_walk import walk_ops
from fusion_compiler.passes.analysis.launches import constant_inputs, kernel_launches
from fusion_compiler.passes.analysis.loop_access import enclosing_loops, loop_range, trip_count
from fusion_compiler.passes.schedule.contraction_emit import Emitter
from fusion_compiler.passes.schedule.loop_transforms import index_constant

MAX_GROWTH = 2
"""Most elements of a prepacked buffer per element of the operands it is packed from (the
padding of a remainder tile to whole vectors; never a copy per iteration of a loop the panel
does not depend on, which the dependence analysis leaves out anyway)."""


@dataclass
class _Fill:
    """The nest that fills one panel buffer, and what it needs from around it."""

    alloc: AllocOp
    root: ForOp
    loops: list[ForOp]
    """The constant-bound loops around the fill whose induction variables it uses, outermost
    first: the leading dimensions of the prepacked buffer."""
    hoisted: list[Operation]
    """Index arithmetic outside the fill that it uses, in program order."""
    sources: list[BlockArgument]
    """The kernel inputs the fill reads."""

    @property
    def packed_type(self) -> MemRefType:
        """The prepacked buffer: the panel for every iteration of `loops`."""
        panel = _memref(self.alloc.result)
        return MemRefType(panel.element_type, [*map(_trips, self.loops), *panel.get_shape()])


def _memref(value: SSAValue) -> MemRefType:
    assert isinstance(value.type, MemRefType)
    return value.type


def _trips(loop: ForOp) -> int:
    count = trip_count(loop)
    assert count is not None  # the fill's loops have constant bounds
    return count


def _is_index_like(value: SSAValue) -> bool:
    return isinstance(value.type, IndexType | IntegerType)


def _copies_only(op: Operation) -> bool:
    """Ops a fill may hold: loops, index and integer arithmetic, constants and selects
    (values are copied, never computed)."""
    if isinstance(op, ForOp | YieldOp | memref.LoadOp | memref.StoreOp):
        return True
    if op.dialect_name() != "arith" or op.regions:
        return False
    if isinstance(op, arith.ConstantOp | arith.SelectOp):
        return True
    return all(_is_index_like(result) for result in op.results)


def _accesses(alloc: AllocOp) -> tuple[list[memref.StoreOp], list[memref.LoadOp]] | None:
    """The stores into `alloc` and its reads; None if it has any other use."""
    stores, loads = [], []
    for use in alloc.result.uses:
        user = use.operation
        if isinstance(user, memref.StoreOp) and user.memref is alloc.result and use.index == 1:
            stores.append(user)
        elif isinstance(user, memref.LoadOp) and user.memref is alloc.result:
            loads.append(user)
        else:
            return None
    return (stores, loads) if stores and loads else None


def _fill_root(alloc: AllocOp) -> ForOp | None:
    """The outermost loop holding every store into `alloc` and none of its reads, if every
    read comes after it in its block."""
    accesses = _accesses(alloc)
    if accesses is None:
        return None
    stores, loads = accesses
    root = None
    for candidate in enclosing_loops(stores[0]):
        if any(candidate.is_ancestor(load) for load in loads):
            break
        if all(candidate.is_ancestor(store) for store in stores):
            root = candidate
    block = root.parent_block() if root is not None else None
    if root is None or block is None:
        return None
    order = {op: index for index, op in enumerate(block.ops)}
    holders = [block.find_ancestor_op_in_block(load) for load in loads]
    if any(holder is None or order[holder] <= order[root] for holder in holders):
        return None
    return root


class _FreeValues:
    """What a fill uses from outside itself, checked against the conditions."""

    def __init__(self, kernel: FuncOp, root: ForOp, constant_inputs: set[int]):
        self.kernel = kernel
        self.root = root
        self.constant_inputs = constant_inputs
        self.enclosing = enclosing_loops(root)
        self.used_loops: set[ForOp] = set()
        self.hoisted: list[Operation] = []
        self.sources: list[BlockArgument] = []

    def check(self, alloc: AllocOp) -> bool:
        for op in walk_ops(self.root):
            if not _copies_only(op):
                return False
            if isinstance(op, memref.LoadOp) and not self._source(op.memref):
                return False
            if isinstance(op, memref.StoreOp) and op.memref is not alloc.result:
                return False
            for index, operand in enumerate(op.operands):
                if isinstance(op, memref.LoadOp) and index == 0:
                    continue
                if isinstance(op, memref.StoreOp) and index == 1:
                    continue
                if not self._value(operand):
                    return False
        return True

    def _source(self, buffer: SSAValue) -> bool:
        if not isinstance(buffer, BlockArgument) or buffer.block is not self.kernel.body.block:
            return False
        if buffer.index not in self.constant_inputs:
            return False
        if buffer not in self.sources:
            self.sources.append(buffer)
        return True

    def _value(self, value: SSAValue) -> bool:
        """Whether the fill may use `value` (recording what it needs)."""
        owner = value.owner
        if isinstance(owner, Operation) and self.root.is_ancestor(owner):
            return True
        if isinstance(value, BlockArgument):
            loop = value.block.parent_op()
            if isinstance(loop, ForOp) and self.root.is_ancestor(loop):
                return True
            if isinstance(loop, ForOp) and loop in self.enclosing:
                if loop_range(loop) is None:
                    return False
                self.used_loops.add(loop)
                return True
            return False
        assert isinstance(owner, Operation)
        if owner in self.hoisted:
            return True
        if owner.dialect_name() != "arith" or owner.regions or not _copies_only(owner):
            return False
        if not all(self._value(operand) for operand in owner.operands):
            return False
        self.hoisted.append(owner)
        return True


def _fill(kernel: FuncOp, alloc: AllocOp, constant_inputs: set[int]) -> _Fill | None:
    root = _fill_root(alloc)
    if root is None:
        return None
    free = _FreeValues(kernel, root, constant_inputs)
    if not free.check(alloc) or not free.sources:
        return None
    loops = [loop for loop in reversed(free.enclosing) if loop in free.used_loops]
    fill = _Fill(alloc, root, loops, free.hoisted, free.sources)
    source = sum(_memref(arg).element_count() for arg in fill.sources)
    return fill if fill.packed_type.element_count() <= MAX_GROWTH * source else None


def _panels(kernel: FuncOp) -> list[AllocOp]:
    return [
        op
        for op in walk_ops(kernel)
        if isinstance(op, AllocOp) and PRIVATE_BUFFER_ATTR in op.attributes
    ]


def _prepack_kernel(kernel: FuncOp, fills: list[_Fill]) -> tuple[FuncOp, list[BlockArgument]]:
    """The packing kernel of `fills` (inputs: the sources, outputs: one buffer per fill)."""
    sources: list[BlockArgument] = []
    for fill in fills:
        sources += [arg for arg in fill.sources if arg not in sources]
    sources.sort(key=lambda arg: arg.index)
    outputs = [fill.packed_type for fill in fills]
    prepack = FuncOp("prepack", [a.type for a in sources], outputs)  # named by `_unique`
    for arg, source in zip(prepack.input_args, sources, strict=True):
        arg.name_hint = source.name_hint
    for fill, packed in zip(fills, prepack.output_args, strict=True):
        packed.name_hint = (fill.alloc.result.name_hint or "panel") + "_packed"
        _emit_fill(prepack, fill, dict(zip(sources, prepack.input_args, strict=True)), packed)
    return prepack, sources


def _emit_fill(prepack: FuncOp, fill: _Fill, mapping: dict, packed: SSAValue) -> None:
    terminator = prepack.body.block.last_op
    assert terminator is not None
    emitter = Emitter(prepack.body.block, terminator)
    anchor = terminator
    prefix = []
    nest: list[Operation] = []
    for loop in fill.loops:
        lb, _, step = loop_range(loop)  # type: ignore[misc]
        new = ForOp(
            index_constant(0, anchor),
            index_constant(_trips(loop), anchor),
            index_constant(1, anchor),
        )
        new.induction_var.name_hint = "t"
        emitter.emit(new)
        nest.append(new)
        emitter = Emitter.into(new)
        value: SSAValue = new.induction_var
        if step != 1:
            value = emitter.emit(arith.MuliOp(value, index_constant(step, anchor))).results[0]
        if lb:
            value = emitter.add(value, index_constant(lb, anchor))
        mapping[loop.induction_var] = value
        prefix.append(new.induction_var)
    for op in fill.hoisted:
        emitter.emit(op.clone(value_mapper=mapping))
    copy = emitter.emit(fill.root.clone(value_mapper=mapping))
    _keep_rolled(nest[0] if nest else copy)
    for store in [op for op in walk_ops(copy) if isinstance(op, memref.StoreOp)]:
        if store.memref is fill.alloc.result:
            new_store = memref.StoreOp.get(store.value, packed, [*prefix, *store.indices])
            store.parent_block().insert_op_before(new_store, store)  # type: ignore[union-attr]
            store.detach()
            store.erase()


def _keep_rolled(nest: Operation) -> None:
    """Marks the loops of a packing nest that are not vector loops for LLVM not to unroll
    (`ROLLED_LOOP_ATTR`; vector loops get hints of their own: `lowering/vector_loops.py`).
    The nest runs once, when the model is loaded: unrolled, a 5 x 5 window's loops made
    LLVM copy the vectorised gather inside them 25 times, for compile time and nothing
    else."""
    for op in walk_ops(nest):
        if isinstance(op, ForOp) and op.loop_kind != LoopKind.VECTORIZED:
            op.attributes[ROLLED_LOOP_ATTR] = UnitAttr()


def _read_packed(fill: _Fill, packed: SSAValue) -> None:
    """The kernel reads `packed` where it read the panel; the fill and the panel go."""
    root = fill.root
    block = root.parent_block()
    assert block is not None
    prefix = []
    for loop in fill.loops:
        lb, _, step = loop_range(loop)  # type: ignore[misc]
        value: SSAValue = loop.induction_var
        if lb:
            sub = arith.SubiOp(value, index_constant(lb, root))
            block.insert_op_before(sub, root)
            value = sub.result
        if step != 1:
            div = arith.DivUIOp(value, index_constant(step, root))
            block.insert_op_before(div, root)
            value = div.result
        prefix.append(value)
    root.detach()
    root.erase()
    for use in list(fill.alloc.result.uses):
        load = use.operation
        assert isinstance(load, memref.LoadOp)
        new = memref.LoadOp.get(packed, [*prefix, *load.indices])
        load.parent_block().insert_op_before(new, load)  # type: ignore[union-attr]
        load.res.replace_all_uses_with(new.res)
        load.detach()
        load.erase()
    fill.alloc.detach()
    fill.alloc.erase()


def _rewrite_kernel(kernel: FuncOp, fills: list[_Fill]) -> list[int]:
    """The kernel reads the prepacked buffers (new inputs, after the others); returns the
    indices of the inputs it no longer reads (dropped)."""
    block = kernel.body.block
    count = kernel.num_inputs
    packed = []
    for offset, fill in enumerate(fills):
        arg = block.insert_arg(fill.packed_type, count + offset)
        arg.name_hint = (fill.alloc.result.name_hint or "panel") + "_packed"
        packed.append(arg)
    for fill, arg in zip(fills, packed, strict=True):
        _read_packed(fill, arg)
    unread = [i for i, arg in enumerate(block.args[:count]) if not arg.uses]
    for index in reversed(unread):
        block.erase_arg(block.args[index])
    inputs = [arg.type for arg in block.args[: count + len(fills) - len(unread)]]
    outputs = list(kernel.function_type.outputs.data)
    kernel.function_type = FunctionType.from_lists(inputs, outputs)
    return unread


def _kernel_text(kernel: FuncOp) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_op(kernel)
    return stream.getvalue()


@dataclass(frozen=True)
class PrepackWeightsPass(ModulePass):
    """Move the packing of constant panels out of the kernels (module docstring).

    Pre-conditions: schedule-contractions has run; the kernels' launches are the
    `graph.call_loop`s of the module's graph-level functions. Post-conditions: every kernel
    computes the same values; each changed kernel takes the prepacked buffers after its other
    inputs, and each of its launches is preceded by a launch of its packing kernel on the
    constants; the IR verifies. Follow-up: lower-graph (load-time launches).
    """

    name = "prepack-weights"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        launches = kernel_launches(op)
        made: dict[str, FuncOp] = {}
        packs: dict[tuple, list[SSAValue]] = {}
        for kernel in [k for k in op.ops if isinstance(k, FuncOp)]:
            constants = constant_inputs(kernel, launches)
            if not constants or REGISTER_TILED_ATTR not in kernel.attributes:
                continue
            fills = [f for a in _panels(kernel) if (f := _fill(kernel, a, constants))]
            if not fills:
                continue
            prepack, sources = _prepack_kernel(kernel, fills)
            source_indices = [arg.index for arg in sources]
            unread = _rewrite_kernel(kernel, fills)
            prepack = _unique(op, kernel, prepack, made)
            for call in launches[kernel.sym_name.data]:
                _relaunch(call, prepack, source_indices, unread, packs)


def _unique(module: ModuleOp, kernel: FuncOp, prepack: FuncOp, made: dict[str, FuncOp]) -> FuncOp:
    """`prepack`, or the identical packing kernel made before (then `prepack` is dropped)."""
    text = _kernel_text(prepack)
    if text in made:
        prepack.erase()
        return made[text]
    base = _packing_name(prepack)
    taken = {o.sym_name.data for o in module.ops if isinstance(o, FuncOp)}
    name, suffix = base, 1
    while name in taken:
        name = f"{base}_{suffix}"
        suffix += 1
    prepack.sym_name = StringAttr(name)
    module.body.block.insert_op_after(prepack, kernel)
    made[text] = prepack
    return prepack


def _packing_name(prepack: FuncOp) -> str:
    """`prepack_` and the shape of what the kernel packs (its first input): a name of its own,
    not of the kernel it packs for, so that the packing of a weight keeps its name, and its
    content symbol (`native_units.name_by_content`), when the kernel's epilogue changes (an
    edited activation): the compile cache then has its unit and its packed weights
    (`load_memo`)."""
    shape = _memref(prepack.input_args[0]).get_shape() if prepack.input_args else ()
    return f"prepack_{'x'.join(str(d) for d in shape)}" if shape else "prepack"


def _relaunch(
    call: graph.CallLoopOp,
    prepack: FuncOp,
    sources: list[int],
    unread: list[int],
    packs: dict[tuple, list[SSAValue]],
) -> None:
    """`call` with the prepacked buffers instead of the inputs the kernel no longer reads;
    `packs` holds the packing launches made so far (one per packing kernel and constants:
    a constant operand is defined in the function's block, before every launch)."""
    block = call.parent_block()
    assert block is not None
    operands = [call.inputs[index] for index in sources]
    key = (prepack.sym_name.data, *operands)
    if key not in packs:
        packs[key] = packing_launch(block, call, prepack, operands)
    packed = packs[key]
    inputs = [v for index, v in enumerate(call.inputs) if index not in unread] + packed
    replace_launch(call, call.callee.string_value(), inputs)


def replace_launch(call: graph.CallLoopOp, callee: str, inputs: list[SSAValue]) -> None:
    """`call` replaced by a launch of `callee` on `inputs` with the same results (types, name
    hints, attributes, location, uses); also the schedule memo's replay of this pass
    (`lowering/schedule_memo.py`)."""
    block = call.parent_block()
    assert block is not None
    new = graph.CallLoopOp(callee, inputs, [r.type for r in call.outputs])
    new.attributes |= call.attributes
    new.location = call.location
    block.insert_op_before(new, call)
    for old, result in zip(call.outputs, new.outputs, strict=True):
        result.name_hint = old.name_hint
        old.replace_all_uses_with(result)
    call.detach()
    call.erase()


def packing_launch(block: Block, call, prepack: FuncOp, operands: list[SSAValue]) -> list[SSAValue]:
    """A launch of `prepack` on `operands`, inserted before `call` (also the schedule memo's
    replay of this pass)."""
    name = prepack.sym_name.data
    buffers = [_memref(arg) for arg in prepack.output_args]
    types = [TensorType(t.element_type, t.get_shape()) for t in buffers]
    launch = graph.CallLoopOp(name, operands, types)
    launch.location = call.location
    block.insert_op_before(launch, call)
    for result in launch.outputs:
        result.name_hint = (operands[0].name_hint or "w") + "_packed"
    return list(launch.outputs)
