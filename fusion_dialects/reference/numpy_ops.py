"""Numpy reference semantics of every graph op: the oracle for tests, `fusion-run --check` and
"fused vs. unfused" comparisons.

Plain functions over numpy arrays and Python values (no IR); an evaluator maps each graph op class
to one of them and passes the op's properties as keyword arguments of the same name.

Precision: integer and boolean ops are exact (`logic`); float ops take float32 arrays, compute in float64 and round once to float32, so every
result carries a single float32 rounding error and kernels can be checked with tight tolerances.
The one exception is `cumsum`, whose order of additions is part of its definition (ONNX's and
numpy's float32 running sums): its reference adds in float32, term by term in that order, as
its kernels do, so the two agree bit for bit.
Data-movement ops (reshape, transpose, slice, ...) keep their input dtype. Results are fresh arrays
that never alias an input.

The functions live in one module per op family; this module re-exports them all.
"""

from fusion_compiler.dialects.reference.elementwise import (
    abs,
    add,
    clip,
    div,
    erf,
    exp,
    gelu,
    gelu_tanh,
    log,
    maximum,
    minimum,
    mul,
    neg,
    pow,
    relu,
    rsqrt,
    sigmoid,
    silu,
    sqrt,
    sub,
    tanh,
)
from fusion_compiler.dialects.reference.indexing import (
    arg_max,
    arg_min,
    cumsum,
    gather_nd,
    is_nan,
    trilu,
)
from fusion_compiler.dialects.reference.linalg import conv2d, matmul
from fusion_compiler.dialects.reference.logic import (
    cast,
    equal,
    gather,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    where,
)
from fusion_compiler.dialects.reference.normalization import batch_norm, layer_norm, lrn, softmax
from fusion_compiler.dialects.reference.pooling import avg_pool2d, global_avg_pool2d, max_pool2d
from fusion_compiler.dialects.reference.reductions import reduce_max, reduce_mean, reduce_sum
from fusion_compiler.dialects.reference.shape import (
    broadcast_to,
    concat,
    constant,
    expand_dims,
    reshape,
    slice,
    split,
    squeeze,
    transpose,
)

__all__ = [
    "abs",
    "add",
    "arg_max",
    "arg_min",
    "avg_pool2d",
    "batch_norm",
    "broadcast_to",
    "cast",
    "clip",
    "concat",
    "constant",
    "conv2d",
    "cumsum",
    "div",
    "equal",
    "erf",
    "exp",
    "expand_dims",
    "gather",
    "gather_nd",
    "gelu",
    "gelu_tanh",
    "global_avg_pool2d",
    "greater",
    "greater_equal",
    "is_nan",
    "layer_norm",
    "less",
    "less_equal",
    "log",
    "logical_and",
    "logical_not",
    "logical_or",
    "lrn",
    "matmul",
    "max_pool2d",
    "maximum",
    "minimum",
    "mul",
    "neg",
    "pow",
    "reduce_max",
    "reduce_mean",
    "reduce_sum",
    "relu",
    "reshape",
    "rsqrt",
    "sigmoid",
    "silu",
    "slice",
    "softmax",
    "split",
    "sqrt",
    "squeeze",
    "sub",
    "tanh",
    "transpose",
    "trilu",
    "where",
]
