"""Subscripts as linear forms: `sum(coefficient * atom) + constant` over `index` SSA values.

`linear_form(value)` looks through `arith.addi`, `arith.subi`, `arith.muli` by a constant and
integer constants; any other value (an induction variable, a block argument, the result of a
`divui`, `minsi`, `select`, ...) is an *atom* with coefficient 1. Two values with equal forms
are equal in every iteration (the converse need not hold, which only makes the users more
conservative). `IndexBuilder.form` emits a form back as `index` arithmetic.

```
%a = arith.addi %jo, %ji          linear_form(%b) = {%jo: 1, %ji: 1} + 3
%b = arith.addi %a, %c3           linear_form(%d) = {%q: 1} + 0, %q = divui %x, %c4 an atom
```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from xdsl.dialects import arith
from xdsl.ir import Operation, OpResult, SSAValue

from fusion_compiler.dialects.loop.op_builders import index_constant
from fusion_compiler.dialects.loop.queries import constant_index as constant_index

MAX_DEPTH = 32
"""Deeper expressions are cut off: the value at that depth becomes an atom."""


@dataclass(frozen=True)
class LinearForm:
    """`sum(terms[atom] * atom) + constant`; no zero coefficients are stored."""

    terms: Mapping[SSAValue, int] = field(default_factory=dict)
    constant: int = 0

    def coefficient(self, atom: SSAValue) -> int:
        return self.terms.get(atom, 0)

    def without(self, atom: SSAValue) -> LinearForm:
        return LinearForm({a: c for a, c in self.terms.items() if a is not atom}, self.constant)

    def plus(self, other: LinearForm, sign: int = 1) -> LinearForm:
        terms = dict(self.terms)
        for atom, coefficient in other.terms.items():
            terms[atom] = terms.get(atom, 0) + sign * coefficient
        kept = {atom: c for atom, c in terms.items() if c != 0}
        return LinearForm(kept, self.constant + sign * other.constant)

    def scaled(self, factor: int) -> LinearForm:
        if factor == 0:
            return LinearForm()
        return LinearForm({a: c * factor for a, c in self.terms.items()}, self.constant * factor)

    def same_terms(self, other: LinearForm) -> bool:
        """Whether both have the same atoms with the same coefficients (constants may differ)."""
        return dict(self.terms) == dict(other.terms)


def linear_form(value: SSAValue, depth: int = 0) -> LinearForm:
    """The linear form of an `index` value (see the module docstring)."""
    constant = constant_index(value)
    if constant is not None:
        return LinearForm({}, constant)
    if depth >= MAX_DEPTH or not isinstance(value, OpResult):
        return LinearForm({value: 1})
    op = value.op
    if isinstance(op, arith.AddiOp | arith.SubiOp):
        lhs, rhs = (linear_form(operand, depth + 1) for operand in op.operands)
        return lhs.plus(rhs, 1 if isinstance(op, arith.AddiOp) else -1)
    if isinstance(op, arith.MuliOp):
        for varying, scale in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            factor = constant_index(scale)
            if factor is not None:
                return linear_form(varying, depth + 1).scaled(factor)
    return LinearForm({value: 1})


class IndexBuilder:
    """Emits index ops before an anchor op."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor

    def emit(self, op: Operation) -> SSAValue:
        block = self.anchor.parent_block()
        assert block is not None
        block.insert_op_before(op, self.anchor)
        return op.results[0]

    def const(self, value: int) -> SSAValue:
        constant = index_constant(value)
        constant.result.name_hint = f"c{value}"
        return self.emit(constant)

    def form(self, form: LinearForm) -> SSAValue:
        """The value of a linear form (its coefficients and constant as `index` constants)."""
        total: SSAValue | None = None
        for atom, coefficient in form.terms.items():
            term = (
                atom if coefficient == 1 else self.emit(arith.MuliOp(atom, self.const(coefficient)))
            )
            total = term if total is None else self.emit(arith.AddiOp(total, term))
        if total is None:
            return self.const(form.constant)
        return self.emit(arith.AddiOp(total, self.const(form.constant))) if form.constant else total

    def quotient(self, value: SSAValue, divisor: int) -> SSAValue:
        return value if divisor == 1 else self.emit(arith.DivUIOp(value, self.const(divisor)))
