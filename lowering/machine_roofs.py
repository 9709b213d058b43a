"""The roofs of the roofline model: the FMA peak of one core and the memory bandwidth.

Both are measured by two tiny kernels written in the loop dialect and compiled through our
own JIT (`convert-loop-to-llvm`, `jit.compile_llvm_module`), the best of `TRIALS` runs each:

- **FMA peak per core** (GFLOP/s, one thread): `acc[j] = acc[j] * m + b` over `12` vector
  registers of accumulators (full vector width, 512 bits on AVX-512), repeated in a loop;
  LLVM keeps the accumulators in registers and fuses each pair into one FMA (2 FLOPs);
- **memory bandwidth** (GB/s, on the profiled run's thread count): `b = a * 0.5` over two
  64 MiB buffers (beyond the last-level cache), a `parallel` loop of `vectorized` rows,
  counting 8 bytes per element (one read, one write: the profiler's compulsory bytes).

The result is kept per machine (CPU name and features) in the compile cache's folder
(`roofs-<hash>.json`, beside the compiled models; `cache_files.cache_dir`), measured again
only for a thread count it lacks; with the cache off, once per process. Measurements take
about a second; a busy machine measures lower roofs, so delete the file to measure again,
or give the roofs (`fusion-run --peak-gflops/--peak-gbps`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.host import usable_cores
from fusion_compiler.lowering.cache_files import atomic_write, cache_dir
from fusion_compiler.lowering.convert_loop_to_llvm import ConvertLoopToLLVMPass
from fusion_compiler.lowering.jit import CodegenTarget, JitModule, aligned_empty
from fusion_compiler.lowering.llvm_codegen import compile_llvm_module
from fusion_compiler.lowering.vector_loops import vector_lanes

TRIALS = 15
ACCUMULATOR_REGISTERS = 12
FMA_REPEATS = 2_000_000
STREAM_ROWS, STREAM_ROW = 4096, 4096
"""The stream kernel's buffers: 4096 x 4096 f32 (64 MiB each)."""

ROOFS_FORMAT = 1


@dataclass(frozen=True)
class Roofs:
    """The FMA peak of one core and the memory bandwidth of a run on some thread count."""

    core_gflops: float
    gbps: float
    source: str
    """Where they come from: "measured", "cached" (measured before) or "given"."""

    @property
    def balance(self) -> float:
        """FLOPs per byte where the roofs of one core meet."""
        return self.core_gflops / self.gbps


def _fma_kernel(lanes: int) -> str:
    width = ACCUMULATOR_REGISTERS * lanes
    acc = f"memref<{width}xf32>"
    return f"""
loop.func @roof_fma(%a: memref<2xf32>) outs(%acc: {acc}) attributes {{fusion.wide_vectors}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %repeats = arith.constant {FMA_REPEATS} : index
  %width = arith.constant {width} : index
  %m = memref.load %a[%c0] : memref<2xf32>
  %b = memref.load %a[%c1] : memref<2xf32>
  loop.for %r = %c0 to %repeats step %c1 {{
    loop.for %j = %c0 to %width step %c1 vectorized {{
      %x = memref.load %acc[%j] : {acc}
      %p = arith.mulf %x, %m fastmath<contract> : f32
      %s = arith.addf %p, %b fastmath<contract> : f32
      memref.store %s, %acc[%j] : {acc}
    }}
  }}
  loop.return
}}
"""


def _stream_kernel() -> str:
    buffer = f"memref<{STREAM_ROWS}x{STREAM_ROW}xf32>"
    return f"""
loop.func @roof_stream(%a: {buffer}) outs(%b: {buffer}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = arith.constant {STREAM_ROWS} : index
  %row = arith.constant {STREAM_ROW} : index
  %half = arith.constant 0.5 : f32
  loop.for %i = %c0 to %rows step %c1 parallel {{
    loop.for %j = %c0 to %row step %c1 vectorized {{
      %x = memref.load %a[%i, %j] : {buffer}
      %y = arith.mulf %x, %half : f32
      memref.store %y, %b[%i, %j] : {buffer}
    }}
  }}
  loop.return
}}
"""


def _compile(text: str) -> JitModule:
    ctx = make_context()
    module = parse_source(ctx, text, "<roofs>")
    ConvertLoopToLLVMPass().apply(ctx, module)
    return compile_llvm_module(module)


def _best_seconds(jit: JitModule, name: str, *arrays: np.ndarray) -> float:
    jit.call_kernel(name, *arrays)  # warm up
    times = []
    for _ in range(TRIALS):
        start = time.perf_counter()
        jit.call_kernel(name, *arrays)
        times.append(time.perf_counter() - start)
    return min(times)


def measure_core_gflops() -> float:
    """The FMA peak of one core, in GFLOP/s."""
    lanes = vector_lanes(CodegenTarget.host().features, wide=True)
    jit = _compile(_fma_kernel(lanes))
    factors = np.array([0.999, 0.001], np.float32)  # converges to 1: no overflow, no denormal
    accumulators = aligned_empty((ACCUMULATOR_REGISTERS * lanes,))
    accumulators[...] = 0
    seconds = _best_seconds(jit, "roof_fma", factors, accumulators)
    return 2 * accumulators.size * FMA_REPEATS / seconds / 1e9


def measure_gbps(threads: int) -> float:
    """The memory bandwidth of a stream kernel on `threads` threads (0: every core), in GB/s."""
    jit = _compile(_stream_kernel())
    jit.set_num_threads(threads)
    source = aligned_empty((STREAM_ROWS, STREAM_ROW))
    source[...] = 1
    target = aligned_empty((STREAM_ROWS, STREAM_ROW))
    target[...] = 0
    seconds = _best_seconds(jit, "roof_stream", source, target)
    return (source.nbytes + target.nbytes) / seconds / 1e9


def team_size(threads: int) -> int:
    """The threads a parallel loop runs on when asked for `threads` (0: every core this
    process may use, OpenMP's default)."""
    return threads if threads > 0 else usable_cores()


def machine_key() -> str:
    """The machine the roofs belong to: a hash of the CPU's name and features."""
    target = CodegenTarget.host()
    text = f"{ROOFS_FORMAT}\0{target.cpu}\0{target.features}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


_measured: dict[str, dict] = {}
"""The roofs measured by this process, by machine key (when the cache is off)."""


def _roofs_path() -> Path | None:
    directory = cache_dir()
    return None if directory is None else directory / f"roofs-{machine_key()}.json"


def _read(path: Path | None) -> dict:
    if path is None:
        return dict(_measured.get(machine_key(), {}))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    valid = isinstance(data, dict) and isinstance(data.get("gbps"), dict)
    return data if valid and isinstance(data.get("core_gflops"), int | float) else {}


def _write(path: Path | None, data: dict) -> None:
    _measured[machine_key()] = data
    if path is None:
        return
    with contextlib.suppress(OSError):  # an unwritable cache: measured again next time
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(data, sort_keys=True, indent=1).encode())


def machine_roofs(
    threads: int, core_gflops: float | None = None, gbps: float | None = None
) -> Roofs:
    """The roofs of this machine for a run on `threads` threads: those given, the others
    cached or measured now (and cached)."""
    if core_gflops is not None and gbps is not None:
        return Roofs(core_gflops, gbps, "given")
    measured = _measured_roofs(team_size(threads))
    if core_gflops is None and gbps is None:
        return measured
    return Roofs(
        measured.core_gflops if core_gflops is None else core_gflops,
        measured.gbps if gbps is None else gbps,
        f"given and {measured.source}",
    )


def _measured_roofs(threads: int) -> Roofs:
    path = _roofs_path()
    data = _read(path)
    key = str(threads)
    if "core_gflops" in data and key in data["gbps"]:
        return Roofs(float(data["core_gflops"]), float(data["gbps"][key]), "cached")
    core_gflops = data.get("core_gflops") or measure_core_gflops()
    gbps = {**data.get("gbps", {}), key: measure_gbps(threads)}
    cpu = CodegenTarget.host().cpu
    _write(path, {"cpu": cpu, "core_gflops": core_gflops, "gbps": gbps})
    return Roofs(float(core_gflops), float(gbps[key]), "measured")
