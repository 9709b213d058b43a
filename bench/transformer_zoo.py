"""The tiny transformer exports of `tests/models/` (`bench/export_transformers.py` makes them),
compiled natively and timed against onnxruntime.

    python bench/transformer_zoo.py [--models bert,gpt2,vit] [--variant static] [--rounds N]
                                 [--threads 1]

For each model: import and compile time (no compile cache), the check against onnxruntime on
random valid inputs (`max |ours - ort| <= RTOL * max |ort|` on every output), and the median
time of ours and onnxruntime's on the same thread count, paired (their runs take turns:
`timing.alternating_samples`). The test suite runs the same check
(`tests/frontend/test_transformer_models.py`, which shares the helpers below).

Inputs are what a tokenizer and an image processor give: token ids drawn uniformly from the
model's vocabulary (the rows of the embedding table they index), token type ids from its
token types, attention masks that keep a prefix of each sequence (at least one token) and
pad the rest, images of standard normal pixels.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import onnx  # noqa: E402

from bench.timing import alternating_samples  # noqa: E402

MODELS_DIR = ROOT / "tests" / "models"
MODELS = ("bert", "gpt2", "vit")
RTOL = 1e-4
"""The check: max |ours - ort| <= RTOL * max |ort|, output by output."""


def path_of(name: str, variant: str = "static") -> Path:
    return MODELS_DIR / f"{name}_{variant}.onnx"


def load(name: str, variant: str = "static") -> onnx.ModelProto:
    return onnx.load(str(path_of(name, variant)))


def _graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    initializers = {i.name for i in model.graph.initializer}
    return [x for x in model.graph.input if x.name not in initializers]


def embedding_rows(model: onnx.ModelProto, input_name: str) -> int:
    """The rows of the embedding table that input `input_name` indexes: the data of the
    `Gather` it reaches through reshapes (its valid ids are `[0, rows)`)."""
    tables = {i.name: i.dims for i in model.graph.initializer}
    names = {input_name}
    for node in model.graph.node:
        if (
            node.op_type in ("Reshape", "Unsqueeze", "Squeeze", "Flatten")
            and node.input[0] in names
        ):
            names.add(node.output[0])
        if node.op_type == "Gather" and node.input[1] in names and node.input[0] in tables:
            return int(tables[node.input[0]][0])
    raise ValueError(f"no embedding table is indexed by input '{input_name}'")


def _padding_mask(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    batch, length = shape
    kept = rng.integers(1, length + 1, batch)
    kept[0] = length  # one full sequence
    return (np.arange(length)[None, :] < kept[:, None]).astype(np.int64)


def random_inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """Valid inputs by name (module docstring), at the model's static shapes."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in _graph_inputs(model):
        shape = tuple(d.dim_value for d in value.type.tensor_type.shape.dim)
        if value.name == "attention_mask":
            feeds[value.name] = _padding_mask(rng, shape)
        elif value.type.tensor_type.elem_type == onnx.TensorProto.INT64:
            rows = embedding_rows(model, value.name)
            feeds[value.name] = rng.integers(0, rows, shape).astype(np.int64)
        else:
            feeds[value.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def onnxruntime_session(model: onnx.ModelProto, threads: int):
    """An onnxruntime session on `threads` threads (onnxruntime must be installed)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def output_names(model: onnx.ModelProto) -> list[str]:
    return [o.name for o in model.graph.output]


def relative_error(ours: np.ndarray, theirs: np.ndarray) -> float:
    """max |ours - theirs| / max |theirs|."""
    scale = float(np.max(np.abs(theirs)))
    return float(np.max(np.abs(ours.astype(np.float64) - theirs))) / scale


def _measure(name: str, args: argparse.Namespace) -> str:
    import fusion_compiler as fc

    model = load(name, args.variant)
    start = time.perf_counter()
    ours = fc.compile(path_of(name, args.variant), cache=False)
    compile_s = time.perf_counter() - start
    ours.set_num_threads(args.threads)
    session = onnxruntime_session(model, args.threads)
    feeds = random_inputs(model)
    got = ours.run(**feeds)
    expected = dict(zip(output_names(model), session.run(None, feeds), strict=True))
    error = max(relative_error(got[k], v) for k, v in expected.items())
    runs = [lambda: ours.run(**feeds), lambda: session.run(None, feeds)]
    for run in runs:  # warm up
        run()
    ours_s, ort_s = (
        statistics.median(t) for t in alternating_samples(runs, args.rounds, args.threads)
    )
    return (
        f"| {name} | {len(model.graph.node)} | {len(ours.kernels)} | {compile_s:.1f} | "
        f"{error:.1e} | {ours_s * 1e3:.3f} | {ort_s * 1e3:.3f} | {ours_s / ort_s:.2f} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--variant", default="static")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    print(f"{args.threads} thread(s), {args.rounds} rounds; load {os.getloadavg()[0]:.1f}")
    print("| model | nodes | kernels | compile s | max rel. error | ours ms | ort ms | ours/ort |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        print(_measure(name, args), flush=True)
    print(f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
