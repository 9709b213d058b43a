"""The compiler as an ONNX backend: `onnx.backend.base.Backend` over `import_model` and
`compile_module`, so onnx's own backend test runner (and any code written against the
backend API) can run models natively.

```python
from fusion_compiler.frontend.backend import FusionBackend

rep = FusionBackend.prepare(onnx.load("model.onnx"))   # import + fuse + native code
(y,) = rep.run([x])                                    # or rep.run({"x": x}), rep.run(x)
print(rep.kernels)                                     # the kernels `main` launches
```

`prepare` checks the model (`onnx.checker`), imports it and compiles it with the default
fusion pipeline (keyword `pipeline=` chooses another, `cache=False` skips the compile cache).
A model whose graph inputs have dynamic dimensions is imported once with them (`?`) and
compiled on its first `run`, for the shapes of the arrays given, once per distinct set of
shapes (a `SpecializingModel`); a model whose converters need static shapes is imported again
for each set of shapes instead. `input_shapes=` fixes the shapes up front. Only the CPU is
supported.

What the compiler cannot run is refused with an exception, never a wrong answer:
`ModelImportError` (listing every problem of the model: an unsupported op, an input that is
not float32, int64, int32 or bool...) from `prepare`, `BackendError` for inputs that do not
fit (another dtype than the input's, a wrong count) from `run`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from fusion_compiler.driver import DEFAULT_PIPELINE, compile_module
from fusion_compiler.errors import ArgumentError
from fusion_compiler.frontend.errors import ModelImportError
from fusion_compiler.frontend.onnx_importer import import_model
from fusion_compiler.frontend.progress import compile_progress, import_progress
from fusion_compiler.lowering.compiled_model import CompiledModel
from fusion_compiler.specializing import SpecializingModel

__all__ = ["BackendError", "FusionBackend", "FusionBackendRep", "prepare", "run_model"]

Shapes = tuple[tuple[int, ...], ...]


BackendError = ArgumentError
"""The arrays given to `FusionBackendRep.run` cannot be passed to the compiled model (the
name ONNX backend code catches; the one class of arrays that do not fit is
`fusion_compiler.errors.ArgumentError`)."""


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """The graph inputs that are not initializers: the arguments of `@main`, in order."""
    initializers = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in initializers]


def _static_shape(info: onnx.ValueInfoProto) -> tuple[int, ...] | None:
    """The shape of a tensor input if every dimension is known, else None."""
    tensor = info.type.tensor_type
    if not info.type.HasField("tensor_type") or not tensor.HasField("shape"):
        return None
    dims = tensor.shape.dim
    if not all(d.HasField("dim_value") and d.dim_value > 0 for d in dims):
        return None
    return tuple(d.dim_value for d in dims)


class FusionBackendRep(BackendRep):
    """A prepared model: native code per set of input shapes, compiled on demand."""

    def __init__(
        self,
        model: onnx.ModelProto,
        *,
        input_shapes: Mapping[str, Sequence[int]] | None = None,
        pipeline: str = DEFAULT_PIPELINE,
        cache: bool = True,
        filename: str = "model.onnx",
        profile: bool = False,
    ):
        self.model = model
        self.pipeline = pipeline
        self.cache = cache
        self.profile = profile
        """Whether the native code is a profiling build (`CompiledModel.profile`)."""
        self.filename = filename
        self.inputs = graph_inputs(model)
        self.input_names = [i.name for i in self.inputs]
        self.output_names = [o.name for o in model.graph.output]
        self.output_dtypes = [_declared_dtype(o) for o in model.graph.output]
        self._outputs_type = namedtupledict("Outputs", self.output_names)
        """The named tuple `run` returns, made once: onnx's `namedtupledict` builds a new class
        (through `eval`) at every call, 75 of the 166 µs a call of the tiny GPT-2 of
        `tests/models/` took (its native entry: 50 µs)."""
        given = dict(input_shapes or {})
        self._fixed = tuple(
            tuple(given[i.name]) if i.name in given else _static_shape(i) for i in self.inputs
        )
        self._compiled: dict[Shapes, CompiledModel | SpecializingModel] = {}
        self._dynamic: SpecializingModel | None = None
        self._dynamic_import_failed = False
        self._num_threads: int | None = None
        if all(shape is not None for shape in self._fixed):
            self.compiled_for(self._fixed)  # type: ignore[arg-type]

    def compiled_for(self, shapes: Shapes) -> CompiledModel | SpecializingModel:
        """The native code of the model for inputs of `shapes` (imported and compiled once):
        the model imported with its dynamic dimensions, which specialises itself on the
        shapes of each call, or else the model imported for `shapes`."""
        dynamic = self._dynamic_model()
        if dynamic is not None:
            self._compiled.setdefault(shapes, dynamic)
        if shapes not in self._compiled:
            with import_progress(len(self.model.graph.node), self.filename) as progress:
                module = import_model(
                    self.model,
                    dict(zip(self.input_names, shapes, strict=True)),
                    filename=self.filename,
                    progress=progress,
                )
            with compile_progress(self.pipeline, self.filename) as instruments:
                compiled = compile_module(
                    module,
                    self.pipeline,
                    cache=self.cache,
                    instruments=instruments,
                    profile=self.profile,
                )
            if self._num_threads is not None:
                compiled.set_num_threads(self._num_threads)
            self._compiled[shapes] = compiled
        return self._compiled[shapes]

    def _dynamic_model(self) -> SpecializingModel | None:
        """The model imported once with its dynamic dimensions (None when every shape is
        fixed, or when a converter needs static shapes: then each set is imported)."""
        if self._dynamic is not None or self._dynamic_import_failed:
            return self._dynamic
        if all(shape is not None for shape in self._fixed):
            return None
        given = {n: s for n, s in zip(self.input_names, self._fixed, strict=True) if s is not None}
        try:
            module = import_model(self.model, given, filename=self.filename)
        except ModelImportError:
            module = None
        compiled = None
        if module is not None:
            compiled = compile_module(module, self.pipeline, cache=self.cache, profile=self.profile)
        if not isinstance(compiled, SpecializingModel):
            self._dynamic_import_failed = True
            return None
        if self._num_threads is not None:
            compiled.set_num_threads(self._num_threads)
        self._dynamic = compiled
        return compiled

    def set_num_threads(self, count: int) -> None:
        """Run the parallel loops on `count` threads (0: every core), for the shapes compiled
        so far and those compiled later."""
        for compiled in self._compiled.values():
            compiled.set_num_threads(count)
        self._num_threads = count

    @property
    def kernels(self) -> list[str]:
        """The kernels `main` launches, in order (of the first compiled set of shapes)."""
        if not self._compiled:
            return []
        return next(iter(self._compiled.values())).kernels("main")

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Run the model on `inputs`: a list of arrays in graph-input order, a mapping from
        input names, or one array; returns the outputs as a named tuple."""
        arrays = self._arguments(inputs)
        for name, array, shape in zip(self.input_names, arrays, self._fixed, strict=True):
            if shape is not None and array.shape != shape:
                raise ArgumentError(
                    f"input '{name}' has shape {array.shape}, but the model was prepared for "
                    f"{shape}"
                )
        compiled = self.compiled_for(tuple(a.shape for a in arrays))
        expected = [p.dtype for p in compiled.functions["main"].parameters]
        for name, array, dtype in zip(self.input_names, arrays, expected, strict=True):
            if array.dtype != dtype:
                raise ArgumentError(f"input '{name}' has dtype {array.dtype}, expected {dtype}")
        outputs = compiled.run("main", *arrays)
        dtypes = self.output_dtypes
        outputs = [_as_declared(o, dtype) for o, dtype in zip(outputs, dtypes, strict=True)]
        return self._outputs_type(*outputs)

    def _arguments(self, inputs: Any) -> list[np.ndarray]:
        if isinstance(inputs, Mapping):
            missing = [name for name in self.input_names if name not in inputs]
            if missing:
                raise ArgumentError(f"no value for input(s) {', '.join(missing)}")
            inputs = [inputs[name] for name in self.input_names]
        elif isinstance(inputs, np.ndarray):
            inputs = [inputs]
        inputs = list(inputs)
        if len(inputs) != len(self.input_names):
            raise ArgumentError(
                f"the model takes {len(self.input_names)} inputs, got {len(inputs)}"
            )
        arrays = []
        for name, value in zip(self.input_names, inputs, strict=True):
            if not isinstance(value, np.ndarray | np.generic):
                kind = type(value).__name__
                raise ArgumentError(f"input '{name}' is a {kind}; only tensors are supported")
            array = np.asarray(value)  # (np.ascontiguousarray would make a scalar 1-D)
            arrays.append(array if array.flags.c_contiguous else array.copy(order="C"))
        return arrays


def _declared_dtype(info: onnx.ValueInfoProto) -> np.dtype | None:
    """The numpy dtype a graph output is declared with, if any."""
    if not info.type.HasField("tensor_type") or not info.type.tensor_type.elem_type:
        return None
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(info.type.tensor_type.elem_type))
    except (KeyError, TypeError, ValueError):
        return None


def _as_declared(output: np.ndarray, dtype: np.dtype | None) -> np.ndarray:
    """A result in its declared dtype. Run-time tensors have their declared float32, int64,
    int32 or bool dtype already; only a value folded at import time can have another, and it
    became a float32 constant only because the conversion is exact: converting back is exact
    too."""
    if dtype is None or dtype == output.dtype:
        return output
    if not (np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.floating)):
        return output
    return output.astype(dtype)


class FusionBackend(Backend):
    """ONNX backend API over the fusion compiler (CPU only)."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(
        cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any
    ) -> FusionBackendRep:
        """Check, import and compile `model`; keywords: `input_shapes`, `pipeline`, `cache`,
        `filename` (the name errors and locations use)."""
        if not cls.supports_device(device):
            raise ArgumentError(f"device '{device}' is not supported (only CPU)")
        super().prepare(model, device)
        options = ("input_shapes", "pipeline", "cache", "filename")
        return FusionBackendRep(model, **{k: kwargs[k] for k in options if k in kwargs})

    @classmethod
    def run_node(
        cls,
        node: onnx.NodeProto,
        inputs: Any,
        device: str = "CPU",
        outputs_info: Sequence[tuple[np.dtype, tuple[int, ...]]] | None = None,
        **kwargs: Any,
    ) -> tuple[Any, ...]:
        """Run one node on `inputs` (arrays for its non-empty inputs, in order)."""
        super().run_node(node, inputs, device, outputs_info, **kwargs)
        names = [name for name in node.input if name]
        arrays = [
            np.asarray(a) for a in (inputs.values() if isinstance(inputs, Mapping) else inputs)
        ]
        graph = onnx.helper.make_graph(
            [node],
            f"run_node_{node.op_type}",
            [
                onnx.helper.make_tensor_value_info(
                    name, onnx.helper.np_dtype_to_tensor_dtype(a.dtype), a.shape
                )
                for name, a in zip(names, arrays, strict=True)
            ],
            [onnx.helper.make_empty_tensor_value_info(name) for name in node.output if name],
        )
        opset = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)])
        model = onnx.shape_inference.infer_shapes(model)  # the output types the checker wants
        return cls.prepare(model, device).run(arrays)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        try:
            return Device(device).type == DeviceType.CPU
        except (AttributeError, ValueError):
            return False


prepare = FusionBackend.prepare
run_model = FusionBackend.run_model
run_node = FusionBackend.run_node
supports_device = FusionBackend.supports_device
