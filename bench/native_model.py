"""Compile an example through the fusion pipeline (optionally scheduled) to native code.

Shared by `bench/schedule_effect.py` and the schedule tests, over the driver
(`fusion_compiler.driver`): `compile_module(module, ctx, fused, schedule)` runs the pipeline of
`make_pipeline(fuse=fused, schedule=schedule)` (schedule-kernels with those options, or not
at all for None) on a graph-level module; `lower_and_jit(module)` compiles such a module to
native code with no further pipeline; `compile_example(path, fused, schedule)` does both.
`NativeModel.run(inputs)` calls the entry `main` and returns its outputs. The compile cache is
not used: every build runs the passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from fusion_compiler import driver
from fusion_compiler.lowering.compiled_model import CompiledModel


@dataclass
class NativeModel:
    model: CompiledModel

    @property
    def signature_inputs(self) -> list[tuple[int, ...]]:
        return [p.shape for p in self.model.functions["main"].parameters]

    def run(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return self.model.run("main", *inputs)


def compile_module(module: ModuleOp, ctx: Context, fused: bool, schedule: str | None) -> ModuleOp:
    """`module` through the fusion pipeline (fused or not) and `schedule-kernels{schedule}`."""
    pipeline = driver.make_pipeline(fuse=fused, schedule=schedule)
    return driver.PassManager(pipeline, ctx=ctx).run(module)


def lower_and_jit(module: ModuleOp, ctx: Context | None = None) -> NativeModel:
    """Native code for a module the pipeline has already run on."""
    return NativeModel(driver.compile_module(module, "", cache=False))


def compile_example(path: Path, fused: bool = True, schedule: str | None = None) -> NativeModel:
    pipeline = driver.make_pipeline(fuse=fused, schedule=schedule)
    return NativeModel(driver.compile_file(path, pipeline, cache=False))


def random_inputs(shapes: list[tuple[int, ...]], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.5, 1.5, shape).astype(np.float32) for shape in shapes]
