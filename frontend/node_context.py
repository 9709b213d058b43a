"""What a converter sees of the ONNX node it translates: attributes, inputs, and the builder."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper
from xdsl.ir import SSAValue

from fusion_compiler.dialects.shape_rules import is_static
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.graph_builder import GraphBuilder
from fusion_compiler.frontend.values import Value, dims_of_value, shape_of_value


def describe_node(node: onnx.NodeProto, index: int) -> str:
    """`node 'conv1' (Conv, #3)`, or `node #3 (Conv, output 'y')` for a node without a name."""
    if node.name:
        return f"node '{node.name}' ({node.op_type}, #{index})"
    outputs = [o for o in node.output if o]
    named = f", output '{outputs[0]}'" if outputs else ""
    return f"node #{index} ({node.op_type}{named})"


def _attribute_value(attribute: onnx.AttributeProto) -> Any:
    value = helper.get_attribute_value(attribute)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


class NodeContext:
    """One ONNX node being converted: `builder` appends its graph ops."""

    def __init__(
        self,
        node: onnx.NodeProto,
        index: int,
        opset: int,
        values: dict[str, Value],
        builder: GraphBuilder,
    ):
        self.node = node
        self.index = index
        self.opset = opset
        self.builder = builder
        self._values = values
        self.attrs = {a.name: _attribute_value(a) for a in node.attribute}

    @property
    def op_type(self) -> str:
        return self.node.op_type

    def describe(self) -> str:
        return describe_node(self.node, self.index)

    # --- attributes ---------------------------------------------------------------------------

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)

    def int_list(self, name: str, default: list[int]) -> list[int]:
        return [int(v) for v in self.attrs.get(name, default)]

    def expect_attr(self, name: str, allowed: tuple, default: Any) -> Any:
        """The attribute's value, which must be one of `allowed`."""
        value = self.attrs.get(name, default)
        if value not in allowed:
            raise Unsupported(f"{name}={value!r} is not supported")
        return value

    # --- inputs -------------------------------------------------------------------------------

    @property
    def input_names(self) -> list[str]:
        return list(self.node.input)

    def has_input(self, index: int) -> bool:
        """Whether optional input `index` is given (ONNX leaves out or names "" a missing one)."""
        return index < len(self.node.input) and self.node.input[index] != ""

    def value(self, index: int) -> Value:
        if not self.has_input(index):
            raise Unsupported(f"input #{index} is required")
        return self._values[self.node.input[index]]

    def values(self) -> list[Value]:
        """Every given input, in order."""
        return [self.value(i) for i in range(len(self.node.input)) if self.has_input(i)]

    def is_constant(self, index: int) -> bool:
        return isinstance(self.value(index), np.ndarray)

    def tensor(self, index: int) -> SSAValue:
        """Input `index` as a graph tensor (a constant becomes a `graph.constant` of its own
        integer type, or f32: `GraphBuilder.tensor`)."""
        return self.builder.tensor(self.value(index), self._input_name(index))

    def float_tensor(self, index: int) -> SSAValue:
        """Input `index` as an operand of float math (a constant becomes f32, if exact)."""
        return self.builder.float_tensor(self.value(index), self._input_name(index))

    def constant(self, index: int, what: str) -> np.ndarray:
        """Input `index`, which must be known at import time (`what` names it in errors)."""
        value = self.value(index)
        if not isinstance(value, np.ndarray):
            raise Unsupported(
                f"{what} ({self._input_name(index)}) must be known at import time, but it is "
                "computed at run time"
            )
        return value

    def ints(self, index: int, what: str) -> list[int]:
        array = self.constant(index, what)
        if not np.issubdtype(array.dtype, np.integer):
            raise Unsupported(f"{what} must be integers, got {array.dtype}")
        return [int(v) for v in array.reshape(-1)]

    def scalar_float(self, index: int, what: str) -> float:
        array = self.constant(index, what)
        if array.size != 1:
            raise Unsupported(f"{what} must be a single value, got shape {list(array.shape)}")
        return float(array.reshape(-1)[0])

    def shape(self, index: int) -> tuple[int, ...]:
        """The static shape of input `index` (`Unsupported` if it has a dynamic dimension)."""
        return shape_of_value(self.value(index))

    def dims(self, index: int) -> tuple[int, ...]:
        """The shape of input `index`, dynamic dimensions as `shape_rules.DYN`."""
        return dims_of_value(self.value(index))

    def is_dynamic(self, index: int) -> bool:
        """Whether input `index` has a dynamic dimension."""
        return not is_static(self.dims(index))

    def rank(self, index: int) -> int:
        return len(self.dims(index))

    def _input_name(self, index: int) -> str:
        return f"input #{index} '{self.node.input[index]}'"
