"""The compute blocks of a `loop.func` kernel, in TIR's sense, as read-only data.

A compute block is one `memref.store` together with the `loop.for` ops around it and the
`memref.load`s its stored value is computed from. The enclosing loops whose induction variable
does not appear in the store's subscripts are the block's reduction loops.

Every access is recorded with its subscripts as `IndexExpr`s, with the subscripts of unit
(size-1) dimensions that are indexed by the constant 0 left out: the kernel conventions index a
broadcast or keepdims-reduced axis that way, in loads and stores alike.

```
loop.for %i {                                    block 0: init store (no loads)
  memref.store %zero, %acc[%i]                   │
  loop.for %k {                                  block 1: spatial loop %i, reduction loop %k
    %old = memref.load %acc[%i]                  │  loads: %acc[%i] (its accumulator), %x[%i, %k]
    %x   = memref.load %x[%i, %k]                │
    memref.store (%old + %x), %acc[%i]           ┘
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from fusion_compiler.dialects.loop import AllocOp, ForOp, FuncOp
from fusion_compiler.dialects.loop.queries import KERNEL_OPS as KERNEL_OPS
from fusion_compiler.passes.analysis.index_expr import IndexExpr, IndexExprBuilder
from fusion_compiler.passes.analysis.ir_walk import region_ops


@dataclass(frozen=True)
class Access:
    """One load or store: its buffer and its subscripts (unit dims indexed by 0 left out)."""

    op: memref.LoadOp | memref.StoreOp
    buffer: SSAValue
    subscripts: tuple[IndexExpr, ...]

    @property
    def understood(self) -> bool:
        return all(subscript.understood for subscript in self.subscripts)

    @property
    def loop_vars(self) -> frozenset[SSAValue]:
        return frozenset().union(*(subscript.loop_vars for subscript in self.subscripts))

    def same_element(self, other: Access) -> bool:
        """Whether both access the same element of the same buffer in every iteration."""
        return self.buffer is other.buffer and self.subscripts == other.subscripts


@dataclass(frozen=True)
class ComputeBlock:
    """A store, the loops around it (outermost first) and the loads its value reads."""

    store: Access
    loops: tuple[ForOp, ...]
    loads: tuple[Access, ...]
    """The loads the stored value is computed from, in program order."""
    reduction_vars: tuple[SSAValue, ...]
    """Induction variables of the enclosing loops that the store's subscripts do not use."""
    writes_argument: bool
    """Whether the store writes a kernel argument (an output block) rather than a local buffer."""
    problem: str | None
    """Why the block cannot be classified, if it cannot."""

    @property
    def has_reduction(self) -> bool:
        return bool(self.reduction_vars)

    @property
    def is_init(self) -> bool:
        """A store of a value computed from no load (a candidate reduction init)."""
        return not self.loads

    def is_accumulator(self, load: Access) -> bool:
        """Whether `load` reads the element this block stores (a reduction update's operand)."""
        return load.same_element(self.store)


def unsupported_op(func: FuncOp) -> Operation | None:
    """The first op in the kernel body that is not a loop, buffer, arith or math op."""
    for op in region_ops(func.body):
        if type(op) not in KERNEL_OPS:
            return op
    return None


def compute_blocks(func: FuncOp) -> tuple[ComputeBlock, ...]:
    """The kernel's compute blocks, one per `memref.store`, in program order."""
    builder = IndexExprBuilder()
    order = {op: position for position, op in enumerate(region_ops(func.body))}
    return tuple(
        _compute_block(func, store, builder, order)
        for store in region_ops(func.body)
        if isinstance(store, memref.StoreOp)
    )


def buffer_label(func: FuncOp, buffer: SSAValue) -> str:
    """`argument #k` or `local buffer #k` (for diagnostics and debug output)."""
    if isinstance(buffer, BlockArgument) and buffer.owner is func.body.block:
        return f"argument #{buffer.index}"
    allocs = [op for op in region_ops(func.body) if isinstance(op, AllocOp)]
    for position, alloc in enumerate(allocs):
        if alloc.result is buffer:
            return f"local buffer #{position}"
    return "an unknown buffer"


def _compute_block(
    func: FuncOp,
    store: memref.StoreOp,
    builder: IndexExprBuilder,
    order: dict[Operation, int],
) -> ComputeBlock:
    loops, nested_in_loops = _enclosing_loops(func, store)
    store_access = _access(store, builder)
    load_ops = sorted(_loads_feeding(store.value), key=lambda load: order.get(load, -1))
    loads = tuple(_access(load, builder) for load in load_ops)
    store_vars = store_access.loop_vars
    reduction_vars = tuple(
        loop.induction_var for loop in loops if loop.induction_var not in store_vars
    )
    problem = _problem(func, nested_in_loops, store_access, loads)
    return ComputeBlock(
        store=store_access,
        loops=loops,
        loads=loads,
        reduction_vars=reduction_vars,
        writes_argument=_is_argument(func, store_access.buffer),
        problem=problem,
    )


def _problem(
    func: FuncOp, nested_in_loops: bool, store: Access, loads: tuple[Access, ...]
) -> str | None:
    if not nested_in_loops:
        return "the store is nested in something other than loop.for"
    for access in (store, *loads):
        what = "store" if access is store else "load"
        if not _is_kernel_buffer(func, access.buffer):
            return f"a {what} accesses a buffer that is neither an argument nor a loop.alloc"
        if not access.understood:
            return f"a {what} subscript is not an index expression over loop variables"
    return None


def _enclosing_loops(func: FuncOp, op: Operation) -> tuple[tuple[ForOp, ...], bool]:
    """The `loop.for` ops around `op`, outermost first, and whether only loops lie between."""
    loops: list[ForOp] = []
    parent = op.parent_op()
    while parent is not None and parent is not func:
        if not isinstance(parent, ForOp):
            return tuple(reversed(loops)), False
        loops.append(parent)
        parent = parent.parent_op()
    return tuple(reversed(loops)), parent is func


def _loads_feeding(value: SSAValue) -> list[memref.LoadOp]:
    """The loads `value` is computed from, through any chain of scalar ops (unordered)."""
    loads: list[memref.LoadOp] = []
    seen: set[Operation] = set()
    stack = [value]
    while stack:
        current = stack.pop()
        if not isinstance(current, OpResult) or current.op in seen:
            continue
        op = current.op
        seen.add(op)
        if isinstance(op, memref.LoadOp):
            loads.append(op)
        else:
            stack.extend(op.operands)
    return loads


def _access(op: memref.LoadOp | memref.StoreOp, builder: IndexExprBuilder) -> Access:
    subscripts = builder.subscripts(tuple(op.indices))
    buffer_type = op.memref.type
    shape = buffer_type.get_shape() if isinstance(buffer_type, MemRefType) else ()
    if len(shape) != len(subscripts):
        unknown = tuple(IndexExpr.unknown(index) for index in op.indices)
        return Access(op, op.memref, unknown)
    kept = tuple(
        subscript
        for size, subscript in zip(shape, subscripts, strict=True)
        if not (size == 1 and subscript.is_constant(0))
    )
    return Access(op, op.memref, kept)


def _is_argument(func: FuncOp, buffer: SSAValue) -> bool:
    return isinstance(buffer, BlockArgument) and buffer.owner is func.body.block


def _is_kernel_buffer(func: FuncOp, buffer: SSAValue) -> bool:
    return _is_argument(func, buffer) or isinstance(buffer.owner, AllocOp)
