"""`fusion-import`: an ONNX model into the graph dialect.

    fusion-import MODEL.onnx [-o OUT.mlir] [--input-shape NAME=1x3x224x224 ...] [--print-op-generic]

prints `func.func @main` in the custom syntax of the graph dialect (initializers become
`graph.constant`s; uniform ones print as splats such as `dense<0.02>`). With `-o OUT.mlir`,
constants of 64 bytes or more are written to `OUT.weights` beside it, raw, and the IR refers to
them as `dense_resource<name>` (`fusion_compiler.dialects.resources`): the IR stays small and
parses fast; `--inline-weights` keeps them in the text. Importing again over the same output
updates the weights file in place, writing only the weights that changed
(`fusion_compiler.dialects.weights_writer`); `--new-weights-file` writes it anew. A problem
with the model prints `MODEL.onnx: error: ...` listing every unsupported node, and exits with
status 1.
Needs the optional `onnx` package: `pip install 'fusion-compiler[onnx]'`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from xdsl.dialects.builtin import ModuleOp

from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.dialects.printing import ModulePrinter
from fusion_compiler.dialects.weights_writer import WeightsWriter, externalize_constants
from fusion_compiler.tools.errors import run_without_traceback
from fusion_compiler.tools.input_shapes import parse_input_shape
from fusion_compiler.tools.output_files import AtomicOutput


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fusion-import", description="Import an ONNX model into the graph dialect."
    )
    parser.add_argument("model", help="the .onnx file")
    parser.add_argument("-o", "--output", help="write the module here (default: stdout)")
    parser.add_argument(
        "--input-shape",
        action="append",
        default=[],
        type=parse_input_shape,
        metavar="NAME=DIMS",
        help="fix the shape of a graph input, e.g. data=1x3x224x224 (repeatable)",
    )
    parser.add_argument(
        "--print-op-generic", action="store_true", help="print ops in xDSL's generic form"
    )
    parser.add_argument(
        "--inline-weights",
        action="store_true",
        help="with -o, keep large constants in the IR text rather than in OUT.weights",
    )
    parser.add_argument(
        "--new-weights-file",
        action="store_true",
        help="with -o, write OUT.weights anew even when an earlier import left one there "
        "(by default it is updated in place: only the weights that changed are written)",
    )
    return parser


def _run(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    try:
        from fusion_compiler.frontend.onnx_importer import import_model, load_model
    except ImportError as err:
        raise CompileError(
            f"fusion-import needs the 'onnx' package ({err}); "
            "install it with: pip install 'fusion-compiler[onnx]'"
        ) from None
    model = load_model(args.model)
    shapes = dict(args.input_shape)
    if args.output is not None:
        text = None
        if args.inline_weights:
            module = import_model(model, shapes, filename=args.model)
        else:  # (the weights are written as they are imported: `WeightsWriter`)
            # Room for the header: twice what the initializers' names and zero offsets take
            # (offsets have digits; a header that outgrows it only costs a move of the blobs).
            # A weights file already there (this model imported before) is updated: only the
            # weights that changed are written.
            room = WeightsWriter.room_for([(i.name, 0) for i in model.graph.initializer])
            path = weights_path(args.output)
            with WeightsWriter(path, 2 * room, reuse=not args.new_weights_file) as weights:
                module = import_model(model, shapes, filename=args.model, weights=weights)
                text = externalize_constants(module, weights, args.print_op_generic)
            if weights.updated is not None:
                _carry_names_forward(path, *weights.updated)
        with AtomicOutput(args.output) as output:  # never a partial file (Ctrl-C, a kill)
            if text is None:
                _print_module(module, output.stream, args.print_op_generic)
            else:
                output.stream.write(text)
            output.commit()
        return 0
    module = import_model(model, shapes, filename=args.model)
    try:
        _print_module(module, sys.stdout, args.print_op_generic)
        sys.stdout.flush()
    except BrokenPipeError:  # `fusion-import model.onnx | head`: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _carry_names_forward(path: Path, before, after, kept) -> None:
    """The compile cache's names of the blobs an update kept, moved to the file's new
    identity (`weight_names`): the next compile hashes only the weights that changed."""
    from fusion_compiler.lowering import cache_files, weight_names

    directory = cache_files.cache_dir()
    if directory is not None:
        weight_names.carry_forward(directory, path, before, after, kept)


def weights_path(output: str) -> Path:
    """The weights file written beside `output`: `model.mlir` → `model.weights`."""
    return Path(output).with_suffix(".weights")


def _print_module(module: ModuleOp, stream: TextIO, generic: bool) -> None:
    ModulePrinter(stream=stream, print_generic_format=generic).print_op(module)
    stream.write("\n")


def main(argv: Sequence[str] | None = None) -> int:
    return run_without_traceback(lambda: _run(argv), "fusion-import")


if __name__ == "__main__":
    sys.exit(main())
