"""NaN and ±Inf through every graph op: native fused, native unfused and the reference agree on
where each special value is (exactly) and on the finite values (`fusion-run --check`'s rule).

Each case is one op whose results feed a `neg` (so the fused build has a two-kernel group and
the unfused build two kernels), built with the random-graph builders (`bench/graph_spec.py`).
Every input holds a NaN, a +Inf and a -Inf at its own positions; the other elements lie in
[-1, 1] ([0.5, 2] for operands that must be positive: log, sqrt, rsqrt, pow's base,
batch_norm's variance). The reference is numpy's semantics (`np.maximum`, not `np.fmax`: a
NaN operand gives NaN in relu, max, min, clip, max pooling and softmax's max).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from graph_spec import UNARY, GraphSpec, Node, Ref, build_module  # noqa: E402

from fusion_compiler.dialects.reference.evaluator import evaluate  # noqa: E402
from fusion_compiler.driver import DEFAULT_PIPELINE, UNFUSED_PIPELINE, compile_module  # noqa: E402
from fusion_compiler.tools.run_check import compare  # noqa: E402

X = (2, 3, 4)
IMAGE = (1, 2, 5, 5)
POSITIVE = {"log", "sqrt", "rsqrt"}

CASES: dict[str, tuple[tuple, tuple, set[int]]] = {
    # name: (argument shapes, (op, params[, result count]), arguments drawn positive)
    **{name: ((X,), (name, ()), {0} if name in POSITIVE else set()) for name in UNARY},
    "clip": ((X,), ("clip", (-0.5, 0.5)), set()),
    **{
        name: ((X, (3, 4)), (name, ()), set())
        for name in ("add", "sub", "mul", "div", "max", "min")
    },
    "pow": ((X, (3, 4)), ("pow", ()), {0}),
    "matmul": ((X, (4, 5)), ("matmul", ()), set()),
    "conv2d": ((IMAGE, (3, 2, 3, 3)), ("conv2d", ((1, 1), (1, 1, 1, 1), (1, 1), 1)), set()),
    "conv2d_grouped": ((IMAGE, (2, 1, 3, 3)), ("conv2d", ((2, 2), (1, 0, 1, 0), (1, 1), 2)), set()),
    "max_pool2d": ((IMAGE,), ("max_pool2d", ((3, 3), (2, 2), (1, 1, 1, 1))), set()),
    "avg_pool2d": ((IMAGE,), ("avg_pool2d", ((3, 3), (2, 2), (1, 1, 1, 1), False)), set()),
    "avg_pool2d_pad": ((IMAGE,), ("avg_pool2d", ((2, 2), (1, 1), (1, 1, 0, 0), True)), set()),
    "global_avg_pool2d": ((IMAGE,), ("global_avg_pool2d", ()), set()),
    "batch_norm": (((2, 3, 4, 4), (3,), (3,), (3,), (3,)), ("batch_norm", (1e-5,)), {4}),
    "layer_norm": (((2, 3, 8), (8,), (8,)), ("layer_norm", (-1, 1e-5)), set()),
    "lrn": (((1, 5, 3, 3),), ("lrn", (3, 1e-4, 0.75, 1.0)), set()),
    "softmax": (((2, 3, 8),), ("softmax", (-1,)), set()),
    "softmax_axis1": (((2, 3, 8),), ("softmax", (1,)), set()),
    "reduce_sum": ((X,), ("reduce_sum", ((1,), False)), set()),
    "reduce_mean": ((X,), ("reduce_mean", ((0, 2), True)), set()),
    "reduce_max": ((X,), ("reduce_max", ((-1,), False)), set()),
    "reduce_max_all": ((X,), ("reduce_max", ((), True)), set()),
    "reshape": ((X,), ("reshape", ((6, 4),)), set()),
    "broadcast_to": (((3, 1),), ("broadcast_to", ((2, 3, 4),)), set()),
    "transpose": ((X,), ("transpose", ((2, 0, 1),)), set()),
    "squeeze": (((2, 1, 4),), ("squeeze", ((1,),)), set()),
    "expand_dims": (((2, 3),), ("expand_dims", ((1,),)), set()),
    "concat": (((2, 3), (2, 5)), ("concat", (1,)), set()),
    "split": (((2, 6),), ("split", (1, (2, 4)), 2), set()),
    "slice": (((4, 6),), ("slice", ((0, 4), (4, -7), (2, -2))), set()),
}


def case_spec(name: str) -> GraphSpec:
    shapes, (op, params, *count), _ = CASES[name]
    results = count[0] if count else 1
    source = Node(op, tuple(Ref("arg", i) for i in range(len(shapes))), params)
    negs = tuple(Node("neg", (Ref("node", 0, r),)) for r in range(results))
    outputs = tuple(Ref("node", 1 + r) for r in range(results))
    return GraphSpec(tuple(shapes), (source, *negs), outputs)


def special_inputs(name: str) -> list[np.ndarray]:
    shapes, _, positive = CASES[name]
    rng = np.random.default_rng(7)
    inputs = []
    for index, shape in enumerate(shapes):
        low, high = (0.5, 2.0) if index in positive else (-1.0, 1.0)
        value = rng.uniform(low, high, shape).astype(np.float32)
        flat = value.reshape(-1)
        for offset, special in enumerate((np.nan, np.inf, -np.inf)):
            flat[(5 * index + 2 * offset) % flat.size] = special
        inputs.append(value)
    return inputs


def kinds(array: np.ndarray) -> np.ndarray:
    return np.select([np.isnan(array), np.isposinf(array), np.isneginf(array)], [1, 2, 3], 0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_nan_and_inf_propagate_as_in_the_reference(name: str) -> None:
    module = build_module(case_spec(name))
    inputs = special_inputs(name)
    with np.errstate(all="ignore"):
        reference = evaluate(module, "main", inputs)
    unfused = compile_module(module, UNFUSED_PIPELINE, cache=False).run("main", *inputs)
    fused = compile_module(module, DEFAULT_PIPELINE, cache=False).run("main", *inputs)
    for index, (want, u, f) in enumerate(zip(reference, unfused, fused, strict=True)):
        assert np.any(kinds(want) != 0), f"{name}: no special value reaches result #{index}"
        np.testing.assert_array_equal(kinds(u), kinds(want), err_msg=f"{name} unfused #{index}")
        np.testing.assert_array_equal(kinds(f), kinds(want), err_msg=f"{name} fused #{index}")
        for build, got in (("unfused", u), ("fused", f)):
            outcome = compare(got, want)
            assert outcome.ok, f"{name} {build} #{index}: {outcome.describe()}"
