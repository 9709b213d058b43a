"""From a graph-level module to native code, through an on-disk compile cache.

The cache key is a hash of the module's text, the pipeline, the host CPU (name and features),
the versions of this package, xDSL and llvmlite, and the source of the compiler itself (every
module of `fusion_dialects`, `passes` and `lowering`: an edited pass never serves code the
previous version compiled). An entry holds the optimised LLVM IR, the
object code MCJIT made from it, and the kernels each entry launches; a hit skips the pass
pipeline, LLVM's optimiser and its code generator. The cache lives in `$FUSION_CACHE_DIR`, or
`~/.cache/fusion-compiler`; setting `FUSION_CACHE_DIR` to an empty string, or passing
`use_cache=False`, disables it. Entries are written atomically (write, then rename).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import llvmlite.binding as llvm
from xdsl.dialects.builtin import ModuleOp

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.context import make_context
from fusion_compiler.lowering.jit import (
    JitModule,
    StageTimings,
    compile_llvm_module,
    host_target_machine,
)
from fusion_compiler.passes.pipeline import PassInstrument, PassManager

CACHE_VARIABLE = "FUSION_CACHE_DIR"


@dataclass
class NativeCode:
    jit: JitModule
    kernels: dict[str, tuple[str, ...]]
    """Per entry function, the kernels it launches in order."""
    from_cache: bool


def cache_dir() -> Path | None:
    """Where compiled models are kept, or None when caching is off."""
    configured = os.environ.get(CACHE_VARIABLE)
    if configured is not None:
        return Path(configured) if configured else None
    return Path.home() / ".cache" / "fusion-compiler"


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


COMPILER_PACKAGES = ("fusion_dialects", "passes", "lowering")
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


def cache_key(module: ModuleOp, pipeline: str) -> str:
    machine = host_target_machine()
    parts = [
        str(module),
        pipeline,
        machine.triple,
        llvm.get_host_cpu_name(),
        llvm.get_host_cpu_features().flatten(),
        _version("fusion-compiler"),
        _version("xdsl"),
        _version("llvmlite"),
        compiler_fingerprint(),
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def entry_kernels(module: ModuleOp) -> dict[str, tuple[str, ...]]:
    """Per entry `loop.func` made by lower-graph, the callees of its `loop.call`s in order."""
    kernels: dict[str, tuple[str, ...]] = {}
    for op in module.ops:
        if isinstance(op, loop.FuncOp) and "loop.bound_constants" in op.attributes:
            calls = [c for c in op.body.block.ops if isinstance(c, loop.CallOp)]
            kernels[op.sym_name.data] = tuple(c.callee.string_value() for c in calls)
    return kernels


def _lower(
    module: ModuleOp, pipeline: str, instruments: Sequence[PassInstrument] = ()
) -> tuple[ModuleOp, dict[str, tuple[str, ...]]]:
    """A lowered copy of `module` and the kernels of each entry."""
    lowered = module.clone()
    ctx = make_context()
    spec = ",".join(p for p in (pipeline, "lower-graph") if p)
    PassManager(spec, ctx=ctx, instruments=instruments).run(lowered)
    kernels = entry_kernels(lowered)
    PassManager("convert-loop-to-llvm", ctx=ctx, instruments=instruments).run(lowered)
    return lowered, kernels


def compile_native(
    module: ModuleOp,
    pipeline: str,
    *,
    use_cache: bool = True,
    instruments: Sequence[PassInstrument] = (),
    timings: StageTimings | None = None,
) -> NativeCode:
    """Native code for `module` compiled with `pipeline` (from the cache when possible);
    `instruments` run around each pass when it is compiled; the seconds of the LLVM stages
    are appended to `timings` when given."""
    directory = cache_dir() if use_cache else None
    key = cache_key(module, pipeline) if directory is not None else ""
    if directory is not None:
        hit = _load(directory, key)
        if hit is not None:
            return hit
    lowered, kernels = _lower(module, pipeline, instruments)
    jit = compile_llvm_module(lowered, timings)
    if directory is not None:
        _store(directory, key, jit, kernels)
    return NativeCode(jit, kernels, from_cache=False)


def _paths(directory: Path, key: str) -> tuple[Path, Path, Path]:
    return directory / f"{key}.ll", directory / f"{key}.o", directory / f"{key}.json"


def _load(directory: Path, key: str) -> NativeCode | None:
    ir_path, object_path, meta_path = _paths(directory, key)
    if not (ir_path.exists() and object_path.exists() and meta_path.exists()):
        return None
    try:
        meta = json.loads(meta_path.read_text())
        jit = JitModule.from_object_code(
            ir_path.read_text(), object_path.read_bytes(), meta["signatures"]
        )
    except (OSError, ValueError, KeyError, RuntimeError):
        return None  # a damaged entry is a miss; it is overwritten below
    kernels = {name: tuple(calls) for name, calls in meta["kernels"].items()}
    return NativeCode(jit, kernels, from_cache=True)


def _store(directory: Path, key: str, jit: JitModule, kernels) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        ir_path, object_path, meta_path = _paths(directory, key)
        meta = {
            "kernels": {k: list(v) for k, v in kernels.items()},
            "signatures": jit.signature_data(),
        }
        _atomic_write(object_path, jit.object_code())
        _atomic_write(ir_path, jit.llvm_ir.encode())
        _atomic_write(meta_path, json.dumps(meta, sort_keys=True).encode())
    except OSError:
        pass  # the cache is an optimisation: a read-only or full disk only costs time


def _atomic_write(path: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(handle, "wb") as stream:
        stream.write(data)
    os.replace(temporary, path)
