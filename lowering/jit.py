"""Native code on numpy arrays: compiled units linked into one MCJIT engine, and kernel calls.

A model's native code is a list of `NativeUnit`s (`llvm_codegen.compile_unit` makes one from
an `llvm` dialect module: optimised LLVM IR and the object code made from it for the host
CPU). `JitModule` links them into one execution engine: each unit's object file is added to
the engine, and calls between units (an entry function launching a kernel of another unit)
resolve at link time, as a static linker would. The returned `JitModule` keeps the engine
alive. Kernels lowered by `convert-loop-to-llvm` carry their buffer types
(`loop.kernel_type`), so `JitModule.call_kernel` can check the arrays it is given.

Parallel loops call libgomp, which the one-time initialisation loads into the process (or,
when it is missing, serial stand-ins linked into each unit: `threading_runtime`); their team
size is the global `@__fusion_num_threads`, which every unit only declares and the engine
defines once (`threading_runtime.RUNTIME_GLOBALS_IR`), so `JitModule.set_num_threads` writes
one variable (initially `$FUSION_NUM_THREADS`; 0, the default, is every core).

An entry keeps its intermediate buffers from one call to the next in globals of its unit
(`kept_buffers`); `JitModule` frees them when it is collected.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import os
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any, cast

import llvmlite.binding as llvm
import numpy as np

from fusion_compiler.dialects.shape_rules import compatible, fmt, is_static
from fusion_compiler.errors import ArgumentError, TargetError
from fusion_compiler.lowering import blas_library
from fusion_compiler.lowering.kept_buffers import kept_globals, release_kept
from fusion_compiler.lowering.threading_runtime import (
    RUNTIME_GLOBALS_IR,
    declares_num_threads,
    default_num_threads,
    load_openmp,
    num_threads_address,
)

if TYPE_CHECKING:  # (what loads and runs compiled units needs no IR: a model loaded from the
    # cache imports no xDSL)
    from xdsl.dialects.builtin import FunctionType, ModuleOp
    from xdsl.ir import Attribute

BUFFER_ALIGNMENT = 64
"""Alignment in bytes of every buffer a kernel is given or makes: one cache line, one AVX-512
vector (`aligned_empty`; `memref_to_llvm` aligns local buffers so)."""

KernelCallError = ArgumentError
"""An array does not match the buffer a kernel expects (the name kernel tests catch; the one
class of arrays that do not fit is `fusion_compiler.errors.ArgumentError`)."""


@cache
def _initialize_llvm() -> None:
    """Initialises the native target once, and makes libm's and libgomp's symbols visible to
    the JIT."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    libm = ctypes.util.find_library("m")
    if libm is not None:
        llvm.load_library_permanently(libm)
    load_openmp()


TARGET_CPU_VARIABLE = "FUSION_TARGET_CPU"
TARGET_FEATURES_VARIABLE = "FUSION_TARGET_FEATURES"


@dataclass(frozen=True)
class CodegenTarget:
    """The CPU code is generated for: an LLVM CPU name and its features (`+avx2,...`).

    The host by default (`host`); tests name other x86 CPUs ("znver3", "x86-64-v2") to check
    the code generated for them without running it.
    """

    cpu: str
    features: str

    @staticmethod
    def host() -> CodegenTarget:
        """The CPU this process compiles for, the one place that says it (the schedules' host
        model, the LLVM lowering, the compile cache's keys): this machine, unless
        `FUSION_TARGET_CPU` and `FUSION_TARGET_FEATURES` name another that it can run code for
        (AVX2 code on an AVX-512 machine: `+avx,+avx2,+fma` with `znver3` or `x86-64-v3`)."""
        machine = _this_machine()
        return _overridden(machine) or machine

    @property
    def has_avx512(self) -> bool:
        return "+avx512f" in self.features.split(",")

    def machine(self, opt: int = 3) -> llvm.TargetMachine:
        """A new target machine for this CPU, its code generator optimising at level `opt`.

        Each execution engine takes ownership of (and eventually frees) its target machine,
        so every compilation makes its own.
        """
        _initialize_llvm()
        target = llvm.Target.from_triple(llvm.get_process_triple())
        return target.create_target_machine(cpu=self.cpu, features=self.features, opt=opt)


@cache
def _this_machine() -> CodegenTarget:
    """This machine's CPU name and features, asked of LLVM once (0.2 ms a question: the
    schedules and the compile cache ask for the target per kernel and per unit)."""
    _initialize_llvm()
    return CodegenTarget(llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten())


def _overridden(machine: CodegenTarget) -> CodegenTarget | None:
    """The target `FUSION_TARGET_CPU` and `FUSION_TARGET_FEATURES` set, if they do: both are
    needed (the compiler reads the vector features, `+avx2`, `+fma`, `+avx512f`, from the
    list, while LLVM also enables what the CPU name implies), and every feature the list
    turns on must be one `machine` has, or the code would not run here. A CPU name whose
    implied features this machine lacks is not caught: turn them off in the list
    (`-avx512f`)."""
    cpu = os.environ.get(TARGET_CPU_VARIABLE, "").strip()
    features = os.environ.get(TARGET_FEATURES_VARIABLE, "").strip().replace(" ", "")
    if not cpu and not features:
        return None
    if not cpu or not features:
        raise TargetError(
            f"{TARGET_CPU_VARIABLE} and {TARGET_FEATURES_VARIABLE} go together (a CPU name "
            f"and its features, e.g. znver3 and +avx,+avx2,+fma); got "
            f"{TARGET_CPU_VARIABLE}={cpu!r} and {TARGET_FEATURES_VARIABLE}={features!r}"
        )
    have = {f[1:] for f in machine.features.split(",") if f.startswith("+")}
    missing = [f for f in features.split(",") if f.startswith("+") and f[1:] not in have]
    if missing or any(f[:1] not in "+-" or len(f) < 2 for f in features.split(",")):
        problem = (
            f"turns on {', '.join(missing)}, which this CPU ({machine.cpu}) lacks: code for it "
            "could not run here"
            if missing
            else "must be LLVM feature names, each with + or - (e.g. +avx,+avx2,+fma)"
        )
        raise TargetError(f"{TARGET_FEATURES_VARIABLE}={features!r} {problem}")
    return CodegenTarget(cpu, features)


def host_target_machine() -> llvm.TargetMachine:
    """A new target machine for this CPU (name and features), optimising at level 3."""
    return CodegenTarget.host().machine()


@cache
def runtime_globals_object() -> bytes:
    """The object code of `RUNTIME_GLOBALS_IR` for the host, made once per process."""
    module = llvm.parse_assembly(RUNTIME_GLOBALS_IR)
    machine = host_target_machine()
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    return machine.emit_object(module)


@dataclass(frozen=True)
class BufferSpec:
    """What a kernel argument must be: a C-contiguous array of this shape and dtype."""

    shape: tuple[int, ...]
    dtype: np.dtype

    @staticmethod
    def of(buffer_type: Attribute) -> BufferSpec:
        from xdsl.dialects.builtin import MemRefType

        from fusion_compiler.dialects.element_dtypes import numpy_dtype

        assert isinstance(buffer_type, MemRefType)
        return BufferSpec(tuple(buffer_type.get_shape()), numpy_dtype(buffer_type.element_type))


@dataclass(frozen=True)
class KernelSignature:
    """The buffers of a kernel: inputs, then the outputs it writes."""

    inputs: tuple[BufferSpec, ...]
    outputs: tuple[BufferSpec, ...]

    @property
    def buffers(self) -> tuple[BufferSpec, ...]:
        return (*self.inputs, *self.outputs)

    @staticmethod
    def of(kernel_type: FunctionType) -> KernelSignature:
        return KernelSignature(
            tuple(BufferSpec.of(t) for t in kernel_type.inputs.data),
            tuple(BufferSpec.of(t) for t in kernel_type.outputs.data),
        )


def kernel_signatures(module: ModuleOp) -> dict[str, KernelSignature]:
    """The signature of every `llvm.func` lowered from a `loop.func` in `module`."""
    from xdsl.dialects import llvm as llvm_dialect
    from xdsl.dialects.builtin import FunctionType

    from fusion_compiler.lowering.loop_to_llvm import KERNEL_TYPE_ATTR

    signatures: dict[str, KernelSignature] = {}
    for op in module.ops:
        if not isinstance(op, llvm_dialect.FuncOp):
            continue
        kernel_type = op.attributes.get(KERNEL_TYPE_ATTR)
        if isinstance(kernel_type, FunctionType):
            signatures[op.sym_name.data] = KernelSignature.of(kernel_type)
    return signatures


@dataclass(frozen=True)
class NativeUnit:
    """One compiled piece of a model: its optimised LLVM IR, the object code made from it, and
    the signatures of the kernels it defines (`llvm_codegen.compile_unit` makes one)."""

    llvm_ir: str
    object_code: bytes
    kernels: dict[str, KernelSignature]
    externals: tuple[str, ...] = ()
    """The functions the unit calls and does not define (libm, libgomp, other units')."""

    def signature_data(self) -> dict[str, dict]:
        """The kernels' signatures as JSON-compatible data (`signatures_of_data` reads it)."""
        return {
            name: {
                "inputs": [[list(b.shape), b.dtype.str] for b in sig.inputs],
                "outputs": [[list(b.shape), b.dtype.str] for b in sig.outputs],
            }
            for name, sig in sorted(self.kernels.items())
        }


def signatures_of_data(data: dict[str, dict]) -> dict[str, KernelSignature]:
    """The signatures `NativeUnit.signature_data` wrote."""
    return {
        name: KernelSignature(
            tuple(BufferSpec(tuple(s), np.dtype(d)) for s, d in entry["inputs"]),
            tuple(BufferSpec(tuple(s), np.dtype(d)) for s, d in entry["outputs"]),
        )
        for name, entry in data.items()
    }


def distinct_units(units: Sequence[NativeUnit]) -> tuple[NativeUnit, ...]:
    """`units`, each object code once: the unit of a kernel family serves every member
    (`native_units.compile_prepared`) and comes back from the compile cache once per member.

    A kernel may still be defined by two different units (compiled alone by one compile and
    in a family by another: a shape specialisation's packing kernel, say); a family's member
    entries are `weak_odr` definitions, and the engine takes one of the two, which do the
    same thing (the symbol is the kernel's content hash)."""
    return tuple({unit.object_code: unit for unit in units}.values())


class JitModule:
    """Native code for a model: its units' object code linked into one MCJIT engine."""

    def __init__(self, units: Sequence[NativeUnit], target_machine: llvm.TargetMachine):
        self.units = distinct_units(units)
        self._target_machine = target_machine
        empty = llvm.parse_assembly("")
        empty.triple = target_machine.triple
        self._engine = llvm.create_mcjit_compiler(empty, target_machine)
        self._objects = [llvm.ObjectFileRef.from_data(u.object_code) for u in self.units]
        if any(declares_num_threads(unit.llvm_ir) for unit in self.units):
            self._objects.append(llvm.ObjectFileRef.from_data(runtime_globals_object()))
        self._uses_blas = blas_library.needs_library(
            [name for unit in self.units for name in unit.externals]
        )
        if self._uses_blas:
            blas_library.load()
        for object_file in self._objects:
            self._engine.add_object_file(object_file)
        self._engine.finalize_object()
        kept = [
            self._engine.get_global_value_address(name)
            for unit in self.units
            for name in kept_globals(unit.llvm_ir)
        ]
        if kept:  # (the engine's memory is freed after this, with its last reference)
            weakref.finalize(self, release_kept, [address for address in kept if address])
        self._num_threads = ctypes.c_int32(0)
        address = num_threads_address(self._engine)
        if address:
            self._num_threads = ctypes.c_int32.from_address(address)
        if address or self._uses_blas:
            self.set_num_threads(default_num_threads())
        self.kernels: dict[str, KernelSignature] = {}
        """The buffer signature of each kernel lowered from a `loop.func`."""
        for unit in self.units:
            self.kernels.update(unit.kernels)
        self._callables: dict[str, Callable[..., None]] = {}

    @property
    def llvm_ir(self) -> str:
        """The optimised LLVM IR of every unit, one module after the other."""
        return "\n".join(unit.llvm_ir for unit in self.units)

    @cached_property
    def assembly(self) -> str:
        """The host assembly of every unit (compiled again from its LLVM IR)."""
        return "\n".join(
            self._target_machine.emit_assembly(llvm.parse_assembly(unit.llvm_ir))
            for unit in self.units
        )

    @property
    def num_threads(self) -> int:
        """The team size of parallel loops (0: OpenMP's default, every core)."""
        return self._num_threads.value

    def set_num_threads(self, count: int) -> None:
        """Runs parallel loops on `count` threads from now on (0: OpenMP's default); no
        effect on a module without parallel loops."""
        if count < 0:
            raise ArgumentError(f"the thread count must be at least 0, got {count}")
        self._num_threads.value = count
        if self._uses_blas:
            blas_library.set_num_threads(count)

    def function_address(self, name: str) -> int:
        """The address of the compiled function `name`."""
        address = self._engine.get_function_address(name)
        if address == 0:
            raise KeyError(f"no function '{name}' in the compiled module")
        return address

    def global_address(self, name: str) -> int:
        """The address of the module's global variable `name` (0 when it has none)."""
        return self._engine.get_global_value_address(name)

    def call_kernel(self, name: str, *arrays: np.ndarray) -> None:
        """Calls kernel `name` on numpy arrays (inputs, then outputs, written in place)."""
        signature = self.kernels.get(name)
        if signature is None:
            known = ", ".join(sorted(self.kernels)) or "none"
            raise KeyError(f"no kernel '{name}' in the compiled module (kernels: {known})")
        specs = signature.buffers
        if len(arrays) != len(specs):
            raise ArgumentError(f"kernel '{name}' takes {len(specs)} arrays, got {len(arrays)}")
        for index, (array, spec) in enumerate(zip(arrays, specs, strict=True)):
            is_output = index >= len(signature.inputs)
            _check_argument(name, index, array, spec, is_output)
        function = self._callables.get(name)
        if function is None:
            prototype = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * len(specs)))
            function = prototype(self.function_address(name))
            self._callables[name] = function
        function(*(buffer_address(array) for array in arrays))


def aligned_empty(shape: Sequence[int], dtype=np.float32) -> np.ndarray:
    """An uninitialised C-contiguous array whose data starts on a `BUFFER_ALIGNMENT` (64-byte)
    boundary, as the kernels' own buffers do.

    numpy's large arrays start 16 bytes past a page boundary, so every 256- or 512-bit vector
    access straddles two cache lines or splits a line: ffn's kernel writing such an output runs
    40% longer than writing an aligned one (17.6 vs 12.1 ms measured single-threaded). The
    compiled functions allocate their outputs and bound constants this way; inputs aligned
    likewise run fastest too."""
    dtype = np.dtype(dtype)
    return aligned_buffer(shape, dtype, math.prod(shape) * dtype.itemsize)[0]


def aligned_buffer(shape: Sequence[int], dtype: np.dtype, size: int) -> tuple[np.ndarray, int]:
    """`aligned_empty` of `size` bytes (`shape`'s elements of `dtype`), and its address."""
    return aligned_view(aligned_bytes(size), shape, dtype)


AlignedBytes = tuple[np.ndarray, int, int]
"""Raw bytes (`aligned_bytes`), the offset of their first `BUFFER_ALIGNMENT` boundary and its
address."""


def aligned_bytes(size: int) -> AlignedBytes:
    """Raw bytes that hold `size` bytes from a `BUFFER_ALIGNMENT` boundary, that offset and
    its address."""
    raw = np.empty(size + BUFFER_ALIGNMENT, np.uint8)
    address = buffer_address(raw)
    start = -address % BUFFER_ALIGNMENT
    return raw, start, address + start


def aligned_view(
    aligned: AlignedBytes, shape: Sequence[int], dtype: np.dtype
) -> tuple[np.ndarray, int]:
    """The bytes of `aligned` from its boundary as an array of `shape` and `dtype` (its `base`
    is the raw bytes), and its address. One `ndarray` constructor call (0.26 us here, where
    a slice, `view` and `reshape` took 1.2 us: a compiled function's call pays it per
    result)."""
    raw, start, address = aligned
    return np.ndarray(shape, dtype, raw, start), address


def buffer_address(array: np.ndarray) -> int:
    """The address of a C-contiguous array's first element. Through ctypes' buffer protocol
    when the array is writeable and not empty (0.7 µs, a third of `array.ctypes.data`: the
    calls of small models are dominated by such costs), else through `array.ctypes`."""
    if array.flags.writeable and array.nbytes:
        return ctypes.addressof(ctypes.c_char.from_buffer(cast(Any, array)))  # numpy's stubs
    return array.ctypes.data


def array_problem(array: object, spec: BufferSpec, writeable: bool = False) -> str | None:
    """Why `array` cannot be passed as a buffer of `spec`, or None when it can."""
    if not isinstance(array, np.ndarray):
        return f"expected a numpy array, got {type(array).__name__}"
    if array.dtype != spec.dtype:
        return f"expected dtype {spec.dtype}, got {array.dtype}"
    if not compatible(array.shape, spec.shape):  # a dynamic dimension (`?`) takes any size
        wanted = spec.shape if is_static(spec.shape) else fmt(spec.shape)
        return f"expected shape {wanted}, got {array.shape}"
    if not array.flags.c_contiguous:
        return "the array must be C-contiguous (use np.ascontiguousarray)"
    if writeable and not array.flags.writeable:
        return "the array must be writeable"
    return None


def _check_argument(
    kernel: str, index: int, array: object, spec: BufferSpec, is_output: bool
) -> None:
    problem = array_problem(array, spec, writeable=is_output)
    if problem is not None:
        role = "output" if is_output else "input"
        raise ArgumentError(f"kernel '{kernel}', argument #{index} ({role}): {problem}")
