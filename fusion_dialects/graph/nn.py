"""Neural-network graph ops: matmul, convolution, pooling, normalisations and softmax."""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence

from xdsl.dialects.builtin import I64, BoolAttr, Float32Type, FloatAttr, IntegerAttr, TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from fusion_compiler.dialects import shape_rules
from fusion_compiler.dialects.graph.base import (
    GraphOp,
    IntArrayProp,
    UnaryWithResultTypeOp,
    apply_rule,
    bool_attr,
    bool_of,
    float_attr,
    int_array,
    int_attr,
    int_of,
    ints_of,
    shape_of,
    tensor_type,
)
from fusion_compiler.dialects.shape_rules import Shape, fmt

_OPERANDS_FORMAT = "operands attr-dict `:` functional-type(operands, results)"


@irdl_op_definition
class MatmulOp(GraphOp):
    """`np.matmul(a, b)` for operands of rank >= 2 with batch broadcasting.

    ```mlir
    %c = graph.matmul %a, %b : (tensor<128x768xf32>, tensor<768x3072xf32>) -> tensor<128x3072xf32>
    ```
    """

    name = "graph.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        shape = shape_rules.matmul(shape_of(lhs), shape_of(rhs))
        super().__init__(operands=[lhs, rhs], result_types=[tensor_type(shape)])

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [apply_rule(self.name, shape_rules.matmul, *operand_shapes)]


@irdl_op_definition
class Conv2DOp(GraphOp):
    """2-D convolution of an NCHW input with an OIHW weight (no bias; add it separately).

    `padding` is (top, left, bottom, right); `groups` splits the channels.

    ```mlir
    %y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>,
                              dilation = array<i64: 1, 1>, groups = 1 : i64}
        : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
    ```
    """

    name = "graph.conv2d"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    result = result_def(TensorType)
    strides = prop_def(IntArrayProp)
    padding = prop_def(IntArrayProp)
    dilation = prop_def(IntArrayProp)
    groups = prop_def(IntegerAttr[I64])
    assembly_format = _OPERANDS_FORMAT

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        dilation: Sequence[int] = (1, 1),
        groups: int = 1,
    ):
        shape = shape_rules.conv2d(
            shape_of(input), shape_of(weight), strides, padding, dilation, groups
        )
        super().__init__(
            operands=[input, weight],
            result_types=[tensor_type(shape)],
            properties={
                "strides": int_array(strides),
                "padding": int_array(padding),
                "dilation": int_array(dilation),
                "groups": int_attr(groups),
            },
        )

    @property
    def params(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int]:
        """(strides, padding, dilation, groups) as Python values."""
        return (
            ints_of(self.strides),
            ints_of(self.padding),
            ints_of(self.dilation),
            int_of(self.groups),
        )

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [apply_rule(self.name, shape_rules.conv2d, *operand_shapes, *self.params)]


class Pool2DOp(UnaryWithResultTypeOp, ABC):
    """Sliding-window pooling over the H and W axes of an NCHW input."""

    kernel = prop_def(IntArrayProp)
    strides = prop_def(IntArrayProp)
    padding = prop_def(IntArrayProp)

    def __init__(
        self,
        input: SSAValue,
        kernel: Sequence[int],
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        **extra_properties,
    ):
        shape = shape_rules.pool2d(shape_of(input), kernel, strides, padding)
        super().__init__(
            operands=[input],
            result_types=[tensor_type(shape)],
            properties={
                "kernel": int_array(kernel),
                "strides": int_array(strides),
                "padding": int_array(padding),
                **extra_properties,
            },
        )

    @property
    def window(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """(kernel, strides, padding) as Python values."""
        return ints_of(self.kernel), ints_of(self.strides), ints_of(self.padding)

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [apply_rule(self.name, shape_rules.pool2d, operand_shapes[0], *self.window)]


@irdl_op_definition
class MaxPool2DOp(Pool2DOp):
    """Max pooling; padded positions never win.

    ```mlir
    %y = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                              padding = array<i64: 1, 1, 1, 1>}
        : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
    ```
    """

    name = "graph.max_pool2d"


@irdl_op_definition
class AvgPool2DOp(Pool2DOp):
    """Average pooling; padded positions count in the divisor iff `count_include_pad`."""

    name = "graph.avg_pool2d"
    count_include_pad = prop_def(BoolAttr)

    def __init__(
        self,
        input: SSAValue,
        kernel: Sequence[int],
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        count_include_pad: bool = False,
    ):
        super().__init__(
            input, kernel, strides, padding, count_include_pad=bool_attr(count_include_pad)
        )

    @property
    def count_include_pad_value(self) -> bool:
        return bool_of(self.count_include_pad)


@irdl_op_definition
class GlobalAvgPool2DOp(UnaryWithResultTypeOp):
    """Mean over H and W: NxCxHxW → NxCx1x1."""

    name = "graph.global_avg_pool2d"

    def __init__(self, input: SSAValue):
        shape = shape_rules.global_pool2d(shape_of(input))
        super().__init__(operands=[input], result_types=[tensor_type(shape)])

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [apply_rule(self.name, shape_rules.global_pool2d, operand_shapes[0])]


@irdl_op_definition
class BatchNormOp(GraphOp):
    """Inference batch normalisation over channel axis 1:
    `(x - mean) / sqrt(var + epsilon) * scale + bias`, parameters of shape C."""

    name = "graph.batch_norm"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    result = result_def(TensorType)
    epsilon = prop_def(FloatAttr[Float32Type])
    assembly_format = _OPERANDS_FORMAT

    def __init__(self, input, scale, bias, mean, var, epsilon: float = 1e-5):
        super().__init__(
            operands=[input, scale, bias, mean, var],
            result_types=[SSAValue.get(input).type],
            properties={"epsilon": float_attr(epsilon)},
        )

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        x, *params = operand_shapes
        for what, shape in zip(("scale", "bias", "mean", "var"), params, strict=True):
            apply_rule(self.name, shape_rules.channel_parameter, x, shape, what)
        return [x]


@irdl_op_definition
class LayerNormOp(GraphOp):
    """Normalise over axes `axis`..rank-1, then scale by `gamma` and shift by `beta`."""

    name = "graph.layer_norm"
    input = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    epsilon = prop_def(FloatAttr[Float32Type])
    assembly_format = _OPERANDS_FORMAT

    def __init__(self, input, gamma, beta, axis: int = -1, epsilon: float = 1e-5):
        super().__init__(
            operands=[input, gamma, beta],
            result_types=[SSAValue.get(input).type],
            properties={"axis": int_attr(axis), "epsilon": float_attr(epsilon)},
        )

    @property
    def axis_value(self) -> int:
        """The first normalised axis, non-negative."""
        return shape_rules.normalize_axis(int_of(self.axis), len(shape_of(self.input)))

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        x, gamma, beta = operand_shapes
        axis = int_of(self.axis)
        apply_rule(self.name, shape_rules.layer_norm_parameter, x, gamma, axis, "gamma")
        apply_rule(self.name, shape_rules.layer_norm_parameter, x, beta, axis, "beta")
        return [x]


@irdl_op_definition
class LrnOp(GraphOp):
    """Local response normalisation across channels (ONNX LRN) of an NCHW input."""

    name = "graph.lrn"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    size = prop_def(IntegerAttr[I64])
    alpha = prop_def(FloatAttr[Float32Type])
    beta = prop_def(FloatAttr[Float32Type])
    bias = prop_def(FloatAttr[Float32Type])
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input, size: int, alpha=1e-4, beta=0.75, bias=1.0):
        super().__init__(
            operands=[input],
            result_types=[SSAValue.get(input).type],
            properties={
                "size": int_attr(size),
                "alpha": float_attr(alpha),
                "beta": float_attr(beta),
                "bias": float_attr(bias),
            },
        )

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        (x,) = operand_shapes
        if len(x) != 4:
            raise VerifyException(f"{self.name}: needs a rank-4 NCHW input, got {fmt(x)}")
        if int_of(self.size) < 1:
            raise VerifyException(f"{self.name}: size must be >= 1, got {int_of(self.size)}")
        return [x]


@irdl_op_definition
class SoftmaxOp(GraphOp):
    """`exp(x - max) / sum(exp(x - max))` along `axis`."""

    name = "graph.softmax"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, axis: int = -1):
        super().__init__(
            operands=[input],
            result_types=[SSAValue.get(input).type],
            properties={"axis": int_attr(axis)},
        )

    @property
    def axis_value(self) -> int:
        return shape_rules.normalize_axis(int_of(self.axis), len(shape_of(self.input)))

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        apply_rule(self.name, shape_rules.normalize_axis, int_of(self.axis), len(operand_shapes[0]))
        return [operand_shapes[0]]


NN_OPS = (
    MatmulOp,
    Conv2DOp,
    MaxPool2DOp,
    AvgPool2DOp,
    GlobalAvgPool2DOp,
    BatchNormOp,
    LayerNormOp,
    LrnOp,
    SoftmaxOp,
)
