"""`fusion-report`: a picture of what fuse-ops fused in a model, why, and what it saves.

    fusion-report MODEL [-o report.html] [--format html|svg|dot|json] [--entry main]
                  [--pipeline P | --no-fusion] [--input-shape NAME=DIMS ...] [--run [--runs N]]

MODEL is a graph-level `.mlir` file or an `.onnx` model. The report shows the dataflow graph of
the entry function, each op a node (kernel name, shape, pattern kind), each fused group a box
named by its kernel, edges labelled with their tensor's bytes and drawn by whether the value
stays in a kernel or goes through memory; every edge fuse-ops refused, with its rule; and per
kernel and for the model, launches and intermediate bytes without fusion and with it. `--run`
compiles both builds and adds their measured time per run. The summary table is printed on
the terminal (on stderr when the report itself goes to stdout). The format defaults to the
output file's suffix, else html.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import CompileError, parse_source
from fusion_compiler.driver import DEFAULT_PIPELINE, UNFUSED_PIPELINE, PassManager
from fusion_compiler.passes.specialize_shapes import is_dynamic_module, specialize_shapes
from fusion_compiler.tools.errors import run_without_traceback
from fusion_compiler.tools.input_shapes import parse_input_shape
from fusion_compiler.tools.output_files import write_atomically
from fusion_compiler.tools.report.dot import render_dot
from fusion_compiler.tools.report.html import render_html
from fusion_compiler.tools.report.json_export import render_json
from fusion_compiler.tools.report.layout import layout
from fusion_compiler.tools.report.model import FusionReport, build_report
from fusion_compiler.tools.report.summary import Timings, text_summary
from fusion_compiler.tools.report.svg import render_svg

FORMATS = ("html", "svg", "dot", "json")


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="fusion-report", description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="graph-level IR (.mlir) or an ONNX model (.onnx)")
    parser.add_argument("-o", "--output", help="write the report here (default: stdout)")
    parser.add_argument("--format", choices=FORMATS, help="default: the output's suffix, or html")
    parser.add_argument("--entry", default="main", help="the function to report (default: main)")
    pipeline = parser.add_mutually_exclusive_group()
    pipeline.add_argument(
        "--pipeline", default=DEFAULT_PIPELINE, help="fuse-ops options come from here"
    )
    pipeline.add_argument("--no-fusion", action="store_true", help="report the unfused build")
    parser.add_argument(
        "--input-shape", action="append", default=[], type=parse_input_shape,
        metavar="NAME=DIMS", help="fix an input's shape (ONNX, or IR with ? dims; repeatable)",
    )  # fmt: skip
    parser.add_argument("--run", action="store_true", help="measure fused and unfused runs")
    parser.add_argument("--runs", type=int, default=10, help="timed runs of --run (default 10)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    if args.format is None:
        suffix = Path(args.output).suffix.lstrip(".") if args.output else ""
        args.format = suffix if suffix in FORMATS else "html"
    return args


def load_module(path: str, input_shapes: dict[str, tuple[int, ...]]) -> ModuleOp:
    """The graph-level module of an `.mlir` file, or of an `.onnx` model imported."""
    if path.endswith(".onnx"):
        try:
            from fusion_compiler.frontend.onnx_importer import import_model, load_model
        except ImportError as err:
            raise CompileError(
                f"reading .onnx models needs the 'onnx' package ({err}); "
                "install it with: pip install 'fusion-compiler[onnx]'"
            ) from None
        return import_model(load_model(path), input_shapes, filename=path)
    with open(path, encoding="utf-8") as stream:
        return parse_source(make_context(), stream.read(), path)


def measure(module: ModuleOp, entry: str, runs: int) -> Timings:
    """Median milliseconds per run of the fused and the unfused build, runs alternating."""
    from fusion_compiler.driver import compile_module
    from fusion_compiler.tools.fusion_run import median_seconds
    from fusion_compiler.tools.run_inputs import random_inputs
    from fusion_compiler.tools.run_ir import argument_facts, argument_specs

    fused = compile_module(module, DEFAULT_PIPELINE)
    unfused = compile_module(module, UNFUSED_PIPELINE)
    function = next(
        op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry
    )
    specs = argument_specs(function)
    inputs, _ = random_inputs(specs, argument_facts(function, specs), seed=0)
    fused_s, unfused_s = median_seconds(
        lambda: fused.run(entry, *inputs), lambda: unfused.run(entry, *inputs), repeats=runs
    )
    return Timings(fused_total=fused_s * 1e3, unfused_total=unfused_s * 1e3)


def render(report: FusionReport, form: str, timings: Timings | None) -> str:
    if form == "json":
        return render_json(report, timings)
    if form == "dot":
        return render_dot(report)
    svg = render_svg(report, layout(report))
    return svg + "\n" if form == "svg" else render_html(report, svg, timings)


def run(argv: Sequence[str] | None = None) -> int:
    args = parse_arguments(argv)
    if args.output and os.path.isdir(args.output):
        raise CompileError(f"-o {args.output}: is a directory; give a file name")
    module = load_module(args.model, dict(args.input_shape))
    if is_dynamic_module(module):  # `?` dimensions: the report is of one specialisation
        given = {} if args.model.endswith(".onnx") else dict(args.input_shape)
        specialize_shapes(module, given, args.entry)
    pipeline = UNFUSED_PIPELINE if args.no_fusion else args.pipeline
    PassManager(pipeline)  # a bad pipeline is reported before any work
    report = build_report(module, args.model, args.entry, pipeline)
    timings = measure(module, args.entry, args.runs) if args.run else None
    text = render(report, args.format, timings)
    summary = text_summary(report, timings)
    if args.output:
        write_atomically(args.output, text)
        print(summary)
        print(f"wrote {args.output} ({args.format})")
        return 0
    print(summary, file=sys.stderr)
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        sys.stdout = None  # `fusion-report m.mlir | head`: not an error
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_without_traceback(lambda: run(argv), "fusion-report")


if __name__ == "__main__":
    sys.exit(main())
