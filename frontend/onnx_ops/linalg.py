"""Matrix products: MatMul (with ONNX's 1-D operand promotion) and Gemm."""

from __future__ import annotations

from collections.abc import Callable

from fusion_compiler.dialects import graph
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.values import Value, dims_of_value


def matmul(ctx: NodeContext, a: Value, b: Value) -> Value:
    """`np.matmul`: a 1-D `a` is a row (then dropped), a 1-D `b` a column (then dropped)."""
    builder = ctx.builder
    a_vector, b_vector = len(dims_of_value(a)) == 1, len(dims_of_value(b)) == 1
    if a_vector:
        a = builder.expand_dims(a, [0])
    if b_vector:
        b = builder.expand_dims(b, [1])
    op = graph.MatmulOp(builder.float_tensor(a), builder.float_tensor(b))
    y: Value = builder.emit(op).results[0]
    dropped = ([-2] if a_vector else []) + ([-1] if b_vector else [])
    return builder.squeeze(y, dropped)


def convert_matmul(ctx: NodeContext) -> Value:
    if 0 in (ctx.rank(0), ctx.rank(1)):
        raise Unsupported("MatMul needs operands of rank >= 1")
    return matmul(ctx, ctx.value(0), ctx.value(1))


def convert_gemm(ctx: NodeContext) -> Value:
    """`alpha * A' B' + beta * C` → transpose / matmul / mul / add."""
    b = ctx.builder
    if ctx.rank(0) != 2 or ctx.rank(1) != 2:
        raise Unsupported(f"A and B must be matrices, got ranks {ctx.rank(0)} and {ctx.rank(1)}")
    a, weight = ctx.value(0), ctx.value(1)
    if ctx.attr("transA", 0):
        a = b.transpose(a, [1, 0])
    if ctx.attr("transB", 0):
        weight = b.transpose(weight, [1, 0])
    y = b.mul_by(matmul(ctx, a, weight), float(ctx.attr("alpha", 1.0)))
    if not ctx.has_input(2):
        return y
    c = b.mul_by(ctx.value(2), float(ctx.attr("beta", 1.0)))
    return b.binary(graph.AddOp, y, c)


CONVERTERS: dict[str, Callable[[NodeContext], Value]] = {
    "MatMul": convert_matmul,
    "Gemm": convert_gemm,
}
