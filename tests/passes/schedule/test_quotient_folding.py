"""Quotient folding (`quotient_folding.py`, run by clean-up-kernels): reshapes, transposes and
channel shuffles whose subscripts compute-inline turned into divisions of flat offsets copy
exactly the elements the reference does, fused and unfused, and the divisions left in the
kernel divide only outer induction variables."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.loop import ForOp, FuncOp
from fusion_compiler.dialects.loop.queries import constant_index
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import DEFAULT_PIPELINE, UNFUSED_PIPELINE, PassManager, compile_module


def _tensor(shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def _shuffle(groups: int, channels: int, h: int, w: int) -> str:
    """shufflenet's channel shuffle, then a relu (so that it is one fused kernel)."""
    per = channels // groups
    flat, split = _tensor((1, channels, h, w)), _tensor((1, groups, per, h, w))
    swapped = _tensor((1, per, groups, h, w))
    return f"""
func.func @main(%x: {flat}) -> {flat} {{
  %a = graph.reshape %x : ({flat}) -> {split}
  %b = graph.transpose %a {{perm = array<i64: 0, 2, 1, 3, 4>}} : ({split}) -> {swapped}
  %c = graph.reshape %b : ({swapped}) -> {flat}
  %r = graph.relu %c : {flat}
  func.return %r : {flat}
}}"""


def _flatten_transpose() -> str:
    """A reshape to a different rank and a transpose of the result (divisions by 5, 7, 35)."""
    a, b, c = _tensor((3, 5, 7)), _tensor((15, 7)), _tensor((7, 15))
    return f"""
func.func @main(%x: {a}) -> {c} {{
  %f = graph.reshape %x : ({a}) -> {b}
  %t = graph.transpose %f {{perm = array<i64: 1, 0>}} : ({b}) -> {c}
  %r = graph.relu %t : {c}
  func.return %r : {c}
}}"""


GRAPHS = {
    "shuffle_g4": _shuffle(4, 24, 5, 7),
    "shuffle_g3": _shuffle(3, 18, 4, 4),
    "flatten_transpose": _flatten_transpose(),
}


GROUPS = {"shuffle_g4": 4, "shuffle_g3": 3}


def _module(text: str):
    return parse_source(make_context(), text, "shuffle.mlir")


@pytest.mark.parametrize("pipeline", [DEFAULT_PIPELINE, UNFUSED_PIPELINE])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_reshapes_copy_the_reference_elements(name, pipeline):
    text = GRAPHS[name]
    main = next(op for op in _module(text).ops if op.sym_name.data == "main")
    shape = tuple(main.function_type.inputs.data[0].get_shape())
    x = np.random.default_rng(5).uniform(-1.0, 1.0, shape).astype(np.float32)
    (expected,) = evaluate(_module(text), "main", [x])
    (actual,) = compile_module(_module(text), pipeline, cache=False).run("main", x)
    np.testing.assert_array_equal(actual, expected)


def _innermost_ivs(kernel: FuncOp) -> set:
    return {
        loop.induction_var
        for loop in kernel.walk()
        if isinstance(loop, ForOp) and not any(isinstance(op, ForOp) for op in loop.body.ops)
    }


@pytest.mark.parametrize("name", ["shuffle_g4", "shuffle_g3"])
def test_a_shuffle_divides_only_its_channel_index(name):
    """The shuffle's own divisions are the channel's quotient and remainder by the group size;
    the only others are the digits of the collapsed plane (collapse-nests: `f / W`, `f % W`,
    which the lowering addresses as the one subscript `f`)."""
    module = _module(GRAPHS[name])
    PassManager(DEFAULT_PIPELINE).run(module)
    (kernel,) = [op for op in module.ops if isinstance(op, FuncOp)]
    divisions = [op for op in kernel.walk() if isinstance(op, arith.DivUIOp | arith.RemUIOp)]
    outer = [loop for loop in kernel.walk() if isinstance(loop, ForOp)][0]
    channel = [op for op in divisions if op.lhs is outer.induction_var]
    assert {(type(op), constant_index(op.rhs)) for op in channel} == {
        (arith.DivUIOp, GROUPS[name]),
        (arith.RemUIOp, GROUPS[name]),
    }
    assert len(channel) == 2 * len(_innermost_ivs(kernel))  # one pair in each vector loop
    width = kernel.body.block.args[0].type.get_shape()[-1]
    digits = [op for op in divisions if op not in channel]
    assert digits and all(op.lhs in _innermost_ivs(kernel) for op in digits)
    assert all(constant_index(op.rhs) == width for op in digits)
