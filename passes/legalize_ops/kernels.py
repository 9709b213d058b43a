"""Which kernel each graph op becomes: the legalization table, the checks that an op can be
legalized, and the `KernelLibrary` that names, deduplicates and places the kernels.

Naming: a kernel is called after its op without the dialect prefix (`conv2d`, `add`); ops with
the same class, operand and result types and properties share one kernel; the next different
kernel of the same op gets `_1`, then `_2`, ... in order of first use, skipping names that are
already symbols of the module. Kernels are inserted at the top of the module, before the
functions, in order of first use.
"""

from __future__ import annotations

from collections.abc import Hashable

from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, TensorType, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolOpInterface

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.dialects.graph import ConcatOp
from fusion_compiler.dialects.graph.base import ELEMENT_TYPES, type_names
from fusion_compiler.dialects.loop.attributes import CONCAT_AXIS_ATTR
from fusion_compiler.dialects.loop.builder import tensor_buffer_type
from fusion_compiler.passes.analysis.kernel_sources import note_source, source_text, text_digest
from fusion_compiler.passes.legalize_ops import (
    elementwise,
    gather,
    logic,
    nn,
    normalization,
    positional,
    reduction,
    transform,
)
from fusion_compiler.passes.legalize_ops.deferred import defer, known_kind, recipe
from fusion_compiler.passes.legalize_ops.loop_builder import KernelBuilder, Legalization

LEGALIZATIONS: dict[type[Operation], Legalization] = {
    **elementwise.LEGALIZATIONS,
    **logic.LEGALIZATIONS,
    **gather.LEGALIZATIONS,
    **nn.LEGALIZATIONS,
    **normalization.LEGALIZATIONS,
    **positional.LEGALIZATIONS,
    **reduction.LEGALIZATIONS,
    **transform.LEGALIZATIONS,
}
"""The legalization of every graph compute op class."""


def is_legalizable(op: Operation) -> bool:
    """Whether `op` is a graph op that `legalize-ops` turns into a kernel call."""
    return type(op) in LEGALIZATIONS


def unsupported_reason(typ: Attribute) -> str | None:
    """Why a value of type `typ` cannot become a kernel buffer, or None if it can."""
    if not isinstance(typ, TensorType):
        return f"{typ} is not a ranked tensor"
    if typ.element_type not in ELEMENT_TYPES:
        return f"{typ} does not have {type_names(ELEMENT_TYPES)} elements"
    shape = typ.get_shape()
    if any(size < 0 for size in shape):
        return f"{typ} has a dynamic dimension; only static shapes are supported"
    if any(size == 0 for size in shape):
        return (
            f"{typ} has no elements; zero-size tensors must be folded away first (fold-constants)"
        )
    return None


def check_legalizable(op: Operation) -> None:
    """Raise a `CompileError` naming `op` unless every operand and result is a static,
    non-empty tensor of a graph element type (which ones each op accepts, its verifier
    checks)."""
    values = [*op.operands, *op.results]
    for what, value in zip(_roles(op), values, strict=True):
        reason = unsupported_reason(value.type)
        if reason is not None:
            raise CompileError(f"cannot legalize '{op.name}': {what} {reason}", op)


def _roles(op: Operation) -> list[str]:
    return [f"operand #{i}" for i in range(len(op.operands))] + [
        f"result #{i}" for i in range(len(op.results))
    ]


def kernel_key(op: Operation) -> Hashable:
    """Ops with equal keys compute the same function of their operands (same class, operand and
    result types and properties, and the same literals: the bytes of each scalar constant the
    kernel holds), so they share one kernel. (xDSL attributes are equal when they print the
    same: floats compare by their bits.)"""
    literals = elementwise.scalar_literals(op)
    return (
        type(op),
        tuple(operand.type for operand in op.operands),
        tuple(result.type for result in op.results),
        tuple(sorted(op.properties.items(), key=lambda item: item[0])),
        tuple((position, literals[position].data.data) for position in sorted(literals)),
    )


def kernel_operands(op: Operation) -> list[SSAValue]:
    """The operands of `op` that its kernel takes as buffers, in order: all of them but the
    scalar constants a binary op's kernel holds as literals (`elementwise.scalar_literals`)."""
    literals = elementwise.scalar_literals(op)
    return [operand for position, operand in enumerate(op.operands) if position not in literals]


def build_kernel(op: Operation, name: str) -> loop.FuncOp:
    """The `loop.func` kernel `name` computing `op`'s results from its operands."""
    check_legalizable(op)
    kb = KernelBuilder(
        name,
        [tensor_buffer_type(operand.type) for operand in kernel_operands(op)],
        [tensor_buffer_type(result.type) for result in op.results],
    )
    LEGALIZATIONS[type(op)](op, kb)
    kernel = kb.finish()
    _mark_concat(op, kernel)
    return kernel


def _kernel_type(op: Operation, name: str) -> loop.FuncOp:
    """`build_kernel`'s kernel without its body (a deferred kernel, `deferred`)."""
    kernel = KernelBuilder(
        name,
        [tensor_buffer_type(operand.type) for operand in kernel_operands(op)],
        [tensor_buffer_type(result.type) for result in op.results],
    ).finish()
    _mark_concat(op, kernel)
    return kernel


def _mark_concat(op: Operation, kernel: loop.FuncOp) -> None:
    """A concat's kernel says its axis (what lower-graph reads to write it in place)."""
    if isinstance(op, ConcatOp):
        kernel.attributes[CONCAT_AXIS_ATTR] = IntegerAttr(op.axis_value, i64)


def kernel_base_name(op: Operation) -> str:
    """`graph.conv2d` → `conv2d`."""
    return op.name.split(".", 1)[-1]


class KernelLibrary:
    """The kernels created so far in one module, by key, and the names they took."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self._names: dict[Hashable, str] = {}
        self._taken = {
            symbol.data for symbol in (_symbol_name(op) for op in module.ops) if symbol is not None
        }
        self._last_kernel: loop.FuncOp | None = None

    def kernel_for(self, op: Operation, rewriter: PatternRewriter) -> str:
        """The name of the kernel computing `op`, built and inserted on first use."""
        key = kernel_key(op)
        if key in self._names:
            return self._names[key]
        name = self._fresh_name(kernel_base_name(op))
        literals = elementwise.scalar_literals(op)
        digest = text_digest(source_text(op, {i: v.data.data for i, v in literals.items()}))
        kind = known_kind(self.module, digest)
        if kind is None:
            kernel = build_kernel(op, name)
        else:  # its body may never be needed (`deferred`)
            check_legalizable(op)
            kernel = _kernel_type(op, name)
            constants = {i: op.operands[i].owner for i in literals}
            defer(self.module, kernel, recipe(op, constants), kind)  # type: ignore[arg-type]
        note_source(self.module, kernel, digest)
        point = (
            InsertPoint.at_start(self.module.body.block)
            if self._last_kernel is None
            else InsertPoint.after(self._last_kernel)
        )
        rewriter.insert(kernel, point)
        self._last_kernel = kernel
        self._names[key] = name
        return name

    def _fresh_name(self, base: str) -> str:
        name, suffix = base, 0
        while name in self._taken:
            suffix += 1
            name = f"{base}_{suffix}"
        self._taken.add(name)
        return name


def _symbol_name(op: Operation) -> StringAttr | None:
    trait = op.get_trait(SymbolOpInterface)
    return None if trait is None else trait.get_sym_attr_name(op)
