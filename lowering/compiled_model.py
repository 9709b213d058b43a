"""A graph-level module compiled to native code, called on numpy arrays.

```python
import numpy as np
from fusion_compiler.driver import compile_file

model = compile_file("examples/ffn.mlir")             # default fusion pipeline, cached
x, w, b = (np.ones(s, np.float32) for s in [(128, 768), (768, 3072), (3072,)])
(y,) = model.run("main", x, w, b)                     # or model.main(x, w, b)
print(model.kernels("main"))                          # ['fused_matmul_add_gelu']

profiled = compile_file("examples/ffn.mlir", profile=True)   # a profiling build
print(profiled.profile("main", x, w, b, runs=10).table())    # time, FLOPs, bytes, roofs
```

The driver (`fusion_compiler.driver.compile_module`) runs the fusion pipeline (or any
pipeline given), `lower-graph` and `convert-loop-to-llvm`, then LLVM at O3 for this CPU: one
LLVM module and one execution engine per model; `CompiledModel.of` wraps the result. Each
graph-level function becomes one native entry that runs all its kernels: one call from Python,
none between kernels. Outputs are allocated 64-byte aligned
(`fusion_compiler.lowering.jit.aligned_empty`; aligned inputs run fastest too). The constants
of a function (weights) are bound as buffers when the model is compiled and passed to the
entry on every call; they never appear in the LLVM IR. Parallel loops run on every core
(`set_num_threads`, or the `FUSION_NUM_THREADS` environment variable when the model is
compiled or loaded, picks another count). Arguments are checked (count, dtype, shape,
contiguity) before the native call, and a mismatch raises `ArgumentError` naming the argument.
A call costs a few microseconds of Python: the common case of the check is one comparison
per argument, the weights' addresses are taken once, and addresses go through ctypes' buffer
protocol (a relu on 16x13x13 called in a loop: 17.4 µs a call before, 6.2 µs after; onnxruntime
6.8 µs on the same machine, Zen 5).

A profiling build (`profile=True`) times every kernel launch inside the native entry;
`profile` runs a function and returns what it measured per kernel (`profile_report.Profile`).
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from fusion_compiler.dialects.shape_rules import is_static
from fusion_compiler.errors import ArgumentError
from fusion_compiler.lowering import compile_cache
from fusion_compiler.lowering.jit import (
    BUFFER_ALIGNMENT,
    BufferSpec,
    JitModule,
    KernelSignature,
    aligned_empty,
    array_problem,
    buffer_address,
)
from fusion_compiler.lowering.output_pool import OutputPool

if TYPE_CHECKING:  # (a model loaded from the cache (`file_cache`) reads no IR and does not
    # profile until asked: these are imported where they are needed)
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp, TensorType

    from fusion_compiler.lowering.compile_cache import LoadBinding, NativeCode
    from fusion_compiler.lowering.load_memo import Digests, Prefetch
    from fusion_compiler.lowering.machine_roofs import Roofs
    from fusion_compiler.lowering.profile_report import Profile


@dataclass(frozen=True)
class Parameter:
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype = np.dtype(np.float32)
    """The numpy dtype of its elements (`element_dtypes.numpy_dtype` of the tensor's element
    type)."""


@dataclass
class CompiledFunction:
    """One native entry point: its parameters, results, bound constants and kernels."""

    name: str
    parameters: tuple[Parameter, ...]
    results: tuple[tuple[int, ...], ...]
    result_dtypes: tuple[np.dtype, ...]
    constants: tuple[np.ndarray, ...]
    kernels: tuple[str, ...]
    """The kernels the entry launches, in order."""
    _native: ctypes._CFuncPtr | None = None
    _bound: tuple[int, ...] = ()
    """The addresses of `constants`, taken once when the entry is bound (`bind`)."""
    _expected: tuple[tuple[tuple[int, ...], np.dtype], ...] | None = None
    """(shape, dtype) of every parameter when all shapes are static: the fast argument check."""
    _outputs: OutputPool = field(default_factory=lambda: OutputPool(()))
    """The results' buffers, reused once the caller has dropped them (`output_pool`)."""
    _code: JitModule | None = None
    """The engine holding the entry's code: kept alive as long as the function is (a
    function taken from a model the caller then drops, `compile_file(p).main`, must not
    call freed code)."""

    def bind(self, native: ctypes._CFuncPtr, code: JitModule) -> None:
        """Sets the native entry, in `code`, once `constants` are final (their addresses are
        kept)."""
        self._native = native
        self._code = code
        self._bound = tuple(buffer_address(array) for array in self.constants)
        if all(is_static(parameter.shape) for parameter in self.parameters):
            self._expected = tuple((p.shape, np.dtype(p.dtype)) for p in self.parameters)
        self._outputs = OutputPool(tuple(zip(self.results, self.result_dtypes, strict=True)))

    def check(self, arrays: Sequence[object]) -> None:
        """Raise `ArgumentError` unless `arrays` match the parameters."""
        if len(arrays) != len(self.parameters):
            raise ArgumentError(
                f"@{self.name} takes {len(self.parameters)} arguments, got {len(arrays)}"
            )
        for index, (array, parameter) in enumerate(zip(arrays, self.parameters, strict=True)):
            problem = array_problem(array, BufferSpec(parameter.shape, parameter.dtype))
            if problem is not None:
                raise ArgumentError(
                    f"@{self.name}: argument #{index} (%{parameter.name}): {problem}"
                )

    def _matches(self, arrays: Sequence[object]) -> bool:
        """The check's common case in a few hundred nanoseconds: arrays of exactly the
        parameters' static shapes and dtypes, C-contiguous."""
        expected = self._expected
        if expected is None or len(arrays) != len(expected):
            return False
        for array, (shape, dtype) in zip(arrays, expected, strict=True):
            if (
                type(array) is not np.ndarray
                or array.shape != shape
                or array.dtype != dtype
                or not array.flags.c_contiguous
            ):
                return False
        return True

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        if not self._matches(arrays):
            self.check(arrays)
        assert self._native is not None
        outputs, addresses = self._outputs.take_all()
        self._native(*[buffer_address(array) for array in arrays], *self._bound, *addresses)
        return outputs


class CompiledModel:
    """Native code for every graph-level function of a module."""

    def __init__(
        self,
        jit: JitModule,
        functions: dict[str, CompiledFunction],
        from_cache: bool,
        native_key: str = "",
        blob_digests: Digests | None = None,
    ):
        self._jit = jit
        self.functions = functions
        self.from_cache = from_cache
        """Whether the native code came from the on-disk compile cache."""
        self.native_key = native_key
        """The cache key of the native code's model entry (empty when compiled without the
        cache): what the file level of the cache (`file_cache`) points to."""
        self.blob_digests = blob_digests or {}
        """The file cache's names of some of the functions' constants (`load_memo.Digests`),
        known when they were bound: `file_cache.store` need not hash them again."""
        for function in functions.values():
            signature = jit.kernels.get(function.name)
            if signature is not None:
                _check_binding(function, signature)
            count = len(function.parameters) + len(function.constants) + len(function.results)
            prototype = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * count))
            function.bind(prototype(jit.function_address(function.name)), jit)

    @staticmethod
    def of(module: ModuleOp, native: NativeCode) -> CompiledModel:
        """The model of `module`'s graph-level functions, run by `native` (its native code)."""
        from fusion_compiler.dialects.graph import graph_functions

        functions = {}
        digests: Digests = {}
        for function in graph_functions(module):
            name = function.sym_name.data
            binding = native.bindings.get(name)
            described = _describe_function(function, native.kernels[name], binding)
            if binding is not None:
                described.constants = _load(
                    native.jit, binding, described.constants, digests, native.prefetched
                )
            functions[name] = described
        return CompiledModel(native.jit, functions, native.from_cache, native.key, digests)

    def run(self, name: str, *arrays: np.ndarray) -> list[np.ndarray]:
        """Call the compiled function `name`; returns its results as new arrays."""
        return self._function(name)(*arrays)

    def _function(self, name: str) -> CompiledFunction:
        if name not in self.functions:
            known = ", ".join(sorted(self.functions))
            raise ArgumentError(f"no function @{name} (functions: {known})")
        return self.functions[name]

    def profile(
        self, name: str, *arrays: np.ndarray, runs: int = 1, roofs: Roofs | None = None
    ) -> Profile:
        """Run function `name` once to warm up, then `runs` times with every kernel launch
        timed; what was measured, per kernel, against `roofs` (default: this machine's,
        `machine_roofs`). Needs a profiling build (`compile_module(..., profile=True)`)."""
        from fusion_compiler.lowering.machine_roofs import machine_roofs, team_size
        from fusion_compiler.lowering.profile_report import Launch, Profile
        from fusion_compiler.lowering.profiling import (
            BYTES,
            CALLS,
            FLOPS,
            NANOSECONDS,
            counters_of,
        )

        function = self._function(name)
        if runs < 1:
            raise ArgumentError(f"profile: runs must be at least 1, got {runs}")
        counters = counters_of(self._jit, name, len(function.kernels))
        if counters is None:
            raise ArgumentError(
                f"@{name} was compiled without profiling: compile it with profile=True "
                "(fusion-run --profile)"
            )
        function(*arrays)  # the warm-up run checks the arguments
        counters[:, NANOSECONDS] = 0
        counters[:, CALLS] = 0
        for _ in range(runs):
            function(*arrays)
        launches = [
            Launch(
                kernel, int(row[NANOSECONDS]), int(row[CALLS]), _known(row[FLOPS]), int(row[BYTES])
            )
            for kernel, row in zip(function.kernels, counters[:-1], strict=True)
        ]
        run_row = counters[-1]
        threads = team_size(self.num_threads)
        roofs = roofs or machine_roofs(threads)
        return Profile.of(name, launches, runs, int(run_row[NANOSECONDS]), threads, roofs)

    def __getattr__(self, name: str) -> CompiledFunction:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(name)

    @property
    def num_threads(self) -> int:
        """The threads parallel loops run on (0: OpenMP's default, every core)."""
        return self._jit.num_threads

    def set_num_threads(self, count: int) -> None:
        """Runs the parallel loops of every function on `count` threads (0: every core)."""
        self._jit.set_num_threads(count)

    def kernels(self, name: str = "main") -> list[str]:
        """The kernels function `name` launches, in order."""
        return list(self.functions[name].kernels)

    @property
    def llvm_ir(self) -> str:
        """The optimised LLVM IR of the whole model (weights are not in it)."""
        return self._jit.llvm_ir

    @property
    def assembly(self) -> str:
        """The host assembly of the whole model."""
        return self._jit.assembly


def _check_binding(function: CompiledFunction, signature: KernelSignature) -> None:
    """Raises unless the buffers `function` passes (parameters, bound constants, results)
    are those its native entry takes: the compile binds the graph-level function's constants
    to the entry's trailing inputs (`lower_graph.bound_constants`), which holds only while no
    pass adds or removes a `graph.constant`. Anything else would hand the entry buffers in
    the wrong places, a write past an array's end rather than an error."""
    passed = [
        *((tuple(p.shape), np.dtype(p.dtype)) for p in function.parameters),
        *((tuple(c.shape), c.dtype) for c in function.constants),
        *zip(function.results, function.result_dtypes, strict=True),
    ]
    taken = [(spec.shape, spec.dtype) for spec in signature.buffers]
    if len(passed) != len(taken) or any(
        np.dtype(dtype) != spec_dtype or (is_static(shape) and tuple(shape) != spec_shape)
        for (shape, dtype), (spec_shape, spec_dtype) in zip(passed, taken, strict=False)
    ):
        raise RuntimeError(
            f"internal error: @{function.name} would pass {len(passed)} buffers to a native "
            f"entry that takes {len(taken)} (shapes and dtypes: {passed} against {taken}): "
            "a pass added or removed a graph.constant"
        )


def _known(flops: np.int64) -> int | None:
    return None if flops < 0 else int(flops)


def _describe_function(
    function: func.FuncOp, kernels: tuple[str, ...], binding: LoadBinding | None = None
) -> CompiledFunction:
    """The function's description, its constants as the entry (or its load entry) takes
    them: a copy of each unless it is mapped (`_bound_array`), but a view of the IR's bytes
    for one that only the load entry reads (`binding`), which it packs into a buffer of its
    own once: a copy of a weight the model then drops would raise the load's peak by its
    size (vgg19's classifier weights, 411 MB)."""
    from fusion_compiler.dialects.element_dtypes import numpy_dtype
    from fusion_compiler.lowering.lower_graph import bound_constants

    parameters = tuple(
        Parameter(
            arg.name_hint or f"arg{arg.index}",
            tuple(_tensor(arg.type).get_shape()),
            numpy_dtype(_tensor(arg.type).element_type),
        )
        for arg in function.body.block.args
    )
    outputs = [_tensor(t) for t in function.function_type.outputs.data]
    results = tuple(tuple(t.get_shape()) for t in outputs)
    dtypes = tuple(numpy_dtype(t.element_type) for t in outputs)
    entry_reads = None if binding is None else {i for i in binding.sources if i >= 0}
    constants = tuple(
        _bound_array(op.value)
        if entry_reads is None or index in entry_reads
        else _load_input(op.value)
        for index, op in enumerate(bound_constants(function))
    )
    return CompiledFunction(function.sym_name.data, parameters, results, dtypes, constants, kernels)


def _load(
    jit: JitModule,
    binding: LoadBinding,
    constants: tuple[np.ndarray, ...],
    digests: Digests,
    prefetched: Prefetch | None = None,
):
    """The bound inputs of an entry with a load entry: the load entry runs once, here, on its
    constants (its launches one by one, with the compile cache: `load_memo`, which maps the
    results it holds and notes in `digests` the blobs' names, taking what `prefetched` found);
    its results and the constants the entry reads, in the entry's order."""
    from fusion_compiler.lowering import load_memo

    inputs = [constants[index] for index in binding.load_sources]
    directory = compile_cache.cache_dir() if binding.launches else None
    if directory is not None:
        results, known = load_memo.bind_results(jit, binding, inputs, directory, prefetched)
        digests.update(known)
    else:
        results = [aligned_empty(shape, np.dtype(dtype)) for shape, dtype in binding.results]
        prototype = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * (len(inputs) + len(results))))
        load = prototype(jit.function_address(binding.load_entry))
        load(*(buffer_address(array) for array in (*inputs, *results)))
    return tuple(constants[i] if i >= 0 else results[-1 - i] for i in binding.sources)


def load_inputs(module: ModuleOp, name: str, binding: LoadBinding) -> list[np.ndarray]:
    """The inputs of the load entry of `module`'s function `name` (`binding`), each a view of
    its constant's bytes where `_load_input` makes one: what `load_memo.Prefetch` names before
    `of` binds them (an input the entry reads too is bound as a copy, then named again)."""
    from fusion_compiler.dialects.graph import graph_functions
    from fusion_compiler.lowering.lower_graph import bound_constants

    (function,) = (f for f in graph_functions(module) if f.sym_name.data == name)
    constants = bound_constants(function)
    return [_load_input(constants[index].value) for index in binding.load_sources]


def _load_input(value) -> np.ndarray:
    """A constant only the load entry reads: a read-only view of its raw bytes when they are
    all its elements (kernels take buffers at any alignment: a model's inputs are numpy's),
    else `_bound_array`'s copy."""
    view = _f32_view(value)
    return _bound_array(value) if view is None else view


def _bound_array(value) -> np.ndarray:
    """The elements of a constant as a 64-byte aligned array of its dtype: a read-only view of
    a weights file's mapped pages that are aligned (`WeightsFile`: the blobs are; vgg19's
    70 MB of convolution weights the entry reads took 0.22 s to copy into new memory), else a
    new array, copied once from the attribute's raw bytes (splats and other element types
    through `constant_array`)."""
    from xdsl.dialects.builtin import Float32Type

    from fusion_compiler.dialects.element_dtypes import numpy_dtype
    from fusion_compiler.dialects.reference.evaluator import constant_array

    view = _f32_view(value) if isinstance(value.data.data, memoryview) else None
    if view is not None and buffer_address(view) % BUFFER_ALIGNMENT == 0:
        return view
    copy = aligned_empty(tuple(value.get_shape()), numpy_dtype(value.get_element_type()))
    raw = np.frombuffer(value.data.data, dtype=np.uint8)
    if isinstance(value.get_element_type(), Float32Type) and raw.size == copy.nbytes:
        copy.reshape(-1).view(np.uint8)[...] = raw
    else:
        copy[...] = constant_array(value)
    return copy


def _f32_view(value) -> np.ndarray | None:
    """A float32 constant's raw bytes viewed as its elements (read-only, no copy), or None
    when they are not all its elements (a splat) or the elements are of another type."""
    from xdsl.dialects.builtin import Float32Type

    raw = value.data.data
    shape = tuple(value.get_shape())
    if isinstance(value.get_element_type(), Float32Type) and len(raw) == 4 * math.prod(shape):
        return np.frombuffer(raw, dtype="<f4").reshape(shape)
    return None


def _tensor(typ) -> TensorType:
    from xdsl.dialects.builtin import TensorType

    assert isinstance(typ, TensorType)
    return typ


def compile_module(module: ModuleOp, pipeline: str | None = None, **options) -> CompiledModel:
    """`fusion_compiler.driver.compile_module` (kept here for the code that imports it from
    its old home; the driver owns the pipeline)."""
    from fusion_compiler import driver

    return driver.compile_module(module, pipeline or driver.DEFAULT_PIPELINE, **options)


def compile_file(path: str | Path, pipeline: str | None = None, **options) -> CompiledModel:
    """`fusion_compiler.driver.compile_file` (kept here for the code that imports it from its
    old home)."""
    from fusion_compiler import driver

    return driver.compile_file(path, pipeline or driver.DEFAULT_PIPELINE, **options)
