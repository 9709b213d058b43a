"""Compile an example through the fusion pipeline (optionally scheduled) to native code.

Shared by `bench/schedule_effect.py` and the schedule tests: `compile_example(path, fused,
schedule)` runs legalize-ops … fuse-tir (fusion on or off), then `schedule-kernels` with the
given options (None: not at all), `lower-graph` and `convert-loop-to-llvm`, and JIT-compiles
the module. `NativeModel.run(inputs)` calls the entry `main` with the inputs, the bound
constants and fresh output arrays, and returns the outputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.reference.evaluator import constant_array
from fusion_compiler.lowering.jit import JitModule, aligned_empty, compile_llvm_module
from fusion_compiler.lowering.lower_graph import bound_constants
from fusion_compiler.passes.pipeline import PassManager, parse_pipeline
from fusion_compiler.passes.schedule import ScheduleKernelsPass

FUSED = "legalize-ops,annotate-pattern,fuse-ops,fuse-tir"
"""The fusion pipeline without scheduling (the baseline of the comparison)."""

UNFUSED = "legalize-ops,annotate-pattern,fuse-ops{opt-level=0},fuse-tir"
"""One kernel per graph op, without scheduling."""


@dataclass
class NativeModel:
    jit: JitModule
    constants: list[np.ndarray]
    signature_inputs: list[tuple[int, ...]]
    outputs: list[tuple[int, ...]]

    def run(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        outs = [aligned_empty(shape) for shape in self.outputs]
        self.jit.call_kernel("main", *inputs, *self.constants, *outs)
        return outs


def schedule_pass(options: str) -> ScheduleKernelsPass:
    """`schedule-kernels{options}` built from an option string such as `"tile=false"`."""
    spec = "{" + options + "}" if options else ""
    (pass_,) = parse_pipeline_with_schedule("schedule-kernels" + spec)
    return pass_


def parse_pipeline_with_schedule(spec: str):
    from xdsl.passes import PassPipeline

    from fusion_compiler.passes.registry import available_passes

    passes = available_passes()
    passes.setdefault("schedule-kernels", lambda: ScheduleKernelsPass)
    return PassPipeline.parse_spec(passes, spec).passes


def compile_module(module: ModuleOp, ctx, fused: bool, schedule: str | None) -> ModuleOp:
    passes = list(parse_pipeline(FUSED if fused else UNFUSED))
    if schedule is not None:
        passes.append(schedule_pass(schedule))
    PassManager(passes, ctx=ctx).run(module)
    return module


def lower_and_jit(module: ModuleOp, ctx) -> NativeModel:
    main = next(
        op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main"
    )
    constants = [
        np.array(constant_array(c.value), np.float32).reshape(c.result.type.get_shape())
        for c in bound_constants(main)
    ]
    inputs = [tuple(t.get_shape()) for t in main.function_type.inputs.data]
    outputs = [tuple(t.get_shape()) for t in main.function_type.outputs.data]
    PassManager("lower-graph,convert-loop-to-llvm", ctx=ctx).run(module)
    return NativeModel(compile_llvm_module(module), constants, inputs, outputs)


def compile_example(path: Path, fused: bool = True, schedule: str | None = None) -> NativeModel:
    ctx = make_context()
    module = parse_source(ctx, path.read_text(), path.name)
    compile_module(module, ctx, fused, schedule)
    return lower_and_jit(module, ctx)


def random_inputs(shapes: list[tuple[int, ...]], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.5, 1.5, shape).astype(np.float32) for shape in shapes]
