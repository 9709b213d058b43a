"""Calls of external libraries from a kernel: `loop.gemm`, a BLAS `sgemm`."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    i64,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

GEMM_SIZES = ("m", "n", "k", "lda", "ldb", "ldc")


@irdl_op_definition
class GemmOp(IRDLOperation):
    """`C = op(A) @ op(B)` on f32 matrices through the C function `callee`, a CBLAS
    `cblas_sgemm` (row-major; `alpha` 1, `beta` 0: C is overwritten).

    Each matrix starts at its buffer's element `*_offset` and has leading dimension `ld*`;
    `trans_a` / `trans_b` (0 or 1) read A (M×K) / B (K×N) transposed.

    ```mlir
    loop.gemm "scipy_cblas_sgemm"(%a[%c0], %b[%c0], %c[%c0])
        {m = 128, n = 3072, k = 768, lda = 768, ldb = 3072, ldc = 3072, trans_a = 0, trans_b = 0}
        : memref<128x768xf32>, memref<768x3072xf32>, memref<128x3072xf32>
    ```
    """

    name = "loop.gemm"

    callee = prop_def(StringAttr)
    a = operand_def(MemRefType)
    a_offset = operand_def(IndexType)
    b = operand_def(MemRefType)
    b_offset = operand_def(IndexType)
    c = operand_def(MemRefType)
    c_offset = operand_def(IndexType)
    m = prop_def(IntegerAttr[I64])
    n = prop_def(IntegerAttr[I64])
    k = prop_def(IntegerAttr[I64])
    lda = prop_def(IntegerAttr[I64])
    ldb = prop_def(IntegerAttr[I64])
    ldc = prop_def(IntegerAttr[I64])
    trans_a = prop_def(IntegerAttr[I64])
    trans_b = prop_def(IntegerAttr[I64])

    assembly_format = (
        "$callee `(` $a `[` $a_offset `]` `,` $b `[` $b_offset `]` `,` $c `[` $c_offset `]` `)`"
        " attr-dict `:` type($a) `,` type($b) `,` type($c)"
    )

    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        callee: str,
        operands: tuple[tuple[SSAValue, SSAValue], ...],
        sizes: dict[str, int],
        trans_a: bool,
        trans_b: bool,
    ):
        (a, a_offset), (b, b_offset), (c, c_offset) = operands
        properties = {name: IntegerAttr(sizes[name], i64) for name in GEMM_SIZES}
        properties["trans_a"] = IntegerAttr(int(trans_a), i64)
        properties["trans_b"] = IntegerAttr(int(trans_b), i64)
        properties["callee"] = StringAttr(callee)
        super().__init__(operands=[a, a_offset, b, b_offset, c, c_offset], properties=properties)

    def size(self, name: str) -> int:
        attr = self.properties[name]
        assert isinstance(attr, IntegerAttr)
        return attr.value.data

    def verify_(self) -> None:
        for what in ("a", "b", "c"):
            buffer_type = getattr(self, what).type
            assert isinstance(buffer_type, MemRefType)
            if not isinstance(buffer_type.element_type, Float32Type):
                raise VerifyException(f"loop.gemm: {what} must hold f32, got {buffer_type}")
        if any(self.size(name) < 1 for name in GEMM_SIZES):
            raise VerifyException("loop.gemm: sizes and leading dimensions must be positive")
        for flag in ("trans_a", "trans_b"):
            if self.size(flag) not in (0, 1):
                raise VerifyException(f"loop.gemm: {flag} must be 0 or 1")
