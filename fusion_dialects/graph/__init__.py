"""The `graph` dialect: tensor-level ops with value semantics (the level of Relax).

Op names, operands and properties follow the interchange contract in DESIGN.md; every op has
a readable custom syntax and always parses in xDSL's generic form too.
"""

from xdsl.ir import Dialect

from fusion_compiler.dialects.graph.dynamic import *  # noqa: F403
from fusion_compiler.dialects.graph.dynamic import DYNAMIC_OPS
from fusion_compiler.dialects.graph.elementwise import *  # noqa: F403
from fusion_compiler.dialects.graph.elementwise import BINARY_OPS, UNARY_OPS
from fusion_compiler.dialects.graph.indexing import *  # noqa: F403
from fusion_compiler.dialects.graph.indexing import INDEXING_OPS
from fusion_compiler.dialects.graph.logic import *  # noqa: F403
from fusion_compiler.dialects.graph.logic import COMPARISON_OPS as COMPARISON_OPS
from fusion_compiler.dialects.graph.logic import LOGIC_OPS
from fusion_compiler.dialects.graph.nn import *  # noqa: F403
from fusion_compiler.dialects.graph.nn import NN_OPS
from fusion_compiler.dialects.graph.reduction import *  # noqa: F403
from fusion_compiler.dialects.graph.reduction import REDUCTION_OPS
from fusion_compiler.dialects.graph.structure import CODEGEN_ATTR as CODEGEN_ATTR
from fusion_compiler.dialects.graph.structure import COMPOSITE_ATTR as COMPOSITE_ATTR
from fusion_compiler.dialects.graph.structure import PRIMITIVE_ATTR as PRIMITIVE_ATTR
from fusion_compiler.dialects.graph.structure import CallLoopOp, ConstantOp
from fusion_compiler.dialects.graph.structure import graph_functions as graph_functions
from fusion_compiler.dialects.graph.structure import (
    is_external_function as is_external_function,
)
from fusion_compiler.dialects.graph.transform import *  # noqa: F403
from fusion_compiler.dialects.graph.transform import TRANSFORM_OPS

COMPUTE_OPS = (
    *UNARY_OPS,
    *BINARY_OPS,
    *LOGIC_OPS,
    *NN_OPS,
    *REDUCTION_OPS,
    *TRANSFORM_OPS,
    *INDEXING_OPS,
)
"""Every graph op that computes a tensor from tensors (legalize-ops turns each into a kernel)."""

Graph = Dialect("graph", [*COMPUTE_OPS, *DYNAMIC_OPS, ConstantOp, CallLoopOp], [])
