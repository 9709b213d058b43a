"""External backends for composite functions, and the `blas` backend.

fuse-ops-by-pattern leaves each match as a composite function (`graph.composite`), called
directly or through a `graph.codegen` wrapper. Before lower-graph builds its entries,
`lower_external_calls` hands each called composite to the backend its codegen name (or the
prefix of its pattern name) names, which builds one `loop.func` kernel for it; the call
becomes a `graph.call_loop` of that kernel and the composite functions are removed:

    %y = func.call @fused_matmul_add_gelu_blas(%x, %w, %b)
  ==>
    %y = graph.call_loop @fused_matmul_add_gelu_blas(%x, %w, %b)

    loop.func @fused_matmul_add_gelu_blas(%x, %w, %b) outs(%y) {
      loop.gemm "scipy_cblas_sgemm"(%x[%c0], %w[%c0], %y[%c0]) <{m = 128, n = 3072, ...}>
      <the loop nests of add and gelu, legalized by legalize-ops, in place on %y>
    }

The `blas` kernel: the composite's `graph.matmul` (its operands read through a `graph.transpose`
of the composite when there is one, by strides: `passes.patterns.blas.matrix_view`) is one
`loop.gemm` per batch (a loop nest over the broadcast batch axes, each operand's offset its
own batch strides, 0 on a broadcast axis); the ops after it (the epilogue: elementwise ops
such as the bias add and the activation) are our own kernels, run in place on the output.
The kernel calls the library's `cblas_sgemm` by its name in the installed package
(`blas_library`); without the package, one `MissingLibraryError` names the extra.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.traits import SymbolTable

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.dialects.graph import (
    BINARY_OPS,
    CODEGEN_ATTR,
    COMPOSITE_ATTR,
    UNARY_OPS,
    CallLoopOp,
    MatmulOp,
    TransposeOp,
    is_external_function,
    shape_of,
)
from fusion_compiler.dialects.loop.builder import KernelBuilder
from fusion_compiler.lowering import blas_library
from fusion_compiler.passes.fuse_tir import inline_kernel
from fusion_compiler.passes.legalize_ops.kernels import build_kernel
from fusion_compiler.passes.patterns.blas import MatrixView, contiguous_strides, matrix_view

Backend = Callable[[func.FuncOp, str], loop.FuncOp]
"""Builds the kernel `name` computing a composite function."""

EPILOGUE_OPS = frozenset({*UNARY_OPS, *BINARY_OPS})
"""The ops the blas backend applies after the product (elementwise, so in place)."""


# ---------------------------------------------------------------------------------------------
# The blas backend
# ---------------------------------------------------------------------------------------------


def _split_composite(composite: func.FuncOp) -> tuple[MatmulOp, list[Operation]]:
    """The product and the epilogue ops of a blas composite; anything else is an error."""
    ops = [op for op in composite.body.block.ops if not isinstance(op, func.ReturnOp)]
    products = [op for op in ops if isinstance(op, MatmulOp)]
    if len(products) != 1:
        raise CompileError("a blas composite computes exactly one graph.matmul", composite)
    product = products[0]
    epilogue = ops[ops.index(product) + 1 :]
    for op in ops[: ops.index(product)]:
        if not (isinstance(op, TransposeOp) and op.results[0] in product.operands):
            raise CompileError(f"the blas backend cannot compute '{op.name}' here", op)
    _check_epilogue(composite, product, epilogue)
    return product, epilogue


def _check_epilogue(composite: func.FuncOp, product: MatmulOp, epilogue: list[Operation]) -> None:
    """The epilogue must be a chain of elementwise ops from the product to the result, each
    reading the previous value and the composite's arguments only (it runs in place)."""
    current = product.results[0]
    for op in epilogue:
        others = [v for v in op.operands if v is not current]
        if (
            type(op) not in EPILOGUE_OPS
            or current not in op.operands
            or shape_of(op.results[0]) != shape_of(current)
            or any(not isinstance(v, BlockArgument) for v in others)
        ):
            raise CompileError(f"the blas backend cannot apply '{op.name}' as an epilogue", op)
        current = op.results[0]
    ret = composite.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    if tuple(ret.arguments) != (current,):
        raise CompileError("a blas composite returns the result of its epilogue", composite)


def _batch_strides(view: MatrixView, batch: tuple[int, ...]) -> list[int]:
    """The operand's stride along each batch axis of the result (0 where it broadcasts)."""
    own = view.shape[:-2]
    strides = [0] * (len(batch) - len(own)) + list(view.strides[:-2])
    sizes = [1] * (len(batch) - len(own)) + list(own)
    return [0 if size == 1 else stride for size, stride in zip(sizes, strides, strict=True)]


def _emit_product(
    kb: KernelBuilder, product: MatmulOp, buffer_of: dict[SSAValue, SSAValue], target: SSAValue
) -> None:
    shape = shape_of(product.results[0])
    batch, (m, n) = shape[:-2], shape[-2:]
    a, b = (matrix_view(v) for v in product.operands)
    (trans_a, lda), (trans_b, ldb) = (_layout(view, product) for view in (a, b))
    k = a.shape[-1]
    sizes = {"m": m, "n": n, "k": k, "lda": lda, "ldb": ldb, "ldc": n}
    callee = blas_library.sgemm_symbol()
    c_strides = list(contiguous_strides(shape)[:-2])
    with kb.nest(list(batch), "b") as ivs:
        offsets = [
            kb.affine(list(zip(ivs, strides, strict=True)))
            for strides in (_batch_strides(a, batch), _batch_strides(b, batch), c_strides)
        ]
        buffers = (buffer_of[a.source], buffer_of[b.source], target)
        kb.emit(
            loop.GemmOp(callee, tuple(zip(buffers, offsets, strict=True)), sizes, trans_a, trans_b)
        )


def _layout(view: MatrixView, product: MatmulOp) -> tuple[bool, int]:
    layout = view.blas_layout
    if layout is None:
        raise CompileError("the blas backend cannot read this operand by strides", product)
    return layout


def build_blas_kernel(composite: func.FuncOp, name: str) -> loop.FuncOp:
    """The kernel `name` computing a blas composite (see the module docstring)."""
    product, epilogue = _split_composite(composite)
    block = composite.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp) and len(ret.arguments) == 1
    kb = KernelBuilder(name, [shape_of(a) for a in block.args], [shape_of(ret.arguments[0])])
    kernel = kb.finish()
    kernel.location = composite.location
    output = kb.outputs[0]
    buffer_of: dict[SSAValue, SSAValue] = dict(zip(block.args, kb.inputs, strict=True))
    for source, arg in zip(block.args, kb.inputs, strict=True):
        arg.name_hint = source.name_hint
    _emit_product(kb, product, buffer_of, output)
    buffer_of[product.results[0]] = output
    for op in epilogue:
        buffers = [buffer_of[v] for v in op.operands] + [output]
        inline_kernel(build_kernel(op, f"{name}_epilogue"), buffers, kernel)
        buffer_of[op.results[0]] = output
    return kernel


BACKENDS: dict[str, Backend] = {"blas": build_blas_kernel}
"""The external backends, by codegen name."""


# ---------------------------------------------------------------------------------------------
# Handing composites to their backends
# ---------------------------------------------------------------------------------------------


def _composite_of(function: func.FuncOp) -> tuple[func.FuncOp, str]:
    """The composite a called function computes (itself or the one its wrapper calls) and
    the name of its backend."""
    if CODEGEN_ATTR in function.attributes:
        backend = function.attributes[CODEGEN_ATTR]
        calls = [op for op in function.body.block.ops if isinstance(op, func.CallOp)]
        inner = SymbolTable.lookup_symbol(function, calls[0].callee) if len(calls) == 1 else None
        if not isinstance(inner, func.FuncOp) or COMPOSITE_ATTR not in inner.attributes:
            raise CompileError("a graph.codegen function must call one composite", function)
        assert isinstance(backend, StringAttr)
        return inner, backend.data
    pattern = function.attributes[COMPOSITE_ATTR]
    assert isinstance(pattern, StringAttr)
    return function, pattern.data.partition(".")[0]


def lower_external_calls(module: ModuleOp) -> None:
    """Replace each call of a composite (or of its codegen wrapper) by a `graph.call_loop`
    of the kernel its backend builds, then remove the composite functions."""
    kernels: dict[str, loop.FuncOp] = {}
    external = {op.sym_name.data: op for op in module.ops if is_external_function(op)}
    first = module.body.block.first_op
    for call in [op for op in module.walk() if isinstance(op, func.CallOp)]:
        name = call.callee.string_value()
        if is_external_function(call.parent_op()) or name not in external:
            continue
        callee = external[name]
        assert isinstance(callee, func.FuncOp)
        if name not in kernels:
            composite, backend = _composite_of(callee)
            if backend not in BACKENDS:
                known = ", ".join(sorted(BACKENDS))
                raise CompileError(f"no backend '{backend}' (backends: {known})", callee)
            kernels[name] = BACKENDS[backend](composite, name)
            module.body.block.insert_op_before(kernels[name], first)
        replacement = CallLoopOp(name, list(call.arguments), [r.type for r in call.results])
        replacement.location = call.location
        call.parent_block().insert_op_before(replacement, call)
        for old, new in zip(call.results, replacement.results, strict=True):
            old.replace_all_uses_with(new)
        call.detach()
        call.erase()
    for op in list(module.ops):
        if is_external_function(op):
            module.body.block.erase_op(op, safe_erase=False)
