"""What scheduling made of each kernel, remembered across compiles: the schedule memo.

schedule-kernels is most of the passes' time, and it schedules each kernel on its own: what it
makes of a kernel depends on the kernel's IR (as fuse-tir left it), on which of its inputs every
launch passes a `graph.constant` for (schedule-contractions prices panels packed from
constants apart, prepack-weights moves their packing to load time), on the host and on the
scheduling options; nothing else. After a compile, for each kernel the memo records, under a
key made of exactly those (`memo_key`):

- the scheduled kernel's function type and the content digest of its unit
  (`native_units.name_by_content`), whose object code the compile cache holds;
- the packing kernels prepack-weights made for it (their function types, digests, base names,
  and which of the kernel's inputs each packs);
- the scheduled kernel's inputs, each an input of the kernel as fuse-tir left it or a result
  of one of those packing kernels.

A later compile of a module in which a kernel has a record (the same model with one layer
changed: every other kernel) replaces that kernel, before schedule-kernels runs, by a *stub*: a
`loop.func` of the scheduled type with an empty body, marked with its unit's digest
(`UNIT_DIGEST_ATTR`); its launches are rewritten as prepack-weights would have rewritten them
(packing launches on the same operands, one per packing kernel and operands). Nothing is
scheduled for a stub, and its unit is not built: lower-graph needs only its type,
`name_by_content` takes the recorded digest, and the unit comes from the cache. The entry
functions are made exactly as without the memo, so the native code is the same.

A record is used only if the unit of every digest it names is in the cache. If a stub's unit
cannot be loaded after all (removed in between, or damaged), `MemoMiss` makes the driver
compile the module again without the memo. Profiling builds do not use the memo.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BFloat16Type,
    FunctionType,
    MemRefType,
    StringAttr,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, OpResult, SSAValue
from xdsl.parser import Parser
from xdsl.rewriter import Rewriter
from xdsl.utils.arg_spec import parse_pipeline as split_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from fusion_compiler.dialects import graph, loop
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.loop.attributes import CONCAT_AXIS_ATTR, UNIT_DIGEST_ATTR
from fusion_compiler.dialects.pattern_kind import PatternKind
from fusion_compiler.lowering.ir_hash import renamed_hash
from fusion_compiler.lowering.lower_graph import in_place_kernels
from fusion_compiler.lowering.native_units import base_name, stub_digest
from fusion_compiler.passes.analysis.ir_walk import walk_ops
from fusion_compiler.passes.analysis.kernel_sources import (
    SOURCE_KEEPING_PASSES,
    kernel_source_key,
    source_digest,
)
from fusion_compiler.passes.analysis.launches import (
    constant_inputs,
    constant_positions,
    kernel_launches,
)
from fusion_compiler.passes.fuse_tir import group_digest, is_primitive, kernel_call
from fusion_compiler.passes.legalize_ops.deferred import (
    KnownKind,
    deferred_kernels,
    is_deferred,
    materialize,
)
from fusion_compiler.passes.schedule.prepack_weights import packing_launch, replace_launch

SCHEDULE_PASS = "schedule-kernels"

MEMO_FORMAT = "schedule memo 1"


class MemoMiss(Exception):
    """A stub's unit is not in the cache, or a deferred kernel was left unbuilt
    (`legalize_ops.deferred`): the module must be compiled without the memo."""


def split_schedule(pipeline: str) -> tuple[str, str] | None:
    """`(passes before, schedule-kernels with its options)` when `pipeline` ends with
    schedule-kernels (the memo applies), else None."""
    try:
        specs = [str(spec) for spec in split_pipeline(pipeline)]
    except (ArgSpecParseError, ValueError):  # a bad pipeline is reported when it runs
        return None
    if len(specs) < 2 or not specs[-1].startswith(SCHEDULE_PASS):
        return None
    if specs[-1] != SCHEDULE_PASS and not specs[-1].startswith(SCHEDULE_PASS + "{"):
        return None
    return ",".join(specs[:-1]), specs[-1]


FUSE_TIR_PASS = "fuse-tir"


def split_fuse_tir(fusion: str) -> str | None:
    """The passes of `fusion` (the part of a pipeline before schedule-kernels) before its
    last, when that last is fuse-tir (the memo then replays fuse-ops' groups before fuse-tir
    fuses them: `ScheduleMemo.replay_groups`); else None."""
    try:
        specs = [str(spec) for spec in split_pipeline(fusion)]
    except (ArgSpecParseError, ValueError):  # a bad pipeline is reported when it runs
        return None
    if not specs or specs[-1] != FUSE_TIR_PASS:
        return None
    return ",".join(specs[:-1])


def lazy_legalize_holds(fusion: str) -> bool:
    """Whether legalize-ops may defer kernels (`legalize_ops.deferred`) in the passes
    `fusion` before schedule-kernels: they end with fuse-tir, keep kernel bodies
    (`sources_hold`) and analyse every kernel legalize-ops makes right after it
    (annotate-pattern, without `force`: a deferred kernel comes with its kind)."""
    try:
        specs = list(split_pipeline(fusion))
    except (ArgSpecParseError, ValueError):
        return False
    names = [spec.name for spec in specs]
    if split_fuse_tir(fusion) is None or not sources_hold(fusion) or "legalize-ops" not in names:
        return False
    after = names.index("legalize-ops") + 1
    return after < len(specs) and names[after] == "annotate-pattern" and not specs[after].parameters


def sources_hold(fusion: str) -> bool:
    """Whether every pass of `fusion` keeps the source digests of the kernels legalize-ops
    makes (`kernel_sources.SOURCE_KEEPING_PASSES`)."""
    try:
        return all(spec.name in SOURCE_KEEPING_PASSES for spec in split_pipeline(fusion))
    except (ArgSpecParseError, ValueError):  # a bad pipeline is reported when it runs
        return False


@dataclass(frozen=True)
class Packing:
    """A packing kernel prepack-weights made for a kernel."""

    base: str
    function_type: str
    digest: str
    sources: tuple[int, ...]
    """The inputs of the unscheduled kernel it packs, in order."""


@dataclass(frozen=True)
class Record:
    """What schedule-kernels made of one kernel (see the module docstring)."""

    function_type: str
    digest: str
    packings: tuple[Packing, ...]
    inputs: tuple[tuple[int, int], ...]
    """Per input of the scheduled kernel: `(-1, i)`, input `i` of the unscheduled kernel, or
    `(j, k)`, result `k` of packing `j`."""

    def data(self) -> dict:
        return {
            "format": MEMO_FORMAT,
            "function_type": self.function_type,
            "digest": self.digest,
            "packings": [
                [p.base, p.function_type, p.digest, list(p.sources)] for p in self.packings
            ],
            "inputs": [list(i) for i in self.inputs],
        }

    @staticmethod
    def of_data(data: dict) -> Record | None:
        try:
            if data["format"] != MEMO_FORMAT:
                return None
            packings = tuple(
                Packing(str(b), str(t), str(d), tuple(int(i) for i in s))
                for b, t, d, s in data["packings"]
            )
            inputs = tuple((int(j), int(k)) for j, k in data["inputs"])
            return Record(str(data["function_type"]), str(data["digest"]), packings, inputs)
        except (KeyError, TypeError, ValueError):
            return None

    def digests(self) -> list[str]:
        return [self.digest, *(p.digest for p in self.packings)]


def memo_key(kernel: loop.FuncOp, constants: set[int], schedule: str) -> str:
    """The digest of what scheduling `kernel` depends on, but the host (the cache key adds
    it): its IR under its base name, the inputs every launch passes a constant for, and the
    schedule-kernels spec."""
    content = renamed_hash(kernel, base_name(kernel.sym_name.data))
    text = "\0".join([MEMO_FORMAT, content, ",".join(map(str, sorted(constants))), schedule])
    return hashlib.sha256(text.encode()).hexdigest()


def source_memo_key(source: str, constants: set[int], schedule: str) -> str:
    """`memo_key` of a kernel from its `kernel_sources.kernel_source_key` (which names its
    IR but for its name, and its base name: it is the op's) rather than its IR."""
    text = "\0".join(
        [MEMO_FORMAT, "source", source, ",".join(map(str, sorted(constants))), schedule]
    )
    return hashlib.sha256(text.encode()).hexdigest()


def group_memo_key(digest: str, name: str, constants: set[int], schedule: str) -> str:
    """`memo_key` of the kernel fuse-tir makes of a primitive function, from the function's
    `fuse_tir.group_digest` and name (the kernel's IR, under its base name, is a function of
    the two): the kernel need not exist to be looked up."""
    text = "\0".join(
        [
            MEMO_FORMAT,
            "group",
            digest,
            base_name(name),
            ",".join(map(str, sorted(constants))),
            schedule,
        ]
    )
    return hashlib.sha256(text.encode()).hexdigest()


@cache
def _function_type(text: str) -> FunctionType:
    """The kernel type a record notes as text (`str` of the `FunctionType`)."""
    read = _memref_function_type(text)
    if read is not None:
        return read
    parsed = Parser(_context(), text).parse_attribute()
    assert isinstance(parsed, FunctionType)
    return parsed


_ELEMENT_TYPES: dict[str, Attribute] = {
    "f16": f16,
    "bf16": BFloat16Type(),
    "f32": f32,
    "f64": f64,
    "i1": i1,
    "i8": i8,
    "i16": i16,
    "i32": i32,
    "i64": i64,
}
_DENSE_MEMREF = re.compile(r"memref<((?:\d+x)*)(" + "|".join(_ELEMENT_TYPES) + r")>")


def _memref_function_type(text: str) -> FunctionType | None:
    """The type of a kernel over dense static memrefs, read without xDSL's parser (a third of
    a millisecond a kernel; a compile stubs every kernel its memo holds): `(memref<1x64xf32>,
    ...) -> ()`, `-> memref<...>` or `-> (memref<...>, ...)`; None for any other text."""
    inputs_text, arrow, outputs_text = text.partition(") -> ")
    if not arrow or not inputs_text.startswith("("):
        return None
    if outputs_text.startswith("(") and outputs_text.endswith(")"):
        outputs_text = outputs_text[1:-1]
    inputs, outputs = _dense_memrefs(inputs_text[1:]), _dense_memrefs(outputs_text)
    if inputs is None or outputs is None:
        return None
    return FunctionType.from_lists(inputs, outputs)


def _dense_memrefs(text: str) -> list[Attribute] | None:
    if not text:
        return []
    types: list[Attribute] = []
    for part in text.split(", "):
        memref_type = _dense_memref(part)
        if memref_type is None:
            return None
        types.append(memref_type)
    return types


@cache
def _dense_memref(text: str) -> Attribute | None:
    """The dense static memref type `text` spells, or None (made once per process: xDSL takes
    50 us to make one, and a model's kernels share their buffer types)."""
    match = _DENSE_MEMREF.fullmatch(text)
    if match is None:
        return None
    shape = [int(size) for size in match.group(1).split("x")[:-1]]
    return MemRefType(_ELEMENT_TYPES[match.group(2)], shape)


@cache
def _context():
    return make_context()


def _kernels(module: Operation) -> list[loop.FuncOp]:
    return [op for op in module.ops if isinstance(op, loop.FuncOp)]  # type: ignore[attr-defined]


def _symbol_ops(module: Operation) -> list[loop.FuncOp | func.FuncOp]:
    ops = module.ops  # type: ignore[attr-defined]
    return [op for op in ops if isinstance(op, (loop.FuncOp, func.FuncOp))]


def _primitive_functions(module: Operation) -> list[func.FuncOp]:
    ops = module.ops  # type: ignore[attr-defined]
    return [op for op in ops if isinstance(op, func.FuncOp) and is_primitive(op)]


def unbuilt_members(module: Operation) -> list[str]:
    """The deferred kernels (`legalize_ops.deferred`) that a primitive function of `module`
    calls: fuse-tir would fuse their empty bodies (`replay_groups` builds every one)."""
    symbols = {op.sym_name.data: op for op in _symbol_ops(module)}
    return [
        kernel.sym_name.data
        for function in _primitive_functions(module)
        for kernel in _members(function, symbols)
        if is_deferred(module, kernel)
    ]


def _members(
    function: func.FuncOp, symbols: dict[str, loop.FuncOp | func.FuncOp]
) -> list[loop.FuncOp]:
    """The kernels the primitive `function` calls."""
    called = (
        symbols.get(op.callee.string_value())
        for op in function.body.block.ops
        if isinstance(op, graph.CallLoopOp)
    )
    return [kernel for kernel in called if isinstance(kernel, loop.FuncOp)]


def _materialize(module: Operation, kernels: list[loop.FuncOp]) -> None:
    """Builds those of `kernels` that are deferred (`legalize_ops.deferred.materialize`)."""
    for kernel in kernels:
        materialize(module, kernel)


def _function_calls(module: Operation) -> dict[str, list[func.CallOp]]:
    """The `func.call`s of each function (by name) in the module's graph functions."""
    calls: dict[str, list[func.CallOp]] = {}
    for function in module.ops:  # type: ignore[attr-defined]
        if isinstance(function, func.FuncOp) and not is_primitive(function):
            for op in walk_ops(function):
                if isinstance(op, func.CallOp):
                    calls.setdefault(op.callee.string_value(), []).append(op)
    return calls


@dataclass
class _Pending:
    key: str
    operands: list[SSAValue]
    """The operands of the kernel's first launch before scheduling."""


ScheduleAhead = Callable[[Operation, list[str]], dict[str, Record]]
"""Schedules (and compiles) kernels before schedule-kernels runs: given the module and the
names of the kernels without a record, the records of those it scheduled, by name
(`schedule_workers`)."""


@dataclass
class ScheduleMemo:
    """One compile's use of the memo: `lookup(key)` gives a stored record (None without one),
    `has_unit(digest)` tells whether the cache holds the unit of a digest; `ahead`, when
    given, schedules the kernels without a record before schedule-kernels does (their
    records are `learned`, and they are stubbed like the others)."""

    schedule: str
    lookup: Callable[[str], Record | None]
    has_unit: Callable[[str], bool]
    ahead: ScheduleAhead | None = None
    known_kind: KnownKind | None = None
    """The pattern kind an earlier compile noted for a source digest (`legalize_ops.
    deferred`), when the cache is there to ask."""
    replayed: int = 0
    seconds: float = 0.0
    """The time `replay` and `capture` took, less `ahead`'s (which times itself)."""
    learned: dict[str, Record] = field(default_factory=dict)
    """The records `ahead` made in this compile, by memo key."""
    _pending: dict[str, _Pending] = field(default_factory=dict)
    _scheduled: dict[str, tuple[str, list[tuple[str, str, tuple[int, ...]]], list]] = field(
        default_factory=dict
    )
    _group_keys: dict[str, str] = field(default_factory=dict)
    """The memo key of each primitive function `replay_groups` left to fuse-tir, by name (the
    name of the kernel fuse-tir makes of it)."""
    _taken: set[str] = field(default_factory=set)
    """The symbols of the module and the names of the packing stubs made so far."""
    _packing_stubs: dict[str, loop.FuncOp] = field(default_factory=dict)
    """The packing stubs made so far, by digest."""
    kinds: dict[str, PatternKind] = field(default_factory=dict)
    """The pattern kinds annotate-pattern gave the kernels legalize-ops built in this
    compile, by source digest (for `known_kind` in later compiles)."""

    # --- before fuse-tir: stubs for the kernels of fuse-ops' groups with a record ---

    def replay_groups(self, module: Operation, sources: bool = False) -> None:
        """Replaces every primitive function of `module` (a group of fuse-ops) whose fused
        kernel has a usable record by the stub of that kernel (named as fuse-tir names it),
        its calls by launches of the stub as prepack-weights would have left them: fuse-tir
        then builds only the others' kernels (densenet121's op edit: 0.21 s of building and
        0.16 s of hashing its 188 fused kernels, against 0.11 s of hashing the 388 kernels
        its groups call; one run). A group's key (`group_memo_key`) is made of what
        fuse-tir reads (`fuse_tir.group_digest`, from the digests of the kernels it calls),
        not of the fused kernel; `replay` keys the kernels fuse-tir makes of the others so.
        With `sources` (only passes of `SOURCE_KEEPING_PASSES` ran since legalize-ops), a
        kernel legalize-ops made is digested by its source (`kernel_sources`), not its IR."""
        start = time.perf_counter()
        symbols = {op.sym_name.data: op for op in _symbol_ops(module)}
        self._taken |= set(symbols)
        digests: dict[str, str] = {}

        def kernel_digest(kernel: loop.FuncOp) -> str:
            name = kernel.sym_name.data
            if name not in digests:
                source = kernel_source_key(module, kernel) if sources else None
                digests[name] = source or renamed_hash(kernel, base_name(name))
            return digests[name]

        if sources:
            self._note_kinds(module)
        calls = _function_calls(module)
        for function in _primitive_functions(module):
            name = function.sym_name.data
            sites = calls.get(name, [])
            digest = group_digest(function, symbols, kernel_digest) if sites else None
            if digest is None:
                _materialize(module, _members(function, symbols))  # fuse-tir reads them
                continue
            count = len(function.body.block.args)
            constants = constant_positions(count, [site.arguments for site in sites])
            key = self._group_keys[name] = group_memo_key(digest, name, constants, self.schedule)
            record = self.lookup(key)
            if record is None or not all(self.has_unit(d) for d in record.digests()):
                _materialize(module, _members(function, symbols))
                continue
            launches = []
            for site in sites:
                launch = kernel_call(site)
                Rewriter.replace_op(site, launch)
                launches.append(launch)
            self._stub(module, function, record, launches, self._taken, self._packing_stubs)
            self.replayed += 1
        self.seconds += time.perf_counter() - start

    def _note_kinds(self, module: Operation) -> None:
        for kernel in _kernels(module):
            digest = source_digest(module, kernel)
            kind = kernel.pattern_kind
            if digest is not None and kind is not None and not is_deferred(module, kernel):
                self.kinds[digest] = kind

    # --- before schedule-kernels: stubs for the kernels with a record ---

    def replay(self, module: Operation, sources: bool = False) -> None:
        """Replaces every kernel of `module` that has a usable record by its stub (and its
        launches as prepack-weights would have left them); then, with `ahead`, every kernel
        it scheduled; remembers the others. (The stubs `replay_groups` made are left as they
        are.) With `sources`, as for `replay_groups`."""
        start = time.perf_counter()
        launches = kernel_launches(module)  # type: ignore[arg-type]
        never_launched = in_place_kernels(module)  # type: ignore[arg-type]
        taken = self._taken
        taken |= {k.sym_name.data for k in _kernels(module)}
        packing_stubs = self._packing_stubs
        unknown: list[tuple[loop.FuncOp, list, str]] = []
        for kernel in _kernels(module):
            name = kernel.sym_name.data
            calls = launches.get(name, [])
            if not calls or name in never_launched or stub_digest(kernel) is not None:
                continue  # (a concat written in place is neither scheduled nor compiled)
            constants = constant_inputs(kernel, launches)
            source = kernel_source_key(module, kernel) if sources else None
            key = (
                self._group_keys.get(name)
                or (source and source_memo_key(source, constants, self.schedule))
                or memo_key(kernel, constants, self.schedule)
            )
            record = self.lookup(key)
            if record is not None and all(self.has_unit(d) for d in record.digests()):
                self._stub(module, kernel, record, calls, taken, packing_stubs)
                self.replayed += 1
            else:
                materialize(module, kernel)  # (scheduling reads it)
                unknown.append((kernel, calls, key))
        for kernel in deferred_kernels(module):  # (a concat written in place is erased)
            if kernel.sym_name.data not in never_launched:
                materialize(module, kernel)
        made = {}
        if self.ahead is not None and unknown:
            self.seconds += time.perf_counter() - start
            made = self.ahead(module, [kernel.sym_name.data for kernel, _, _ in unknown])
            start = time.perf_counter()
        for kernel, calls, key in unknown:
            record = made.get(kernel.sym_name.data)
            if record is not None:
                self.learned[key] = record
                self._stub(module, kernel, record, calls, taken, packing_stubs)
            else:
                self._pending[kernel.sym_name.data] = _Pending(key, list(calls[0].inputs))
        self.seconds += time.perf_counter() - start

    def _stub(self, module, kernel, record: Record, calls, taken, packing_stubs) -> None:
        name = kernel.sym_name.data
        stub = _stub_kernel(name, _function_type(record.function_type), record.digest)
        if CONCAT_AXIS_ATTR in kernel.attributes:  # what lower-graph reads of the kernel
            stub.attributes[CONCAT_AXIS_ATTR] = kernel.attributes[CONCAT_AXIS_ATTR]
        module.body.block.insert_op_before(stub, kernel)
        kernel.detach()
        kernel.erase()
        packings = []
        for packing in record.packings:
            if packing.digest not in packing_stubs:
                packing_stub = _stub_kernel(
                    _fresh(packing.base, taken),
                    _function_type(packing.function_type),
                    packing.digest,
                )
                module.body.block.insert_op_after(packing_stub, stub)
                packing_stubs[packing.digest] = packing_stub
            packings.append((packing, packing_stubs[packing.digest]))
        made: dict[tuple, list[SSAValue]] = {}
        for call in calls:
            block = call.parent_block()
            assert block is not None
            results = []
            for packing, packing_stub in packings:
                operands = [call.inputs[i] for i in packing.sources]
                key = (packing_stub, *operands)
                if key not in made:
                    made[key] = packing_launch(block, call, packing_stub, operands)
                results.append(made[key])
            inputs = [call.inputs[k] if j < 0 else results[j][k] for j, k in record.inputs]
            replace_launch(call, name, inputs)

    # --- after schedule-kernels: what it made of the others ---

    def capture(self, module: Operation) -> None:
        """Notes, for each kernel scheduled in this compile, its type, its packing kernels and
        its inputs (before lower-graph turns the launches into entry code)."""
        start = time.perf_counter()
        launches = kernel_launches(module)  # type: ignore[arg-type]
        kernels = {k.sym_name.data: k for k in _kernels(module)}
        for name, pending in self._pending.items():
            calls = launches.get(name, [])
            if (
                name not in kernels
                or not calls
                or len(set(pending.operands)) < len(pending.operands)
            ):
                continue  # (an operand passed twice: its inputs could not be told apart)
            mapped = _map_inputs(pending.operands, list(calls[0].inputs), kernels)
            if mapped is not None:
                self._scheduled[name] = (str(kernels[name].function_type), *mapped)
        self.seconds += time.perf_counter() - start

    # --- after name_by_content: the records ---

    def records(self, digests: dict[str, str]) -> dict[str, Record]:
        """The records of the kernels scheduled in this compile (`learned` included), by memo
        key; `digests` maps each kernel's name (as the passes left it) to its unit's content
        digest."""
        made = {}
        for name, (function_type, packings, inputs) in self._scheduled.items():
            if name not in digests or any(p not in digests for p, _, _ in packings):
                continue
            record = Record(
                function_type,
                digests[name],
                tuple(Packing(base_name(p), t, digests[p], s) for p, t, s in packings),
                tuple(inputs),
            )
            made[self._pending[name].key] = record
        return {**self.learned, **made}


def _map_inputs(
    original: list[SSAValue], inputs: list[SSAValue], kernels: dict[str, loop.FuncOp]
) -> tuple[list[tuple[str, str, tuple[int, ...]]], list[tuple[int, int]]] | None:
    """The packing kernels and the input map of a launch that prepack-weights rewrote (or
    left as it was), from its operands before (`original`) and after (`inputs`); None when
    the launch is not one prepack-weights can have made of the other.

    A packed input is a result of a launch of a kernel on constants of the original
    operands. The other inputs are the original operands in order, less constants the
    kernel no longer reads (the ones it reads packed); a value made by a launch that
    prepack-weights replaced (an earlier kernel's, relaunched) is a new value of the same
    type where the old one's op is gone."""
    packings: list[tuple[str, str, tuple[int, ...]]] = []
    mapped: list[tuple[int, int]] = []
    index = {value: i for i, value in enumerate(original)}
    cursor = 0
    for value in inputs:
        launch = value.owner
        if (
            isinstance(launch, graph.CallLoopOp)
            and launch.callee.string_value() in kernels
            and launch.inputs
            and all(v in index and isinstance(v.owner, graph.ConstantOp) for v in launch.inputs)
        ):
            packing = launch.callee.string_value()
            entry = (
                packing,
                str(kernels[packing].function_type),
                tuple(index[v] for v in launch.inputs),
            )
            if entry not in packings:
                packings.append(entry)
            mapped.append(
                (packings.index(entry), next(k for k, r in enumerate(launch.outputs) if r is value))
            )
            continue
        while cursor < len(original) and not _same_input(original[cursor], value):
            if not isinstance(original[cursor].owner, graph.ConstantOp):
                return None
            cursor += 1
        if cursor == len(original):
            return None
        mapped.append((-1, cursor))
        cursor += 1
    if any(not isinstance(v.owner, graph.ConstantOp) for v in original[cursor:]):
        return None
    return packings, mapped


def _same_input(old: SSAValue, new: SSAValue) -> bool:
    if old is new:
        return True
    return old.type == new.type and isinstance(old, OpResult) and old.op.parent is None


def _stub_kernel(name: str, function_type: FunctionType, digest: str) -> loop.FuncOp:
    stub = loop.FuncOp(name, function_type.inputs.data, function_type.outputs.data)
    stub.attributes[UNIT_DIGEST_ATTR] = StringAttr(digest)
    return stub


def _fresh(base: str, taken: set[str]) -> str:
    name, suffix = base, 0
    while name in taken:
        suffix += 1
        name = f"{base}_{suffix}"
    taken.add(name)
    return name
