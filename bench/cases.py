"""The benchmark cases: each one graph-dialect module and one op-by-op numpy implementation.

A case's module is the single definition of what it computes: our fused and unfused builds
compile it, the reference evaluator checks every implementation against it, and
`onnx_export` turns it into the onnxruntime model. The numpy implementation is what a person
would write in float32, op by op (`np.maximum(a + b, 0)`); it is checked against the
reference too, so a case can never compare wrong code.

numpy has no `erf`: `gelu` uses `fusion_compiler.dialects.reference._erf.erf`, the reference's
vectorised float64 error function (the only non-numpy helper used here).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.graph.base import shape_of, tensor_type
from fusion_compiler.dialects.reference._erf import erf as erf_f64

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Case:
    name: str
    summary: str
    build: Callable[[], ModuleOp]
    """The graph-level module; its function `@main` is what every implementation computes."""
    numpy: Callable[..., np.ndarray]
    """The op-by-op float32 numpy implementation of `@main`."""


# --- graph modules ------------------------------------------------------------------------------


def function_module(
    args: dict[str, Shape], body: Callable[..., list[Operation]], name: str = "main"
) -> ModuleOp:
    """A module with one `func.func @name(args)` whose ops are `body(*args)`; the result of
    the last op is returned."""
    block = Block(arg_types=[tensor_type(shape) for shape in args.values()])
    for arg, arg_name in zip(block.args, args, strict=True):
        arg.name_hint = arg_name
    ops = body(*block.args)
    block.add_ops(ops)
    result = ops[-1].results[0]
    block.add_op(func.ReturnOp(result))
    signature = ([arg.type for arg in block.args], [result.type])
    return ModuleOp([func.FuncOp(name, signature, Region(block))])


def example(name: str) -> Callable[[], ModuleOp]:
    def load() -> ModuleOp:
        path = EXAMPLES / f"{name}.mlir"
        return parse_source(make_context(), path.read_text(), str(path))

    return load


def _add_relu(a: SSAValue, b: SSAValue) -> list[Operation]:
    add = graph.AddOp(a, b)
    return [add, graph.ReluOp(add.result)]


def _chain(a: SSAValue, b: SSAValue, c: SSAValue) -> list[Operation]:
    mul = graph.MulOp(a, b)
    add = graph.AddOp(mul.result, c)
    tanh = graph.TanhOp(add.result)
    return [mul, add, tanh, graph.ReluOp(tanh.result)]


def add_relu_module(n: int) -> ModuleOp:
    return function_module({"a": (n, n), "b": (n, n)}, _add_relu)


def chain_module() -> ModuleOp:
    shape = (1024, 1024)
    return function_module({"a": shape, "b": shape, "c": shape}, _chain)


def layer_norm_module() -> ModuleOp:
    return function_module(
        {"x": (512, 768), "gamma": (768,), "beta": (768,)},
        lambda x, g, b: [graph.LayerNormOp(x, g, b, axis=-1, epsilon=1e-5)],
    )


def softmax_module() -> ModuleOp:
    return function_module({"x": (512, 512)}, lambda x: [graph.SoftmaxOp(x, axis=-1)])


# --- numpy, op by op, float32 -------------------------------------------------------------------
# Scalars are Python floats: numpy keeps float32 arrays float32 under them (NEP 50).


def np_add_relu(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.maximum(a + b, 0)


def np_chain(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return np.maximum(np.tanh(a * b + c), 0)


def np_conv2d(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """Stride-1 NCHW x OIHW convolution: a window view of the padded input, then a tensordot
    over (C, KH, KW) (an im2col copy plus one BLAS matmul)."""
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, w.shape[2:], axis=(2, 3))
    out = np.tensordot(windows, w, axes=([1, 4, 5], [1, 2, 3]))  # N, H, W, O
    return out.transpose(0, 3, 1, 2)


def np_conv_block(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.maximum(np_conv2d(x, w, 1) + b, 0)


def np_gelu(x: np.ndarray) -> np.ndarray:
    erf = erf_f64(x * (1 / math.sqrt(2.0))).astype(np.float32)  # numpy has no erf
    return 0.5 * x * (1 + erf)


def np_ffn(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np_gelu(x @ w + b)


def np_layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + 1e-5) * gamma + beta


def np_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_mlp(x, w1, b1, w2, b2, w3, b3) -> np.ndarray:
    h1 = np.maximum(x @ w1 + b1, 0)
    h2 = np.maximum(h1 @ w2 + b2, 0)
    return np.maximum(h2 @ w3 + b3, 0)


def np_transformer_block(x, wq, bq, wk, bk, wv, bv, wo, bo, g1, be1, w1, b1, w2, b2, g2, be2):
    seq, hidden = x.shape
    heads = 4
    q = (x @ wq + bq).reshape(seq, heads, -1).transpose(1, 0, 2)
    k = (x @ wk + bk).reshape(seq, heads, -1).transpose(1, 2, 0)
    v = (x @ wv + bv).reshape(seq, heads, -1).transpose(1, 0, 2)
    p = np_softmax((q @ k) * 0.125)
    o = (p @ v).transpose(1, 0, 2).reshape(seq, hidden) @ wo + bo
    l1 = np_layer_norm(x + o, g1, be1)
    f = np_gelu(l1 @ w1 + b1) @ w2 + b2
    return np_layer_norm(l1 + f, g2, be2)


# --- the cases ----------------------------------------------------------------------------------

CASES: tuple[Case, ...] = (
    Case("add_relu_1024", "relu(a + b), 1024x1024", lambda: add_relu_module(1024), np_add_relu),
    Case("add_relu_4096", "relu(a + b), 4096x4096", lambda: add_relu_module(4096), np_add_relu),
    Case("ew_chain", "relu(tanh(a * b + c)), 1024x1024", chain_module, np_chain),
    Case(
        "conv_block",
        "relu(conv2d(1x64x56x56, 64x64x3x3, pad 1) + bias)",
        example("conv_block"),
        np_conv_block,
    ),
    Case("ffn", "gelu(128x768 @ 768x3072 + bias)", example("ffn"), np_ffn),
    Case("layer_norm", "layer_norm over 512x768", layer_norm_module, np_layer_norm),
    Case("softmax", "softmax over 512x512", softmax_module, np_softmax),
    Case("mlp", "3-layer MLP, 64x512, 512x512 weights", example("mlp"), np_mlp),
    Case(
        "transformer_block",
        "encoder block, 128x256, 4 heads, FFN 1024",
        example("transformer_block"),
        np_transformer_block,
    ),
)
BY_NAME = {case.name: case for case in CASES}


def main_function(module: ModuleOp) -> func.FuncOp:
    (function,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    return function


def random_inputs(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    """Fixed standard-normal float32 inputs for `@main`'s parameters."""
    rng = np.random.default_rng(seed)
    args = main_function(module).body.block.args
    return [rng.standard_normal(shape_of(arg)).astype(np.float32) for arg in args]
