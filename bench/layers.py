"""Every distinct convolution and matmul of the zoo, and BERT-base's: ours against onnxruntime.

    python bench/layers.py [--threads 1] [--runs 9] [--only NAME ...] [--match TEXT ...]
                           [--models resnet50,vgg19] [--no-zoo] [--no-bert] [--pools]
                           [--schedule OPTIONS] [--against OPTIONS] [--baseline]
                           [--weights-as-inputs]
                           [--peak GFLOPS] [--list] [--markdown FILE]

Shapes: every `Conv`, `Gemm` and `MatMul` node of the nine zoo models (`bench/zoo.py`; the
ONNX files ship with the onnx wheel), after ONNX shape inference, deduplicated (the `models`
column says where each occurs, with its count), plus BERT-base's matmuls (128x768x768,
128x768x3072, 128x3072x768, attention 12x128x64 @ 12x64x128). Each shape becomes one graph
function, as in the model after fusion: conv2d + bias + relu, matmul + bias (a Gemm with
`transB` is measured as the matmul of the same sizes with B already K x N: a constant
weight's transpose is folded at compile time). Weights and biases are constants of the
function, as in the models (random, seeded): onnxruntime gets them as initializers and
prepacks them when its session is created, we pack them when the model is loaded
(prepack-weights). `--weights-as-inputs` makes them function inputs on both sides, so
both pack them at every run. onnxruntime's time of a convolution alone includes the
reorders of its input and output to and from its blocked layout (NCHWc), which a model pays
once at its ends: conv1x1 256x14x14 -> 1024 + add + relu, 1 thread, profiled (Zen 4): its
convolution 0.94 ms, the reorders 0.06, the add and relu, left apart, 0.09 (1.13 ms in
all); in resnet50 the same convolution with its residual add fused took it 0.98 ms, ours 1.28.
Compare models (`bench/zoo.py`) before concluding from a row here.

Both sides run on the same thread count (`--threads`, default 1), alternately (ours, ort,
ours, ...) after a warm-up each, and the medians are printed: ms, GFLOP/s (2 flops per
multiply-add of the contraction), % of this core's FMA peak (`--peak` or measured here by
`fma_peak.py`, times the thread count), and the ratio ort time / our time (>= 1: ours is at
least as fast), of the medians and of the fastest runs ("best": robust to a loaded machine,
where being descheduled slows a run by whole multiples). Our output is checked against onnxruntime's (max abs error printed).
`--pools` adds every distinct MaxPool and AveragePool of the zoo (their "FLOPs" are one per
window element, and the % of peak means little). `--schedule OPTIONS` compiles ours with
those schedule-kernels options; `--against OPTIONS` also builds ours with other options
(`deinterleave=false`: without that stage), checks that it computes the same bits, and times
it in the same turns as the other two (the columns `against ms` and `against/ours`: above 1,
the default build is faster); `--baseline` is `--schedule contractions=false` (before register
tiling).
The machine may be shared: read the ratios, run a surprising row again, and say the load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from timing import TURN_CALLS, alternating_samples  # noqa: E402
from xdsl.dialects import func  # noqa: E402
from xdsl.dialects.builtin import ModuleOp  # noqa: E402
from xdsl.ir import Block, Region  # noqa: E402

from fusion_compiler.dialects import graph  # noqa: E402
from fusion_compiler.dialects.graph.base import tensor_type  # noqa: E402
from fusion_compiler.driver import FUSION_PIPELINE, compile_module  # noqa: E402
from fusion_compiler.passes.fold_constants.elements import dense_of  # noqa: E402


@dataclass(frozen=True)
class Conv:
    """conv2d (N=1, NCHW) + bias + relu."""

    c: int
    h: int
    w: int
    o: int
    kh: int
    kw: int
    stride: tuple[int, int] = (1, 1)
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)
    """(top, left, bottom, right)"""
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1

    @property
    def output(self) -> tuple[int, int]:
        (sh, sw), (dh, dw), (t, left, b, r) = self.stride, self.dilation, self.pads
        oh = (self.h + t + b - dh * (self.kh - 1) - 1) // sh + 1
        ow = (self.w + left + r - dw * (self.kw - 1) - 1) // sw + 1
        return oh, ow

    @property
    def name(self) -> str:
        text = f"conv{self.kh}x{self.kw}_{self.c}x{self.h}x{self.w}_o{self.o}"
        if self.stride != (1, 1):
            text += f"_s{self.stride[0]}" + (
                "" if len(set(self.stride)) == 1 else f"x{self.stride[1]}"
            )
        if any(self.pads) and set(self.pads) != {(self.kh - 1) // 2}:
            text += "_p" + "-".join(map(str, self.pads))
        if self.dilation != (1, 1):
            text += f"_d{self.dilation[0]}"
        if self.groups > 1:
            text += "_dw" if self.groups == self.c == self.o else f"_g{self.groups}"
        return text

    @property
    def flops(self) -> float:
        oh, ow = self.output
        return 2.0 * self.o * oh * ow * (self.c // self.groups) * self.kh * self.kw

    def module(self, constant_weights: bool = True) -> ModuleOp:
        shapes = [(1, self.c, self.h, self.w), (self.o, self.c // self.groups, self.kh, self.kw)]
        block, (x, w, b) = _operands([*shapes, (1, self.o, 1, 1)], constant_weights)
        conv = graph.Conv2DOp(x, w, self.stride, self.pads, self.dilation, self.groups)
        add = graph.AddOp(conv.result, b)
        relu = graph.ReluOp(add.result)
        block.add_ops([conv, add, relu, func.ReturnOp(relu.result)])
        return _module(block, relu.result.type)


@dataclass(frozen=True)
class Pool:
    """max_pool2d or avg_pool2d (N=1, NCHW) alone."""

    kind: str
    """"max" or "avg"."""
    c: int
    h: int
    w: int
    kh: int
    kw: int
    stride: tuple[int, int] = (1, 1)
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)
    """(top, left, bottom, right), ceil_mode's extra rows and columns included"""
    count_include_pad: bool = False

    @property
    def output(self) -> tuple[int, int]:
        (sh, sw), (t, left, b, r) = self.stride, self.pads
        return (self.h + t + b - self.kh) // sh + 1, (self.w + left + r - self.kw) // sw + 1

    @property
    def name(self) -> str:
        text = f"{self.kind}pool{self.kh}x{self.kw}_{self.c}x{self.h}x{self.w}"
        if self.stride != (1, 1):
            text += f"_s{self.stride[0]}"
        if any(self.pads):
            text += "_p" + "-".join(map(str, self.pads))
        return text + ("_incl" if self.count_include_pad else "")

    @property
    def flops(self) -> float:
        oh, ow = self.output
        return float(self.c * oh * ow * self.kh * self.kw)

    def module(self, constant_weights: bool = True) -> ModuleOp:
        block = Block(arg_types=[tensor_type((1, self.c, self.h, self.w))])
        window = ((self.kh, self.kw), self.stride, self.pads)
        if self.kind == "max":
            op: graph.Pool2DOp = graph.MaxPool2DOp(block.args[0], *window)
        else:
            op = graph.AvgPool2DOp(block.args[0], *window, self.count_include_pad)
        block.add_ops([op, func.ReturnOp(op.result)])
        return _module(block, op.result.type)


@dataclass(frozen=True)
class Matmul:
    """(batched) matmul + bias: [b,] m x k @ [b,] k x n."""

    b: int
    m: int
    k: int
    n: int

    @property
    def name(self) -> str:
        lead = f"{self.b}x" if self.b > 1 else ""
        return f"matmul_{lead}{self.m}x{self.k}x{self.n}"

    @property
    def flops(self) -> float:
        return 2.0 * self.b * self.m * self.k * self.n

    def module(self, constant_weights: bool = True) -> ModuleOp:
        lead = (self.b,) if self.b > 1 else ()
        shapes = [(*lead, self.m, self.k), (*lead, self.k, self.n), (self.n,)]
        block, (a, b, bias) = _operands(shapes, constant_weights)
        mm = graph.MatmulOp(a, b)
        add = graph.AddOp(mm.result, bias)
        block.add_ops([mm, add, func.ReturnOp(add.result)])
        return _module(block, add.result.type)


def _operands(shapes, constant_weights: bool) -> tuple[Block, list]:
    """A block taking the first operand (all of them without `constant_weights`), the others
    random constants (seeded by their shapes)."""
    if not constant_weights:
        block = Block(arg_types=[tensor_type(shape) for shape in shapes])
        return block, list(block.args)
    block = Block(arg_types=[tensor_type(shapes[0])])
    values = [block.args[0]]
    for index, shape in enumerate(shapes[1:]):
        rng = np.random.default_rng([index, *shape])
        array = rng.standard_normal(shape, dtype=np.float32)
        constant = graph.ConstantOp(dense_of(array, tensor_type(shape)))
        block.add_op(constant)
        values.append(constant.result)
    return block, values


def _module(block: Block, result_type) -> ModuleOp:
    signature = ([arg.type for arg in block.args], [result_type])
    return ModuleOp([func.FuncOp("main", signature, Region(block))])


BERT = {
    Matmul(1, 128, 768, 768): "bert(qkv,out)",
    Matmul(1, 128, 768, 3072): "bert(ffn1)",
    Matmul(1, 128, 3072, 768): "bert(ffn2)",
    Matmul(12, 128, 64, 128): "bert(attention)",
}


Shape = Conv | Pool | Matmul


@dataclass
class Layer:
    shape: Shape
    where: dict[str, int] = field(default_factory=dict)
    """model -> occurrences"""

    @property
    def models(self) -> str:
        return ",".join(f"{m}x{n}" if n > 1 else m for m, n in self.where.items())


def _pool_shape(node, attributes: dict, operand: list[int]) -> Pool | None:
    from fusion_compiler.frontend.onnx_ops.conv_pool import ceil_mode_ends

    kernel = list(attributes["kernel_shape"])
    if len(kernel) != 2 or attributes.get("auto_pad", b"NOTSET") != b"NOTSET":
        return None
    _, c, h, w = operand
    strides = list(attributes.get("strides", (1, 1)))
    pads = list(attributes.get("pads", [0, 0, 0, 0]))
    if attributes.get("ceil_mode"):
        pads[2:] = ceil_mode_ends([h, w], kernel, strides, pads[:2], pads[2:])
    kind = "max" if node.op_type == "MaxPool" else "avg"
    include = bool(attributes.get("count_include_pad", 0))
    return Pool(kind, c, h, w, *kernel, tuple(strides), tuple(pads), include)


def _node_shape(node, shapes: dict[str, list[int]]) -> Shape | None:
    from onnx import helper

    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    operands = [shapes.get(name) for name in node.input]
    if node.op_type in POOLS:
        operand = operands[0]
        return None if not operand or 0 in operand else _pool_shape(node, attributes, operand)
    if any(s is None or 0 in s for s in operands[:2]):
        return None
    if node.op_type == "Conv":
        (_, c, h, w), (o, _, kh, kw) = operands[0], operands[1]
        pads = attributes.get("pads", [0, 0, 0, 0])
        return Conv(
            c,
            h,
            w,
            o,
            kh,
            kw,
            tuple(attributes.get("strides", (1, 1))),
            (pads[0], pads[1], pads[2], pads[3]),
            tuple(attributes.get("dilations", (1, 1))),
            attributes.get("group", 1),
        )
    a, b = operands[0], operands[1]
    if node.op_type == "Gemm":
        m, k = (a[1], a[0]) if attributes.get("transA") else (a[0], a[1])
        n = b[0] if attributes.get("transB") else b[1]
        return Matmul(1, m, k, n)
    if len(a) == 2 and len(b) == 2:  # MatMul
        return Matmul(1, a[0], a[1], b[1])
    return None


POOLS = ("MaxPool", "AveragePool")
CONTRACTIONS = ("Conv", "Gemm", "MatMul")


def zoo_layers(models, pools: bool = False) -> dict[Shape, Layer]:
    """The distinct contractions of `models` (and pools, with `pools`), in order of first
    appearance."""
    import zoo
    from onnx import shape_inference

    kinds = CONTRACTIONS + (POOLS if pools else ())
    layers: dict[Shape, Layer] = {}
    for name in models:
        model = shape_inference.infer_shapes(zoo.load(name))
        values = [*model.graph.value_info, *model.graph.input, *model.graph.output]
        shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in values}
        shapes |= {i.name: list(i.dims) for i in model.graph.initializer}
        for node in model.graph.node:
            if node.op_type not in kinds:
                continue
            shape = _node_shape(node, shapes)
            if shape is not None:
                where = layers.setdefault(shape, Layer(shape)).where
                where[name] = where.get(name, 0) + 1
    return layers


def all_layers(args: argparse.Namespace) -> list[Layer]:
    layers = zoo_layers(args.models, args.pools) if args.zoo else {}
    if args.bert:
        for shape, where in BERT.items():
            layers.setdefault(shape, Layer(shape)).where[where] = 1
    chosen = list(layers.values())
    if args.only:
        known = {layer.shape.name: layer for layer in chosen}
        missing = [name for name in args.only if name not in known]
        if missing:
            raise SystemExit(f"layers.py: unknown shape(s) {', '.join(missing)} (see --list)")
        chosen = [known[name] for name in args.only]
    if args.match:
        chosen = [x for x in chosen if any(text in x.shape.name for text in args.match)]
    return chosen


def ort_runner(module: ModuleOp, inputs, threads: int):
    import onnxruntime as ort
    from run_benchmarks import onnxruntime_runner

    return onnxruntime_runner(ort, module, inputs, threads)


def paired_times(runs: dict, count: int, threads: int = 1) -> dict[str, list[float]]:
    """About `count` samples of each runner (on `threads` threads), which take turns after
    one warm-up each (`timing.alternating_samples`)."""
    for run in runs.values():
        run()
    rounds = -(-count // TURN_CALLS)
    samples = alternating_samples(list(runs.values()), rounds, threads)
    return dict(zip(runs, samples, strict=True))


def inputs_of(module: ModuleOp) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    args = module.body.block.first_op.body.block.args
    return [rng.standard_normal(arg.type.get_shape(), dtype=np.float32) for arg in args]


def _build(module: ModuleOp, options: str, threads: int):
    braces = "{" + options + "}" if options else ""
    model = compile_module(module, f"{FUSION_PIPELINE},schedule-kernels{braces}", cache=False)
    model.set_num_threads(threads)
    return model


def measure(layer: Layer, args: argparse.Namespace, peak: float) -> str:
    module = layer.shape.module(not args.weights_as_inputs)
    inputs = inputs_of(module)
    model = _build(module, args.schedule, args.threads)
    ort = ort_runner(module, inputs, args.threads)
    (ours,) = model.run("main", *inputs)
    error = float(np.max(np.abs(ours - ort())))
    runs = max(3, min(args.runs, int(2.0 / max(layer.shape.flops / 20e9, 1e-6))))
    runners = {"ours": lambda: model.run("main", *inputs), "ort": ort}
    if args.against is not None:
        other = _build(module, args.against, args.threads)
        (theirs,) = other.run("main", *inputs)
        if not np.array_equal(theirs, ours):
            raise SystemExit(f"layers.py: {layer.shape.name}: --against changes the results")
        runners["against"] = lambda: other.run("main", *inputs)
    times = paired_times(runners, runs, args.threads)
    ours_s, ort_s = (statistics.median(times[name]) for name in ("ours", "ort"))
    best = min(times["ort"]) / min(times["ours"])
    flops = layer.shape.flops
    cells = [layer.shape.name, layer.models]
    for s in (ours_s, ort_s):
        cells += [f"{s * 1e3:.3f}", f"{flops / s / 1e9:.1f}", f"{100 * flops / s / peak:.0f}"]
    cells += [f"{ort_s / ours_s:.2f}", f"{best:.2f}", f"{error:.1e}"]
    if args.against is not None:
        against_s = statistics.median(times["against"])
        cells += [f"{against_s * 1e3:.3f}", f"{against_s / ours_s:.2f}"]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| shape | models | ours ms | ours GFLOP/s | ours % peak | ort ms | ort GFLOP/s | "
    "ort % peak | ort/ours | best ort/ours | max abs diff |"
)
AGAINST_HEADER = " against ms | against/ours |"


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    import zoo

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=9, help="most paired runs per shape")
    parser.add_argument("--only", nargs="*", default=[], help="shape names (see --list)")
    parser.add_argument("--match", nargs="*", default=[], help="shapes whose name contains any")
    parser.add_argument("--models", default=",".join(zoo.MODELS))
    parser.add_argument("--no-zoo", dest="zoo", action="store_false")
    parser.add_argument("--no-bert", dest="bert", action="store_false")
    parser.add_argument("--pools", action="store_true", help="the zoo's pools too")
    parser.add_argument("--schedule", default="", help="schedule-kernels options for ours")
    parser.add_argument("--baseline", action="store_true", help="--schedule contractions=false")
    parser.add_argument(
        "--against",
        metavar="OPTIONS",
        help="also time ours with these schedule-kernels options instead, in the same turns",
    )
    parser.add_argument(
        "--weights-as-inputs", action="store_true", help="weights and biases as function inputs"
    )
    parser.add_argument("--peak", type=float, default=0.0, help="FMA peak GFLOP/s of one core")
    parser.add_argument("--list", action="store_true", help="print the shapes and exit")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args(argv)
    args.models = [m for m in args.models.split(",") if m]
    unknown = [m for m in args.models if m not in zoo.MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(zoo.MODELS)}")
    if args.threads < 1 or args.runs < 1:
        parser.error("--threads and --runs must be at least 1")
    if args.baseline:
        args.schedule = " ".join(filter(None, [args.schedule, "contractions=false"]))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    layers = all_layers(args)
    if args.list:
        for layer in layers:
            print(f"{layer.shape.name}  {layer.models}  {layer.shape.flops / 1e6:.1f} MFLOP")
        return 0
    from fma_peak import fma_peak_gflops

    from fusion_compiler.lowering.jit import CodegenTarget

    peak = (args.peak or fma_peak_gflops()) * args.threads * 1e9
    load = os.getloadavg()[0]
    target = CodegenTarget.host()
    lines = [
        f"threads={args.threads}, medians of up to {args.runs} paired runs, FMA peak "
        f"{peak / 1e9:.0f} GFLOP/s ({args.threads} core(s)), load average {load:.2f}, "
        f"ours compiled for {target.cpu}"
        + (f", schedule-kernels{{{args.schedule}}}" if args.schedule else "")
        + (", weights as inputs" if args.weights_as_inputs else ", constant weights"),
        "",
        HEADER + (AGAINST_HEADER if args.against is not None else ""),
        "|---" * (11 + (2 if args.against is not None else 0)) + "|",
    ]
    print("\n".join(lines), flush=True)
    for layer in layers:
        lines.append(measure(layer, args, peak))
        print(lines[-1], flush=True)
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
