"""`fusion-run --check`: native results against the numpy reference semantics.

An output passes when
- its NaN, +Inf and -Inf are exactly where the reference has them (the same special value),
  and
- every other element is within `atol + rtol x |ref|` of the reference, with `rtol` =
  `CHECK_RTOL` and `atol` = `CHECK_ATOL_SCALE` x the largest finite |ref| of that output.

Integer and boolean outputs must equal the reference exactly (and have its dtype).

The verdict line says what it is based on: the largest absolute error, the tolerance, how
close the worst element came to its own tolerance, and the special values compared.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CHECK_RTOL = 1e-4
"""Relative tolerance of `--check`. The reference rounds once from float64; native kernels
accumulate in float32 in loop order, so reductions of a few thousand terms differ by ~1e-5."""
CHECK_ATOL_SCALE = 1e-4
"""Absolute tolerance of `--check`, as a fraction of the largest finite reference magnitude
(for outputs where cancellation leaves values near zero)."""


@dataclass(frozen=True)
class OutputCheck:
    """The comparison of one output with its reference."""

    max_abs_error: float
    atol: float
    worst_fraction: float
    """The largest error / tolerance over the finite elements (<= 1 passes)."""
    special_counts: dict[str, int]
    """How many NaN, +Inf and -Inf the reference has."""
    special_mismatches: int
    """Positions where the result and the reference are not the same special value."""

    @property
    def ok(self) -> bool:
        return self.worst_fraction <= 1.0 and self.special_mismatches == 0

    def describe(self) -> str:
        verdict = "OK" if self.ok else "MISMATCH"
        text = (
            f"{verdict}: max abs error {self.max_abs_error:.3g}, tolerance {self.atol:.3g} + "
            f"{CHECK_RTOL:g} x |ref| (worst element at {self.worst_fraction:.3g} of its "
            "tolerance)"
        )
        specials = ", ".join(f"{n} {name}" for name, n in self.special_counts.items() if n)
        if self.special_mismatches:
            text += f"; {self.special_mismatches} NaN/Inf not where the reference has them"
        elif specials:
            text += f"; {specials} in the same places as the reference"
        return text


def _special_kind(array: np.ndarray) -> np.ndarray:
    """0 for a finite element, 1 NaN, 2 +Inf, 3 -Inf."""
    kind = np.zeros(array.shape, np.int8)
    kind[np.isnan(array)] = 1
    kind[np.isposinf(array)] = 2
    kind[np.isneginf(array)] = 3
    return kind


def compare(got: np.ndarray, want: np.ndarray) -> OutputCheck:
    got_kind, want_kind = _special_kind(got), _special_kind(want)
    finite = (got_kind == 0) & (want_kind == 0)
    reference = np.abs(want[want_kind == 0].astype(np.float64))
    atol = CHECK_ATOL_SCALE * float(reference.max()) if reference.size else 0.0
    error = np.abs(got[finite].astype(np.float64) - want[finite].astype(np.float64))
    tolerance = atol + CHECK_RTOL * np.abs(want[finite].astype(np.float64))
    if error.size:
        with np.errstate(divide="ignore", invalid="ignore"):
            fractions = np.where(error == 0, 0.0, error / tolerance)
        worst = float(fractions.max())
    else:
        worst = 0.0
    return OutputCheck(
        max_abs_error=float(error.max()) if error.size else 0.0,
        atol=atol,
        worst_fraction=worst,
        special_counts={
            "NaN": int(np.count_nonzero(want_kind == 1)),
            "+Inf": int(np.count_nonzero(want_kind == 2)),
            "-Inf": int(np.count_nonzero(want_kind == 3)),
        },
        special_mismatches=int(np.count_nonzero(got_kind != want_kind)),
    )


@dataclass(frozen=True)
class ExactCheck:
    """The comparison of an integer or boolean output with its reference: equal or not."""

    dtype: str
    mismatches: int
    """Elements that differ from the reference (all of them for another dtype or shape)."""

    @property
    def ok(self) -> bool:
        return self.mismatches == 0

    def describe(self) -> str:
        if self.ok:
            return f"OK: {self.dtype}, equal to the reference"
        return f"MISMATCH: {self.dtype}, {self.mismatches} elements differ from the reference"


def compare_exact(got: np.ndarray, want: np.ndarray) -> ExactCheck:
    if got.dtype != want.dtype or got.shape != want.shape:
        return ExactCheck(f"{got.dtype} (reference {want.dtype})", max(want.size, 1))
    return ExactCheck(str(got.dtype), int(np.count_nonzero(got != want)))


def check(results: list[np.ndarray], reference: list[np.ndarray]) -> bool:
    """Print the verdict of each result against the reference; whether all pass."""
    ok = True
    for index, (got, want) in enumerate(zip(results, reference, strict=True)):
        exact = want.dtype.kind in "biu"
        outcome: OutputCheck | ExactCheck = (
            compare_exact(got, want) if exact else compare(got, want)
        )
        ok &= outcome.ok
        print(f"check out{index}: {outcome.describe()}")
    return ok
