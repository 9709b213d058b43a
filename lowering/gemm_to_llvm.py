"""`loop.gemm` → a call of the BLAS library's `cblas_sgemm`.

    loop.gemm "scipy_cblas_sgemm"(%a[%oa], %b[%ob], %c[%oc]) <{m, n, k, lda, ldb, ldc, ...}>
  ==>
    %pa = llvm.getelementptr inbounds %a[%oa] : f32      (likewise %pb, %pc)
    llvm.call @scipy_cblas_sgemm(101, ta, tb, m, n, k, 1.0, %pa, lda, %pb, ldb, 0.0, %pc, ldc)

with CBLAS's enums (`CblasRowMajor` = 101, `CblasNoTrans` = 111, `CblasTrans` = 112) and 32-bit
integers (`scipy-openblas32` is the LP64 build). The function is declared in the module; the
JIT loads the library that defines it (`blas_library`).
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import f32, i32, i64
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from fusion_compiler.dialects import loop
from fusion_compiler.lowering.llvm_builders import (
    call_function,
    constant,
    converted,
    element_pointer,
)
from fusion_compiler.lowering.llvm_types import POINTER

CBLAS_ROW_MAJOR = 101
CBLAS_NO_TRANS = 111
CBLAS_TRANS = 112


def _address(buffer: SSAValue, offset: SSAValue) -> tuple[list[Operation], SSAValue]:
    pointer_ops, pointer = converted(buffer, POINTER)
    offset64 = arith.IndexCastOp(offset, i64)
    address = element_pointer(pointer, [offset64.result], f32)
    return [*pointer_ops, offset64, address], address.result


class LowerGemmPattern(RewritePattern):
    """`loop.gemm` → `llvm.call` of its CBLAS function (see the module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.GemmOp, rewriter: PatternRewriter, /) -> None:
        ops: list[Operation] = []
        pointers = []
        for buffer, offset in ((op.a, op.a_offset), (op.b, op.b_offset), (op.c, op.c_offset)):
            address_ops, address = _address(buffer, offset)
            ops += address_ops
            pointers.append(address)

        def integer(value: int) -> SSAValue:
            constant_op = constant(value, i32)
            ops.append(constant_op)
            return constant_op.result

        def real(value: float) -> SSAValue:
            constant_op = constant(value, f32)
            ops.append(constant_op)
            return constant_op.result

        def transpose(flag: str) -> SSAValue:
            return integer(CBLAS_TRANS if op.size(flag) else CBLAS_NO_TRANS)

        args = [
            integer(CBLAS_ROW_MAJOR),
            transpose("trans_a"),
            transpose("trans_b"),
            *(integer(op.size(name)) for name in ("m", "n", "k")),
            real(1.0),
            pointers[0],
            integer(op.size("lda")),
            pointers[1],
            integer(op.size("ldb")),
            real(0.0),
            pointers[2],
            integer(op.size("ldc")),
        ]
        call = call_function(rewriter, op, op.callee.data, args)
        rewriter.replace(op, [*ops, call], [])
