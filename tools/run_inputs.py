"""The inputs of `fusion-run`: read from an `.npz` archive or drawn at random, and checked
against the entry function's parameters before anything is compiled. What these read of the
IR (the parameters, `ArgumentSpec`; each argument's facts, `ArgumentFacts`) is `run_ir`'s,
or, for a file the cache holds, the cache's (`run_facts`): this module needs no IR.

Every problem is a `CompileError` naming the argument, what was expected and what was given
(the tool prints it and exits 1).
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass

import numpy as np

from fusion_compiler.dialects.compile_error import CompileError


@dataclass(frozen=True)
class ArgumentSpec:
    """A parameter of the entry function: `arg<index>` in the archive (or its SSA name), its
    SSA name, shape and dtype."""

    index: int
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def key(self) -> str:
        return f"arg{self.index}"

    def describe(self) -> str:
        return f"{self.key} (%{self.name})"


@dataclass(frozen=True)
class ArgumentFacts:
    """What drawing or checking an argument's values reads of the IR: the domain restriction
    a float argument feeds (`restricted_operand`, through data movement), and the axis an
    integer argument indexes (`index_bound`)."""

    restriction: str | None = None
    index_bound: tuple[int, str] | None = None


# ---------------------------------------------------------------------------------------------
# --inputs IN.npz
# ---------------------------------------------------------------------------------------------


def _open_archive(path: str) -> dict[str, np.ndarray]:
    """Every array of the archive `path`, read in full (a truncated member is found here)."""
    try:
        archive = np.load(path, allow_pickle=False)
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise CompileError(
                f"--inputs {path}: expected an .npz archive (np.savez), got a single array"
            )
        with archive:
            return {name: archive[name] for name in archive.files}
    except (ValueError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile) as err:
        reason = str(err) or type(err).__name__
        if "pickle" in reason:  # numpy's guess for a file that is neither .npz nor .npy
            reason = "not a zip archive"
        raise CompileError(
            f"--inputs {path}: not a readable .npz archive (np.savez): {reason}"
        ) from None


def _keys_of(spec: ArgumentSpec) -> tuple[str, ...]:
    """The names an archive may give `spec`'s array: `arg<index>` or the parameter's own name
    (an imported model's parameters are named like its ONNX inputs)."""
    return (spec.key,) if spec.name == spec.key else (spec.key, spec.name)


def _arrays_by_argument(
    path: str, arrays: dict[str, np.ndarray], specs: list[ArgumentSpec]
) -> dict[int, np.ndarray]:
    """The archive's arrays by parameter index; an array given under both of its names is
    an error."""
    found: dict[int, np.ndarray] = {}
    for spec in specs:
        keys = [key for key in _keys_of(spec) if key in arrays]
        if len(keys) > 1:
            raise CompileError(
                f"--inputs {path}: {spec.describe()} is given twice, as {keys[0]} and {keys[1]}"
            )
        if keys:
            found[spec.index] = arrays[keys[0]]
    return found


def archive_shapes(path: str, specs: list[ArgumentSpec]) -> dict[str, tuple[int, ...]]:
    """The shapes of the archive's arrays by parameter name, for the parameters it holds
    (they specialise a function with dynamic dimensions; `load_inputs` checks them)."""
    found = _arrays_by_argument(path, _open_archive(path), specs)
    return {spec.name: tuple(found[spec.index].shape) for spec in specs if spec.index in found}


def load_inputs(path: str, specs: list[ArgumentSpec]) -> list[np.ndarray]:
    """The archive's array of every parameter (named `arg<index>` or like the parameter),
    each checked against its parameter."""
    arrays = _open_archive(path)
    found = _arrays_by_argument(path, arrays, specs)
    missing = [" or ".join(_keys_of(spec)) for spec in specs if spec.index not in found]
    if missing:
        raise CompileError(f"--inputs {path}: missing {', '.join(missing)}")
    expected = {key for spec in specs for key in _keys_of(spec)}
    extra = sorted(set(arrays) - expected)
    if extra:
        takes = ", ".join(spec.describe() for spec in specs) or "none"
        raise CompileError(
            f"--inputs {path}: unexpected array(s) {', '.join(extra)} (the function takes "
            f"{len(specs)}: {takes})"
        )
    return [_checked(path, spec, found[spec.index]) for spec in specs]


def check_index_ranges(
    path: str, specs: list[ArgumentSpec], facts: list[ArgumentFacts], arrays: list[np.ndarray]
) -> None:
    """An integer argument that indexes a `graph.gather` (directly or through data movement)
    must hold indices inside the gathered axis, counting negatives from its end: the kernels
    clamp anything else (never reading outside the table), which would silently give a
    wrong row, so fusion-run refuses it naming the first offending element."""
    for spec, fact, array in zip(specs, facts, arrays, strict=True):
        bound = fact.index_bound
        if bound is None or array.size == 0:
            continue
        size, what = bound
        outside = (array < -size) | (array >= size)
        if outside.any():
            position = tuple(int(i) for i in np.argwhere(outside)[0])
            raise CompileError(
                f"--inputs {path}: {spec.describe()}: index {array[position]} at {position} is "
                f"out of range for {what} of size {size} (valid: {-size} to {size - 1})"
            )


def _checked(path: str, spec: ArgumentSpec, array: np.ndarray) -> np.ndarray:
    if array.shape != spec.shape or array.dtype != spec.dtype:
        raise CompileError(
            f"--inputs {path}: {spec.describe()}: expected shape {spec.shape} dtype "
            f"{spec.dtype}, got shape {array.shape} dtype {array.dtype}"
        )
    return np.require(array, requirements="C")  # keeps a 0-d array 0-d


# ---------------------------------------------------------------------------------------------
# --random-inputs
# ---------------------------------------------------------------------------------------------

POSITIVE_RANGE = (0.5, 2.0)
"""Where arguments feeding a domain-restricted operand are drawn (uniformly)."""

INTEGER_RANGE = (-10, 10)
"""Where integer arguments are drawn (uniformly; `high` excluded)."""


def random_inputs(
    specs: list[ArgumentSpec], facts: list[ArgumentFacts], seed: int
) -> tuple[list[np.ndarray], list[str]]:
    """Standard-normal arrays, except for arguments feeding a domain-restricted operand,
    which are drawn from `POSITIVE_RANGE`; and a note for each of those. Integer arguments
    are drawn uniformly from `INTEGER_RANGE`, booleans are fair coin flips."""
    rng = np.random.default_rng(seed)
    arrays, notes = [], []
    for spec, fact in zip(specs, facts, strict=True):
        if spec.dtype.kind in "biu":
            arrays.append(_random_integers(rng, spec, fact.index_bound))
            continue
        if fact.restriction is None:
            arrays.append(rng.standard_normal(spec.shape).astype(spec.dtype))
            continue
        low, high = POSITIVE_RANGE
        arrays.append(rng.uniform(low, high, spec.shape).astype(spec.dtype))
        notes.append(
            f"{spec.describe()} feeds {fact.restriction}: drawn uniformly from [{low}, {high})"
        )
    return arrays, notes


def _random_integers(
    rng: np.random.Generator, spec: ArgumentSpec, bound: tuple[int, str] | None
) -> np.ndarray:
    """Booleans by coin flips; integers from `INTEGER_RANGE`, narrowed to valid indices
    (`-size` to `size - 1`) when they index an axis of `size` elements."""
    if spec.dtype == np.bool_:
        return rng.random(spec.shape) < 0.5
    low, high = INTEGER_RANGE
    if bound is not None and bound[0] > 0:  # an empty axis has no valid index to draw
        low, high = max(low, -bound[0]), min(high, bound[0])
    return rng.integers(low, high, spec.shape).astype(spec.dtype)
