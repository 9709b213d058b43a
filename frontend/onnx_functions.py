"""ONNX ops defined as functions of other ops, imported as their function's body.

ONNX's schema defines many ops (Attention, RotaryEmbedding, GroupNormalization, Swish,
SwiGLU, NegativeLogLikelihoodLoss, ...) by a function: a small graph of other ops, for a
given opset, sometimes built for the node's attributes and input types (a context-dependent
function). A node whose op type the importer has no converter for is replaced by that body
(`expand`), its values renamed apart, its attribute references bound to the node's attributes
or the schema's defaults, and imported node by node at the opset the body is written in, as
onnx's own `_expanded` conformance cases are made. An op whose body uses ops the importer
cannot convert is refused with the inner node named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import onnx
from onnx import AttributeProto, FunctionProto, NodeProto, TypeProto

__all__ = ["FunctionBody", "expand"]


@dataclass(frozen=True)
class FunctionBody:
    """The nodes replacing a node (its inputs and outputs are the node's; every other value is
    renamed with a prefix of its own) and the default-domain opset they are written in."""

    nodes: list[NodeProto]
    opset: int


def expand(
    node: NodeProto, opset: int, input_types: Sequence[TypeProto], prefix: str
) -> FunctionBody | None:
    """The body of `node`'s ONNX function at `opset`, or None when its schema (at that opset)
    defines none. `input_types` are the types of the node's inputs (a context-dependent
    function is built for them); `prefix` makes the body's own value names unique."""
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, node.domain or "")
    except onnx.defs.SchemaError:
        return None
    node = _with_defaults(node, schema)
    # (onnx's stubs lack these four members of OpSchema, which its own test helper uses)
    plain = [v for v in schema.function_opset_versions if v <= opset]  # type: ignore[attr-defined]
    dependent = [
        v
        for v in schema.context_dependent_function_opset_versions  # type: ignore[attr-defined]
        if v <= opset
    ]
    if not plain and not dependent:
        return None
    function = FunctionProto()
    if plain and (not dependent or max(plain) >= max(dependent)):
        function.ParseFromString(
            schema.get_function_with_opset_version(max(plain))  # type: ignore[attr-defined]
        )
    else:
        types = [t.SerializeToString() for t in input_types]
        try:  # (onnx's builder refuses attributes or types it cannot build for)
            built = schema.get_context_dependent_function_with_opset_version(  # type: ignore[attr-defined]
                max(dependent), node.SerializeToString(), types
            )
        except Exception:  # noqa: BLE001 - any refusal: no body, the op is unsupported
            return None
        if not built:
            return None
        function.ParseFromString(built)
    versions = [o.version for o in function.opset_import if o.domain in ("", "ai.onnx")]
    return FunctionBody(_renamed(node, function, prefix), versions[0] if versions else opset)


def _with_defaults(node: NodeProto, schema: onnx.defs.OpSchema) -> NodeProto:
    """`node` with the schema's default of each attribute it does not set."""
    full = NodeProto()
    full.CopyFrom(node)
    given = {a.name for a in node.attribute}
    for name, attribute in schema.attributes.items():
        if name not in given and attribute.default_value.name:
            full.attribute.append(attribute.default_value)
    return full


def _renamed(node: NodeProto, function: FunctionProto, prefix: str) -> list[NodeProto]:
    """The function's nodes on the node's values: its formal inputs and outputs become the
    node's (a missing optional input or output, ""), its other values `prefix + name`."""
    names = {formal: "" for formal in function.input}
    names.update(zip(function.input, node.input, strict=False))
    names.update(
        (formal, actual)
        for formal, actual in zip(function.output, node.output, strict=False)
        if actual
    )
    attributes = {a.name: a for a in node.attribute}

    def rename(name: str) -> str:
        return names.get(name, prefix + name if name else "")

    expanded = []
    for inner in function.node:
        copy = NodeProto()
        copy.CopyFrom(inner)
        copy.ClearField("input")
        copy.ClearField("output")
        copy.ClearField("attribute")
        copy.input.extend(rename(name) for name in inner.input)
        copy.output.extend(rename(name) for name in inner.output)
        if copy.name:
            copy.name = prefix + copy.name
        for attribute in inner.attribute:
            if attribute.ref_attr_name:
                if attribute.ref_attr_name not in attributes:
                    continue  # (an optional attribute the node does not set)
                bound = AttributeProto()
                bound.CopyFrom(attributes[attribute.ref_attr_name])
                bound.name = attribute.name
                copy.attribute.append(bound)
            else:
                copy.attribute.append(attribute)
        expanded.append(copy)
    return expanded
