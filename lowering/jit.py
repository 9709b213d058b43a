"""JIT compilation of an `llvm` dialect module with llvmlite, and calls on numpy arrays.

`compile_llvm_module(module)`:

    xdsl.backend.llvm.convert_module  →  512-bit vectors for functions with math expansions
    (`widen_vectors`)  →  `vectorized` loops forced to vector code (`vector_loops`)
    →  llvmlite.binding.parse_assembly  →  verify
    →  triple and data layout of a host TargetMachine (CPU name and features, opt level 3)
    →  new pass manager, PipelineTuningOptions(speed_level=3)  →  MCJIT engine

One LLVM module and one execution engine per call; the returned `JitModule` keeps both
alive. Kernels lowered by `convert-loop-to-llvm` carry their buffer types
(`loop.kernel_type`), so `JitModule.call_kernel` can check the arrays it is given.

Parallel loops call libgomp, which the one-time initialisation loads into the process (or,
when it is missing, serial stand-ins linked into each module: `threading_runtime`); their team
size is the module's `@__fusion_num_threads`, which `JitModule.set_num_threads` writes
(initially `$FUSION_NUM_THREADS`; 0, the default, is every core).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import llvm as llvm_dialect
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    FunctionType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute

from fusion_compiler.dialects.loop.attributes import WIDE_VECTORS_ATTR
from fusion_compiler.errors import ArgumentError
from fusion_compiler.lowering.loop_to_llvm import KERNEL_TYPE_ATTR
from fusion_compiler.lowering.math_to_llvm import EXPANDED_MATH_ATTR
from fusion_compiler.lowering.memref_to_llvm import BUFFER_ALIGNMENT
from fusion_compiler.lowering.threading_runtime import (
    apply_linkages,
    check_threading,
    default_num_threads,
    link_serial_runtime,
    load_openmp,
    num_threads_address,
    openmp_available,
    uses_openmp,
)
from fusion_compiler.lowering.vector_loops import (
    force_vector_loops,
    keep_loops_rolled,
    vector_lanes,
)

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


@dataclass(frozen=True)
class CodegenTarget:
    """The CPU code is generated for: an LLVM CPU name and its features (`+avx2,...`).

    The host by default; tests name other x86 CPUs ("znver3", "x86-64-v2") to check the code
    generated for them without running it.
    """

    cpu: str
    features: str

    @staticmethod
    def host() -> CodegenTarget:
        _initialize_llvm()
        return CodegenTarget(llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten())

    @property
    def has_avx512(self) -> bool:
        return "+avx512f" in self.features.split(",")

    def machine(self) -> llvm.TargetMachine:
        """A new target machine for this CPU, optimising at level 3.

        Each execution engine takes ownership of (and eventually frees) its target machine,
        so every compilation makes its own.
        """
        _initialize_llvm()
        target = llvm.Target.from_triple(llvm.get_process_triple())
        return target.create_target_machine(cpu=self.cpu, features=self.features, opt=3)


def host_target_machine() -> llvm.TargetMachine:
    """A new target machine for this CPU (name and features), optimising at level 3."""
    return CodegenTarget.host().machine()


_NUMPY_DTYPES: dict[type[Attribute], Callable[[Attribute], np.dtype]] = {
    Float32Type: lambda _: np.dtype(np.float32),
    Float64Type: lambda _: np.dtype(np.float64),
    Float16Type: lambda _: np.dtype(np.float16),
    IntegerType: lambda t: np.dtype(f"int{max(8, t.bitwidth)}"),  # type: ignore[attr-defined]
}


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype of buffer (or tensor) elements of `element_type`."""
    to_dtype = _NUMPY_DTYPES.get(type(element_type))
    if to_dtype is None:
        raise TypeError(f"no numpy dtype for {element_type}")
    return to_dtype(element_type)


@dataclass(frozen=True)
class BufferSpec:
    """What a kernel argument must be: a C-contiguous array of this shape and dtype."""

    shape: tuple[int, ...]
    dtype: np.dtype

    @staticmethod
    def of(buffer_type: Attribute) -> BufferSpec:
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
    signatures: dict[str, KernelSignature] = {}
    for op in module.ops:
        if not isinstance(op, llvm_dialect.FuncOp):
            continue
        kernel_type = op.attributes.get(KERNEL_TYPE_ATTR)
        if isinstance(kernel_type, FunctionType):
            signatures[op.sym_name.data] = KernelSignature.of(kernel_type)
    return signatures


class JitModule:
    """Native code for one `llvm` dialect module: an optimised LLVM module and its engine."""

    def __init__(
        self,
        module: llvm.ModuleRef,
        target_machine: llvm.TargetMachine,
        kernels: dict[str, KernelSignature],
        object_code: bytes | None = None,
    ):
        self._target_machine = target_machine
        self.llvm_ir: str = str(module)
        """The optimised LLVM IR."""
        self._module = module
        self._object_code = object_code
        self._engine = llvm.create_mcjit_compiler(module, self._target_machine)
        # The object cache hands MCJIT the object code of a cached compile (no code
        # generation) and records the object code of a fresh one (for the compile cache).
        self._engine.set_object_cache(self._remember_object, lambda _module: self._object_code)
        self._engine.finalize_object()
        self._engine.run_static_constructors()
        self._num_threads = ctypes.c_int32(0)
        address = num_threads_address(self._engine)
        if address:
            self._num_threads = ctypes.c_int32.from_address(address)
            self.set_num_threads(default_num_threads())
        self.kernels = kernels
        """The buffer signature of each kernel lowered from a `loop.func`."""
        self._callables: dict[str, Callable[..., None]] = {}

    @classmethod
    def from_object_code(
        cls, llvm_ir: str, object_code: bytes, signatures: dict[str, dict]
    ) -> JitModule:
        """A module rebuilt from a previous compile's optimised IR and object code; raises
        `RuntimeError` if it was compiled for the other threading runtime."""
        check_threading(llvm_ir)
        module = llvm.parse_assembly(llvm_ir)
        kernels = {
            name: KernelSignature(
                tuple(BufferSpec(tuple(s), np.dtype(d)) for s, d in data["inputs"]),
                tuple(BufferSpec(tuple(s), np.dtype(d)) for s, d in data["outputs"]),
            )
            for name, data in signatures.items()
        }
        return cls(module, host_target_machine(), kernels, object_code)

    def _remember_object(self, _module: llvm.ModuleRef, buffer: bytes) -> None:
        self._object_code = buffer

    def object_code(self) -> bytes:
        """The object code MCJIT made (or was given) for this module."""
        assert self._object_code is not None
        return self._object_code

    def signature_data(self) -> dict[str, dict]:
        """The kernels' signatures as JSON-compatible data (`from_object_code` reads it)."""
        return {
            name: {
                "inputs": [[list(b.shape), b.dtype.str] for b in sig.inputs],
                "outputs": [[list(b.shape), b.dtype.str] for b in sig.outputs],
            }
            for name, sig in sorted(self.kernels.items())
        }

    @cached_property
    def assembly(self) -> str:
        """The host assembly of the optimised module (compiled again from `llvm_ir`)."""
        return self._target_machine.emit_assembly(llvm.parse_assembly(self.llvm_ir))

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

    def function_address(self, name: str) -> int:
        """The address of the compiled function `name`."""
        address = self._engine.get_function_address(name)
        if address == 0:
            raise KeyError(f"no function '{name}' in the compiled module")
        return address

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
        function(*(array.ctypes.data for array in arrays))


def aligned_empty(shape: Sequence[int], dtype=np.float32) -> np.ndarray:
    """An uninitialised C-contiguous array whose data starts on a `BUFFER_ALIGNMENT` (64-byte)
    boundary, as the kernels' own buffers do.

    numpy's large arrays start 16 bytes past a page boundary, so every 256- or 512-bit vector
    access straddles two cache lines or splits a line: ffn's kernel writing such an output runs
    40% longer than writing an aligned one (17.6 vs 12.1 ms measured single-threaded). The
    compiled functions allocate their outputs and bound constants this way; inputs aligned
    likewise run fastest too."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    raw = np.empty(count * dtype.itemsize + BUFFER_ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % BUFFER_ALIGNMENT
    return raw[start : start + count * dtype.itemsize].view(dtype).reshape(shape)


def array_problem(array: object, spec: BufferSpec, writeable: bool = False) -> str | None:
    """Why `array` cannot be passed as a buffer of `spec`, or None when it can."""
    if not isinstance(array, np.ndarray):
        return f"expected a numpy array, got {type(array).__name__}"
    if array.dtype != spec.dtype:
        return f"expected dtype {spec.dtype}, got {array.dtype}"
    if array.shape != spec.shape:
        return f"expected shape {spec.shape}, got {array.shape}"
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


def optimize(module: llvm.ModuleRef, target_machine: llvm.TargetMachine) -> None:
    """Runs LLVM's O3 pipeline (new pass manager) on `module` for `target_machine`."""
    tuning = llvm.create_pipeline_tuning_options(speed_level=3)
    builder = llvm.create_pass_builder(target_machine, tuning)
    builder.getModulePassManager().run(module, builder)


WIDE_VECTOR_ATTRIBUTES = ('"prefer-vector-width"="512"', "noinline")
"""LLVM function attributes of `widen_vectors`. The loop vectoriser reads the preference of
the function that holds the loop after inlining, so the function is kept out of its callers
(an outlined parallel body out of its trampoline; a kernel out of the entry function)."""


def _is_wide(op: llvm_dialect.FuncOp, target: CodegenTarget) -> bool:
    """Whether `op` is to be vectorised 512 bits wide on `target`: it holds an f32 expansion,
    or register tiles sized for the full vector width (`WIDE_VECTORS_ATTR`)."""
    return target.has_avx512 and (
        EXPANDED_MATH_ATTR in op.attributes or WIDE_VECTORS_ATTR in op.attributes
    )


def widen_vectors(module: ModuleOp, ir_module: ir.Module, target: CodegenTarget) -> None:
    """On AVX-512 targets, lets LLVM vectorise the functions holding an f32 expansion
    (`EXPANDED_MATH_ATTR`) or full-width register tiles (`WIDE_VECTORS_ATTR`) 512 bits wide.

    LLVM's tuning for AVX-512 CPUs prefers 256-bit vectors, and every other function keeps
    that: code bound by memory or by reductions gains nothing from wider vectors (layer_norm
    is 12% slower with them). Expansions are long chains of float arithmetic per element,
    which 512-bit vectors run at up to twice the rate. Measured single-threaded, with the
    same code otherwise: relu(tanh(a * b + c)) on 1024x1024 takes 0.65 ms rather than
    0.78 ms (as long as with tanh replaced by the identity: memory-bound), softmax 10-15% and
    the encoder block 11-19% less, the matmul + gelu kernel mostly 10% less (varying between
    processes). Per element, the results are the same whatever the vector width (nothing is
    reassociated).
    """
    for op in module.ops:
        if isinstance(op, llvm_dialect.FuncOp) and _is_wide(op, target):
            attributes = ir_module.get_global(op.sym_name.data).attributes
            for attribute in WIDE_VECTOR_ATTRIBUTES:
                set.add(attributes, attribute)  # llvmlite's add knows no string attributes


def _vector_lanes_by_function(module: ModuleOp, target: CodegenTarget) -> dict[str, int]:
    """The lane count forced on the `vectorized` loops of each function (`vector_loops`)."""
    return {
        op.sym_name.data: vector_lanes(target.features, wide=_is_wide(op, target))
        for op in module.ops
        if isinstance(op, llvm_dialect.FuncOp)
    }


def _check_lowered(module: ModuleOp) -> None:
    for op in module.ops:
        if not isinstance(op, llvm_dialect.FuncOp | llvm_dialect.GlobalOp):
            raise ValueError(
                f"compile_llvm_module: '{op.name}' is not in the llvm dialect "
                "(run convert-loop-to-llvm first)"
            )


StageTimings = list[tuple[str, float]]
"""(stage, seconds) pairs, appended in order (`PassTimer.timings` has the same form)."""


def optimized_llvm_module(
    module: ModuleOp,
    target: CodegenTarget,
    target_machine: llvm.TargetMachine,
    timings: StageTimings | None = None,
) -> llvm.ModuleRef:
    """Translates an `llvm` dialect module to LLVM, forces its `vectorized` loops to vector
    code (`vector_loops`) and optimises it at O3 for `target` (whose machine is given);
    appends the seconds of translation and optimisation to `timings` when given."""
    _check_lowered(module)
    clock = _StageClock(timings)
    data_layout = str(target_machine.target_data)
    ir_module = convert_module(
        module, fallback_target_triple=target_machine.triple, data_layout=data_layout
    )
    apply_linkages(module, ir_module)
    widen_vectors(module, ir_module, target)
    force_vector_loops(
        ir_module, _vector_lanes_by_function(module, target), vector_lanes(target.features)
    )
    keep_loops_rolled(ir_module)
    llvm_module = llvm.parse_assembly(str(ir_module))
    if uses_openmp(llvm_module) and not openmp_available():
        link_serial_runtime(llvm_module)
    llvm_module.verify()
    llvm_module.triple = target_machine.triple
    llvm_module.data_layout = data_layout
    clock.lap("llvm-translate")
    optimize(llvm_module, target_machine)
    clock.lap("llvm-optimize")
    return llvm_module


def compile_llvm_module(module: ModuleOp, timings: StageTimings | None = None) -> JitModule:
    """Translates, optimises and JIT-compiles an `llvm` dialect module for the host CPU;
    appends the seconds of each stage to `timings` when given."""
    _check_lowered(module)
    target = CodegenTarget.host()
    target_machine = target.machine()
    llvm_module = optimized_llvm_module(module, target, target_machine, timings)
    clock = _StageClock(timings)
    jit = JitModule(llvm_module, target_machine, kernel_signatures(module))
    clock.lap("llvm-codegen")
    return jit


class _StageClock:
    """Appends the seconds since the previous lap to `timings` (nothing when it is None)."""

    def __init__(self, timings: StageTimings | None):
        self.timings = timings
        self.start = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        if self.timings is not None:
            self.timings.append((stage, now - self.start))
        self.start = now
