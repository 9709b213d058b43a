"""`fuse-tir`: each primitive function becomes one `loop.func` kernel (TVM's FuseTIR).

fuse-ops leaves every fused group as a primitive function whose body is a sequence of kernel
calls:

    func.func private @fused_add_relu(%a, %b) -> tensor attributes {graph.primitive} {
      %s = graph.call_loop @add(%a, %b)        loop.func @fused_add_relu(%a, %b) outs(%out) {
      %r = graph.call_loop @relu(%s)     ==>     %s = loop.alloc      <- intermediate
      func.return %r                             <loop nests of @add, writing %s>
    }                                            <loop nests of @relu, reading %s, writing %out>
                                               }

The fused kernel takes the function's arguments as input buffers and its results as output
buffers; its body is the member kernels' loop nests in call order, each member's buffers
bound to the fused kernel's arguments or, for values passed between members, to full-size
kernel-local buffers (`loop.alloc`), as TVM does: loop fusion and inlining are left to the
scheduling passes. The `func.call`s of primitive functions become `graph.call_loop`s of the
fused kernels, and kernels no longer called are removed.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Container, Iterator, Mapping
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.dialects.graph import PRIMITIVE_ATTR, CallLoopOp, is_external_function
from fusion_compiler.dialects.graph.preconditions import require_legalized
from fusion_compiler.dialects.loop.builder import tensor_buffer_type
from fusion_compiler.dialects.printing import attribute_text
from fusion_compiler.dialects.symbols import lookup_symbol
from fusion_compiler.passes.analysis.ir_walk import walk_ops


def is_primitive(op: Operation) -> bool:
    """A primitive function of fuse-ops (not a composite, which its backend compiles)."""
    return (
        isinstance(op, func.FuncOp)
        and PRIMITIVE_ATTR in op.attributes
        and not is_external_function(op)
    )


# ---------------------------------------------------------------------------------------------
# Transformation functions
# ---------------------------------------------------------------------------------------------


def _member_calls(function: func.FuncOp) -> tuple[list[CallLoopOp], func.ReturnOp]:
    """The kernel calls of a primitive function, and its return; anything else is an error."""
    if not function.body.blocks:  # (a declaration; verify_module refuses several blocks)
        raise CompileError(
            f"primitive function @{function.sym_name.data} has no body of kernel calls to fuse",
            function,
        )
    calls: list[CallLoopOp] = []
    for op in function.body.block.ops:
        match op:
            case CallLoopOp():
                calls.append(op)
            case func.ReturnOp():
                return calls, op
            case _:
                raise CompileError(
                    f"primitive function @{function.sym_name.data} may only call "
                    f"kernels, found {op.name}",
                    op,
                )
    raise CompileError(f"@{function.sym_name.data} has no return", function)


def _kernel_of(call: CallLoopOp) -> loop.FuncOp:
    kernel = lookup_symbol(call, call.callee)
    if not isinstance(kernel, loop.FuncOp):
        raise CompileError(f"{call.callee} is not a loop.func kernel", call)
    return kernel


def inline_kernel(
    kernel: loop.FuncOp, buffers: list[SSAValue], fused: loop.FuncOp, move: bool = False
) -> None:
    """Append a copy of `kernel`'s body to `fused`, its arguments bound to `buffers`; with
    `move`, the body itself (for a kernel nothing else calls: a copy costs as much as making
    the ops anew, and the kernel is erased once fused)."""
    terminator = fused.body.block.last_op
    assert terminator is not None
    body = kernel.body.block
    if move:
        for arg, buffer in zip(body.args, buffers, strict=True):
            for use in list(arg.uses):  # (not `replace_all_uses_with`: it moves name hints)
                use.operation.operands[use.index] = buffer
        for op in list(body.ops):
            if not isinstance(op, loop.ReturnOp):
                op.detach()
                fused.body.block.insert_op_before(op, terminator)
        return
    mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, buffers, strict=True))
    for op in body.ops:
        if isinstance(op, loop.ReturnOp):
            continue
        fused.body.block.insert_op_before(op.clone(value_mapper=mapping), terminator)


def build_fused_kernel(
    function: func.FuncOp, called_once: Container[str] = frozenset()
) -> loop.FuncOp:
    """The `loop.func` that computes the primitive function `function`; the bodies of the
    kernels in `called_once` (called by this function's call of them alone) are moved into it,
    the others copied."""
    calls, ret = _member_calls(function)
    input_types = [tensor_buffer_type(t) for t in function.function_type.inputs.data]
    output_types = [tensor_buffer_type(t) for t in function.function_type.outputs.data]
    fused = loop.FuncOp(function.sym_name.data, input_types, output_types)
    fused.location = function.location
    block = fused.body.block
    buffer_of: dict[SSAValue, SSAValue] = dict(
        zip(function.body.block.args, block.args[: len(input_types)], strict=True)
    )
    outputs = block.args[len(input_types) :]
    for source, arg in zip(function.body.block.args, block.args, strict=False):
        arg.name_hint = source.name_hint
    for value, arg in zip(ret.arguments, outputs, strict=True):
        arg.name_hint = value.name_hint
    for index, value in enumerate(ret.arguments):
        if value in buffer_of:
            raise CompileError(
                f"result #{index} of @{function.sym_name.data} is not computed by "
                "one of its kernels",
                ret,
            )
        buffer_of[value] = outputs[index]
    for call in calls:
        for result in call.outputs:
            if result not in buffer_of:
                buffer_of[result] = _local_buffer(fused, result)
        buffers = [buffer_of[v] for v in (*call.inputs, *call.outputs)]
        callee = call.callee.string_value()
        inline_kernel(_kernel_of(call), buffers, fused, move=callee in called_once)
    return fused


def _local_buffer(fused: loop.FuncOp, value: SSAValue) -> SSAValue:
    """A kernel-local buffer for the intermediate `value`, allocated at the top of `fused`."""
    assert isinstance(value.type, TensorType)
    alloc = loop.AllocOp(tensor_buffer_type(value.type))
    if value.name_hint:
        alloc.result.name_hint = value.name_hint
    block = fused.body.block
    first = block.first_op
    last_alloc = None
    for op in block.ops:
        if not isinstance(op, loop.AllocOp):
            break
        last_alloc = op
    if last_alloc is not None:
        block.insert_op_after(alloc, last_alloc)
    else:
        assert first is not None
        block.insert_op_before(alloc, first)
    return alloc.result


# ---------------------------------------------------------------------------------------------
# Rewrite patterns
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FusePrimitiveFunction(RewritePattern):
    """Replace a primitive `func.func` by the fused `loop.func` of the same name; the kernels
    of `called_once` are moved into it rather than copied (`build_fused_kernel`)."""

    called_once: Container[str] = frozenset()

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if not is_primitive(op):
            return
        rewriter.replace(op, build_fused_kernel(op, self.called_once), [])


class CallFusedKernel(RewritePattern):
    """`func.call @fused_*` of a fused kernel → `graph.call_loop @fused_*`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter) -> None:
        if not isinstance(lookup_symbol(op, op.callee), loop.FuncOp):
            return
        rewriter.replace(op, kernel_call(op))


def kernel_call(call: func.CallOp) -> CallLoopOp:
    """The `graph.call_loop` that replaces `call` of a primitive function once the function
    is a fused kernel of the same name: the same operands and result types."""
    launch = CallLoopOp(call.callee, list(call.arguments), [r.type for r in call.results])
    launch.location = call.location
    return launch


GROUP_DIGEST_FORMAT = "fuse-tir group 1"


def group_digest(
    function: func.FuncOp,
    kernels: Mapping[str, Operation],
    kernel_digest: Callable[[loop.FuncOp], str],
) -> str | None:
    """A digest of everything `build_fused_kernel` reads of the primitive function
    `function` (the module's kernels by name in `kernels`; `kernel_digest` gives a member
    kernel's content digest): its type, and in order each member call's kernel (by
    `kernel_digest`), operands (the function's arguments and earlier calls' results, by
    number), result types and attributes, then the returned values. Two primitive functions
    with one digest fuse to the same kernel but for its name, its locations and the name
    hints of its values. None for a function fuse-tir would reject (it reports why)."""
    texts: dict[int, str] = {}

    def text(attribute: Attribute) -> str:
        known = texts.get(id(attribute))
        if known is None:
            known = texts[id(attribute)] = attribute_text(attribute)
        return known

    number = {arg: index for index, arg in enumerate(function.body.block.args)}
    parts = [GROUP_DIGEST_FORMAT, text(function.function_type)]
    for op in function.body.block.ops:
        operands = ",".join(str(number.get(value, -1)) for value in op.operands)
        if isinstance(op, func.ReturnOp):
            parts.append(f"return({operands})")
            return hashlib.sha256("\0".join(parts).encode()).hexdigest()
        if not isinstance(op, CallLoopOp):
            return None
        kernel = kernels.get(op.callee.string_value())
        if not isinstance(kernel, loop.FuncOp) or "-1" in operands.split(","):
            return None
        for result in op.results:
            number[result] = len(number)
        attributes = ",".join(f"{k}={text(v)}" for k, v in sorted(op.attributes.items()))
        results = ",".join(text(result.type) for result in op.results)
        parts.append(f"call {kernel_digest(kernel)}({operands})->({results}){{{attributes}}}")
    return None


def _graph_ops(module: ModuleOp) -> Iterator[Operation]:
    """Every op of the module but those inside kernels (`loop.func`s hold no graph op and are
    most of a module's ops)."""
    for top in module.ops:
        if not isinstance(top, loop.FuncOp):
            yield from walk_ops(top)


def remove_unused_kernels(module: ModuleOp) -> None:
    """Erase the kernels that no `graph.call_loop` of the module calls any more."""
    called = {op.callee.string_value() for op in _graph_ops(module) if isinstance(op, CallLoopOp)}
    for op in list(module.ops):
        if isinstance(op, loop.FuncOp) and op.sym_name.data not in called:
            module.body.block.erase_op(op)


@dataclass(frozen=True)
class FuseTIRPass(ModulePass):
    """Turn every primitive function into one fused `loop.func`.

    Pre-conditions: fuse-ops has run: primitive functions (`attributes {graph.primitive}`)
    contain only `graph.call_loop`s of `loop.func` kernels and a `func.return`.
    Post-conditions: no primitive function is left but composites (`graph.composite`, which
    their backend compiles); each became a `loop.func` of the same name,
    called through `graph.call_loop`; calls outside any group are unchanged; kernels no longer
    called are removed. The IR verifies.
    Follow-up: scheduling and `convert-loop-to-llvm`.
    """

    name = "fuse-tir"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_legalized(op, "legalize-ops,annotate-pattern,fuse-ops")
        # Each pattern once over the graph's ops, in order: what xDSL's walker without
        # recursion does, less the thousands of kernel ops it would queue and skip.
        calls = Counter(
            call.callee.string_value() for call in _graph_ops(op) if isinstance(call, CallLoopOp)
        )
        called_once = frozenset(name for name, count in calls.items() if count == 1)
        _rewrite_each(op, FusePrimitiveFunction(called_once))
        _rewrite_each(op, CallFusedKernel())
        remove_unused_kernels(op)


def _rewrite_each(module: ModuleOp, pattern: RewritePattern) -> None:
    """Applies `pattern` to each op outside the kernels (`_graph_ops`), in pre-order, once."""
    for op in list(_graph_ops(module)):
        if op.parent is not None:  # (not erased by an earlier rewrite)
            pattern.match_and_rewrite(op, PatternRewriter(op))
