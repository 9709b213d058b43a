"""Converters from ONNX ops to graph ops, one per ONNX op type.

A converter takes the `NodeContext` of one node and returns the node's outputs as `Value`s (a
graph tensor or a numpy constant each), appending graph ops through `ctx.builder`; it raises
`Unsupported` for what it cannot translate exactly. ONNX names its ops with strings, so the
table is keyed by the op type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.onnx_ops.conv_pool import CONVERTERS as CONV_POOL
from fusion_compiler.frontend.onnx_ops.conv_transpose import CONVERTERS as CONV_TRANSPOSE
from fusion_compiler.frontend.onnx_ops.elementwise import CONVERTERS as ELEMENTWISE
from fusion_compiler.frontend.onnx_ops.indexing import CONVERTERS as INDEXING
from fusion_compiler.frontend.onnx_ops.linalg import CONVERTERS as LINALG
from fusion_compiler.frontend.onnx_ops.logic import CONVERTERS as LOGIC
from fusion_compiler.frontend.onnx_ops.normalization import CONVERTERS as NORMALIZATION
from fusion_compiler.frontend.onnx_ops.positional import CONVERTERS as POSITIONAL
from fusion_compiler.frontend.onnx_ops.reduction import CONVERTERS as REDUCTION
from fusion_compiler.frontend.onnx_ops.shape import CONVERTERS as SHAPE
from fusion_compiler.frontend.values import Value

Converter = Callable[[NodeContext], Value | Sequence[Value]]

CONVERTERS: dict[str, Converter] = {
    **ELEMENTWISE,
    **LINALG,
    **CONV_POOL,
    **CONV_TRANSPOSE,
    **NORMALIZATION,
    **REDUCTION,
    **SHAPE,
    **INDEXING,
    **LOGIC,
    **POSITIONAL,
}
"""Every ONNX op type (default domain) the importer translates into graph ops."""
