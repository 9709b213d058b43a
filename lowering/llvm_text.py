"""An `llvm` dialect module printed as LLVM IR text, for `llvmlite.binding.parse_assembly`.

xDSL's translation (`xdsl.backend.llvm.convert_module`) builds an `llvmlite.ir` object for
every instruction and then renders them all as text, and it types each `getelementptr`'s
result as a pointer to its source type, which made the lowering add a no-op `bitcast` after
every address so that loads and stores type-check. This printer writes the text directly from
the `llvm` dialect ops, with opaque pointers throughout: the same instructions, flags,
attributes and linkages as xDSL's translation (plus the function linkages and the global
declarations `threading_runtime` used to patch in afterwards), and the loop metadata of
`vector_loops` on the back edges it chose. densenet121's 160 units (one process, one run
each): xDSL's translation took 1.17 s of CPU (0.78 s building llvmlite's objects, 0.39 s
printing them), this printer 0.46 s; the machine code LLVM makes of each unit is the same.

`module_text(module, ...)` is what `llvm_codegen` parses and `fusion-opt -t llvm` prints (the
latter without loop metadata, which depends on the host). Besides what the lowering makes, it
translates the other ops xDSL's translation knew (intrinsic ops, vector and aggregate ops,
masked stores, inline assembly), naming each intrinsic mangled by its types as LLVM does. An
op it does not know raises `LLVMTextError` naming it.

Types, constants and flags are spelled by `llvm_text_values`, intrinsic calls by
`llvm_text_intrinsics`. Values are named `%vN` (function arguments `%aN`), blocks by their name hints made unique
(`loop_header`, `loop_header.1`, ...), constants are written in place, and floats in LLVM's
exact hexadecimal form (an `f32` as the `f64` of the same value, as LLVM requires).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.target import Target

from fusion_compiler.lowering.llvm_text_intrinsics import (
    call_intrinsic,
    fma,
    inline_asm,
    masked_store,
    overloaded,
    vector_reduce,
)
from fusion_compiler.lowering.llvm_text_values import (
    LLVMTextError,
    argument_attributes,
    constant_text,
    fast_math_flags,
    flag_words,
    quoted,
    type_text,
    zero_text,
)
from fusion_compiler.lowering.threading_runtime import GOMP_PARALLEL
from fusion_compiler.lowering.unit_template import (
    FunctionInfo,
    GepLine,
    ParallelCall,
    UnitTemplate,
)
from fusion_compiler.passes.analysis.ir_walk import walk_ops

LoopProperty = tuple
"""One `llvm.loop` property: `(name,)`, `(name, value)` (an int or a bool) or
`(name, (property, ...))` (a node of other properties, as `followup_all` takes)."""

LoopProperties = tuple[LoopProperty, ...]


# --- the printer ------------------------------------------------------------------------------


@dataclass
class _Function:
    """What printing one function's body keeps: value and block names, phi incomings."""

    values: dict[SSAValue, str] = field(default_factory=dict)
    blocks: dict[Block, str] = field(default_factory=dict)
    incomings: dict[Block, list[tuple[Sequence[SSAValue], str]]] = field(default_factory=dict)
    count: int = 0

    def define(self, value: SSAValue) -> str:
        name = f"%v{self.count}"
        self.count += 1
        self.values[value] = name
        return name


class _Printer:
    def __init__(
        self,
        loop_properties: Mapping[Operation, LoopProperties],
        function_attributes: Mapping[str, Sequence[str]],
        declared_globals: Collection[str],
        template: UnitTemplate | None = None,
    ):
        self.template = template
        """Set when printing a `unit_template`: integers, names and calls get markers."""
        self.holes_on = True
        """Whether an integer constant may be a hole here (not an intrinsic's operand)."""
        self.fixed = False
        """Whether a hole printed now must agree among family members (a divisor)."""
        self.function_index = -1
        self.trampolines: set[str] = set()
        self.bodies: set[str] = set()
        self.loop_properties = loop_properties
        self.function_attributes = function_attributes
        self.declared_globals = declared_globals
        self.intrinsics: dict[str, str] = {}  # name -> declaration, in order of first use
        self.defined: set[str] = set()
        self.metadata: list[str] = []
        self.property_nodes: dict[LoopProperty, str] = {}
        self.function: _Function = _Function()

    # -- values

    def ref(self, value: SSAValue) -> str:
        name = self.function.values.get(value)
        if name is not None:
            return name
        owner = value.owner
        if isinstance(owner, llvm.ConstantOp):
            if (
                self.template is not None
                and self.holes_on
                and isinstance(owner.value, IntegerAttr)
                and isinstance(value.type, IntegerType)
                and value.type.width.data > 1
            ):
                return self.template.hole(
                    type_text(value.type),
                    owner.value.value.data,
                    self.function_index,
                    self.fixed,
                )
            return constant_text(value.type, owner.value)
        if isinstance(owner, llvm.AddressOfOp):
            return "@" + self.symbol(owner.global_name.root_reference.data)
        if isinstance(owner, llvm.ZeroOp):
            return zero_text(value.type)
        if isinstance(owner, llvm.UndefOp):
            return "undef"
        raise LLVMTextError(f"'{getattr(owner, 'name', owner)}' is used before it is defined")

    def typed(self, value: SSAValue) -> str:
        return f"{type_text(value.type)} {self.ref(value)}"

    def symbol(self, name: str) -> str:
        """`name` quoted; in a template, the kernel's symbol at its start is a marker."""
        kernel = self.template.kernel if self.template is not None else None
        if kernel and (name == kernel or name.startswith(kernel + "_")):
            name = "\x00N\x00" + name[len(kernel) :]
        return quoted(name)

    # -- module

    def module(self, module: ModuleOp) -> list[str]:
        globals_: list[llvm.GlobalOp] = []
        functions: list[llvm.FuncOp] = []
        for op in module.ops:
            if isinstance(op, llvm.GlobalOp):
                globals_.append(op)
            elif isinstance(op, llvm.FuncOp):
                functions.append(op)
            else:
                raise LLVMTextError(f"'{op.name}' at the top level is not translated")
        self.defined = {g.sym_name.data for g in globals_} | {f.sym_name.data for f in functions}
        self.bodies = {f.sym_name.data for f in functions if f.body.blocks}
        if self.template is not None:
            self._find_kernel(module, functions)
        lines = [self.global_(op) for op in globals_]
        for op in functions:
            lines += self.func(op)
        lines += self.intrinsics.values()
        lines += self.metadata
        return lines

    def _find_kernel(self, module: ModuleOp, functions: list[llvm.FuncOp]) -> None:
        """The template's kernel (the one defined function of external linkage) and the
        functions whose address `GOMP_parallel` takes; a unit that takes a function's
        address for anything else, or defines no single kernel, cannot join a family."""
        assert self.template is not None
        exported = [
            f.sym_name.data
            for f in functions
            if f.body.blocks and f.linkage.linkage.data == "external"
        ]
        if len(exported) != 1:
            self.template.familiable = False
            return
        self.template.kernel = exported[0]
        defined = {f.sym_name.data for f in functions if f.body.blocks}
        for op in walk_ops(module):
            if not isinstance(op, llvm.AddressOfOp):
                continue
            name = op.global_name.root_reference.data
            if name not in defined:
                continue
            self.trampolines.add(name)
            for use in op.results[0].uses:
                call = use.operation
                if not (
                    isinstance(call, llvm.CallOp)
                    and call.callee is not None
                    and call.callee.string_value() == GOMP_PARALLEL
                    and use.index == 0
                ):
                    self.template.familiable = False

    def global_(self, op: llvm.GlobalOp) -> str:
        name = op.sym_name.data
        type_ = type_text(op.global_type)
        space = op.addr_space.value.data
        where = f" addrspace({space})" if space else ""
        kind = "constant" if op.constant is not None else "global"
        if name in self.declared_globals or op.value is None:
            return f"@{quoted(name)} = external{where} {kind} {type_}"
        linkage = op.linkage.linkage.data
        linkage = "" if linkage == "external" else f" {linkage}"
        if isinstance(op.value, StringAttr):
            raw = op.value.data.encode()
            escaped = "".join(
                chr(b) if 32 <= b < 127 and b not in b'"\\' else f"\\{b:02X}" for b in raw
            )
            type_ = f"[{len(raw)} x i8]"
            return f'@{quoted(name)} ={linkage}{where} {kind} {type_} c"{escaped}"'
        return f"@{quoted(name)} ={linkage}{where} {kind} {type_} {constant_text(op.global_type, op.value)}"

    def func(self, op: llvm.FuncOp) -> list[str]:
        function_type = op.function_type
        result = type_text(function_type.output)
        name = "@" + self.symbol(op.sym_name.data)
        inputs = function_type.inputs.data
        arg_attrs = op.arg_attrs.data if op.arg_attrs is not None else None
        attributes = [
            argument_attributes(arg_attrs[i].data) if arg_attrs else "" for i in range(len(inputs))
        ]
        varargs = ["..."] if function_type.is_variadic else []
        extra = "".join(f" {a}" for a in self.function_attributes.get(op.sym_name.data, ()))
        if not op.body.blocks:
            params = [f"{type_text(t)}{a}" for t, a in zip(inputs, attributes, strict=True)]
            return [f"declare {result} {name}({', '.join([*params, *varargs])}){extra}"]
        blocks = list(op.body.blocks)
        self.function = self._names(blocks)
        template = self.template
        trampoline = template is not None and op.sym_name.data in self.trampolines
        params = [
            f"{type_text(arg.type)}{attribute} "
            + ("\x00T\x00" if trampoline else self.function.values[arg])
            for arg, attribute in zip(blocks[0].args, attributes, strict=True)
        ]
        linkage = op.linkage.linkage.data
        linkage = "" if linkage == "external" else f"{linkage} "
        table = ""
        if template is not None:
            if trampoline and len(params) != 1:
                template.familiable = False
            self.function_index = len(template.functions)
            template.functions.append(FunctionInfo(trampoline))
            table = "" if trampoline else ("\x00S\x00" if params else "\x00s\x00")
            if op.sym_name.data == template.kernel:
                template.kernel_parameters = ", ".join(params)
        header = f"define {linkage}{result} {name}({', '.join([*params, *varargs])}{table}){extra}"
        lines = [header, "{"]
        for block in blocks:
            lines.append(f"{self.function.blocks[block]}:")
            if template is not None and block is blocks[0]:
                lines.append(f"\x00E{self.function_index}\x00")
            if block is not blocks[0]:
                lines += self._phis(block)
            for inner in block.ops:
                line = self.op(inner)
                if line is not None:
                    lines.append(line)
        lines.append("}")
        return lines

    @staticmethod
    def _names(blocks: Sequence[Block]) -> _Function:
        """Names for the arguments, blocks and values of a function's body (all of them before
        any is printed: a phi may take a value defined further down), and the values each
        block's arguments receive from each predecessor, in the order of the branches."""
        function = _Function()
        for index, arg in enumerate(blocks[0].args):
            function.values[arg] = f"%a{index}"
        function.blocks = _block_labels(blocks)
        for block in blocks[1:]:
            for arg in block.args:
                function.define(arg)
        for block in blocks:
            for inner in block.ops:
                if inner.results and type(inner) not in _INLINE:
                    function.define(inner.results[0])
        for block in blocks:
            for successor, arguments in successor_edges(block.last_op):
                if successor.args:
                    function.incomings.setdefault(successor, []).append(
                        (arguments, function.blocks[block])
                    )
        return function

    def _phis(self, block: Block) -> list[str]:
        incomings = self.function.incomings.get(block, ())
        lines = []
        for position, arg in enumerate(block.args):
            values = ", ".join(f"[{self.ref(a[position])}, %{label}]" for a, label in incomings)
            lines.append(f"  {self.function.values[arg]} = phi {type_text(arg.type)} {values}")
        return lines

    # -- instructions

    def op(self, op: Operation) -> str | None:
        handler = _HANDLERS.get(type(op))
        if handler is None:
            raise LLVMTextError(f"'{op.name}' is not translated to LLVM IR")
        if self.template is None:
            return handler(self, op)
        self.holes_on = type(op) in _OPEN_OPERANDS and not (
            isinstance(op, llvm.CallOp) and _is_intrinsic(op)
        )
        try:
            return handler(self, op)
        finally:
            self.holes_on = True

    def result(self, op: Operation) -> str:
        return f"  {self.function.values[op.results[0]]} = "

    def declare_intrinsic(self, name: str, result: str, parameters: Sequence[str]) -> None:
        """Declares the intrinsic `name` (parameter types as text) once per module."""
        if name not in self.intrinsics and name not in self.defined:
            self.intrinsics[name] = f"declare {result} @{quoted(name)}({', '.join(parameters)})"

    def loop_metadata(self, properties: LoopProperties) -> str:
        """The reference of a new distinct loop ID node (first operand: itself) holding
        `properties`."""
        refs = [self.property_node(p) for p in properties]
        own = f"!{len(self.metadata)}"
        self.metadata.append(f"{own} = distinct !{{{', '.join([own, *refs])}}}")
        return own

    def property_node(self, property_: LoopProperty) -> str:
        node = self.property_nodes.get(property_)
        if node is not None:
            return node
        operands = [f'!"{property_[0]}"']
        if len(property_) > 1:
            value = property_[1]
            if isinstance(value, bool):
                operands.append(f"i1 {'true' if value else 'false'}")
            elif isinstance(value, int):
                operands.append(f"i32 {value}")
            else:
                refs = [self.property_node(p) for p in value]
                operands += refs
        node = f"!{len(self.metadata)}"
        self.metadata.append(f"{node} = !{{{', '.join(operands)}}}")
        self.property_nodes[property_] = node
        return node


def _block_labels(blocks: Sequence[Block]) -> dict[Block, str]:
    """Each block's name hint, made unique in its function (`loop_header`, `loop_header.1`)."""
    labels: dict[Block, str] = {}
    taken: set[str] = set()
    repeats: dict[str, int] = {}
    for block in blocks:
        hint = block.name_hint or "block"
        repeat = repeats.get(hint, 0)
        label = f"{hint}.{repeat}" if repeat else hint
        while label in taken:  # (a hint that is another's label with its suffix)
            repeat += 1
            label = f"{hint}.{repeat}"
        repeats[hint] = repeat + 1
        taken.add(label)
        labels[block] = quoted(label)
    return labels


def successor_edges(terminator: Operation | None) -> list[tuple[Block, Sequence[SSAValue]]]:
    """The successors of a block's terminator, with the values it passes to each."""
    if isinstance(terminator, llvm.BrOp):
        return [(terminator.successor, terminator.arguments)]
    if isinstance(terminator, llvm.CondBrOp):
        return [
            (terminator.then_block, terminator.then_arguments),
            (terminator.else_block, terminator.else_arguments),
        ]
    return []


def _binary(opcode: str) -> Callable[[_Printer, Operation], str]:
    def handler(p: _Printer, op: Operation) -> str:
        words: list[str] = []
        if isinstance(op, llvm.ArithmeticBinOpOverflow) and op.overflowFlags:
            words = [f.value for f in llvm.OverflowAttr.from_int(op.overflowFlags.value.data).data]
        elif isinstance(op, llvm.AbstractFloatArithOp) and op.fastmathFlags:
            words = [f.value for f in op.fastmathFlags.data]
        elif isinstance(op, llvm.ArithmeticBinOpExact) and op.is_exact:
            words = ["exact"]
        elif isinstance(op, llvm.ArithmeticBinOpDisjoint) and op.is_disjoint:
            words = ["disjoint"]
        lhs, rhs = op.operands
        left = p.typed(lhs)
        p.fixed = type(op) in _DIVISIONS  # (a template keeps a constant divisor)
        right = p.ref(rhs)
        p.fixed = False
        return f"{p.result(op)}{opcode}{flag_words(words)} {left}, {right}"

    return handler


def _cast(opcode: str) -> Callable[[_Printer, Operation], str]:
    def handler(p: _Printer, op: Operation) -> str:
        words: list[str] = []
        if isinstance(op, llvm.IntegerConversionOpOverflow) and op.overflowFlags:
            words = [f.value for f in op.overflowFlags.data]
        elif isinstance(op, llvm.IntegerConversionOpNNeg) and op.non_neg:
            words = ["nneg"]
        value = op.operands[0]
        return f"{p.result(op)}{opcode}{flag_words(words)} {p.typed(value)} to {type_text(op.results[0].type)}"

    return handler


def _icmp(p: _Printer, op: llvm.ICmpOp) -> str:
    predicate = llvm.ICmpPredicateFlag.from_int(op.predicate.value.data).value
    return f"{p.result(op)}icmp {predicate} {p.typed(op.lhs)}, {p.ref(op.rhs)}"


def _fcmp(p: _Printer, op: llvm.FCmpOp) -> str:
    predicate = llvm.FCmpPredicateFlag.from_int(op.predicate.value.data).value
    return f"{p.result(op)}fcmp {predicate} {p.typed(op.lhs)}, {p.ref(op.rhs)}"


def _select(p: _Printer, op: llvm.SelectOp) -> str:
    return f"{p.result(op)}select {p.typed(op.cond)}, {p.typed(op.lhs)}, {p.typed(op.rhs)}"


def _fneg(p: _Printer, op: llvm.FNegOp) -> str:
    words = [f.value for f in op.fastmathFlags.data]
    return f"{p.result(op)}fneg{flag_words(words)} {p.typed(op.arg)}"


def _alignment(op: llvm.LoadOp | llvm.StoreOp | llvm.AllocaOp) -> str:
    return f", align {op.alignment.value.data}" if op.alignment else ""


def _load(p: _Printer, op: llvm.LoadOp) -> str:
    type_ = type_text(op.dereferenced_value.type)
    return f"{p.result(op)}load {type_}, {p.typed(op.ptr)}{_alignment(op)}"


def _store(p: _Printer, op: llvm.StoreOp) -> str:
    return f"  store {p.typed(op.value)}, {p.typed(op.ptr)}{_alignment(op)}"


def _alloca(p: _Printer, op: llvm.AllocaOp) -> str:
    return f"{p.result(op)}alloca {type_text(op.elem_type)}, {p.typed(op.size)}{_alignment(op)}"


def _gep(p: _Printer, op: llvm.GEPOp) -> str:
    template = p.template
    if template is not None:
        return _template_gep(p, op, template)
    ssa = iter(op.ssa_indices)
    indices = [
        p.typed(next(ssa)) if index == llvm.GEP_USE_SSA_VAL else f"i32 {index}"
        for index in op.rawConstantIndices.iter_values()
    ]
    inbounds = " inbounds" if op.inbounds is not None else ""
    source = type_text(op.elem_type)
    return (
        f"{p.result(op)}getelementptr{inbounds} {source}, {', '.join([p.typed(op.ptr), *indices])}"
    )


def _template_gep(p: _Printer, op: llvm.GEPOp, template: UnitTemplate) -> str:
    """A `getelementptr` in a template: its constant indices are holes (when it steps through
    no struct), and one through array types is a `GepLine` whose dimensions are holes."""
    ssa = iter(op.ssa_indices)
    open_constants = p.holes_on and not _has_struct(op.elem_type)
    indices: list[tuple[str, str]] = []
    for index in op.rawConstantIndices.iter_values():
        if index == llvm.GEP_USE_SSA_VAL:
            value = next(ssa)
            indices.append((type_text(value.type), p.ref(value)))
        elif open_constants:
            indices.append(("i32", template.hole("i32", index, p.function_index)))
        else:
            indices.append(("i32", str(index)))
    inbounds = " inbounds" if op.inbounds is not None else ""
    base = p.typed(op.ptr)
    if not isinstance(op.elem_type, llvm.LLVMArrayType):
        operands = ", ".join([base, *(f"{t} {v}" for t, v in indices)])
        return f"{p.result(op)}getelementptr{inbounds} {type_text(op.elem_type)}, {operands}"
    dims: list[int] = []
    element: Attribute = op.elem_type
    while isinstance(element, llvm.LLVMArrayType):
        dims.append(template.dim(element.size.data, p.function_index))
        element = element.type
    gep = GepLine(
        p.result(op),
        inbounds,
        tuple(dims),
        type_text(element),
        base,
        tuple(indices),
        p.function_index,
    )
    template.geps.append(gep)
    return f"\x00g{len(template.geps) - 1}\x00"


def _has_struct(type_: Attribute) -> bool:
    while isinstance(type_, llvm.LLVMArrayType):
        type_ = type_.type
    return isinstance(type_, llvm.LLVMStructType)


def _call(p: _Printer, op: llvm.CallOp) -> str:
    if op.op_bundle_operands or op.op_bundle_sizes:
        raise LLVMTextError("llvm.call with operand bundles is not translated")
    if op.callee is None:
        raise LLVMTextError("indirect llvm.call is not translated")
    returned = op.returned
    result = type_text(returned.type) if returned is not None else "void"
    float_result = returned is not None and isinstance(
        returned.type.element_type if isinstance(returned.type, VectorType) else returned.type,
        Float16Type | Float32Type | Float64Type,
    )
    fast_math = fast_math_flags(op) if float_result else ""  # (as xDSL: on float results only)
    callee_type = op.var_callee_type  # (a variadic callee's type is spelled out)
    if callee_type is not None:
        assert isinstance(callee_type, llvm.LLVMFunctionType)
        params = [type_text(t) for t in callee_type.inputs.data]
        result = f"{type_text(callee_type.output)} ({', '.join([*params, '...'])})"
    tail = "tail " if op.TailCallKind.data != "none" else ""
    name = op.callee.string_value()
    head = (p.result(op) if returned is not None else "  ") + (
        f"{tail}call{fast_math} {op.CConv.cconv_name} {result} @{p.symbol(name)}("
    )
    template = p.template
    if template is not None and name == GOMP_PARALLEL and len(op.args) >= 2:
        first, context, *rest = op.args
        template.functions[p.function_index].parallel_calls = True
        prefix = f"{head}{p.typed(first)}, {type_text(context.type)} "
        call = ParallelCall(prefix, p.ref(context), "".join(f", {p.typed(a)}" for a in rest) + ")")
        template.calls.append(call)
        return f"\x00c{len(template.calls) - 1}\x00"
    arguments = ", ".join(p.typed(a) for a in op.args)
    if template is not None and name in p.trampolines:
        template.familiable = False  # (a trampoline takes the pair, not arguments)
    if template is not None and name in p.bodies:
        arguments += "\x00A\x00" if arguments else "\x00a\x00"
    return f"{head}{arguments})"


def _extract_value(p: _Printer, op: llvm.ExtractValueOp) -> str:
    positions = ", ".join(str(i) for i in op.position.iter_values())
    return f"{p.result(op)}extractvalue {p.typed(op.container)}, {positions}"


def _insert_value(p: _Printer, op: llvm.InsertValueOp) -> str:
    positions = ", ".join(str(i) for i in op.position.iter_values())
    return f"{p.result(op)}insertvalue {p.typed(op.container)}, {p.typed(op.value)}, {positions}"


def _insert_element(p: _Printer, op: llvm.InsertElementOp) -> str:
    vector, value, index = p.typed(op.vector), p.typed(op.value), p.typed(op.index)
    return f"{p.result(op)}insertelement {vector}, {value}, {index}"


def _shuffle_vector(p: _Printer, op: llvm.ShuffleVectorOp) -> str:
    lanes = [f"i32 {i}" if i >= 0 else "i32 poison" for i in op.mask.iter_values()]
    mask = f"<{len(lanes)} x i32> <{', '.join(lanes)}>"
    return f"{p.result(op)}shufflevector {p.typed(op.v1)}, {p.typed(op.v2)}, {mask}"


def _return(p: _Printer, op: llvm.ReturnOp) -> str:
    return f"  ret {p.typed(op.operands[0])}" if op.operands else "  ret void"


def _br(p: _Printer, op: llvm.BrOp) -> str:
    text = f"  br label %{p.function.blocks[op.successor]}"
    properties = p.loop_properties.get(op)
    if properties is not None:
        text += f", !llvm.loop {p.loop_metadata(properties)}"
    return text


def _cond_br(p: _Printer, op: llvm.CondBrOp) -> str:
    blocks = p.function.blocks
    return (
        f"  br {p.typed(op.cond)}, label %{blocks[op.then_block]}, label %{blocks[op.else_block]}"
    )


def _unreachable(p: _Printer, op: Operation) -> str:
    return "  unreachable"


_OPEN_OPERANDS = {
    llvm.AddOp,
    llvm.SubOp,
    llvm.MulOp,
    llvm.UDivOp,
    llvm.SDivOp,
    llvm.URemOp,
    llvm.SRemOp,
    llvm.ShlOp,
    llvm.LShrOp,
    llvm.AShrOp,
    llvm.AndOp,
    llvm.OrOp,
    llvm.XOrOp,
    llvm.TruncOp,
    llvm.ZExtOp,
    llvm.SExtOp,
    llvm.SIToFPOp,
    llvm.ICmpOp,
    llvm.SelectOp,
    llvm.LoadOp,
    llvm.StoreOp,
    llvm.GEPOp,
    llvm.CallOp,
    llvm.BrOp,
    llvm.CondBrOp,
    llvm.ReturnOp,
}
"""The ops whose integer constant operands a template leaves open (`ref`): the others take
immediates (an intrinsic's, an alloca's size) or have none."""

_DIVISIONS = {llvm.UDivOp, llvm.SDivOp, llvm.URemOp, llvm.SRemOp}


def _is_intrinsic(op: llvm.CallOp) -> bool:
    return op.callee is not None and op.callee.string_value().startswith("llvm.")


_INLINE = (llvm.ConstantOp, llvm.AddressOfOp, llvm.ZeroOp, llvm.UndefOp)
"""Constants, addresses of globals, zeros and undefined values: written where they are used."""


def _inline(p: _Printer, op: Operation) -> None:
    return None


_HANDLERS: dict[type[Operation], Callable[..., str | None]] = {
    **{
        cls: _binary(opcode)
        for cls, opcode in (
            (llvm.AddOp, "add"),
            (llvm.SubOp, "sub"),
            (llvm.MulOp, "mul"),
            (llvm.UDivOp, "udiv"),
            (llvm.SDivOp, "sdiv"),
            (llvm.URemOp, "urem"),
            (llvm.SRemOp, "srem"),
            (llvm.ShlOp, "shl"),
            (llvm.LShrOp, "lshr"),
            (llvm.AShrOp, "ashr"),
            (llvm.AndOp, "and"),
            (llvm.OrOp, "or"),
            (llvm.XOrOp, "xor"),
            (llvm.FAddOp, "fadd"),
            (llvm.FSubOp, "fsub"),
            (llvm.FMulOp, "fmul"),
            (llvm.FDivOp, "fdiv"),
            (llvm.FRemOp, "frem"),
        )
    },
    **{
        cls: _cast(opcode)
        for cls, opcode in (
            (llvm.TruncOp, "trunc"),
            (llvm.ZExtOp, "zext"),
            (llvm.SExtOp, "sext"),
            (llvm.PtrToIntOp, "ptrtoint"),
            (llvm.IntToPtrOp, "inttoptr"),
            (llvm.BitcastOp, "bitcast"),
            (llvm.FPExtOp, "fpext"),
            (llvm.FPTruncOp, "fptrunc"),
            (llvm.SIToFPOp, "sitofp"),
        )
    },
    **{
        cls: overloaded(name)
        for cls, name in (
            (llvm.FAbsOp, "llvm.fabs"),
            (llvm.FExpOp, "llvm.exp"),
            (llvm.FExp2Op, "llvm.exp2"),
            (llvm.FLogOp, "llvm.log"),
            (llvm.FLog2Op, "llvm.log2"),
            (llvm.FSqrtOp, "llvm.sqrt"),
            (llvm.FSinOp, "llvm.sin"),
            (llvm.FCosOp, "llvm.cos"),
            (llvm.FCeilOp, "llvm.ceil"),
            (llvm.FFloorOp, "llvm.floor"),
            (llvm.FPowOp, "llvm.pow"),
            (llvm.VectorFMaxOp, "llvm.maxnum"),
            (llvm.VectorFMinOp, "llvm.minnum"),
            (llvm.FCopySignOp, "llvm.copysign"),
        )
    },
    llvm.VectorReduceFAddOp: vector_reduce("llvm.vector.reduce.fadd"),
    llvm.VectorReduceFMulOp: vector_reduce("llvm.vector.reduce.fmul"),
    llvm.MaskedStoreOp: masked_store,
    llvm.ExtractValueOp: _extract_value,
    llvm.InsertValueOp: _insert_value,
    llvm.InsertElementOp: _insert_element,
    llvm.ShuffleVectorOp: _shuffle_vector,
    llvm.InlineAsmOp: inline_asm,
    llvm.ICmpOp: _icmp,
    llvm.FCmpOp: _fcmp,
    llvm.SelectOp: _select,
    llvm.FNegOp: _fneg,
    llvm.LoadOp: _load,
    llvm.StoreOp: _store,
    llvm.AllocaOp: _alloca,
    llvm.GEPOp: _gep,
    llvm.CallOp: _call,
    llvm.CallIntrinsicOp: call_intrinsic,
    llvm.FMAOp: fma,
    llvm.ReturnOp: _return,
    llvm.BrOp: _br,
    llvm.CondBrOp: _cond_br,
    llvm.UnreachableOp: _unreachable,
    **{cls: _inline for cls in _INLINE},
}


def module_text(
    module: ModuleOp,
    *,
    triple: str = "",
    data_layout: str = "",
    loop_properties: Mapping[Operation, LoopProperties] | None = None,
    function_attributes: Mapping[str, Sequence[str]] | None = None,
    declared_globals: Collection[str] = (),
) -> str:
    """`module` (`llvm.func`s and `llvm.mlir.global`s) as LLVM IR text: with `triple` and
    `data_layout` when given, the `llvm.loop` metadata `loop_properties` gives each branch (a
    back edge: `vector_loops`), the `function_attributes` of each function by name, and the
    globals of `declared_globals` declared rather than defined (defined in another unit)."""
    printer = _Printer(loop_properties or {}, function_attributes or {}, declared_globals)
    return "\n".join([*_header(triple, data_layout), *printer.module(module), ""])


def unit_template(module: ModuleOp, **options: Any) -> UnitTemplate:
    """A kernel unit printed as `module_text` prints it (`options` are its keyword
    arguments), with its integers, symbol and calls marked (`unit_template`):
    `unit_template.render_plain` of it is `module_text`'s text."""
    template = UnitTemplate(kernel="")
    printer = _Printer(
        options.get("loop_properties") or {},
        options.get("function_attributes") or {},
        options.get("declared_globals", ()),
        template,
    )
    header = _header(options.get("triple", ""), options.get("data_layout", ""))
    template.lines = [*header, *printer.module(module)]
    return template


def _header(triple: str, data_layout: str) -> list[str]:
    header = []
    if triple:
        header.append(f'target triple = "{triple}"')
    if data_layout:
        header.append(f'target datalayout = "{data_layout}"')
    return header


@dataclass(frozen=True)
class LLVMTextTarget(Target):
    """`fusion-opt -t llvm`: the module as LLVM IR for the host's triple, without the loop
    metadata and function attributes the JIT adds for the host's vector width."""

    name = "llvm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        import llvmlite.binding

        output.write(module_text(module, triple=llvmlite.binding.get_default_triple()))
