"""`fusion_compiler.compile` and `fusion_compiler.parse`: from a model to native code.

What they accept (`Source`):

- an ONNX model: a path ending in `.onnx`, or an `onnx.ModelProto` (needs the `onnx` extra);
- graph-level IR: a path ending in `.mlir`, the IR text itself (any other string), or an
  xDSL `ModuleOp` (compiled as it is; `compile` leaves it unchanged).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from fusion_compiler.driver import DEFAULT_PIPELINE, compile_file, compile_module, parse_file
from fusion_compiler.lowering.threading_runtime import set_default_num_threads
from fusion_compiler.model import FunctionRunner, Model, OnnxRunner

if TYPE_CHECKING:  # (an `.mlir` file the cache holds loads without xDSL: `file_cache`)
    from xdsl.dialects.builtin import ModuleOp

Source: TypeAlias = "str | os.PathLike[str] | ModuleOp | Any"
"""A path (`.onnx`, `.mlir`), IR text, an xDSL module or an `onnx.ModelProto`."""

IR_FILENAME = "<string>"
"""The file name that errors in IR given as text point to."""


def compile(  # noqa: A001 - `fc.compile(model)`, like `torch.compile`
    source: Source,
    *,
    pipeline: str = DEFAULT_PIPELINE,
    cache: bool = True,
    entry: str | None = None,
    input_shapes: dict[str, tuple[int, ...]] | None = None,
    profile: bool = False,
) -> Model:
    """Compile `source` with `pipeline` (the default fusion pipeline) to native code.

    `cache=False` bypasses the on-disk compile cache. For IR, `entry` names the function the
    model runs (default: `main`, or the only graph-level function). For ONNX,
    `input_shapes` fixes dynamic input dimensions; without it, a model with dynamic inputs
    is compiled on each first call with a new set of shapes. `profile=True` makes a profiling
    build, which times every kernel launch (`Model.profile`); a model compiled without it
    carries no timing code.
    """
    onnx_model = _onnx_model(source)
    if onnx_model is not None:
        return _compile_onnx(onnx_model, _filename(source), pipeline, cache, input_shapes, profile)
    if isinstance(source, str | os.PathLike) and _is_path(str(source)):
        compiled = compile_file(Path(source), pipeline, cache=cache, profile=profile)
    else:
        from xdsl.dialects.builtin import ModuleOp

        module = source if isinstance(source, ModuleOp) else parse(source)
        compiled = compile_module(module, pipeline, cache=cache, profile=profile)
    return Model(FunctionRunner.of(compiled, _entry(list(compiled.functions), entry)))


def parse(source: Source) -> ModuleOp:
    """The graph-level module of `source`: IR parsed (and verified), or an ONNX model
    imported with its declared input shapes."""
    from xdsl.dialects.builtin import ModuleOp

    from fusion_compiler.dialects.context import make_context
    from fusion_compiler.dialects.diagnostics import parse_source

    if isinstance(source, ModuleOp):
        return source
    onnx_model = _onnx_model(source)
    if onnx_model is not None:
        from fusion_compiler.frontend.onnx_importer import import_model

        return import_model(onnx_model, filename=_filename(source))
    if isinstance(source, str) and not _is_path(source):
        return parse_source(make_context(), source, IR_FILENAME)
    return parse_file(Path(source))


def set_num_threads(count: int) -> None:
    """Models compiled or loaded from now on run their parallel loops on `count` threads
    (0: every core); `Model.set_num_threads` changes one model."""
    set_default_num_threads(count)


def _is_path(text: str) -> bool:
    """Whether a string names a file rather than holding IR: one line ending in a known
    suffix."""
    return "\n" not in text and text.rstrip().endswith((".mlir", ".onnx"))


def _filename(source: Source) -> str:
    if isinstance(source, str | os.PathLike):
        return str(source)
    return "model.onnx"


def _onnx_model(source: Source) -> Any | None:
    """The ONNX model `source` is or names, else None."""
    is_path = isinstance(source, os.PathLike) or (isinstance(source, str) and _is_path(source))
    if is_path and str(source).endswith(".onnx"):
        onnx = _import_onnx()
        try:
            return onnx.load(str(source))
        except OSError as err:
            from fusion_compiler.dialects.diagnostics import CompileError

            raise CompileError(f"cannot read '{source}': {err.strerror}") from None
    if type(source).__name__ == "ModelProto" and type(source).__module__.startswith("onnx"):
        return source
    if isinstance(source, str | os.PathLike):
        return None
    from xdsl.dialects.builtin import ModuleOp

    from fusion_compiler.dialects.diagnostics import CompileError

    if not isinstance(source, ModuleOp):
        raise CompileError(
            f"cannot compile a {type(source).__name__}: give a path (.onnx, .mlir), IR text, "
            "an xDSL ModuleOp or an onnx.ModelProto"
        )
    return None


def _import_onnx() -> Any:
    try:
        import onnx
    except ImportError:
        from fusion_compiler.dialects.diagnostics import CompileError

        raise CompileError(
            "ONNX models need the onnx extra: pip install 'fusion-compiler[onnx]'"
        ) from None
    return onnx


def _compile_onnx(
    model: Any,
    filename: str,
    pipeline: str,
    cache: bool,
    input_shapes: dict[str, tuple[int, ...]] | None,
    profile: bool = False,
) -> Model:
    from fusion_compiler.frontend.backend import FusionBackendRep

    rep = FusionBackendRep(
        model,
        input_shapes=input_shapes,
        pipeline=pipeline,
        cache=cache,
        filename=filename,
        profile=profile,
    )
    return Model(OnnxRunner(rep))


def _entry(names: list[str], entry: str | None) -> str:
    """The function to run: `entry`, else `main`, else the only one of `names`."""
    if entry is None and "main" not in names and len(names) == 1:
        return names[0]
    wanted = entry or "main"
    if wanted not in names:
        from fusion_compiler.dialects.diagnostics import CompileError

        raise CompileError(f"no function @{wanted} to run (functions: {', '.join(names)})")
    return wanted
