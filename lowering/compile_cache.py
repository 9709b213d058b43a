"""From a graph-level module to native code, through an on-disk compile cache.

The cache key is a hash of the module (printed with every dense constant replaced by the hash
of its raw bytes, so weights are never turned into text; a model's key covers the types of its
`graph.constant` ops and not their elements, see `model_key`), the pipeline, the host CPU (name and
features), the versions of this package, xDSL and llvmlite, and the source of the compiler
itself (every module of `fusion_compiler`, `fusion_dialects`, `passes` and `lowering`: an edited
pass never serves code the previous version compiled). Entries are of two kinds: a unit's
(`native_units`: one kernel, or the entry functions), keyed by the unit's loop-level IR and
holding its optimised LLVM IR, its object code and its kernels' signatures; and a model's,
keyed by the graph-level module, holding the kernels each entry launches and the keys of its
units. A model hit skips the pass pipeline, LLVM's optimiser and its code generator; after a
model miss, each unit the cache holds skips convert-loop-to-llvm and LLVM. The cache lives in `$FUSION_CACHE_DIR`, or
`~/.cache/fusion-compiler`; setting `FUSION_CACHE_DIR` to an empty string, or passing
`use_cache=False`, disables it.

Faults never reach LLVM or the user: an entry starts with a header holding the SHA-256 of its
contents, checked before LLVM sees any byte of it, so a truncated, damaged or foreign file is a
miss, recompiled and replaced. Entries are written to a temporary file and renamed into place
(a compile interrupted or killed leaves at most a stray temporary file, never a partial entry;
two processes storing the same entry both succeed, the last rename wins). A cache directory
that cannot be written (read-only, full) gives one `CacheWarning` per process and the compile
goes on without storing.
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING

from fusion_compiler.host import installed_version, usable_cores
from fusion_compiler.lowering.cache_files import CACHE_VARIABLE, atomic_write, cache_dir
from fusion_compiler.lowering.jit import (
    CodegenTarget,
    JitModule,
    NativeUnit,
    host_target_machine,
    signatures_of_data,
)
from fusion_compiler.lowering.load_launches import LoadLaunch
from fusion_compiler.lowering.threading_runtime import check_threading, threading_runtime_name

if TYPE_CHECKING:  # (a model loaded from the cache needs none of these: they are imported
    # where a compile first needs them)
    from xdsl.dialects.builtin import ModuleOp

    from fusion_compiler.lowering.llvm_codegen import StageTimings
    from fusion_compiler.lowering.load_memo import Prefetch
    from fusion_compiler.lowering.native_units import LowerToLLVMDialect
    from fusion_compiler.lowering.schedule_memo import Record, ScheduleMemo
    from fusion_compiler.lowering.schedule_workers import ScheduleModule, ScheduleWorkers


@dataclass
class NativeCode:
    jit: JitModule
    kernels: dict[str, tuple[str, ...]]
    """Per entry function, the kernels it launches in order."""
    from_cache: bool
    """Whether every unit of the native code came from the cache (nothing was compiled)."""
    bindings: dict[str, LoadBinding] = field(default_factory=dict)
    """Per entry function with a load entry (lower-graph), how its bound inputs are made."""
    key: str = ""
    """The model entry's cache key (empty when compiled without the cache)."""
    prefetched: Prefetch | None = None
    """The load entries' lookups, made while the compile waited (`load_memo.Prefetch`)."""


@dataclass(frozen=True)
class LoadBinding:
    """How the bound inputs of an entry with a load entry are made (`lower_graph.py`): the
    load entry runs once on the function's constants `load_sources`, writing buffers of
    `results` (shape, numpy dtype name); the entry's bound inputs are then `sources` (`i >= 0`:
    constant `i`; `-1 - j`: result `j` of the load entry)."""

    load_entry: str
    load_sources: tuple[int, ...]
    results: tuple[tuple[tuple[int, ...], str], ...]
    sources: tuple[int, ...]
    launches: tuple[LoadLaunch, ...] = ()
    """The load entry's launches one by one, when each reads only its inputs and writes
    only its results and the cache is on: then they run apart and `load_memo` keeps each
    one's results by its kernel and its inputs. Empty: the load entry runs whole."""

    def data(self) -> dict:
        return {
            "load_entry": self.load_entry,
            "load_sources": list(self.load_sources),
            "results": [[list(shape), dtype] for shape, dtype in self.results],
            "sources": list(self.sources),
            "launches": [
                [launch.kernel, launch.unit, list(launch.inputs), list(launch.outputs)]
                for launch in self.launches
            ],
        }

    @staticmethod
    def of_data(data: dict) -> LoadBinding:
        results = tuple(
            (tuple(int(d) for d in shape), str(dtype)) for shape, dtype in data["results"]
        )
        launches = tuple(
            LoadLaunch(str(kernel), str(unit), _ints(inputs), _ints(outputs))
            for kernel, unit, inputs, outputs in data.get("launches", [])
        )
        return LoadBinding(
            str(data["load_entry"]),
            _ints(data["load_sources"]),
            results,
            _ints(data["sources"]),
            launches,
        )


def _ints(items) -> tuple[int, ...]:
    return tuple(int(i) for i in items)


COMPILER_PACKAGES = ("fusion_compiler", "fusion_dialects", "passes", "lowering")
"""The packages whose source the cache key covers."""


@cache
def compiler_fingerprint() -> str:
    """A hash of the compiler's source files (read once per process)."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for package in COMPILER_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _host_and_versions() -> tuple[str, ...]:
    """The parts of every key that a compile's IR does not say: the target (triple, CPU name
    and features: this machine's or `FUSION_TARGET_CPU`'s, `jit.CodegenTarget.host`), the
    usable cores (which the contraction schedule balances its parallel loops over), the
    versions of this package, xDSL and llvmlite."""
    target = CodegenTarget.host()
    return (target.cpu, target.features, *_triple_and_versions())


@cache
def _triple_and_versions() -> tuple[str, ...]:
    return (
        host_target_machine().triple,
        str(usable_cores()),
        installed_version("fusion-compiler"),
        installed_version("xdsl"),
        installed_version("llvmlite"),
    )


def cache_key(module: ModuleOp, pipeline: str, *, weights: bool = True) -> str:
    from fusion_compiler.lowering.ir_hash import module_hash

    return key_of_hash(module_hash(module, weights=weights), pipeline)


def key_of_hash(digest: str, pipeline: str) -> str:
    """The cache key of a module whose `module_hash` is `digest`, compiled with `pipeline`."""
    parts = [
        digest,
        pipeline,
        *_host_and_versions(),
        compiler_fingerprint(),
        threading_runtime_name(),
        ENTRY_FORMAT.decode(),
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def model_key(module: ModuleOp, pipeline: str) -> str:
    """The key of a model's entry: it covers the types of the model's constants but not their
    elements, because no pass of a pipeline's native part reads them. `lower-graph` binds every
    `graph.constant` as a buffer argument and `CompiledModel.of` passes the module's own arrays
    at run time, so a model whose weights changed (retrained, or edited) is a hit. Passes that
    compute with constants (`fold-constants`) run before the key is taken (the driver's
    `split_graph_passes`), so the key covers what they made of the weights' structure.
    `tests/lowering/test_model_key.py` checks the premise on every example: new weights, the
    same loop-level module."""
    return cache_key(module, pipeline, weights=False)


def entry_kernels(module: ModuleOp) -> dict[str, tuple[str, ...]]:
    """Per entry `loop.func` made by lower-graph, the callees of its `loop.call`s in order."""
    from fusion_compiler.dialects import loop
    from fusion_compiler.lowering.native_units import is_entry

    kernels: dict[str, tuple[str, ...]] = {}
    for op in module.ops:
        if is_entry(op):
            calls = [c for c in op.body.block.ops if isinstance(c, loop.CallOp)]
            kernels[op.sym_name.data] = tuple(c.callee.string_value() for c in calls)
    return kernels


def entry_bindings(module: ModuleOp) -> dict[str, LoadBinding]:
    """Per entry made by lower-graph that has a load entry, how its bound inputs are made."""
    # (imported here: a model hit never lowers, and needs no pass)
    from fusion_compiler.dialects.element_dtypes import numpy_dtype
    from fusion_compiler.lowering.lower_graph import BOUND_SOURCES_ATTR, LOAD_ENTRY_ATTR
    from fusion_compiler.lowering.native_units import is_entry

    entries = {op.sym_name.data: op for op in module.ops if is_entry(op)}
    bindings = {}
    for name, entry in entries.items():
        load_name = entry.attributes.get(LOAD_ENTRY_ATTR)
        if load_name is None:
            continue
        load = entries[load_name.data]  # type: ignore[attr-defined]
        results = tuple(
            (tuple(t.get_shape()), numpy_dtype(t.element_type).name)
            for t in load.function_type.outputs.data
        )
        bindings[name] = LoadBinding(
            load.sym_name.data,
            _integers(load.attributes[BOUND_SOURCES_ATTR]),
            results,
            _integers(entry.attributes[BOUND_SOURCES_ATTR]),
        )
    return bindings


def _integers(attr) -> tuple[int, ...]:
    return tuple(item.value.data for item in attr.data)


LowerToEntries = Callable[["ScheduleMemo | None"], "tuple[ModuleOp, dict[str, tuple[str, ...]]]"]
"""Runs the pipeline and lower-graph on a copy of the module, with the schedule memo when
given: the loop-level module (bound constants are buffer arguments) and the kernels each
entry launches (`fusion_compiler.driver.lower_to_entries`)."""

MEMO_PIPELINE = "schedule-memo"
"""The pipeline part of a schedule memo record's cache key."""

KIND_PIPELINE = "pattern-kind"
"""The pipeline part of the key of a kernel's pattern kind, by the kernel's source digest
(`legalize_ops.deferred`)."""

KIND_FORMAT = "pattern kind 1"


def compile_native(
    module: ModuleOp,
    pipeline: str,
    lower_to_entries: LowerToEntries,
    lower_to_llvm_dialect: LowerToLLVMDialect,
    *,
    unit_pipeline: str = "convert-loop-to-llvm",
    use_cache: bool = True,
    timings: StageTimings | None = None,
    schedule: str | None = None,
    schedule_module: ScheduleModule | None = None,
) -> NativeCode:
    """Native code for `module` compiled with `pipeline` (from the cache when possible); the
    driver (`fusion_compiler.driver`) passes the two lowering steps, run on a miss, and the
    pipeline of the second (`unit_pipeline`, part of each unit's key); the seconds of the
    stages that are not passes are appended to `timings` when given: the schedule workers',
    `schedule-memo` (its replay and capture), `split-units`, `cache-load` (the units the
    cache holds), each unit's stages (`native_units.compile_units`), `cache-store` and `link`
    (the units into one engine).

    Three levels: the graph-level module (a hit skips everything); then, when `pipeline`
    ends with `schedule` (schedule-kernels and its options), each kernel as fuse-tir made it
    (the schedule memo, `schedule_memo`: a kernel scheduled in an earlier compile is not
    scheduled again); then, after the pipeline and lower-graph, each unit of
    `native_units.split_units`, keyed by its loop-level IR, in which bound constants are
    buffer arguments: a model whose weights changed, or which shares kernels with a model
    compiled before, or has one layer changed, compiles only the units the cache does not
    hold.

    With `schedule` and `schedule_module` (which runs it on a module), the kernels the memo
    has no record of are scheduled and compiled by worker processes when there are enough of
    them (`schedule_workers`), with or without the cache."""
    from fusion_compiler.lowering.llvm_codegen import merged_timings
    from fusion_compiler.lowering.schedule_memo import MemoMiss
    from fusion_compiler.lowering.schedule_workers import ScheduleWorkers

    directory = cache_dir() if use_cache else None
    key = model_key(module, pipeline) if directory is not None else ""
    if directory is not None:
        hit = load_native(directory, key)
        if hit is not None:
            return hit
    memo = None
    workers = None
    if schedule is not None and (directory is not None or schedule_module is not None):
        if schedule_module is not None:
            workers = ScheduleWorkers(schedule, schedule_module, lower_to_llvm_dialect)
        memo = _memo(directory, schedule, unit_pipeline, workers)
        if workers is not None and directory is not None:
            workers.has_unit = memo.has_unit

    compile = Compile(
        key,
        directory,
        lower_to_entries,
        lower_to_llvm_dialect,
        unit_pipeline,
        None if directory is None else partial(_prefetch, module, directory),
    )
    made: StageTimings = []
    try:
        code = compile.run(memo, workers, made)
    except MemoMiss:  # a stub's unit went missing since its record was read
        made.clear()
        code = compile.run(None, None, made)
    finally:
        if workers is not None:
            workers.close()
    if timings is not None:
        timings.extend(merged_timings(made))
    return code


def _prefetch(
    module: ModuleOp, directory: Path, bindings: dict[str, LoadBinding]
) -> Prefetch | None:
    """The lookups of the launches of `bindings` (those `module`'s functions bind) started in
    a thread (`load_memo.Prefetch`), or None when none has launches."""
    from fusion_compiler.lowering.compiled_model import load_inputs
    from fusion_compiler.lowering.load_memo import Prefetch

    work = [(b, load_inputs(module, n, b)) for n, b in bindings.items() if b.launches]
    return Prefetch(directory, work) if work else None


def _memo(
    directory: Path | None, schedule: str, unit_pipeline: str, workers: ScheduleWorkers | None
) -> ScheduleMemo:
    from fusion_compiler.dialects.pattern_kind import PatternKind
    from fusion_compiler.lowering.schedule_memo import Record, ScheduleMemo

    def lookup(memo_key: str) -> Record | None:
        if directory is None:
            return None
        parsed = _read(directory, key_of_hash(memo_key, MEMO_PIPELINE))
        return None if parsed is None else Record.of_data(parsed[0])

    def has_unit(digest: str) -> bool:
        if directory is None:
            return False
        return entry_path(directory, key_of_hash(digest, unit_pipeline)).exists()

    def known_kind(source: str) -> PatternKind | None:
        assert directory is not None
        parsed = _read(directory, key_of_hash(source, KIND_PIPELINE))
        if parsed is None or parsed[0].get("format") != KIND_FORMAT:
            return None
        try:
            return PatternKind.from_mnemonic(str(parsed[0]["kind"]))
        except (KeyError, ValueError):
            return None

    kinds = None if directory is None else known_kind
    return ScheduleMemo(schedule, lookup, has_unit, ahead=workers, known_kind=kinds)


@dataclass(frozen=True)
class Compile:
    """A compile after a model miss (`compile_native`)."""

    key: str
    directory: Path | None
    lower_to_entries: LowerToEntries
    lower_to_llvm_dialect: LowerToLLVMDialect
    unit_pipeline: str
    prefetch: Callable[[dict[str, LoadBinding]], Prefetch | None] | None = None
    """Starts the lookups of the load entries' launches (`_prefetch`) of the graph-level
    module, given its bindings, while the compile waits for a background worker (with the
    cache only)."""

    def run(
        self, memo: ScheduleMemo | None, workers: ScheduleWorkers | None, timings: StageTimings
    ) -> NativeCode:
        from fusion_compiler.lowering.ir_hash import module_hash
        from fusion_compiler.lowering.load_launches import launch_plans, with_launches
        from fusion_compiler.lowering.native_units import (
            compile_units,
            is_stub,
            name_by_content,
            split_units,
        )
        from fusion_compiler.lowering.schedule_memo import MemoMiss

        directory = self.directory
        lowered, kernels = self.lower_to_entries(memo)
        if workers is not None:
            timings += workers.timings
        if memo is not None:
            timings.append(("schedule-memo", memo.seconds))
        ahead = {} if workers is None else workers.units
        promised = set() if workers is None else workers.promised
        clock = time.perf_counter()
        bindings = entry_bindings(lowered)
        units, digests, by_name = name_by_content(split_units(lowered), module_hash)
        plans = launch_plans(units, bindings)  # (before the units are lowered to LLVM)
        timings.append(("split-units", time.perf_counter() - clock))
        keys = [
            key_of_hash(d, self.unit_pipeline) if directory is not None else "" for d in digests
        ]
        compiled = [ahead.get(d) for d in digests]
        fresh = [i for i, unit in enumerate(compiled) if unit is not None or digests[i] in promised]
        if directory is not None:
            clock = time.perf_counter()
            loaded: dict[str, NativeUnit | None] = {}
            compiled = [
                _load_unit(directory, k, loaded) if u is None and d not in promised else u
                for u, k, d in zip(compiled, keys, digests, strict=True)
            ]
            timings.append(("cache-load", time.perf_counter() - clock))
        pending = [
            i for i, unit in enumerate(compiled) if unit is None and digests[i] not in promised
        ]
        if any(is_stub(units[index]) for index in pending):
            raise MemoMiss()
        _check_convertible([units[index] for index in pending])
        made = compile_units(
            [units[index] for index in pending], self.lower_to_llvm_dialect, timings
        )
        for index, unit in zip(pending, made, strict=True):
            compiled[index] = unit
        prefetched = None
        if workers is not None and promised:
            if self.prefetch is not None:  # (a unit it compiles counts as reaching the BLAS
                # library: its launches are left to the binding)
                prefetched = self.prefetch(with_launches(bindings, plans, keys, compiled))
            compiled = _collect_background(workers, compiled, digests, timings)
        if directory is not None:
            bindings = with_launches(bindings, plans, keys, compiled)
            clock = time.perf_counter()
            _store_units(directory, [(keys[i], compiled[i]) for i in (*fresh, *pending)])  # type: ignore[misc]
            _store(directory, self.key, _model_bytes(kernels, bindings, keys))
            if memo is not None:
                _store_memo(directory, memo, by_name)
            timings.append(("cache-store", time.perf_counter() - clock))
        clock = time.perf_counter()
        done = [unit for unit in compiled if unit is not None]
        jit = JitModule(done, host_target_machine())
        timings.append(("link", time.perf_counter() - clock))
        return NativeCode(
            jit,
            kernels,
            from_cache=not (fresh or pending),
            bindings=bindings,
            key=self.key,
            prefetched=prefetched,
        )


def _store_memo(directory: Path, memo: ScheduleMemo, by_name: dict[str, str]) -> None:
    """The memo's records of this compile's kernels, and the pattern kinds it noted."""
    for memo_key, record in memo.records(by_name).items():
        _store(
            directory, key_of_hash(memo_key, MEMO_PIPELINE), _entry_bytes(record.data(), b"", b"")
        )
    for source, kind in memo.kinds.items():
        meta = {"format": KIND_FORMAT, "kind": kind.mnemonic}
        _store(directory, key_of_hash(source, KIND_PIPELINE), _entry_bytes(meta, b"", b""))


def _collect_background(
    workers: ScheduleWorkers,
    compiled: list[NativeUnit | None],
    digests: list[str],
    timings: StageTimings,
) -> list[NativeUnit | None]:
    """`compiled` with the units a background worker compiled meanwhile (`schedule_workers`);
    `MemoMiss` if one is missing (the worker failed: the module is compiled again, without
    the memo)."""
    from fusion_compiler.lowering.schedule_memo import MemoMiss

    workers.collect(timings)
    done = [
        workers.units.get(d) if u is None else u for u, d in zip(compiled, digests, strict=True)
    ]
    if any(unit is None for unit in done):
        raise MemoMiss()
    return done


def _check_convertible(units: list[ModuleOp]) -> None:
    """Raises convert-loop-to-llvm's `CompileError` (at the op) here, before any worker
    process starts on the units."""
    # (imported here: a model hit needs neither the pass nor xDSL's llvm dialect)
    from fusion_compiler.dialects.diagnostics import CompileError
    from fusion_compiler.lowering.convert_loop_to_llvm import check_convertible

    try:
        for unit in units:
            check_convertible(unit)
    except CompileError as err:
        err.add_prefix("convert-loop-to-llvm: ")
        raise


ENTRY_FORMAT = b"fusion-compiler cache entry 4\n"
"""The first bytes of every entry; a JSON header line and the payload follow."""


def entry_path(directory: Path, key: str) -> Path:
    return directory / f"{key}.entry"


def read_meta(directory: Path, key: str) -> dict | None:
    """The metadata of the entry `key` (one without LLVM IR or object code), or None."""
    parsed = _read(directory, key)
    return None if parsed is None else parsed[0]


def store_meta(directory: Path, key: str, meta: dict) -> None:
    """Stores an entry of metadata only (`read_meta` reads it back)."""
    _store(directory, key, _entry_bytes(meta, b"", b""))


def read_data(directory: Path, key: str) -> tuple[dict, bytes] | None:
    """The metadata and the data of the entry `key` (`store_data`), or None."""
    parsed = _read(directory, key)
    return None if parsed is None else (parsed[0], parsed[2])


def store_data(directory: Path, key: str, meta: dict, data: bytes) -> None:
    """Stores an entry of metadata and raw data (`read_data` reads them back)."""
    _store(directory, key, _entry_bytes(meta, b"", data))


def _read(directory: Path, key: str) -> tuple[dict, str, bytes] | None:
    try:
        data = entry_path(directory, key).read_bytes()
    except OSError:
        return None
    return _parse_entry(data)


def _load_unit(
    directory: Path, key: str, loaded: dict[str, NativeUnit | None] | None = None
) -> NativeUnit | None:
    """The unit of `key`, or None when it is missing, does not verify, or was compiled for
    the other threading runtime. A kernel family's member entry names the family's unit
    (`_store_units`), which is read once per `loaded` (the units read so far, by key)."""
    parsed = _read(directory, key)
    if parsed is None:
        return None
    meta, llvm_ir, object_code = parsed
    alias = meta.get("family") if isinstance(meta, dict) else None
    if isinstance(alias, str):
        if loaded is None:
            return _load_unit(directory, alias)
        if alias not in loaded:
            loaded[alias] = _load_unit(directory, alias)
        return loaded[alias]
    try:
        check_threading(llvm_ir)
        signatures = signatures_of_data(meta["signatures"])
        return NativeUnit(llvm_ir, object_code, signatures, tuple(meta["externals"]))
    except (ValueError, KeyError, TypeError, RuntimeError):
        return None


def load_native(directory: Path, key: str) -> NativeCode | None:
    """The model of `key`: its kernel lists and every one of its units, or None."""
    parsed = _read(directory, key)
    if parsed is None:
        return None
    meta = parsed[0]
    try:
        kernels = {name: tuple(calls) for name, calls in meta["kernels"].items()}
        bindings = {name: LoadBinding.of_data(b) for name, b in meta["bindings"].items()}
        loaded: dict[str, NativeUnit | None] = {}
        units = [_load_unit(directory, unit_key, loaded) for unit_key in meta["units"]]
    except (KeyError, TypeError, AttributeError, ValueError):
        return None
    if any(unit is None for unit in units):
        return None
    done = [unit for unit in units if unit is not None]
    jit = JitModule(done, host_target_machine())
    return NativeCode(jit, kernels, from_cache=True, bindings=bindings, key=key)


def _parse_entry(data: bytes) -> tuple[dict, str, bytes] | None:
    """(metadata, LLVM IR, object code) of an entry whose checksum and lengths hold."""
    if not data.startswith(ENTRY_FORMAT):
        return None
    header_end = data.find(b"\n", len(ENTRY_FORMAT))
    if header_end < 0:
        return None
    try:
        header = json.loads(data[len(ENTRY_FORMAT) : header_end])
        checksum, ir_size, object_size = header["sha256"], header["ir"], header["object"]
    except (ValueError, KeyError, TypeError):
        return None
    payload = memoryview(data)[header_end + 1 :]
    if not isinstance(ir_size, int) or not isinstance(object_size, int):
        return None
    if len(payload) != ir_size + object_size + header.get("meta", -1) or ir_size < 0:
        return None
    if hashlib.sha256(payload).hexdigest() != checksum:
        return None
    try:
        llvm_ir = bytes(payload[:ir_size]).decode()
        object_code = bytes(payload[ir_size : ir_size + object_size])
        meta = json.loads(bytes(payload[ir_size + object_size :]))
    except ValueError:
        return None
    return meta, llvm_ir, object_code


def _entry_bytes(meta: dict, llvm_ir: bytes, object_code: bytes) -> bytes:
    meta_bytes = json.dumps(meta, sort_keys=True).encode()
    payload = llvm_ir + object_code + meta_bytes
    header = {
        "sha256": hashlib.sha256(payload).hexdigest(),
        "ir": len(llvm_ir),
        "object": len(object_code),
        "meta": len(meta_bytes),
    }
    return ENTRY_FORMAT + json.dumps(header, sort_keys=True).encode() + b"\n" + payload


def _store_units(directory: Path, units: Sequence[tuple[str, NativeUnit]]) -> None:
    """Each unit under its key; a unit that serves several keys (a kernel family's: one per
    member) is stored once, under a key of its object code, and each member's entry names it
    (densenet121: 135 members of 7 families)."""
    keys_of: dict[int, list[str]] = {}
    unit_of: dict[int, NativeUnit] = {}
    for key, unit in units:
        keys_of.setdefault(id(unit), []).append(key)
        unit_of[id(unit)] = unit
    for identity, keys in keys_of.items():
        unit = unit_of[identity]
        if len(keys) == 1:
            _store(directory, keys[0], _unit_bytes(unit))
            continue
        family = hashlib.sha256(unit.object_code).hexdigest()
        _store(directory, family, _unit_bytes(unit))
        for key in keys:
            _store(directory, key, _entry_bytes({"family": family}, b"", b""))


def _unit_bytes(unit: NativeUnit) -> bytes:
    meta = {"signatures": unit.signature_data(), "externals": list(unit.externals)}
    return _entry_bytes(meta, unit.llvm_ir.encode(), unit.object_code)


def _model_bytes(
    kernels: dict[str, tuple[str, ...]], bindings: dict[str, LoadBinding], unit_keys: list[str]
) -> bytes:
    meta = {
        "kernels": {k: list(v) for k, v in kernels.items()},
        "bindings": {k: b.data() for k, b in bindings.items()},
        "units": unit_keys,
    }
    return _entry_bytes(meta, b"", b"")


class CacheWarning(UserWarning):
    """The compile cache cannot be written; compiling goes on without it."""


_warned_directories: set[Path] = set()


def _store(directory: Path, key: str, entry: bytes) -> None:
    store_file(directory, entry_path(directory, key), entry)


def store_file(directory: Path, path: Path, data: bytes | Sequence[memoryview]) -> bool:
    """Writes `data` to `path` in the cache `directory` (`atomic_write`); whether it could
    (if not, one `CacheWarning` per directory and process)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data)
        return True
    except OSError as err:
        if directory not in _warned_directories:
            _warned_directories.add(directory)
            reason = err.strerror or str(err)
            warnings.warn(
                f"compile cache {directory} cannot be written ({reason}); "
                f"compiling without it (set {CACHE_VARIABLE} to another folder, or to an empty "
                "string to switch the cache off)",
                CacheWarning,
                stacklevel=3,
            )
        return False
