"""Issue 9's convolution and matmul shapes: our compiled kernel against onnxruntime, paired.

    python bench/contraction_shapes.py [--runs 15] [--threads 1] [--only NAME ...] [--baseline]

Each shape is one graph function (conv2d + bias + relu, or matmul + bias, as in issue 9's
table), compiled through the default pipeline (one fused kernel) and exported to ONNX for
onnxruntime. Both run on the same thread count, alternately (ours, ort, ours, ...), and the
medians are printed as ms and GFLOP/s (2 flops per multiply-add of the contraction) with the
ratio ort time / our time (> 1: ours is faster). Our output is checked against the reference
evaluator (max abs error printed). `--baseline` compiles with schedule-kernels'
`contractions=false` (the schedule before `schedule-contractions`), for before/after numbers.
The machine is shared: read the ratios, and run twice.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from xdsl.dialects import func  # noqa: E402
from xdsl.dialects.builtin import ModuleOp  # noqa: E402
from xdsl.ir import Block, Region  # noqa: E402

from fusion_compiler.dialects import graph  # noqa: E402
from fusion_compiler.dialects.graph.base import tensor_type  # noqa: E402
from fusion_compiler.dialects.reference.evaluator import evaluate  # noqa: E402
from fusion_compiler.lowering.compiled_model import compile_module  # noqa: E402
from fusion_compiler.passes.pipeline import FUSION_PIPELINE  # noqa: E402

# name: (kind, shape): conv (C, H, W, O, kernel, stride, pad, groups); matmul (B, M, K, N)
SHAPES: dict[str, tuple[str, tuple[int, ...]]] = {
    "conv3x3_64x56": ("conv", (64, 56, 56, 64, 3, 1, 1, 1)),
    "conv7x7_stem": ("conv", (3, 224, 224, 64, 7, 2, 3, 1)),
    "conv1x1_s2_256x56": ("conv", (256, 56, 56, 128, 1, 2, 0, 1)),
    "conv3x3_256x14": ("conv", (256, 14, 14, 256, 3, 1, 1, 1)),
    "conv1x1_1024x14": ("conv", (1024, 14, 14, 256, 1, 1, 0, 1)),
    "conv1x1_2048x7": ("conv", (2048, 7, 7, 512, 1, 1, 0, 1)),
    "conv1x1_64x56": ("conv", (64, 56, 56, 256, 1, 1, 0, 1)),
    "dw3x3_128x28": ("conv", (128, 28, 28, 128, 3, 1, 1, 128)),
    "ffn_128x768x3072": ("matmul", (1, 128, 768, 3072)),
    "ffn_128x3072x768": ("matmul", (1, 128, 3072, 768)),
    "proj_128x768x768": ("matmul", (1, 128, 768, 768)),
    "attn_12x128x64x128": ("matmul", (12, 128, 64, 128)),
}


def conv_module(c, h, w, o, k, s, p, g) -> tuple[ModuleOp, float]:
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    shapes = [(1, c, h, w), (o, c // g, k, k), (1, o, 1, 1)]
    block = Block(arg_types=[tensor_type(shape) for shape in shapes])
    conv = graph.Conv2DOp(block.args[0], block.args[1], (s, s), (p, p, p, p), (1, 1), g)
    add = graph.AddOp(conv.result, block.args[2])
    relu = graph.ReluOp(add.result)
    block.add_ops([conv, add, relu, func.ReturnOp(relu.result)])
    flops = 2.0 * o * oh * ow * (c // g) * k * k
    return _module(block, relu.result.type), flops


def matmul_module(b, m, k, n) -> tuple[ModuleOp, float]:
    lead = (b,) if b > 1 else ()
    shapes = [(*lead, m, k), (*lead, k, n), (n,)]
    block = Block(arg_types=[tensor_type(shape) for shape in shapes])
    mm = graph.MatmulOp(block.args[0], block.args[1])
    add = graph.AddOp(mm.result, block.args[2])
    block.add_ops([mm, add, func.ReturnOp(add.result)])
    return _module(block, add.result.type), 2.0 * b * m * k * n


def _module(block: Block, result_type) -> ModuleOp:
    signature = ([arg.type for arg in block.args], [result_type])
    return ModuleOp([func.FuncOp("main", signature, Region(block))])


def ort_runner(module: ModuleOp, inputs, threads: int):
    import onnxruntime as ort
    from onnx_export import export_function

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    model = export_function(module).SerializeToString()
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    feeds = {arg.name: x for arg, x in zip(session.get_inputs(), inputs, strict=True)}
    return lambda: session.run(None, feeds)[0]


def paired_medians(runs: dict, count: int) -> dict[str, float]:
    """Median seconds of each runner, run alternately `count` times after one warm-up each."""
    for run in runs.values():
        run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(count):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def measure(name: str, args: argparse.Namespace) -> str:
    kind, shape = SHAPES[name]
    module, flops = conv_module(*shape) if kind == "conv" else matmul_module(*shape)
    rng = np.random.default_rng(0)
    inputs = [
        rng.standard_normal(arg.type.get_shape(), dtype=np.float32)
        for arg in module.body.block.first_op.body.block.args
    ]
    pipeline = f"{FUSION_PIPELINE},schedule-kernels"
    if args.baseline:
        pipeline += "{contractions=false}"
    model = compile_module(module, pipeline, cache=False)
    model.set_num_threads(args.threads)
    (ours,) = model.run("main", *inputs)
    (reference,) = evaluate(module, "main", inputs)
    error = float(np.max(np.abs(ours - reference)))
    runs = {"ours": lambda: model.run("main", *inputs), "ort": ort_runner(module, inputs, 1)}
    if args.threads != 1:
        runs["ort"] = ort_runner(module, inputs, args.threads)
    seconds = paired_medians(runs, args.runs)
    ours_s, ort_s = seconds["ours"], seconds["ort"]
    return (
        f"| {name} | {ours_s * 1e3:.3f} | {flops / ours_s / 1e9:.0f} | {ort_s * 1e3:.3f} | "
        f"{flops / ort_s / 1e9:.0f} | {ort_s / ours_s:.2f} | {error:.1e} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--baseline", action="store_true")
    args = parser.parse_args()
    print(f"threads={args.threads}, medians of {args.runs} paired runs")
    print("| shape | ours ms | ours GFLOP/s | ort ms | ort GFLOP/s | ort/ours | max abs err |")
    print("|---|---|---|---|---|---|---|")
    for name in args.only:
        print(measure(name, args), flush=True)


if __name__ == "__main__":
    main()
