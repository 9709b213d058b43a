"""A node checked against its op's schema at the model's opset, before it is converted.

The converters read inputs and attributes as the op's newest versions have them, and read an
older version's where the two differ (Clip's bounds as attributes before opset 11, Slice's
before 10, ...). A node that matches neither, because its model declares an opset at which
its op takes fewer inputs or no such attribute, was converted as if it were another model: a
Clip of three inputs at opset 9 (Clip-6 takes its bounds as attributes) came out unclipped,
and a MaxPool's `ceil_mode` at opset 9 (MaxPool-8 has none) was obeyed. onnxruntime refuses
such models ("invalid model"); so does the importer now, naming the node and what it breaks:
an op the opset does not define, a count of inputs or outputs outside the version's range, an
attribute the version does not define. Input types are not checked: the converters take the
element types they support whatever the version (an Equal of floats at opset 9, which
Equal-7 defines on integers only, compares floats).
"""

from __future__ import annotations

from functools import cache

import onnx
from onnx import defs


def schema_problem(node: onnx.NodeProto, opset: int) -> str | None:
    """What `node` breaks of its op's schema at `opset`, or None."""
    schema = _schema(node.op_type, opset, node.domain)
    if schema is None:
        return f"{node.op_type} is not defined at opset {opset}"
    version = f"{node.op_type}-{schema.since_version}, opset {opset}"
    inputs = _given(node.input)
    if not schema.min_input <= inputs <= schema.max_input:
        expected = _counted(schema.min_input, schema.max_input, "input")
        return f"takes {expected} ({version}), got {inputs}"
    outputs = _given(node.output)
    if not schema.min_output <= outputs <= schema.max_output:
        expected = _counted(schema.min_output, schema.max_output, "output")
        return f"has {expected} ({version}), got {outputs}"
    unknown = [a.name for a in node.attribute if a.name not in schema.attributes]
    if unknown:
        names = ", ".join(repr(name) for name in unknown)
        return f"has attributes {version} does not define: {names}"
    return None


@cache
def _schema(op_type: str, opset: int, domain: str) -> defs.OpSchema | None:
    try:
        return defs.get_schema(op_type, opset, domain if domain != "ai.onnx" else "")
    except defs.SchemaError:
        return None


def _given(names) -> int:
    """The count of inputs or outputs given: up to the last that is not left out (`""`)."""
    given = list(names)
    while given and not given[-1]:
        given.pop()
    return len(given)


def _counted(low: int, high: int, what: str) -> str:
    """`1 input`, `1 to 3 inputs`, `2 or more inputs`."""
    if low == high:
        return f"{low} {what}" + ("" if low == 1 else "s")
    if high >= 2**31 - 1:
        return f"{low} or more {what}s"
    return f"{low} to {high} {what}s"
