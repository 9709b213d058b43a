"""ONNX layers the importer builds from other graph ops, ours against onnxruntime: 3-D
convolutions (one `conv2d` over the output's depths), 3-D pooling (strided slices) and
transposed convolutions (one convolution per output phase, `frontend/onnx_ops/`).

    python bench/onnx_layers.py [--threads 2] [--rounds 7] [--match TEXT ...] [--markdown FILE]

Each case is a one-node ONNX model (a Relu after the convolutions, as models have), its
weights random initializers, imported and compiled without the cache, checked against
onnxruntime (max abs error printed) and timed against it on the same thread count, in turns
(`bench/timing.alternating_samples`: each turn settles first, so that neither side's
spinning threads are timed in the other's runs). Medians in ms and the ratio of ours to
onnxruntime's (below 1: ours is faster). The machine may be shared: read the ratios and run a
surprising row again.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.timing import alternating_samples  # noqa: E402

CASES = {
    "conv3d 16->32 k3 pad1 8x56x56": (
        "Conv",
        [1, 16, 8, 56, 56],
        [32, 16, 3, 3, 3],
        {"pads": [1] * 6},
    ),
    "conv3d 64->64 k3 pad1 4x28x28": (
        "Conv",
        [1, 64, 4, 28, 28],
        [64, 64, 3, 3, 3],
        {"pads": [1] * 6},
    ),
    "maxpool3d k2 s2 64x8x56x56": (
        "MaxPool",
        [1, 64, 8, 56, 56],
        None,
        {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]},
    ),
    "avgpool3d k3 pad1 32x8x28x28": (
        "AveragePool",
        [1, 32, 8, 28, 28],
        None,
        {"kernel_shape": [3, 3, 3], "pads": [1] * 6},
    ),
    "convtranspose 64->32 k4 s2 28x28": (
        "ConvTranspose",
        [1, 64, 28, 28],
        [64, 32, 4, 4],
        {"strides": [2, 2], "pads": [1, 1, 1, 1]},
    ),
    "convtranspose 128->64 k3 s2 op1 14x14": (
        "ConvTranspose",
        [1, 128, 14, 14],
        [128, 64, 3, 3],
        {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]},
    ),
    "convtranspose 32->32 k3 s1 56x56": (
        "ConvTranspose",
        [1, 32, 56, 56],
        [32, 32, 3, 3],
        {"pads": [1, 1, 1, 1]},
    ),
}
"""name -> (op type, input shape, weight shape or None, attributes)."""


def case_model(op_type: str, x_shape, w_shape, attributes: dict, seed: int = 0):
    """The one-node model of a case (a Relu after a convolution), opset 19."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    inputs, initializers, nodes = ["x"], [], []
    if w_shape is not None:
        outputs = (
            w_shape[1] * attributes.get("group", 1) if op_type == "ConvTranspose" else w_shape[0]
        )
        weight = (rng.standard_normal(w_shape) * 0.1).astype(np.float32)
        bias = rng.standard_normal(outputs).astype(np.float32)
        initializers = [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")]
        inputs += ["w", "b"]
    nodes.append(helper.make_node(op_type, inputs, ["c"], **attributes))
    last = "c"
    if w_shape is not None:
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
        last = "y"
    graph = helper.make_graph(
        nodes,
        "layer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(last, TensorProto.FLOAT, None)],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def measure(name: str, threads: int, rounds: int) -> dict:
    """Our time and onnxruntime's (medians, ms) on case `name`, and the largest difference."""
    import onnxruntime as ort

    from fusion_compiler.driver import compile_module
    from fusion_compiler.frontend.onnx_importer import import_model

    op_type, x_shape, w_shape, attributes = CASES[name]
    model = case_model(op_type, x_shape, w_shape, attributes)
    x = np.random.default_rng(1).standard_normal(x_shape).astype(np.float32)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    compiled = compile_module(import_model(model), cache=False)
    compiled.set_num_threads(threads)
    (ours,) = compiled.run("main", x)
    error = float(np.abs(ours - session.run(None, {"x": x})[0]).max())
    mine, theirs = alternating_samples(
        [lambda: compiled.run("main", x), lambda: session.run(None, {"x": x})], rounds, threads
    )
    ours_ms, ort_ms = statistics.median(mine) * 1e3, statistics.median(theirs) * 1e3
    return {
        "case": name,
        "ours ms": ours_ms,
        "ort ms": ort_ms,
        "ours/ort": ours_ms / ort_ms,
        "max abs error": error,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--match", nargs="*", default=[])
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args(argv)
    names = [n for n in CASES if not args.match or any(m in n for m in args.match)]
    rows = [measure(name, args.threads, args.rounds) for name in names]
    lines = [
        f"{args.threads} thread(s), medians of {args.rounds} turns",
        "",
        "| case | ours ms | onnxruntime ms | ours/ort | max abs error |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['case']} | {row['ours ms']:.3f} | {row['ort ms']:.3f} | "
            f"{row['ours/ort']:.2f} | {row['max abs error']:.1e} |"
        )
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
