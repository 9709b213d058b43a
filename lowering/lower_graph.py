"""`lower-graph`: graph-level functions become native entry points over buffers.

After fuse-tir a graph-level function only calls kernels. This pass turns it into a
`loop.func` of the same name that runs those kernels on buffers:

    func.func @main(%x: tensor<..>) -> tensor<..>          loop.func @main(%x, %w) outs(%y) {
      %w = graph.constant dense<..>               ==>         %slot0 = loop.alloc {fusion.kept} : memref<Nxf32>
      %t = graph.call_loop @k1(%x, %w)                        %t = loop.view %slot0 : ... to ...
      %y = graph.call_loop @k2(%t)                            loop.call @k1(%x, %w, %t)
      func.return %y                                          loop.call @k2(%t, %y)
                                                            }

- Tensor arguments become input buffers, returned values output buffers.
- Every `graph.constant` becomes an input buffer after the function's own arguments, in order
  of appearance (`bound_constants` below lists them): the runtime binds the weights once, so
  they are never embedded in the LLVM IR. The entry records their number in the
  `loop.bound_constants` attribute.
- A launch whose operands are all constants, or results of such launches (a packing kernel
  of prepack-weights on a weight), computes the same values at every run: it moves to a
  *load entry* `@<function>__load`, which takes the constants it reads as bound inputs and
  returns the values the other launches read; the runtime runs it once, when the model is
  loaded, and binds its results as further bound inputs of the entry (`loop.load_entry`,
  `loop.bound_sources`). Constants that only load-time launches read are bound to the load
  entry alone.
- Intermediates live in the slots of a static memory plan (`memory_plan.py`): values whose
  lifetimes do not overlap share a slot. A run entry keeps its slots from one call to the
  next (`fusion.kept`, `kept_buffers.py`). A concat whose operands are all intermediates is
  written in place (its operands are views of its buffer, `in_place.py`): its launch is
  dropped, and a concat kernel left without launches is erased (`in_place_kernels`).
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
from xdsl.dialects.builtin import (
    ArrayAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.dialects.graph import (
    PRIMITIVE_ATTR,
    CallLoopOp,
    ConstantOp,
    graph_functions,
    is_external_function,
)
from fusion_compiler.dialects.graph.preconditions import require_legalized
from fusion_compiler.dialects.loop.attributes import CONCAT_AXIS_ATTR, KEPT_BUFFER_ATTR
from fusion_compiler.dialects.loop.builder import KernelBuilder, tensor_buffer_type
from fusion_compiler.lowering.in_place import InPlaceConcats, in_place_concats
from fusion_compiler.lowering.memory_plan import Lifetime, plan_memory
from fusion_compiler.lowering.profiling import instrument_entry
from fusion_compiler.passes.analysis.ir_walk import rewrite_functions

BOUND_CONSTANTS_ATTR = "loop.bound_constants"
"""On a lowered entry: how many of its trailing inputs are bound constants."""


LOAD_ENTRY_ATTR = "loop.load_entry"
"""On a lowered entry whose function launches kernels on constants only: the symbol of the
entry that runs those launches once, when the model is loaded (its *load entry*)."""

BOUND_SOURCES_ATTR = "loop.bound_sources"
"""On an entry with a load entry, and on the load entry: where each bound input comes from, in
order: `i >= 0` is the function's constant `i` (`bound_constants` order), `-1 - j` is result
`j` of the load entry."""

LOAD_SUFFIX = "__load"


def bound_constants(function: func.FuncOp) -> list[ConstantOp]:
    """The constants of a graph-level function, in the order lower-graph turns them into
    trailing input buffers of the entry."""
    return [op for op in function.body.block.ops if isinstance(op, ConstantOp)]


def load_time_calls(function: func.FuncOp) -> list[CallLoopOp]:
    """The launches whose operands are all constants or results of such launches: they
    compute the same values at every run, so the entry runs them once, at load time (kernels
    write only their outputs)."""
    known = {op.result for op in bound_constants(function)}
    calls = []
    for op in function.body.block.ops:
        if isinstance(op, CallLoopOp) and all(value in known for value in op.inputs):
            calls.append(op)
            known.update(op.outputs)
    return calls


def _element_type(value: SSAValue) -> Attribute:
    assert isinstance(value.type, TensorType)
    return value.type.element_type


def _element_count(value: SSAValue) -> int:
    assert isinstance(value.type, TensorType)
    return value.type.element_count()


@dataclass
class _Entry:
    """What one entry `loop.func` is built from."""

    name: str
    origin: Operation
    """The graph-level function (its location)."""
    arguments: list[SSAValue]
    bound: list[SSAValue]
    """The values bound once, as the trailing inputs (constants, load-time results)."""
    calls: list[CallLoopOp]
    results: list[SSAValue]

    def in_place(self, kernels: dict[str, loop.FuncOp]) -> InPlaceConcats:
        """The concats of this entry written in place: every value but the arguments, the
        bound values and the results lives in the memory plan (`in_place.py`)."""
        own = {*self.arguments, *self.bound, *self.results}
        return in_place_concats(self.calls, own, kernels)


def _entries(function: func.FuncOp) -> list[_Entry]:
    """The entry of `function`, after its load entry when some launches are load-time."""
    block = function.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    name = function.sym_name.data
    constants = [op.result for op in bound_constants(function)]
    calls = _calls(block)
    early = load_time_calls(function)
    if not early:
        return [_Entry(name, function, list(block.args), constants, calls, list(ret.arguments))]
    early_ops = set(early)
    late = [call for call in calls if call not in early_ops]
    late_ops = {*late, ret}
    outputs = [v for call in early for v in call.outputs]
    derived = [v for v in outputs if any(use.operation in late_ops for use in v.uses)]
    used = [c for c in constants if any(use.operation in early_ops for use in c.uses)]
    kept = [c for c in constants if any(use.operation in late_ops for use in c.uses)]
    load = _Entry(name + LOAD_SUFFIX, function, [], used, early, derived)
    entry = _Entry(name, function, list(block.args), kept + derived, late, list(ret.arguments))
    return [load, entry]


def _kernels(module: ModuleOp) -> dict[str, loop.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, loop.FuncOp)}


def in_place_kernels(module: ModuleOp) -> set[str]:
    """The kernels of `module` (graph level, after fuse-tir) that lower-graph will never
    launch: concats every launch of which it writes in place (`in_place.py`). Their code
    never runs, so they are neither scheduled (`kernel_pass.schedulable_kernels`, the
    schedule memo) nor compiled: lower-graph erases them.

    Every scheduling pass asks, and the answer depends only on the concat kernels and on the
    graph functions' ops and values, which the passes seldom change (prepack-weights adds
    launches): so it is kept on the module with what it was computed from, and computed
    again when that differs (densenet121's op edit: its 19 questions took 0.13 s, now 0.04 s, two
    of them answered anew)."""
    kernels = _kernels(module)
    concats = tuple(
        (name, kernel.attributes[CONCAT_AXIS_ATTR])
        for name, kernel in kernels.items()
        if CONCAT_AXIS_ATTR in kernel.attributes
    )
    if not concats:
        return set()  # (only concat kernels are written in place)
    functions = graph_functions(module)
    key = (concats, tuple(_launch_structure(function) for function in functions))
    known = module.__dict__.get(_IN_PLACE_KNOWN)
    if known is not None and known[0] == key:
        return set(known[1])
    dropped: set[str] = set()
    launched: set[str] = set()
    for function in functions:
        try:
            specs = _entries(function)
        except CompileError:  # (lower-graph reports it)
            continue
        for spec in specs:
            in_place = spec.in_place(kernels)
            for call in spec.calls:
                name = call.callee.string_value()
                (dropped if call in in_place.dropped else launched).add(name)
    never_launched = dropped - launched
    module.__dict__[_IN_PLACE_KNOWN] = (key, frozenset(never_launched))
    return never_launched


_IN_PLACE_KNOWN = "_fusion_in_place_kernels"
"""Where `in_place_kernels` keeps its last answer on a module, with what it was computed from."""


def _launch_structure(function: func.FuncOp) -> tuple:
    """What `in_place_kernels` reads of a graph function: its launches and its return, each
    with its operands and results (ops and values compare by identity; a constant counts
    through the launches that take it)."""
    return (
        function,
        tuple(
            (op, tuple(op.operands), tuple(op.results))
            for op in function.body.block.ops
            if not isinstance(op, ConstantOp)
        ),
    )


def _sources(entry: _Entry, constants: list[SSAValue], derived: list[SSAValue]) -> ArrayAttr:
    index = {value: i for i, value in enumerate(constants)}
    index |= {value: -1 - j for j, value in enumerate(derived)}
    return ArrayAttr([IntegerAttr(index[value], i64) for value in entry.bound])


def _calls(block) -> list[CallLoopOp]:
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


@dataclass
class _EntryBuilder:
    """Builds one entry `loop.func`."""

    spec: _Entry
    module: ModuleOp

    def build(self) -> loop.FuncOp:
        spec = self.spec
        inputs = [*spec.arguments, *spec.bound]
        entry = loop.FuncOp(
            spec.name,
            [tensor_buffer_type(v.type) for v in inputs],
            [tensor_buffer_type(v.type) for v in spec.results],
        )
        entry.attributes[BOUND_CONSTANTS_ATTR] = IntegerAttr(len(spec.bound), i64)
        entry.location = spec.origin.location
        self.body = entry.body.block
        self.buffer_of: dict[SSAValue, SSAValue] = dict(zip(inputs, entry.input_args, strict=True))
        for value, arg in zip(inputs, entry.input_args, strict=True):
            arg.name_hint = value.name_hint
        copies = self._bind_outputs(spec.results, entry)
        in_place = spec.in_place(_kernels(self.module))
        self._plan_intermediates(spec.calls, in_place)
        for call in spec.calls:
            if call in in_place.dropped:
                continue
            operands = [self.buffer_of[v] for v in (*call.inputs, *call.outputs)]
            self._emit(loop.CallOp(call.callee, operands), call)
        for source, target in copies:
            if _element_count(source):  # (an empty result: nothing to copy)
                self._emit_copy(source, target)
        return entry

    def _bind_outputs(self, results: list[SSAValue], entry: loop.FuncOp) -> list:
        """Output buffers of returned values; returns the (source, output) pairs to copy."""
        copies = []
        for index, (value, arg) in enumerate(zip(results, entry.output_args, strict=True)):
            if value in self.buffer_of:
                arg.name_hint = f"out{index}"
                copies.append((value, arg))
            else:
                arg.name_hint = value.name_hint
                self.buffer_of[value] = arg
        return copies

    def _plan_intermediates(self, calls: list[CallLoopOp], in_place: InPlaceConcats) -> None:
        """One memory plan per element type (a slot is a flat buffer of one element type;
        f32 first, then the others in order of first definition). A value written in place
        into a concat's buffer (`in_place.py`) is a view of its root's storage, and extends
        the root's lifetime to its own."""
        outputs = [v for call in calls for v in call.outputs if v not in self.buffer_of]
        members: dict[SSAValue, list[SSAValue]] = {}
        for value in outputs:
            members.setdefault(in_place.root(value)[0], []).append(value)
        roots = [v for v in outputs if v in members]
        by_type: dict[Attribute, list[SSAValue]] = {f32: []}
        for value in roots:
            by_type.setdefault(_element_type(value), []).append(value)
        step_of = {call: step for step, call in enumerate(calls)}
        storage = {root: self.buffer_of[root] for root in members if root in self.buffer_of}
        for element_type, group in by_type.items():
            storage |= self._plan_group(element_type, group, members, step_of, len(calls))
            planned = set(group)
            self._emit_views(
                [v for v in outputs if in_place.root(v)[0] in planned], in_place, storage
            )
        self._emit_views([v for v in outputs if v not in self.buffer_of], in_place, storage)

    def _plan_group(
        self,
        element_type: Attribute,
        roots: list[SSAValue],
        members: dict[SSAValue, list[SSAValue]],
        step_of: dict[Operation, int],
        end: int,
    ) -> dict[SSAValue, SSAValue]:
        """Allocate the slots of `roots` (each alive while any of its members is); returns
        each root's slot."""
        lifetimes = []
        for root in roots:
            tree = members[root]
            defined = min(step_of[value.owner] for value in tree)
            uses = [step_of.get(use.operation, end) for value in tree for use in value.uses]
            lifetimes.append(Lifetime(_element_count(root), defined, max([defined, *uses])))
        plan = plan_memory(lifetimes)
        slots = []
        suffix = "" if element_type == f32 else f"_{element_type}"
        for index, size in enumerate(plan.slot_sizes):
            alloc = loop.AllocOp(MemRefType(element_type, [size]))
            alloc.result.name_hint = f"slot{index}{suffix}"
            self.body.insert_op_before(alloc, self.body.last_op)
            slots.append(alloc.result)
        return {root: slots[slot] for root, slot in zip(roots, plan.slot_of, strict=True)}

    def _emit_views(
        self, values: list[SSAValue], in_place: InPlaceConcats, storage: dict[SSAValue, SSAValue]
    ) -> None:
        """The buffer of each of `values`: a view of its root's storage, at its offset."""
        for value in values:
            root, offset = in_place.root(value)
            view = loop.ViewOp(storage[root], tensor_buffer_type(value.type), offset)
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


COPY_KERNEL_PREFIX = "copy_"
"""The names of the copy kernels lower-graph generates (`_copy_kernel`); no graph op has a
kernel of that name."""


def is_copy_kernel(name: str) -> bool:
    """Whether the kernel `name` is a generated copy into an output, not an op's kernel."""
    return name.startswith(COPY_KERNEL_PREFIX)


def _copy_kernel(module: ModuleOp, buffer: MemRefType) -> loop.FuncOp:
    """The kernel that copies a buffer of this type (created once per type): `copy_4x8`
    for f32, `copy_4x8_i64` for other element types."""
    shape = tuple(buffer.get_shape())
    name = COPY_KERNEL_PREFIX + ("x".join(str(d) for d in shape) or "scalar")
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
        specs = _entries(op)
        constants = [c.result for c in bound_constants(op)]
        derived = specs[0].results if len(specs) == 2 else []
        for spec in specs:
            entry = _EntryBuilder(spec, self.module).build()
            if len(specs) == 2:
                entry.attributes[BOUND_SOURCES_ATTR] = _sources(spec, constants, derived)
            if spec is specs[-1]:
                _keep_slots(entry)
                if len(specs) == 2:
                    entry.attributes[LOAD_ENTRY_ATTR] = StringAttr(specs[0].name)
                if self.profile:
                    instrument_entry(entry, self.module)
            rewriter.insert(entry, InsertPoint.before(op))
        rewriter.erase(op)


def _keep_slots(entry: loop.FuncOp) -> None:
    """Marks the slots of a run entry kept between its calls (`KEPT_BUFFER_ATTR`); a load
    entry runs once and allocates its own."""
    for op in entry.body.block.ops:
        if isinstance(op, loop.AllocOp):
            op.attributes[KEPT_BUFFER_ATTR] = UnitAttr()


@dataclass(frozen=True)
class LowerGraphPass(ModulePass):
    """Turn every graph-level function into a native entry `loop.func` over buffers.

    Pre-conditions: fuse-tir has run: graph-level functions contain only `graph.call_loop`,
    `graph.constant`, `func.return` and calls of composite functions (fuse-ops-by-pattern),
    which their backend first turns into kernels (`blas_backend.lower_external_calls`).
    Post-conditions: no `func.func` and no graph op is left; each function is a `loop.func`
    entry (inputs: arguments then bound constants; outputs: results) whose body allocates the
    memory plan's slots and calls kernels with `loop.call`; the concat kernels it wrote in
    place and no entry launches are gone (`in_place_kernels`). The IR verifies.
    Follow-up: convert-loop-to-llvm.

    Options:
    - `profile` (default false): a profiling build: every kernel launch is timed and each
      entry gets a counters global `@__fusion_profile_<entry>` (`profiling.py`).
    """

    name = "lower-graph"

    profile: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_legalized(op, "the fusion pipeline (legalize-ops,...,fuse-tir)")
        if any(is_external_function(function) for function in op.ops):
            # (the backends and their patterns load for a module that calls them: 4-8 ms)
            from fusion_compiler.lowering.blas_backend import lower_external_calls

            lower_external_calls(op)
        never_launched = in_place_kernels(op)
        rewrite_functions(op, LowerGraphFunction(op, self.profile))
        entries = [f for f in op.ops if BOUND_CONSTANTS_ATTR in f.attributes]
        called = {
            call.callee.string_value()
            for entry in entries
            for call in entry.walk()
            if isinstance(call, loop.CallOp)
        }
        for name, kernel in _kernels(op).items():
            if name in never_launched and name not in called:
                kernel.detach()
                kernel.erase()
