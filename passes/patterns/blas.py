"""The `blas` pattern tables: matrix products that a BLAS library's `sgemm` computes.

    blas.matmul_bias         matmul(a, b) + bias
    blas.matmul              matmul(a, b)

and, in the table `blas-activations`, before those:

    blas.matmul_bias_<act>   act(matmul(a, b) + bias)      act: relu gelu gelu_tanh sigmoid tanh silu
    blas.matmul_<act>        act(matmul(a, b))

and the same with `batch_matmul` for operands of rank 3 or more (numpy batch broadcasting:
`sgemm` once per batch). Each operand may be a `graph.transpose` the product reads through
its strides (a transposed matrix, or batch axes moved) when BLAS can: one of the two matrix
axes of the view must have unit stride. The bias and activation are the epilogue, which the
backend applies with our own kernel; a match whose bias would broadcast the product to a
larger shape, or on other element types than f32, is rejected. Longer patterns come first,
so the longest epilogue wins. With `blas`, the activation after a product is left to
fuse-ops, which gives it a kernel of its own, scheduled like every other.

`matrix_view` is the layout analysis the check and the backend (`lowering/blas_backend`) share.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import Float32Type, TensorType
from xdsl.ir import SSAValue

from fusion_compiler.dialects.graph import (
    AddOp,
    GeluOp,
    GeluTanhOp,
    MatmulOp,
    ReluOp,
    SigmoidOp,
    SiluOp,
    TanhOp,
    TransposeOp,
    ints_of,
)
from fusion_compiler.passes.patterns.dpl import Pattern, is_op, wildcard
from fusion_compiler.passes.patterns.fusion_pattern import (
    FusionPattern,
    PatternCheckContext,
    register_patterns,
)
from fusion_compiler.passes.patterns.matcher import defining_op

ACTIVATIONS = {
    "relu": ReluOp,
    "gelu": GeluOp,
    "gelu_tanh": GeluTanhOp,
    "sigmoid": SigmoidOp,
    "tanh": TanhOp,
    "silu": SiluOp,
}
"""The activation epilogues, by the name they give their pattern."""


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


@dataclass(frozen=True)
class MatrixView:
    """A matmul operand as a strided view of a contiguous buffer `source`."""

    source: SSAValue
    shape: tuple[int, ...]
    strides: tuple[int, ...]

    @property
    def blas_layout(self) -> tuple[bool, int] | None:
        """(transposed, leading dimension) for row-major `sgemm`, or None if neither matrix
        axis has unit stride."""
        rows, cols = self.strides[-2], self.strides[-1]
        if cols == 1 or self.shape[-1] == 1:
            return False, max(rows, self.shape[-1], 1)
        if rows == 1 or self.shape[-2] == 1:
            return True, max(cols, self.shape[-2], 1)
        return None


def matrix_view(value: SSAValue) -> MatrixView:
    """`value` as a view: through a `graph.transpose` that defines it, else itself."""
    op = defining_op(value)
    shape = _shape(value)
    if isinstance(op, TransposeOp):
        source = op.operands[0]
        strides = contiguous_strides(_shape(source))
        perm = ints_of(op.perm)
        return MatrixView(source, shape, tuple(strides[axis] for axis in perm))
    return MatrixView(value, shape, contiguous_strides(shape))


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def _operand() -> Pattern:
    x = wildcard()
    return is_op(TransposeOp)(x) | x


def _check(batched: bool):
    def check(context: PatternCheckContext) -> bool:
        matmul = next(op for op in context.match.ops if isinstance(op, MatmulOp))
        root = context.matched_expr
        values = [*matmul.operands, *root.results, *matmul.results]
        if any(not _is_f32(v) for v in values):
            return False
        if (len(_shape(matmul.results[0])) > 2) != batched:
            return False
        if _shape(root.results[0]) != _shape(matmul.results[0]):
            return False
        members = set(context.match.ops)
        for operand in matmul.operands:
            view = matrix_view(operand) if defining_op(operand) in members else None
            if view is not None and view.blas_layout is None:
                return False
        return True

    return check


def _is_f32(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and isinstance(value.type.element_type, Float32Type)


def blas_patterns(activations: bool = False) -> list[FusionPattern]:
    """The table, longest epilogue first, for 2-D products then batched ones; with
    `activations`, the activation epilogues too."""
    acts = ACTIVATIONS if activations else {}
    table: list[FusionPattern] = []
    for kind, batched in (("matmul", False), ("batch_matmul", True)):
        check = _check(batched)
        matmul = is_op(MatmulOp)(_operand(), _operand())
        biased = is_op(AddOp)(matmul, wildcard())
        names = {"matmul": matmul}
        for act, cls in acts.items():
            table.append(FusionPattern(f"blas.{kind}_bias_{act}", is_op(cls)(biased), names, check))
        table.append(FusionPattern(f"blas.{kind}_bias", biased, names, check))
        for act, cls in acts.items():
            table.append(FusionPattern(f"blas.{kind}_{act}", is_op(cls)(matmul), names, check))
        table.append(FusionPattern(f"blas.{kind}", matmul, names, check))
    return table


register_patterns("blas", blas_patterns())
register_patterns("blas-activations", blas_patterns(activations=True))
