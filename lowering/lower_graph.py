"""`lower-graph`: graph-level functions become native entry points over buffers.

After fuse-tir a graph-level function only calls kernels. This pass turns it into a
`loop.func` of the same name that runs those kernels on buffers:

    func.func @main(%x: tensor<..>) -> tensor<..>          loop.func @main(%x, %w) outs(%y) {
      %w = graph.constant dense<..>               ==>         %slot0 = loop.alloc : memref<Nxf32>
      %t = graph.call_loop @k1(%x, %w)                        %t = loop.view %slot0 : ... to ...
      %y = graph.call_loop @k2(%t)                            loop.call @k1(%x, %w, %t)
      func.return %y                                          loop.call @k2(%t, %y)
                                                            }

- Tensor arguments become input buffers, returned values output buffers.
- Every `graph.constant` becomes an input buffer after the function's own arguments, in order
  of appearance (`bound_constants` below lists them): the runtime binds the weights once, so
  they are never embedded in the LLVM IR. The entry records their number in the
  `loop.bound_constants` attribute.
- Intermediates live in the slots of a static memory plan (`memory_plan.py`): values whose
  lifetimes do not overlap share a slot.
- A returned value that no kernel writes into the output (an argument, a constant, or a value
  returned twice) is copied there by a generated copy kernel.
- With `profile=true` (a profiling build), every `loop.call` of an entry is marked for timing
  and the entry gets a counters global holding each launch's static FLOPs and bytes
  (`profiling.py`); without it, nothing of the profiler is emitted.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, TensorType, f32, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.dialects.graph import PRIMITIVE_ATTR, CallLoopOp, ConstantOp
from fusion_compiler.dialects.graph.preconditions import require_legalized
from fusion_compiler.dialects.loop.builder import KernelBuilder, tensor_buffer_type
from fusion_compiler.lowering.blas_backend import lower_external_calls
from fusion_compiler.lowering.memory_plan import Lifetime, plan_memory
from fusion_compiler.lowering.profiling import instrument_entry

BOUND_CONSTANTS_ATTR = "loop.bound_constants"
"""On a lowered entry: how many of its trailing inputs are bound constants."""


def bound_constants(function: func.FuncOp) -> list[ConstantOp]:
    """The constants of a graph-level function, in the order lower-graph turns them into
    trailing input buffers of the entry."""
    return [op for op in function.body.block.ops if isinstance(op, ConstantOp)]


def _element_type(value: SSAValue) -> Attribute:
    assert isinstance(value.type, TensorType)
    return value.type.element_type


def _element_count(value: SSAValue) -> int:
    assert isinstance(value.type, TensorType)
    return value.type.element_count()


@dataclass
class _EntryBuilder:
    """Builds the entry `loop.func` of one graph-level function."""

    function: func.FuncOp
    module: ModuleOp

    def build(self) -> loop.FuncOp:
        block = self.function.body.block
        ret = block.last_op
        assert isinstance(ret, func.ReturnOp)
        constants = bound_constants(self.function)
        calls = self._calls(block)
        inputs = [*block.args, *(c.result for c in constants)]
        entry = loop.FuncOp(
            self.function.sym_name.data,
            [tensor_buffer_type(v.type) for v in inputs],
            [tensor_buffer_type(v.type) for v in ret.arguments],
        )
        entry.attributes[BOUND_CONSTANTS_ATTR] = IntegerAttr(len(constants), i64)
        entry.location = self.function.location
        self.body = entry.body.block
        self.buffer_of: dict[SSAValue, SSAValue] = dict(zip(inputs, entry.input_args, strict=True))
        for value, arg in zip(inputs, entry.input_args, strict=True):
            arg.name_hint = value.name_hint
        copies = self._bind_outputs(ret, entry)
        self._plan_intermediates(calls, ret)
        for call in calls:
            operands = [self.buffer_of[v] for v in (*call.inputs, *call.outputs)]
            self._emit(loop.CallOp(call.callee, operands), call)
        for source, target in copies:
            self._emit_copy(source, target)
        return entry

    def _calls(self, block) -> list[CallLoopOp]:
        calls = []
        for op in block.ops:
            match op:
                case CallLoopOp():
                    calls.append(op)
                case ConstantOp() | func.ReturnOp():
                    pass
                case _:
                    raise CompileError(
                        f"cannot lower {op.name} in a graph-level function; run "
                        "legalize-ops and the fusion passes first (calls between graph-level "
                        "functions are not supported yet)",
                        op,
                    )
        return calls

    def _bind_outputs(self, ret: func.ReturnOp, entry: loop.FuncOp) -> list:
        """Output buffers of returned values; returns the (source, output) pairs to copy."""
        copies = []
        for index, (value, arg) in enumerate(zip(ret.arguments, entry.output_args, strict=True)):
            if value in self.buffer_of:
                arg.name_hint = f"out{index}"
                copies.append((value, arg))
            else:
                arg.name_hint = value.name_hint
                self.buffer_of[value] = arg
        return copies

    def _plan_intermediates(self, calls: list[CallLoopOp], ret: func.ReturnOp) -> None:
        """One memory plan per element type (a slot is a flat buffer of one element type;
        f32 first, then the others in order of first definition)."""
        values = [v for call in calls for v in call.outputs if v not in self.buffer_of]
        by_type: dict[Attribute, list[SSAValue]] = {f32: []}
        for value in values:
            by_type.setdefault(_element_type(value), []).append(value)
        step_of = {call: step for step, call in enumerate(calls)}
        for element_type, group in by_type.items():
            self._plan_group(element_type, group, step_of, len(calls))

    def _plan_group(
        self,
        element_type: Attribute,
        values: list[SSAValue],
        step_of: dict[Operation, int],
        end: int,
    ) -> None:
        lifetimes = []
        for value in values:
            defined = step_of[value.owner]
            uses = [step_of.get(use.operation, end) for use in value.uses]
            lifetimes.append(Lifetime(_element_count(value), defined, max([defined, *uses])))
        plan = plan_memory(lifetimes)
        slots = []
        suffix = "" if element_type == f32 else f"_{element_type}"
        for index, size in enumerate(plan.slot_sizes):
            alloc = loop.AllocOp(MemRefType(element_type, [size]))
            alloc.result.name_hint = f"slot{index}{suffix}"
            self.body.insert_op_before(alloc, self.body.last_op)
            slots.append(alloc.result)
        for value, slot in zip(values, plan.slot_of, strict=True):
            view = loop.ViewOp(slots[slot], tensor_buffer_type(value.type))
            view.result.name_hint = value.name_hint
            self._emit(view, value.owner)
            self.buffer_of[value] = view.result

    def _emit(self, op: Operation, origin: Operation) -> None:
        op.location = origin.location
        self.body.insert_op_before(op, self.body.last_op)

    def _emit_copy(self, source: SSAValue, target: SSAValue) -> None:
        assert isinstance(source.type, TensorType)
        kernel = _copy_kernel(self.module, tensor_buffer_type(source.type))
        self.body.insert_op_before(
            loop.CallOp(kernel.sym_name.data, [self.buffer_of[source], target]), self.body.last_op
        )


def _copy_kernel(module: ModuleOp, buffer: MemRefType) -> loop.FuncOp:
    """The kernel that copies a buffer of this type (created once per type): `copy_4x8`
    for f32, `copy_4x8_i64` for other element types."""
    shape = tuple(buffer.get_shape())
    name = "copy_" + ("x".join(str(d) for d in shape) or "scalar")
    if buffer.element_type != f32:
        name += f"_{buffer.element_type}"
    for op in module.ops:
        if isinstance(op, loop.FuncOp) and op.sym_name.data == name:
            return op
    builder = KernelBuilder(name, [buffer], [buffer])
    with builder.nest_indices(shape) as indices:
        builder.store(builder.load(builder.inputs[0], indices), builder.outputs[0], indices)
    kernel = builder.finish()
    module.body.block.insert_op_before(kernel, module.body.block.first_op)
    return kernel


class LowerGraphFunction(RewritePattern):
    """Replace a graph-level `func.func` by its entry `loop.func`."""

    def __init__(self, module: ModuleOp, profile: bool = False):
        self.module = module
        self.profile = profile

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if not op.body.blocks:
            return
        if PRIMITIVE_ATTR in op.attributes:
            raise CompileError("run fuse-tir first (primitive function left)", op)
        entry = _EntryBuilder(op, self.module).build()
        if self.profile:
            instrument_entry(entry, self.module)
        rewriter.insert(entry, InsertPoint.before(op))
        rewriter.erase(op)


@dataclass(frozen=True)
class LowerGraphPass(ModulePass):
    """Turn every graph-level function into a native entry `loop.func` over buffers.

    Pre-conditions: fuse-tir has run: graph-level functions contain only `graph.call_loop`,
    `graph.constant`, `func.return` and calls of composite functions (fuse-ops-by-pattern),
    which their backend first turns into kernels (`blas_backend.lower_external_calls`).
    Post-conditions: no `func.func` and no graph op is left; each function is a `loop.func`
    entry (inputs: arguments then bound constants; outputs: results) whose body allocates the
    memory plan's slots and calls kernels with `loop.call`. The IR verifies.
    Follow-up: convert-loop-to-llvm.

    Options:
    - `profile` (default false): a profiling build: every kernel launch is timed and each
      entry gets a counters global `@__fusion_profile_<entry>` (`profiling.py`).
    """

    name = "lower-graph"

    profile: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_legalized(op, "the fusion pipeline (legalize-ops,...,fuse-tir)")
        lower_external_calls(op)
        PatternRewriteWalker(
            LowerGraphFunction(op, self.profile), apply_recursively=False, walk_regions_first=False
        ).rewrite_module(op)
