"""Quotients and remainders of bounded subscripts folded into the terms they come from.

compute-inline recomputes a reshape's subscripts at each read as divisions and remainders of
a flat offset (`divui`/`remui` of `i * 196 + y * 14 + x` by 14, 196, 784, ...), in the
innermost loop: a channel shuffle (reshape, transpose, reshape) then spends dozens of
instructions per element on them, and its loads look like gathers to every analysis. When
the dividend is a sum of non-negative terms of known range, the division splits exactly:

```
x = g * A + L,   0 <= L < g,   g divides d      =>   x / d = A / (d / g)
                                                       x % d = g * (A % (d / g)) + L
```

with `A` the terms whose coefficients `g` divides (divided by `g`) and `L` the rest. `g` is
tried as `d` itself (then `x / d = A`, `x % d = L`) and as each coefficient dividing `d`:
`(i * 196 + y * 14 + x) / 14 = i * 14 + y` (x < 14), `(i * 196 + y * 14 + x) / 784 = i / 4`
(y * 14 + x < 196): what remains divides only outer induction variables, which LLVM hoists.
Ranges: an induction variable of a loop with constant non-negative bounds ranges over its
iterations, `y / m` over the quotients of `y`'s range, `y % m` over `[0, m)`; the dividend's
coefficients must be non-negative (unsigned division of a non-negative value).

The new subscripts are equal to the old ones in every iteration (exact integer identities),
so every load and store touches the same element: the same results, bit for bit.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import BlockArgument, OpResult, SSAValue

from fusion_compiler.dialects.loop import ForOp, FuncOp
from fusion_compiler.passes.analysis.ir_walk import region_ops
from fusion_compiler.passes.analysis.linear_index import IndexBuilder, LinearForm, linear_form
from fusion_compiler.passes.analysis.loop_access import constant_index, loop_range

Range = tuple[int, int]
MAX_DEPTH = 16
"""Ranges of atoms nested deeper than this are unknown."""


def _iv_range(atom: BlockArgument) -> Range | None:
    loop = atom.owner.parent_op()
    if not isinstance(loop, ForOp) or atom is not loop.induction_var:
        return None
    bounds = loop_range(loop)
    if bounds is None or bounds[0] < 0 or bounds[1] <= bounds[0] or bounds[2] <= 0:
        return None
    lb, ub, step = bounds
    return lb, lb + (ub - lb - 1) // step * step


def atom_range(atom: SSAValue, depth: int = 0) -> Range | None:
    """The least and greatest value of an atom of a linear form, if known (module docstring)."""
    if isinstance(atom, BlockArgument):
        return _iv_range(atom)
    if depth >= MAX_DEPTH or not isinstance(atom, OpResult):
        return None
    op = atom.op
    if not isinstance(op, arith.DivUIOp | arith.RemUIOp):
        return None
    divisor = constant_index(op.rhs)
    if divisor is None or divisor <= 0:
        return None
    if isinstance(op, arith.RemUIOp):
        return 0, divisor - 1
    dividend = form_range(linear_form(op.lhs), depth + 1)
    return None if dividend is None else (dividend[0] // divisor, dividend[1] // divisor)


def form_range(form: LinearForm, depth: int = 0) -> Range | None:
    """The range of a linear form with non-negative coefficients and atoms of known range."""
    low = high = form.constant
    if low < 0:
        return None
    for atom, coefficient in form.terms.items():
        bounds = atom_range(atom, depth)
        if bounds is None or coefficient < 0:
            return None
        low, high = low + coefficient * bounds[0], high + coefficient * bounds[1]
    return low, high


def _split(form: LinearForm, divisor: int) -> tuple[int, LinearForm, LinearForm] | None:
    """`(g, A, L)` with `form = g * A + L`, `0 <= L < g` and `g` dividing `divisor`."""
    candidates = [
        divisor,
        *sorted({c for c in form.terms.values() if 0 < c < divisor}, reverse=True),
    ]
    for g in candidates:
        if divisor % g:
            continue
        high = {a: c // g for a, c in form.terms.items() if c % g == 0}
        low = LinearForm({a: c for a, c in form.terms.items() if c % g}, form.constant)
        bounds = form_range(low)
        if bounds is not None and bounds[1] < g:
            return g, LinearForm(high), low
    return None


def _folded(op: arith.DivUIOp | arith.RemUIOp) -> SSAValue | None:
    """The simpler value of `op` (module docstring), emitted before it; None if none."""
    divisor = constant_index(op.rhs)
    form = linear_form(op.lhs)
    if divisor is None or divisor <= 0 or form_range(form) is None:
        return None
    split = _split(form, divisor)
    if split is None or (split[0] == 1 and divisor > 1):
        return None  # nothing splits off
    g, high, low = split
    build = IndexBuilder(op)
    if isinstance(op, arith.DivUIOp):
        return build.quotient(build.form(high), divisor // g)
    if divisor == g:
        return build.form(low)
    kept = build.emit(arith.RemUIOp(build.form(high), build.const(divisor // g)))
    scaled = kept if g == 1 else build.emit(arith.MuliOp(kept, build.const(g)))
    return (
        build.emit(arith.AddiOp(scaled, build.form(low))) if low.terms or low.constant else scaled
    )


def fold_quotients(func: FuncOp) -> bool:
    """Fold every `divui`/`remui` of `func` whose dividend splits (module docstring); whether
    any did. The ops folded are left for dead-code erasure."""
    changed = False
    for op in [op for op in region_ops(func.body) if isinstance(op, arith.DivUIOp | arith.RemUIOp)]:
        value = _folded(op)
        if value is not None:
            op.results[0].replace_all_uses_with(value)
            changed = True
    return changed
