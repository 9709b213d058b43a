"""ONNX → graph dialect: `import_model(model)` builds `func.func @main` from an ONNX graph.

```python
model = onnx.load("resnet50.onnx")
module = import_model(model, {"data": (1, 3, 224, 224)})
outputs = evaluate(module, "main", [x])
```

The arguments of `@main` are the graph inputs that are not initializers, in order; its results
are the graph outputs. Walking the nodes in order, each one is

1. folded at import time with numpy if everything it needs is known (`shape_folding`),
2. otherwise translated into graph ops by the converter of its op type (`onnx_ops`),
3. or, for an op type without one that ONNX defines as a function of other ops, replaced by
   that function's body, imported node by node (`onnx_functions`).

Initializers stay numpy arrays until a graph op uses them, then become `graph.constant`s;
Dropout and Identity vanish. Values keep their ONNX names as SSA name hints, and every op has
the location `"model.onnx":<node index>:0` of the node it came from.

A dynamic input dimension (a `dim_param` such as 'batch', or no size) becomes `?` in `@main`'s
signature unless `input_shapes` fixes it; the shape computations that depend on it stay in the
graph (`shape_folding`), and `specialize-shapes` (or the compiled model, on its first call
with new shapes) makes them static.

Every problem (an unsupported op type or attribute, a node its opset's schema does not allow
(`node_schema`), an unknown rank, a non-float input...) is collected; at the end one `ModelImportError` lists them all, each naming its node.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import onnx
from onnx import TensorProto
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from fusion_compiler.dialects.element_dtypes import numpy_dtype
from fusion_compiler.dialects.shape_rules import DYN, ShapeError
from fusion_compiler.dialects.weights_writer import WeightsWriter
from fusion_compiler.errors import FusionError
from fusion_compiler.frontend.errors import ModelImportError, Problem, Unsupported
from fusion_compiler.frontend.graph_builder import GraphBuilder
from fusion_compiler.frontend.model_damage import damage, undecoded_name
from fusion_compiler.frontend.node_context import NodeContext, describe_node
from fusion_compiler.frontend.node_schema import schema_problem
from fusion_compiler.frontend.onnx_functions import expand
from fusion_compiler.frontend.onnx_ops import CONVERTERS
from fusion_compiler.frontend.onnx_reader import TensorData, read_model
from fusion_compiler.frontend.shape_folding import FOLDERS, fold_node
from fusion_compiler.frontend.values import (
    Missing,
    Value,
    dims_of_value,
    element_type_of_dtype,
    ssa_name,
)

__all__ = ["import_model", "load_model", "SUPPORTED_OPS"]

DEFAULT_DOMAINS = ("", "ai.onnx")

FUNCTION_MARK = ", in its ONNX function: "
"""Joins a node's description and that of a node of its function's body in diagnostics."""

FUNCTION_DEPTH = 4
"""How deep functions may nest (a function's body using an op that is a function...)."""

_PLACEHOLDER_TYPE = TensorType(f32, [])
"""The block argument type of a graph input that cannot be imported (never printed)."""

SUPPORTED_OPS = tuple(sorted(CONVERTERS))
"""ONNX op types translated into graph ops (more fold when their inputs are constants)."""


def load_model(path: str) -> onnx.ModelProto:
    """Read an ONNX file, its large weights left in the file (`onnx_reader`: `import_model`
    maps them); a file that is not a model is a `ModelImportError`."""
    try:
        model = read_model(path)
    except OSError:
        raise
    except Exception as err:  # protobuf decode errors and onnx's own checks
        raise ModelImportError(path, message=f"not a valid ONNX model: {err}") from None
    check_model_header(model, path)
    return model


def check_model_header(model: onnx.ModelProto, path: str) -> None:
    """An empty file decodes to a model without a graph, and a model may declare an opset
    newer than the onnx package knows: both are errors, not an empty `@main`."""
    if not model.graph.node and not model.graph.output:
        raise ModelImportError(
            path, message="not an ONNX model: it has no graph (an empty or truncated file?)"
        )
    problem = undecoded_name(model)
    if problem is not None:  # (every tool reads names as text: the weights file's index too)
        raise ModelImportError(path, message=f"not a valid ONNX model: {problem}")
    opset, newest = default_opset(model), onnx.defs.onnx_opset_version()
    if opset > newest:
        raise ModelImportError(
            path,
            message=f"the model declares ONNX opset {opset}; the onnx package installed knows "
            f"opsets up to {newest}",
        )


def import_model(
    model: onnx.ModelProto,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    *,
    filename: str = "model.onnx",
    progress: Callable[[int], None] | None = None,
    weights: WeightsWriter | None = None,
) -> ModuleOp:
    """The graph-dialect module of `model`; `input_shapes` fixes dynamic input dimensions.
    `filename` is the model's file: diagnostics name it, and initializers held as external
    data (the weights `load_model` leaves in the file) are read from its folder. `progress(n)`
    is called after each node with the number of nodes imported so far. With `weights`,
    every float constant of at least `EXTERNAL_MIN_BYTES` is written there as it is made and
    is a `dense_resource` of the module (`externalize_constants` completes the pair)."""
    importer = _ModelImporter(model, dict(input_shapes or {}), filename, progress, weights)
    try:
        return importer.run()
    except FusionError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, IndexError):
        problem = damage(model)  # (the file's fault, or else the importer's bug)
        if problem is None:
            raise
        raise ModelImportError(filename, message=f"not a valid ONNX model: {problem}") from None


def default_opset(model: onnx.ModelProto) -> int:
    for entry in model.opset_import:
        if entry.domain in DEFAULT_DOMAINS:
            return entry.version
    return onnx.defs.onnx_opset_version()


class _ModelImporter:
    def __init__(
        self,
        model: onnx.ModelProto,
        input_shapes: dict,
        filename: str,
        progress: Callable[[int], None] | None = None,
        weights: WeightsWriter | None = None,
    ):
        self.graph = model.graph
        self.weights = weights
        self.progress = progress
        self.opset = default_opset(model)
        self.input_shapes = input_shapes
        self.filename = filename
        self.tensors = TensorData(filename)
        self.values: dict[str, Value | Missing] = {}
        self.problems: list[Problem] = []
        self._functions = 0
        """How many nodes were imported as function bodies (their values' prefixes)."""

    def report(self, where: str, message: str) -> None:
        problem = Problem(where, message)
        if problem not in self.problems:
            self.problems.append(problem)

    def run(self) -> ModuleOp:
        initializers = {i.name: i for i in self.graph.initializer}
        arguments = [i for i in self.graph.input if i.name not in initializers]
        types = [self._argument_type(info) for info in arguments]
        block = Block(arg_types=[t or _PLACEHOLDER_TYPE for t in types])
        builder = GraphBuilder(block, self.filename, self.weights)
        for name, initializer in initializers.items():
            self.values[name] = self.tensors.array(initializer)
            builder.name_constant(self.values[name], name)
        for argument, info, typ in zip(block.args, arguments, types, strict=True):
            argument.name_hint = ssa_name(info.name)
            # An input with a problem is missing: the nodes using it are skipped silently.
            self.values[info.name] = argument if typ is not None else Missing()
        self._check_input_shapes_used(arguments)
        for index, node in enumerate(self.graph.node):
            self._import_node(node, index, builder)
            if self.progress is not None:
                self.progress(index + 1)
        results = self._results(builder)
        if self.problems:
            raise ModelImportError(self.filename, self.problems)
        block.add_op(func.ReturnOp(*results))
        signature = ([a.type for a in block.args], [r.type for r in results])
        return ModuleOp([func.FuncOp("main", signature, Region(block))])

    # --- graph inputs ---------------------------------------------------------------------------

    def _argument_type(self, info: onnx.ValueInfoProto) -> TensorType | None:
        """The tensor type of a graph input (`f32`, `i64`, `i32` or `i1` elements), or None
        after reporting its problems."""
        where = f"graph input '{info.name}'"
        if not info.type.HasField("tensor_type"):
            self.report(where, "only tensor inputs are supported")
            return None
        elem_type = info.type.tensor_type.elem_type
        element = _element_type(elem_type)
        if element is None:
            dtype = TensorProto.DataType.Name(elem_type).lower()
            self.report(
                where,
                f"has element type {dtype}; only float32, int64, int32 and bool inputs are "
                "supported",
            )
        try:
            shape = self._input_shape(info)
        except Unsupported as err:
            self.report(where, err.message)
            return None
        return TensorType(element, shape) if element is not None else None

    def _input_shape(self, info: onnx.ValueInfoProto) -> list[int]:
        tensor = info.type.tensor_type
        given = self.input_shapes.get(info.name)
        dims = list(tensor.shape.dim) if tensor.HasField("shape") else None
        if given is not None:
            given = [int(d) for d in given]
            if dims is not None and len(dims) != len(given):
                raise Unsupported(
                    f"has rank {len(dims)}, but the given shape {given} has rank {len(given)}"
                )
            for axis, dim in enumerate(dims or []):
                if dim.HasField("dim_value") and dim.dim_value > 0 and dim.dim_value != given[axis]:
                    raise Unsupported(
                        f"dimension {axis} is {dim.dim_value}, but the given shape is {given}"
                    )
            return given
        if dims is None:
            raise Unsupported(f"has an unknown rank; {_fix_hint(info.name)}")
        # A dimension without a positive size (a symbol such as 'batch', or none) stays
        # dynamic: `?` in @main's signature, specialised when the model is called.
        return [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else DYN for d in dims]

    def _check_input_shapes_used(self, arguments: Sequence[onnx.ValueInfoProto]) -> None:
        names = {info.name for info in arguments}
        for name in self.input_shapes:
            if name not in names:
                self.report(f"input shape '{name}'", "is not the name of a graph input")

    # --- nodes ----------------------------------------------------------------------------------

    def _import_node(
        self, node: onnx.NodeProto, index: int, builder: GraphBuilder, within: str = ""
    ) -> None:
        where = within + describe_node(node, index)
        ready = self._inputs_ready(node, where)
        if node.domain not in DEFAULT_DOMAINS:
            self.report(where, f"unsupported op type '{node.domain}.{node.op_type}'")
            ready = False
        elif node.op_type not in CONVERTERS and node.op_type not in FOLDERS:
            if ready and self._import_function(node, index, builder, where):
                return
            self.report(where, "unsupported op type")
            ready = False
        elif (problem := schema_problem(node, self.opset)) is not None:
            self.report(where, f"not a valid node: {problem}")
            ready = False
        if not ready:
            self._bind_outputs(node, where, [], builder)
            return
        builder.at_node(index)
        context = NodeContext(node, index, self.opset, self.values, builder)
        try:
            outputs = self._convert(context)
        except Unsupported as err:
            self.report(where, err.message)
            outputs = []
        except ShapeError as err:
            self.report(where, f"invalid shapes: {err}")
            outputs = []
        except VerifyException as err:  # an op constructor refusing its operands
            self.report(where, str(err))
            outputs = []
        except (ValueError, IndexError) as err:  # numpy, folding an inconsistent model
            self.report(where, f"cannot be evaluated at import time: {err}")
            outputs = []
        self._bind_outputs(node, where, outputs, builder)

    def _import_function(
        self, node: onnx.NodeProto, index: int, builder: GraphBuilder, where: str
    ) -> bool:
        """Imports `node` as the body of its ONNX function (`onnx_functions`), each inner
        node at the body's opset and named in diagnostics after `node`; False when its
        schema defines no function (or functions nest deeper than `FUNCTION_DEPTH`)."""
        if where.count(FUNCTION_MARK) >= FUNCTION_DEPTH or schema_problem(node, self.opset):
            return False
        self._functions += 1
        types = [self._type_proto(name) for name in node.input]
        prefix = f"{node.op_type}_{self._functions}_"
        body = expand(node, self.opset, types, prefix)
        if body is None:
            return False
        opset, self.opset = self.opset, body.opset
        try:
            for position, inner in enumerate(body.nodes):
                builder.at_node(index)
                self._import_node(inner, position, builder, where + FUNCTION_MARK)
        finally:
            self.opset = opset
        return True

    def _type_proto(self, name: str) -> onnx.TypeProto:
        """The ONNX type of value `name` (its element type and its dimensions, a dynamic one
        without a size), for building a context-dependent function; an empty one for a
        missing optional input or a value the importer has not got."""
        value = self.values.get(name) if name else None
        if value is None or isinstance(value, Missing):
            return onnx.TypeProto()
        if isinstance(value, np.ndarray):
            element = onnx.helper.np_dtype_to_tensor_dtype(value.dtype)
        else:
            assert isinstance(value.type, TensorType)
            element = onnx.helper.np_dtype_to_tensor_dtype(numpy_dtype(value.type.element_type))
        dims = [None if d == DYN else d for d in dims_of_value(value)]
        return onnx.helper.make_tensor_type_proto(element, dims)

    def _inputs_ready(self, node: onnx.NodeProto, where: str) -> bool:
        """Whether every input is available; reports why not (once per missing value)."""
        ready = True
        for name in node.input:
            if not name:
                continue
            value = self.values.get(name)
            if value is None:
                self.report(where, f"input '{name}' is not defined")
                ready = False
            elif isinstance(value, Missing):
                if value.reason is not None:
                    self.report(*value.reason)
                ready = False
        return ready

    def _convert(self, context: NodeContext) -> list[Value]:
        outputs = fold_node(context)
        if outputs is None:
            converter = CONVERTERS.get(context.op_type)
            if converter is None:
                raise Unsupported(
                    f"{context.op_type} is only supported on values known at import time"
                )
            converted = converter(context)
            outputs = list(converted) if isinstance(converted, list | tuple) else [converted]
        # numpy hands back scalars (np.int64) for rank-0 results; keep every constant an array.
        return [np.asarray(v) if isinstance(v, np.generic) else v for v in outputs]

    def _bind_outputs(
        self, node: onnx.NodeProto, where: str, outputs: list[Value], builder: GraphBuilder
    ) -> None:
        for position, name in enumerate(node.output):
            if not name:
                continue
            if not outputs:
                self.values[name] = Missing()
            elif position < len(outputs):
                value = outputs[position]
                if isinstance(value, SSAValue) and value.name_hint is None:
                    value.name_hint = ssa_name(name)
                elif isinstance(value, np.ndarray):
                    builder.name_constant(value, name)
                self.values[name] = value
            else:
                reason = (where, f"output #{position} '{name}' is not supported")
                self.values[name] = Missing(reason)

    # --- graph outputs --------------------------------------------------------------------------

    def _results(self, builder: GraphBuilder) -> list[SSAValue]:
        builder.location = None
        results = []
        for info in self.graph.output:
            value = self.values.get(info.name)
            where = f"graph output '{info.name}'"
            if value is None:
                self.report(where, "is not defined")
            elif isinstance(value, Missing):
                if value.reason is not None:
                    self.report(*value.reason)
            else:
                try:
                    results.append(self._result(builder, value, info.name))
                except Unsupported as err:
                    self.report(where, err.message)
        return results

    def _result(self, builder: GraphBuilder, value: Value, name: str) -> SSAValue:
        tensor = builder.tensor(value, f"graph output '{name}'")
        if tensor.name_hint is None:
            tensor.name_hint = ssa_name(name)
        return tensor


def _fix_hint(name: str) -> str:
    return f"fix it with --input-shape {name}=... (or input_shapes={{'{name}': ...}})"


def _element_type(elem_type: int) -> Attribute | None:
    """The graph element type of an ONNX tensor element type the importer accepts."""
    try:
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, TypeError, ValueError):
        return None
    return element_type_of_dtype(dtype)
