"""A module with dynamic dimensions, compiled once per set of argument shapes it is called with.

```python
model = compile_file("dynamic.mlir")      # @main(%x: tensor<?x16xf32>): nothing compiled yet
(y,) = model.run("main", np.ones((2, 16), np.float32))   # specialises on x=2x16, compiles
(y,) = model.run("main", np.ones((2, 16), np.float32))   # the same shapes: the same code
(y,) = model.run("main", np.ones((5, 16), np.float32))   # new shapes: specialises again
```

This is torch.compile's shape specialisation, not symbolic shapes: each distinct tuple of
argument shapes is made static by `specialize-shapes` on a copy of the module and compiled by
`driver.compile_module` (so through the same pipeline, the same passes and the same on-disk
compile cache: a second process calling with shapes seen before loads their code). The
arguments are checked against the dynamic signature first (count, dtype, rank, the static
dimensions), and a shape the model's own constraints refuse (a reshape that does not fit) is
the `CompileError` of the specialisation, naming the op.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType

from fusion_compiler.errors import ArgumentError

if TYPE_CHECKING:
    from fusion_compiler.lowering.compiled_model import CompiledModel, Parameter
    from fusion_compiler.lowering.machine_roofs import Roofs
    from fusion_compiler.lowering.profile_report import Profile

ShapeKey = tuple[tuple[int, ...], ...]


class DynamicFunction:
    """The signature of one graph-level function with dynamic dimensions."""

    def __init__(self, function: func.FuncOp):
        from fusion_compiler.dialects.element_dtypes import numpy_dtype
        from fusion_compiler.lowering.compiled_model import Parameter

        self.name = function.sym_name.data
        self.parameters: tuple[Parameter, ...] = tuple(
            Parameter(
                arg.name_hint or f"arg{arg.index}",
                tuple(_tensor(arg.type).get_shape()),
                numpy_dtype(_tensor(arg.type).element_type),
            )
            for arg in function.body.block.args
        )
        outputs = function.function_type.outputs.data
        self.results = tuple(tuple(_tensor(t).get_shape()) for t in outputs)

    def check(self, arrays: Sequence[object]) -> ShapeKey:
        """The shapes of `arrays`, after checking them against the dynamic signature."""
        from fusion_compiler.lowering.jit import BufferSpec, array_problem

        if len(arrays) != len(self.parameters):
            raise ArgumentError(
                f"@{self.name} takes {len(self.parameters)} arguments, got {len(arrays)}"
            )
        for index, (array, parameter) in enumerate(zip(arrays, self.parameters, strict=True)):
            spec = BufferSpec(parameter.shape, parameter.dtype)
            problem = array_problem(array, spec)
            if problem is not None:
                raise ArgumentError(
                    f"@{self.name}: argument #{index} (%{parameter.name}): {problem}"
                )
        return tuple(a.shape for a in arrays if isinstance(a, np.ndarray))


class SpecializingModel:
    """What `compile_module` gives for a module with dynamic dimensions: the interface of a
    `CompiledModel`, each call compiled (once) for the shapes of its arguments."""

    def __init__(self, module: ModuleOp, pipeline: str, *, cache: bool, profile: bool):
        from fusion_compiler.dialects.graph import graph_functions

        self._module = module.clone()
        self._pipeline = pipeline
        self._cache = cache
        self._profile = profile
        self._num_threads: int | None = None
        self.specializations: dict[tuple[str, ShapeKey], CompiledModel] = {}
        """Every compiled specialisation, by function and argument shapes."""
        self._last: dict[str, CompiledModel] = {}
        self.functions = {f.sym_name.data: DynamicFunction(f) for f in graph_functions(module)}
        self.from_cache = False
        """Whether the code of the latest specialisation came from the compile cache."""

    def specialization(self, name: str, arrays: Sequence[np.ndarray]) -> CompiledModel:
        """The compiled model of `@name` for the shapes of `arrays` (compiled on first use)."""
        key = self._function(name).check(arrays)
        compiled = self.specializations.get((name, key))
        if compiled is None:
            compiled = self._compile(name, key)
            self.specializations[(name, key)] = compiled
        self._last[name] = compiled
        self.from_cache = compiled.from_cache
        return compiled

    def _compile(self, name: str, shapes: ShapeKey) -> CompiledModel:
        from fusion_compiler.driver import compile_module
        from fusion_compiler.passes.specialize_shapes import specialize_shapes

        module = self._module.clone()
        for other in [f for f in self.functions if f != name]:  # only @name is specialised
            _erase_function(module, other)
        specialize_shapes(module, list(shapes), name)
        compiled = compile_module(module, self._pipeline, cache=self._cache, profile=self._profile)
        assert not isinstance(compiled, SpecializingModel)
        if self._num_threads is not None:
            compiled.set_num_threads(self._num_threads)
        return compiled

    def _function(self, name: str) -> DynamicFunction:
        if name not in self.functions:
            raise ArgumentError(
                f"no function @{name} (functions: {', '.join(sorted(self.functions))})"
            )
        return self.functions[name]

    def run(self, name: str, *arrays: np.ndarray) -> list[np.ndarray]:
        """Call `@name` (specialised on the shapes of `arrays`); returns its results."""
        return self.specialization(name, arrays).run(name, *arrays)

    def profile(
        self, name: str, *arrays: np.ndarray, runs: int = 1, roofs: Roofs | None = None
    ) -> Profile:
        """`CompiledModel.profile` of the specialisation for these arrays."""
        return self.specialization(name, arrays).profile(name, *arrays, runs=runs, roofs=roofs)

    def kernels(self, name: str = "main") -> list[str]:
        """The kernels `@name` launched in its latest call (none before the first)."""
        self._function(name)
        latest = self._last.get(name)
        return latest.kernels(name) if latest is not None else []

    @property
    def num_threads(self) -> int:
        return self._num_threads or 0

    def set_num_threads(self, count: int) -> None:
        """Runs every specialisation, present and future, on `count` threads (0: all cores)."""
        self._num_threads = count
        for compiled in self.specializations.values():
            compiled.set_num_threads(count)


def _erase_function(module: ModuleOp, name: str) -> None:
    for op in list(module.ops):
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            module.body.block.erase_op(op)


def _tensor(typ) -> TensorType:
    assert isinstance(typ, TensorType)
    return typ
