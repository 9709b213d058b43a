"""The errors a user of the compiler can cause, under one base class.

Every problem with the input (IR that does not parse or verify, an ONNX model that cannot be
imported, a bad pass option, arrays that do not fit a compiled model) raises a subclass of
`FusionError`; anything else escaping the compiler is a bug. The tools print a `FusionError`
as a one-line message and exit non-zero, without a traceback.

- `fusion_compiler.dialects.diagnostics.CompileError`: a problem in the program, with the
  `file:line:col` of the op when it is known (parse, verify, pass and import errors;
  `fusion_compiler.frontend.errors.ModelImportError` for ONNX models);
- `PassOptionError`: a pass option out of its range (`fuse-ops{max-depth=-1}`);
- `ArgumentError`: arrays that do not fit the parameters of a compiled model or kernel;
- `TargetError`: a target CPU set in the environment that this machine cannot run code for.
"""

from __future__ import annotations


class FusionError(Exception):
    """A problem the user can fix (not a bug of the compiler)."""


class PassOptionError(FusionError, ValueError):
    """A pass was given an option value outside its allowed range."""


class ArgumentError(FusionError, TypeError, ValueError):
    """The arrays given to a compiled model, function or kernel do not match its parameters
    (count, names, dtype, shape, contiguity)."""


def check_option_range(
    pass_name: str, option: str, value: int, minimum: int, maximum: int | None = None
) -> None:
    """Raise `PassOptionError` unless `minimum <= value <= maximum` (no maximum: unbounded)."""
    if value >= minimum and (maximum is None or value <= maximum):
        return
    allowed = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
    raise PassOptionError(f"{pass_name}: option '{option}' must be {allowed}, got {value}")


class TargetError(FusionError, ValueError):
    """`FUSION_TARGET_CPU` / `FUSION_TARGET_FEATURES` name a target that is incomplete or that
    this machine could not run code for (`lowering.jit.CodegenTarget.host`)."""


class MissingLibraryError(FusionError):
    """A backend's external library is not installed (the message names the extra that
    installs it)."""
