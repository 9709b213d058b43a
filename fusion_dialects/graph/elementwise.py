"""Elementwise graph ops: unary math, `clip`, and binary ops with numpy broadcasting.

Float math is `f32` only; `relu`, `neg`, `abs`, `add`, `sub`, `mul`, `max` and `min` also take
`i64` and `i32` tensors (exact, wrapping on overflow as numpy does)."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import Float32Type, FloatAttr
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, prop_def

from fusion_compiler.dialects.graph.base import (
    NUMERIC_TYPES,
    BinaryBroadcastOp,
    ElementTypes,
    UnaryElementwiseOp,
    float_attr,
)


@irdl_op_definition
class ReluOp(UnaryElementwiseOp):
    """`max(x, 0)`."""

    name = "graph.relu"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = NUMERIC_TYPES


@irdl_op_definition
class ExpOp(UnaryElementwiseOp):
    """`e^x`."""

    name = "graph.exp"


@irdl_op_definition
class LogOp(UnaryElementwiseOp):
    """Natural logarithm."""

    name = "graph.log"


@irdl_op_definition
class SqrtOp(UnaryElementwiseOp):
    """Square root."""

    name = "graph.sqrt"


@irdl_op_definition
class RsqrtOp(UnaryElementwiseOp):
    """`1 / sqrt(x)`."""

    name = "graph.rsqrt"


@irdl_op_definition
class TanhOp(UnaryElementwiseOp):
    """Hyperbolic tangent."""

    name = "graph.tanh"


@irdl_op_definition
class SigmoidOp(UnaryElementwiseOp):
    """`1 / (1 + e^-x)`."""

    name = "graph.sigmoid"


@irdl_op_definition
class NegOp(UnaryElementwiseOp):
    """`-x`."""

    name = "graph.neg"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = NUMERIC_TYPES


@irdl_op_definition
class AbsOp(UnaryElementwiseOp):
    """`|x|`."""

    name = "graph.abs"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = NUMERIC_TYPES


@irdl_op_definition
class ErfOp(UnaryElementwiseOp):
    """The error function."""

    name = "graph.erf"


@irdl_op_definition
class GeluOp(UnaryElementwiseOp):
    """`0.5 x (1 + erf(x / sqrt(2)))`."""

    name = "graph.gelu"


@irdl_op_definition
class GeluTanhOp(UnaryElementwiseOp):
    """`0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`."""

    name = "graph.gelu_tanh"


@irdl_op_definition
class SiluOp(UnaryElementwiseOp):
    """`x * sigmoid(x)`."""

    name = "graph.silu"


@irdl_op_definition
class SinOp(UnaryElementwiseOp):
    """Sine (radians)."""

    name = "graph.sin"


@irdl_op_definition
class CosOp(UnaryElementwiseOp):
    """Cosine (radians)."""

    name = "graph.cos"


@irdl_op_definition
class TanOp(UnaryElementwiseOp):
    """Tangent (radians)."""

    name = "graph.tan"


@irdl_op_definition
class AsinOp(UnaryElementwiseOp):
    """Arcsine: NaN outside [-1, 1]."""

    name = "graph.asin"


@irdl_op_definition
class AcosOp(UnaryElementwiseOp):
    """Arccosine: NaN outside [-1, 1]."""

    name = "graph.acos"


@irdl_op_definition
class AtanOp(UnaryElementwiseOp):
    """Arctangent."""

    name = "graph.atan"


@irdl_op_definition
class SinhOp(UnaryElementwiseOp):
    """Hyperbolic sine."""

    name = "graph.sinh"


@irdl_op_definition
class CoshOp(UnaryElementwiseOp):
    """Hyperbolic cosine."""

    name = "graph.cosh"


@irdl_op_definition
class AsinhOp(UnaryElementwiseOp):
    """Inverse hyperbolic sine."""

    name = "graph.asinh"


@irdl_op_definition
class AcoshOp(UnaryElementwiseOp):
    """Inverse hyperbolic cosine: NaN below 1."""

    name = "graph.acosh"


@irdl_op_definition
class AtanhOp(UnaryElementwiseOp):
    """Inverse hyperbolic tangent: ±inf at ±1, NaN beyond."""

    name = "graph.atanh"


@irdl_op_definition
class FloorOp(UnaryElementwiseOp):
    """The largest integer not above x."""

    name = "graph.floor"


@irdl_op_definition
class CeilOp(UnaryElementwiseOp):
    """The smallest integer not below x."""

    name = "graph.ceil"


@irdl_op_definition
class RoundOp(UnaryElementwiseOp):
    """The nearest integer, halves to even (ONNX's Round, numpy's `rint`)."""

    name = "graph.round"


@irdl_op_definition
class SignOp(UnaryElementwiseOp):
    """-1, 0 or 1 by the sign of x (+0 at -0, NaN at NaN: numpy's sign)."""

    name = "graph.sign"


@irdl_op_definition
class ClipOp(UnaryElementwiseOp):
    """`min(max(x, min), max)`.

    ```mlir
    %y = graph.clip %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<4xf32>
    ```
    """

    name = "graph.clip"
    min = prop_def(FloatAttr[Float32Type])
    max = prop_def(FloatAttr[Float32Type])

    def __init__(self, input: SSAValue, min: float, max: float):
        super().__init__(input)
        self.properties["min"] = float_attr(min)
        self.properties["max"] = float_attr(max)

    @property
    def bounds(self) -> tuple[float, float]:
        return self.min.value.data, self.max.value.data


@irdl_op_definition
class AddOp(BinaryBroadcastOp):
    """`a + b`."""

    name = "graph.add"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = NUMERIC_TYPES


@irdl_op_definition
class SubOp(BinaryBroadcastOp):
    """`a - b`."""

    name = "graph.sub"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = NUMERIC_TYPES


@irdl_op_definition
class MulOp(BinaryBroadcastOp):
    """`a * b`."""

    name = "graph.mul"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = NUMERIC_TYPES


@irdl_op_definition
class DivOp(BinaryBroadcastOp):
    """`a / b`; of integers, the quotient rounded toward zero (C's and onnxruntime's), 0 for a
    divisor of 0 and `-a` (wrapping) for one of -1, where the machine's division traps."""

    name = "graph.div"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = NUMERIC_TYPES


@irdl_op_definition
class MaxOp(BinaryBroadcastOp):
    """Elementwise maximum."""

    name = "graph.max"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = NUMERIC_TYPES


@irdl_op_definition
class MinOp(BinaryBroadcastOp):
    """Elementwise minimum."""

    name = "graph.min"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = NUMERIC_TYPES


@irdl_op_definition
class PowOp(BinaryBroadcastOp):
    """`a ** b`."""

    name = "graph.pow"


UNARY_OPS = (
    ReluOp,
    ExpOp,
    LogOp,
    SqrtOp,
    RsqrtOp,
    TanhOp,
    SigmoidOp,
    NegOp,
    AbsOp,
    ErfOp,
    GeluOp,
    GeluTanhOp,
    SiluOp,
    ClipOp,
    *(SinOp, CosOp, TanOp, AsinOp, AcosOp, AtanOp, SinhOp, CoshOp),
    *(AsinhOp, AcoshOp, AtanhOp, FloorOp, CeilOp, RoundOp, SignOp),
)
BINARY_OPS = (AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp)
