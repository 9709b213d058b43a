"""Multiply-adds marked `contract` become one `math.fma`, decided here rather than by LLVM.

legalize-ops marks the `mulf` and `addf` of every sum of products (matmul, convolution, sums of
squares) with the `contract` fast-math flag: `acc + a * b` may be computed with one rounding.
Left to LLVM, the flag is only a permission: whether a pair becomes an FMA instruction depends
on the shape of the code around it (the SLP vectoriser may turn four products into one vector
multiply and then add its lanes one by one, rounding each product), so two schedules of one
kernel could round differently. This pattern makes the choice deterministic: every `addf` with
the flag, one of whose operands is a `mulf` with the flag and no other use, becomes

    %p = arith.mulf %a, %b fastmath<contract>
    %s = arith.addf %acc, %p fastmath<contract>     ==>     %s = math.fma %a, %b, %acc

(the `mulf` operand on the right is taken first, which is where legalize-ops puts it). The
pairs are created by legalize-ops and kept intact by every scheduling transformation, so the
fused and unfused builds, scheduled or not, compute the same bits. `arith_to_llvm` drops the
`contract` flag from whatever is left, so LLVM never contracts on its own.
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.ir import OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

CONTRACT_FLAG = arith.FastMathFlag.ALLOW_CONTRACT


def has_contract(op: arith.AddfOp | arith.MulfOp) -> bool:
    return CONTRACT_FLAG in op.fastmath.data


def _contractible_product(value: SSAValue) -> arith.MulfOp | None:
    """The `mulf` that computes `value`, if it has the flag and `value` no other use."""
    if not isinstance(value, OpResult) or not isinstance(value.op, arith.MulfOp):
        return None
    product = value.op
    if not has_contract(product) or value.uses.get_length() != 1:
        return None
    return product


class ContractMultiplyAddPattern(RewritePattern):
    """`addf(c, mulf(a, b))` (or `addf(mulf(a, b), c)`), both `contract` → `fma(a, b, c)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddfOp, rewriter: PatternRewriter, /) -> None:
        if not has_contract(op):
            return
        for position in (1, 0):
            product = _contractible_product(op.operands[position])
            if product is None:
                continue
            addend = op.operands[1 - position]
            fma = math.FmaOp(product.lhs, product.rhs, addend)
            rewriter.replace(op, fma)
            rewriter.erase(product)
            return
