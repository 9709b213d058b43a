"""What is wrong with an ONNX model the importer failed on: the explanation of an error that
is the file's fault, not the importer's.

The importer trusts a model's structure: names are text, tensors have a defined type and the
data their dims describe, an attribute holds the value its type names. A damaged file (a
flipped byte, a cut) breaks those promises deep inside a converter, as a `TypeError`,
`ValueError` or `KeyError`. `import_model` then asks `damage` whether the model is at fault:
if so, the user reads what is wrong with the file; if not, the exception is a bug of the
importer and surfaces as one. Nothing is checked for a model that imports. (ONNX's checker
is no judge here: it refuses models that ONNX's own helpers make and onnxruntime runs, such
as a graph output without a shape.)
"""

from __future__ import annotations

from collections.abc import Iterator

import onnx
from onnx import AttributeProto, TensorProto, numpy_helper

_DATA_TYPES = frozenset(TensorProto.DataType.values())


def damage(model: onnx.ModelProto) -> str | None:
    """What makes `model` invalid, or None if nothing the importer relies on does."""
    return (
        undecoded_name(model)
        or _undefined_type(model)
        or _bad_attribute(model)
        or _bad_tensor(model)
    )


def undecoded_name(model: onnx.ModelProto) -> str | None:
    """A name of the graph that is not UTF-8 text (protobuf then gives its bytes)."""
    for name in _names(model.graph):
        if not isinstance(name, str):
            return f"a name in the graph is not UTF-8 text ({name!r})"
    return None


def _names(graph: onnx.GraphProto) -> Iterator[object]:
    for info in (*graph.input, *graph.output, *graph.value_info):
        yield info.name
    for tensor in graph.initializer:
        yield tensor.name
    for node in graph.node:
        yield node.name
        yield node.op_type
        yield from node.input
        yield from node.output
        for attribute in node.attribute:
            yield attribute.name


def _undefined_type(model: onnx.ModelProto) -> str | None:
    graph = model.graph
    for info in (*graph.input, *graph.output, *graph.value_info):
        if info.type.HasField("tensor_type"):
            code = info.type.tensor_type.elem_type
            if code not in _DATA_TYPES:
                return f"'{info.name}' has element type {code}, which ONNX does not define"
    for tensor in _tensors(graph):
        if tensor.data_type == TensorProto.UNDEFINED:
            return f"tensor '{tensor.name}' has no data type"
        if tensor.data_type not in _DATA_TYPES:
            code = tensor.data_type
            return f"tensor '{tensor.name}' has data type {code}, which ONNX does not define"
    return None


def _tensors(graph: onnx.GraphProto) -> Iterator[TensorProto]:
    """The initializers, and the tensors of Constant nodes."""
    yield from graph.initializer
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == AttributeProto.TENSOR:
                yield attribute.t


_ATTRIBUTE_FIELDS = {
    AttributeProto.FLOAT: "f",
    AttributeProto.INT: "i",
    AttributeProto.STRING: "s",
    AttributeProto.TENSOR: "t",
    AttributeProto.GRAPH: "g",
    AttributeProto.SPARSE_TENSOR: "sparse_tensor",
    AttributeProto.TYPE_PROTO: "tp",
    AttributeProto.FLOATS: "floats",
    AttributeProto.INTS: "ints",
    AttributeProto.STRINGS: "strings",
    AttributeProto.TENSORS: "tensors",
    AttributeProto.GRAPHS: "graphs",
    AttributeProto.SPARSE_TENSORS: "sparse_tensors",
    AttributeProto.TYPE_PROTOS: "type_protos",
}
"""The field that holds an attribute's value, by its type."""

_SINGULAR = frozenset({"f", "i", "s", "t", "g", "sparse_tensor", "tp"})
"""The fields of one value (the others are lists, which may be empty)."""


def _bad_attribute(model: onnx.ModelProto) -> str | None:
    """An attribute without a type, or holding no value or a value of another type."""
    for index, node in enumerate(model.graph.node):
        for attribute in node.attribute:
            if attribute.ref_attr_name:  # (a function's reference to its caller's attribute)
                continue
            where = f"attribute '{attribute.name}' of node #{index} ({node.op_type})"
            field = _ATTRIBUTE_FIELDS.get(attribute.type)
            if field is None:
                return f"{where} has no type"
            held = [name for name in _ATTRIBUTE_FIELDS.values() if _holds(attribute, name)]
            kind = AttributeProto.AttributeType.Name(attribute.type)
            other = next((name for name in held if name != field), None)
            if other is not None:
                return f"{where} is of type {kind} but holds a value in '{other}'"
            if field in _SINGULAR and not held:
                return f"{where} is of type {kind} but holds no value"
    return None


def _holds(attribute: AttributeProto, field: str) -> bool:
    if field in _SINGULAR:
        return attribute.HasField(field)
    return len(getattr(attribute, field)) > 0


def _bad_tensor(model: onnx.ModelProto) -> str | None:
    """A tensor in the file (not external data) whose data does not fit its type and dims."""
    for tensor in _tensors(model.graph):
        if tensor.data_location == TensorProto.EXTERNAL:
            continue
        try:
            numpy_helper.to_array(tensor)
        except (TypeError, ValueError, KeyError) as err:
            return (
                f"tensor '{tensor.name}' does not hold the data its type and dims describe ({err})"
            )
    return None
