"""What `fusion_compiler.compile` returns: a model called on numpy arrays.

```python
model = fc.compile("model.onnx")
y = model(x)                       # by position, in input order
y = model(input_ids=x)             # or by input name (positions first, then names)
outputs = model.run(x)             # {output name: array}

model = fc.compile("model.onnx", profile=True)   # a profiling build
print(model.profile(x, runs=10).table())         # per kernel: time, FLOPs, bytes, roofs
```

Calling a model returns its one output as an array, or a tuple of arrays in output order when
it has several (as a Python function or a `torch.nn.Module` would); `run` returns a dict by
output name. The names come from the model: an ONNX model's graph inputs and outputs; for IR,
the argument names the text gives (`%x` is input `x`; an argument without a name, `%0`, is
`arg0` by position) and `out0`, `out1`, ... for the results. Arrays that do not fit (count,
name, dtype, shape) raise `fusion_compiler.ArgumentError`, naming the input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from fusion_compiler.errors import ArgumentError

if TYPE_CHECKING:
    from fusion_compiler.frontend.backend import FusionBackendRep
    from fusion_compiler.lowering.compiled_model import CompiledModel
    from fusion_compiler.lowering.machine_roofs import Roofs
    from fusion_compiler.lowering.profile_report import Profile
    from fusion_compiler.specializing import SpecializingModel


class Runner(Protocol):
    """The compiled code behind a `Model`: arrays in input order in, outputs in order out."""

    @property
    def input_names(self) -> tuple[str, ...]: ...

    @property
    def output_names(self) -> tuple[str, ...]: ...

    def run(self, arrays: list[np.ndarray]) -> list[np.ndarray]: ...

    def kernels(self) -> list[str]: ...

    def set_num_threads(self, count: int) -> None: ...

    def profile(self, arrays: list[np.ndarray], runs: int, roofs: Roofs | None) -> Profile: ...


class Model:
    """A compiled model: call it on numpy arrays, by position or by input name."""

    def __init__(self, runner: Runner):
        self._runner = runner

    @property
    def input_names(self) -> tuple[str, ...]:
        return self._runner.input_names

    @property
    def output_names(self) -> tuple[str, ...]:
        return self._runner.output_names

    @property
    def kernels(self) -> list[str]:
        """The native kernels one call launches, in order (those of the latest call of a
        model with dynamic input shapes: empty before its first call)."""
        return self._runner.kernels()

    def set_num_threads(self, count: int) -> None:
        """Run the parallel loops of this model on `count` threads (0: every core)."""
        self._runner.set_num_threads(count)

    def __call__(self, *args: Any, **kwargs: Any) -> np.ndarray | tuple[np.ndarray, ...]:
        outputs = self._runner.run(self._arguments(args, kwargs))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def run(self, *args: Any, **kwargs: Any) -> dict[str, np.ndarray]:
        """The outputs by name."""
        outputs = self._runner.run(self._arguments(args, kwargs))
        return dict(zip(self.output_names, outputs, strict=True))

    def profile(
        self, *args: Any, runs: int = 1, roofs: Roofs | None = None, **kwargs: Any
    ) -> Profile:
        """Run the model once to warm up, then `runs` times with every kernel launch timed;
        returns what was measured per kernel (`.table()`, `.to_json()`). Needs a model
        compiled with `profile=True`; `roofs` default to this machine's, measured once."""
        return self._runner.profile(self._arguments(args, kwargs), runs, roofs)

    def __repr__(self) -> str:
        inputs, outputs = ", ".join(self.input_names), ", ".join(self.output_names)
        return f"<fusion_compiler.Model ({inputs}) -> ({outputs})>"

    def _arguments(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[np.ndarray]:
        """The arrays in input order: positions first, then names, each input exactly once."""
        names = self.input_names
        if len(args) > len(names):
            raise ArgumentError(f"the model takes {len(names)} inputs, got {len(args)}")
        given = dict(zip(names, args, strict=False))
        for name, value in kwargs.items():
            if name not in names:
                raise ArgumentError(f"no input '{name}' (inputs: {', '.join(names)})")
            if name in given:
                raise ArgumentError(f"input '{name}' given twice (by position and by name)")
            given[name] = value
        missing = [name for name in names if name not in given]
        if missing:
            raise ArgumentError(f"no value for input(s) {', '.join(missing)}")
        return [_array(name, given[name]) for name in names]


def _array(name: str, value: Any) -> np.ndarray:
    if not isinstance(value, np.ndarray | np.generic):
        raise ArgumentError(f"input '{name}' is a {type(value).__name__}, not a numpy array")
    return np.asarray(value)


@dataclass
class FunctionRunner:
    """One graph-level function of a compiled IR module (specialised on the shapes of each
    call when it has dynamic dimensions)."""

    model: CompiledModel | SpecializingModel
    function: str
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]

    @staticmethod
    def of(model: CompiledModel | SpecializingModel, function: str) -> FunctionRunner:
        compiled = model.functions[function]
        inputs = tuple(p.name for p in compiled.parameters)
        outputs = tuple(f"out{i}" for i in range(len(compiled.results)))
        return FunctionRunner(model, function, inputs, outputs)

    def run(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        contiguous = [a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in arrays]
        return self.model.run(self.function, *contiguous)

    def kernels(self) -> list[str]:
        return self.model.kernels(self.function)

    def set_num_threads(self, count: int) -> None:
        self.model.set_num_threads(count)

    def profile(self, arrays: list[np.ndarray], runs: int, roofs: Roofs | None) -> Profile:
        contiguous = [a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in arrays]
        return self.model.profile(self.function, *contiguous, runs=runs, roofs=roofs)


@dataclass
class OnnxRunner:
    """An ONNX model prepared by the ONNX backend (compiled once per set of input shapes)."""

    rep: FusionBackendRep

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(self.rep.input_names)

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(self.rep.output_names)

    def run(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        return list(self.rep.run(arrays))

    def kernels(self) -> list[str]:
        return self.rep.kernels

    def set_num_threads(self, count: int) -> None:
        self.rep.set_num_threads(count)

    def profile(self, arrays: list[np.ndarray], runs: int, roofs: Roofs | None) -> Profile:
        contiguous = [a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in arrays]
        compiled = self.rep.compiled_for(tuple(a.shape for a in contiguous))
        return compiled.profile("main", *contiguous, runs=runs, roofs=roofs)
