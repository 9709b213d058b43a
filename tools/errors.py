"""How the command-line tools end: a clear message and an exit status, never a traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from fusion_compiler.dialects.compile_error import CompileError
from fusion_compiler.errors import FusionError

TRACEBACK_VARIABLE = "FUSION_TRACEBACK"
"""Set this environment variable to 1 to let internal errors show their Python traceback."""


def format_error(err: FusionError) -> str:
    """`file:line:col: error: message` for a `CompileError`, `error: message` otherwise."""
    return err.format() if isinstance(err, CompileError) else f"error: {err}"


def run_without_traceback(body: Callable[[], int | None], program: str) -> int:
    """Run a tool's body; report user errors and internal errors on stderr with a status."""
    try:
        status = body() or 0
        sys.stdout.flush()
        return status
    except BrokenPipeError:  # `fusion-run ... | head -1`: the reader has all it wants
        _silence_stdout()
        return 0
    except FusionError as err:
        print(format_error(err), file=sys.stderr)
        return 1
    except OSError as err:
        what = f": '{err.filename}'" if err.filename is not None else ""
        print(f"{program}: error: {err.strerror or err}{what}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except MemoryError as err:  # a tensor larger than what the machine can give
        detail = f" ({err})" if str(err) else ""
        print(
            f"{program}: error: out of memory{detail}: the input needs more memory than this "
            "machine can allocate",
            file=sys.stderr,
        )
        return 1
    except Exception as err:
        if os.environ.get(TRACEBACK_VARIABLE) == "1":
            raise
        print(
            f"{program}: internal error: {type(err).__name__}: {err}\n"
            f"(this is a bug in {program}; set {TRACEBACK_VARIABLE}=1 to see the traceback)",
            file=sys.stderr,
        )
        return 3


def _silence_stdout() -> None:
    """Points standard output at /dev/null, so that Python's final flush of what is still
    buffered for the closed pipe does not report a second broken pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
