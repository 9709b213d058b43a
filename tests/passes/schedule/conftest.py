"""Fixtures of the schedule tests: compile graphs with and without `schedule-kernels`, run them
with the loop interpreter and natively (the harness is shared with bench/schedule_effect.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.dialects.reference.evaluator import evaluate

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))

from native_model import compile_module, lower_and_jit  # noqa: E402


def main_input_shapes(module: ModuleOp) -> list[tuple[int, ...]]:
    main = next(
        op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == "main"
    )
    return [tuple(t.get_shape()) for t in main.function_type.inputs.data]


class Build:
    """One graph compiled through the fusion pipeline, optionally scheduled."""

    def __init__(self, text: str, name: str, schedule: str | None, fused: bool = True):
        self.ctx = make_context()
        self.module = parse_source(self.ctx, text, name)
        self.shapes = main_input_shapes(self.module)
        compile_module(self.module, self.ctx, fused, schedule)
        self.text = str(self.module)

    def interpret(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return evaluate(self.module, "main", inputs)

    def native(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        ctx = make_context()
        module = parse_source(ctx, self.text, "scheduled.mlir")
        return lower_and_jit(module, ctx).run(inputs)


def random_inputs(shapes: list[tuple[int, ...]], seed: int, signed: bool) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    low, high = (-1.0, 1.0) if signed else (0.5, 1.5)
    return [rng.uniform(low, high, shape).astype(np.float32) for shape in shapes]


@pytest.fixture(scope="session")
def build() -> Callable[..., Build]:
    """`build(text, name, schedule, fused=True)`: a graph through the pipeline (schedule-kernels
    with the option string `schedule`, or not at all if None)."""
    return Build


@pytest.fixture(scope="session")
def inputs_for() -> Callable[..., list[np.ndarray]]:
    """`inputs_for(shapes, seed, signed)`: random float32 inputs."""
    return random_inputs


@pytest.fixture(scope="session")
def loop_ctx() -> Context:
    return make_context()


@pytest.fixture(scope="session")
def parse_kernel(loop_ctx: Context) -> Callable[[str], FuncOp]:
    """`parse_kernel(text)`: the first `loop.func` of a module of hand-written kernels."""

    def parse(text: str) -> FuncOp:
        module = Parser(loop_ctx, text).parse_module()
        module.verify()
        return next(op for op in module.ops if isinstance(op, FuncOp))

    return parse
