"""The threading runtime of JIT-compiled modules: libgomp, or serial stand-ins without it.

Kernels lowered by `convert-loop-to-llvm` launch their `parallel` loops with libgomp's
`GOMP_parallel` and ask it `omp_get_thread_num` / `omp_get_num_threads`
(`fusion_compiler.lowering.parallel_to_llvm`). `fusion_compiler.lowering.jit` loads libgomp, the OpenMP runtime that ships with
gcc, into the process once (`load_openmp`), so MCJIT resolves those calls to it. Without
libgomp, `link_serial_runtime` links stand-ins into the module instead: `GOMP_parallel(fn,
data, ...)` calls `fn(data)` once, as thread 0 of a team of 1, so parallel loops run serially
with the same results.

libgomp is loaded with a short spin before idle threads sleep unless the user chose a wait
policy (`load_openmp` has the measurements), and pinned in memory (`RTLD_NODELETE`): LLVM
unloads the libraries it loaded at exit, which crashed processes whose idle OpenMP threads
were still spinning in libgomp's code.

The team size is the module's global `@__fusion_num_threads` (0 = OpenMP's default, i.e.
`OMP_NUM_THREADS` or every core). A new `JitModule` sets it from the `FUSION_NUM_THREADS`
environment variable (`default_num_threads`), and `JitModule.set_num_threads` changes it.

Also here: `check_threading`, which tells a cached module compiled for the other runtime.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from functools import cache

import llvmlite.binding as llvm

from fusion_compiler.errors import ArgumentError
from fusion_compiler.lowering.linked_ir import declares, link_internal

GOMP_PARALLEL = "GOMP_parallel"
"""libgomp's entry to a parallel region (`parallel_to_llvm` calls it; its second argument
is all the outlined body receives)."""

THREAD_NUM = "omp_get_thread_num"
NUM_THREADS = "omp_get_num_threads"
"""OpenMP's calls an outlined parallel body makes for its thread's index and the team's size."""

NUM_THREADS_GLOBAL = "__fusion_num_threads"
"""The module's i32 global holding the team size (0: OpenMP's default)."""

NUM_THREADS_VARIABLE = "FUSION_NUM_THREADS"

SERIAL_RUNTIME_IR = f"""
define void @{GOMP_PARALLEL}(ptr %fn, ptr %data, i32 %num_threads, i32 %flags) {{
  call void %fn(ptr %data)
  ret void
}}
define i32 @{THREAD_NUM}() {{
  ret i32 0
}}
define i32 @{NUM_THREADS}() {{
  ret i32 1
}}
"""
"""Serial stand-ins for the libgomp functions generated code calls."""


WAIT_POLICY_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
"""libgomp's settings for how idle threads wait; `load_openmp` picks a short spin if neither
is set."""

DEFAULT_SPIN_COUNT = "3000"
"""How long idle team threads spin before they sleep, in libgomp's spin iterations (about
0.1 ms on the machine measured)."""


@cache
def load_openmp() -> str | None:
    """Loads libgomp into the process (once); its path, or None when it is not found.

    Unless `OMP_WAIT_POLICY` or `GOMP_SPINCOUNT` is set, libgomp is loaded with
    `GOMP_SPINCOUNT=DEFAULT_SPIN_COUNT` (it reads its environment when it is loaded; the
    variable is removed again afterwards). Idle threads spin that long, then sleep. Measured
    on a shared 2-core VM (`bench/parallel_threshold.py` and the examples):

    - libgomp's default spin (300000 iterations, about 10 ms): a launch costs ~1 us on an idle
      machine, but when another process keeps a core busy, the spinning thread holds the core
      a team member needs, and a model run took 3-30x longer than on one thread;
    - `OMP_WAIT_POLICY=passive` (sleep at once): never more than ~5% slower than one thread
      under contention, but every launch on an idle machine pays a wake-up (~85 us on that
      VM), so launch-heavy models gained only 1.2-1.5x instead of 1.8-2x;
    - 3000 iterations: ~1 us launches while a model runs (its launches follow each other
      within the spin), and 10-40% slower than one thread under contention.
    """
    path = ctypes.util.find_library("gomp")
    if path is None:
        return None
    chosen = not any(name in os.environ for name in WAIT_POLICY_VARIABLES)
    if chosen:
        os.environ["GOMP_SPINCOUNT"] = DEFAULT_SPIN_COUNT
    try:
        # Pinned first, so that LLVM's unloading at exit leaves it mapped (see above).
        ctypes.CDLL(path, mode=os.RTLD_GLOBAL | os.RTLD_NODELETE)
        llvm.load_library_permanently(path)
    except (OSError, RuntimeError):
        return None
    finally:
        if chosen:
            del os.environ["GOMP_SPINCOUNT"]
    return path


def openmp_available() -> bool:
    """Whether parallel loops run on libgomp's threads (else on the serial stand-ins)."""
    return load_openmp() is not None


def uses_openmp(module: llvm.ModuleRef) -> bool:
    """Whether `module` declares `GOMP_parallel` (has a parallel loop) without defining it."""
    return declares(module, GOMP_PARALLEL)


def link_serial_runtime(module: llvm.ModuleRef) -> None:
    """Defines the libgomp functions `module` declares with serial stand-ins (internal)."""
    link_internal(module, SERIAL_RUNTIME_IR, (GOMP_PARALLEL, THREAD_NUM, NUM_THREADS))


_chosen_num_threads: int | None = None
"""The team size `set_default_num_threads` chose (None: `FUSION_NUM_THREADS` decides)."""


def set_default_num_threads(count: int) -> None:
    """Modules made from now on run parallel loops on `count` threads (0: OpenMP's default,
    every core), whatever `FUSION_NUM_THREADS` says."""
    global _chosen_num_threads
    if count < 0:
        raise ArgumentError(f"the thread count must be at least 0, got {count}")
    _chosen_num_threads = count


def default_num_threads() -> int:
    """The team size of a new module: `set_default_num_threads`'s, else the one
    `FUSION_NUM_THREADS` asks for (unset or empty: 0, OpenMP's default)."""
    if _chosen_num_threads is not None:
        return _chosen_num_threads
    text = os.environ.get(NUM_THREADS_VARIABLE, "").strip()
    if not text:
        return 0
    if not text.isdigit():
        raise ValueError(f"{NUM_THREADS_VARIABLE} must be a thread count (0: all), got {text!r}")
    return int(text)


def threading_runtime_name() -> str:
    """The runtime parallel loops are compiled for here: part of every compile-cache key, so
    code compiled for one runtime is never served under the other."""
    return "libgomp" if openmp_available() else "serial stand-ins"


def check_threading(llvm_ir: str) -> None:
    """Raises `RuntimeError` if optimised IR calls libgomp and libgomp is not loaded (MCJIT
    would abort on the unresolved symbol): the last line of defence for cached code, whose
    key already names the runtime (`threading_runtime_name`)."""
    if f"declare void @{GOMP_PARALLEL}(" in llvm_ir and not openmp_available():
        raise RuntimeError("compiled for libgomp, which is not available")


def num_threads_address(engine: llvm.ExecutionEngine) -> int:
    """The address of the engine's `@__fusion_num_threads`, or 0 without parallel loops."""
    return engine.get_global_value_address(NUM_THREADS_GLOBAL)


RUNTIME_GLOBALS_IR = f"@{NUM_THREADS_GLOBAL} = global i32 0\n"
"""The one definition of the team size: every compiled unit only declares it
(`RUNTIME_GLOBALS`), and the engine links this in once (`jit.JitModule`)."""


RUNTIME_GLOBALS = frozenset({NUM_THREADS_GLOBAL})
"""The globals every unit declares rather than defines (`llvm_text.module_text`), so that units
compiled apart link into one engine with one team size."""


def declares_num_threads(llvm_ir: str) -> bool:
    """Whether optimised IR refers to the team size (a unit with parallel loops)."""
    return f"@{NUM_THREADS_GLOBAL} =" in llvm_ir
