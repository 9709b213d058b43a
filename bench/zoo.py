"""The nine real models of the onnx wheel (`onnx/backend/test/data/light/`), compiled natively.

    python bench/zoo.py [--models squeezenet,resnet50] [--repeats N] [--budget SECONDS]
                        [--no-stored] [--cache] [--markdown FILE]

For each model, two checks and a timing:

- stored: the model as shipped (every weight a `ConstantOfShape` fill) on the input onnx's own
  backend test runner generates for it (`Runner.generate_dummy_data`: arange / n), against the
  stored expected output, with the runner's comparison and tolerances (`data/real/*/data.json`:
  rtol 1e-3, 2e-3 for DenseNet; atol 1e-7). Those outputs are mostly a flat 0.001: they prove
  that the model runs, not much more;
- random: every constant weight replaced by seeded random values scaled by fan-in (He), the
  logits (the input of the final Softmax) made the output, on a seeded normal input, against
  onnxruntime (onnx's ReferenceEvaluator without it) at a relative tolerance of `RTOL`:
  |ours - theirs| <= RTOL * max |theirs| everywhere;
- timing, on the random-weight model: import and compile time (no compile cache unless
  `--cache`), then ours and onnxruntime's on the same thread count, first 1 thread each, then
  every core each, in this same process: runs alternate (ours, theirs, ours, ...) after a
  warm-up of each, and the medians are compared (`ours / ort`: above 1, ours is slower).

The kernels columns count the kernels `main` launches without fusion (`UNFUSED_PIPELINE`,
passes only) and with it (the compiled model). The test suite runs the fast models
(`tests/frontend/test_zoo_native.py`, which shares the helpers below); this script runs all
nine (the large ones take minutes each while our conv and matmul kernels are naive).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

from bench.timing import (  # noqa: E402
    SETTLE_CALLS,
    TURN_CALLS,
    alternating_samples,
    settle_seconds,
)

DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
LIGHT = DATA / "light"
MODELS = (
    "squeezenet",
    "shufflenet",
    "inception_v1",
    "resnet50",
    "inception_v2",
    "densenet121",
    "bvlc_alexnet",
    "zfnet512",
    "vgg19",
)
"""The nine models, roughly from the cheapest to compile and run to the dearest."""

RTOL = 1e-4
"""The random-weight check: |ours - oracle| <= RTOL * max |oracle|."""

CORES = os.cpu_count() or 1


# --- models, inputs and expected outputs ---------------------------------------------------------


def load(name: str) -> onnx.ModelProto:
    return onnx.load(str(LIGHT / f"light_{name}.onnx"))


def input_infos(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    initializers = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in initializers]


def runner_inputs(model: onnx.ModelProto) -> list[np.ndarray]:
    """The inputs onnx's backend test runner feeds a light model (arange / n, seed 0)."""
    from onnx.backend.test.runner import Runner

    return [Runner.generate_dummy_data(x, seed=0, random=False) for x in input_infos(model)]


def stored_outputs(name: str) -> list[np.ndarray]:
    paths = sorted(LIGHT.glob(f"light_{name}_output_*.pb"))
    return [numpy_helper.to_array(onnx.load_tensor(str(p))) for p in paths]


def stored_tolerances(name: str) -> tuple[float, float]:
    """The runner's (rtol, atol) for the model (its defaults when data.json has none)."""
    path = DATA / "real" / f"test_{name}" / "data.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    return data.get("rtol", 1e-3), data.get("atol", 1e-7)


def check_stored(name: str, outputs: list[np.ndarray]) -> float:
    """Compare with the stored outputs as the runner does (raises AssertionError); returns
    the max abs error."""
    from onnx.backend.test.runner import Runner

    expected = stored_outputs(name)
    rtol, atol = stored_tolerances(name)
    Runner.assert_similar_outputs(expected, outputs, rtol=rtol, atol=atol)
    return max(float(np.max(np.abs(o - e))) for o, e in zip(outputs, expected, strict=True))


def randomise_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """A copy of `model` whose `ConstantOfShape` weights are seeded random initializers:
    kernels and matrices N(0, 2 / fan-in) (fan-in: the product of all dimensions but the
    first), per-channel vectors uniform in [0.5, 1.5], so activations stay of order one."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    rng = np.random.default_rng(seed)
    graph = model.graph
    shapes = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    kept, weights = [], []
    for node in graph.node:
        if node.op_type != "ConstantOfShape" or node.input[0] not in shapes:
            kept.append(node)
            continue
        shape = [int(d) for d in shapes[node.input[0]]]
        if len(shape) >= 2:
            values = rng.standard_normal(shape) * math.sqrt(2.0 / math.prod(shape[1:]))
        else:
            values = rng.uniform(0.5, 1.5, shape)
        weights.append(numpy_helper.from_array(values.astype(np.float32), node.output[0]))
    del graph.node[:]
    graph.node.extend(kept)
    graph.initializer.extend(weights)
    # IR version 3 (these models) wants every initializer listed as a graph input as well.
    graph.input.extend(
        onnx.helper.make_tensor_value_info(w.name, w.data_type, list(w.dims)) for w in weights
    )
    return model


def output_logits(model: onnx.ModelProto) -> onnx.ModelProto:
    """Make the input of the final Softmax the graph output (softmax of random logits
    saturates to one-hot vectors, which would hide errors)."""
    softmax = next((n for n in reversed(model.graph.node) if n.op_type == "Softmax"), None)
    if softmax is None:  # densenet121 ends with its logits
        return model
    (output,) = [o for o in model.graph.output if o.name == softmax.output[0]]
    logits = onnx.ValueInfoProto()
    logits.CopyFrom(output)  # Softmax keeps the shape
    logits.name = softmax.input[0]
    del model.graph.output[:]
    model.graph.output.extend([logits])
    return model


def random_model(name: str, seed: int = 0) -> onnx.ModelProto:
    return output_logits(randomise_weights(load(name), seed))


def random_inputs(model: onnx.ModelProto, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shapes = [[d.dim_value for d in x.type.tensor_type.shape.dim] for x in input_infos(model)]
    return [rng.standard_normal(shape).astype(np.float32) for shape in shapes]


def onnxruntime_session(model: onnx.ModelProto, threads: int):
    """An onnxruntime session on `threads` threads, or None when onnxruntime is missing."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # not the warnings about the unused shape initializers
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def oracle_outputs(model: onnx.ModelProto, inputs: list[np.ndarray]) -> tuple[str, list]:
    """The outputs of onnxruntime (or, without it, onnx's ReferenceEvaluator) and its name."""
    feeds = {x.name: a for x, a in zip(input_infos(model), inputs, strict=True)}
    session = onnxruntime_session(model, CORES)
    if session is not None:
        return "onnxruntime", session.run(None, feeds)
    from onnx.reference import ReferenceEvaluator

    return "reference", ReferenceEvaluator(model).run(None, feeds)


def relative_error(actual: np.ndarray, expected: np.ndarray) -> float:
    """max |actual - expected| / max |expected|."""
    scale = float(np.max(np.abs(expected)))
    return float(np.max(np.abs(actual.astype(np.float64) - expected))) / scale


# --- compiling and measuring ---------------------------------------------------------------------


def unfused_kernel_count(module) -> int:
    """The kernels `main` would launch without fusion (passes only, no LLVM)."""
    from fusion_compiler.driver import UNFUSED_PIPELINE, lower_to_entries

    _, kernels = lower_to_entries(module, UNFUSED_PIPELINE)
    return len(kernels["main"])


def compile_timed(model: onnx.ModelProto, name: str, cache: bool = False):
    """(compiled model, import seconds, compile seconds, graph-level module)."""
    from fusion_compiler.driver import DEFAULT_PIPELINE, compile_module
    from fusion_compiler.frontend.onnx_importer import import_model
    from fusion_compiler.frontend.progress import compile_progress, import_progress

    filename = f"light_{name}.onnx"
    start = time.perf_counter()
    with import_progress(len(model.graph.node), filename) as progress:
        module = import_model(model, filename=filename, progress=progress)
    imported = time.perf_counter()
    with compile_progress(DEFAULT_PIPELINE, filename) as instruments:
        compiled = compile_module(module, cache=cache, instruments=instruments)
    return compiled, imported - start, time.perf_counter() - imported, module


def paired_medians(runs, repeats: int, budget: float, threads: int = 1) -> list[float]:
    """The median seconds of each of `runs` (on `threads` threads), which take turns after a
    warm-up of each (`timing.alternating_samples`): up to `repeats` rounds, fewer when a
    round takes longer than `budget / repeats` (at least one)."""
    warm_ups = []
    for run in runs:
        start = time.perf_counter()
        run()
        warm_ups.append(time.perf_counter() - start)
    settle = settle_seconds(threads)
    per_round = sum(TURN_CALLS * w + max(SETTLE_CALLS * w, settle) for w in warm_ups)
    rounds = max(1, min(repeats, int(budget / max(per_round, 1e-9))))
    samples = alternating_samples(runs, rounds, threads)
    return [statistics.median(times) for times in samples]


THREADS = tuple(sorted({1, CORES}))
"""The thread counts both sides run on: one, then every core."""


@dataclass
class Row:
    model: str
    nodes: int = 0
    kernels_unfused: int = 0
    kernels_fused: int = 0
    import_s: float = 0.0
    compile_s: float = 0.0
    ours_ms: dict[int, float] = field(default_factory=dict)
    """By thread count, the median of our runs."""
    ort_ms: dict[int, float] = field(default_factory=dict)
    """By thread count, the median of onnxruntime's (paired with ours)."""
    stored_error: str = "–"
    random_error: str = "–"
    oracle: str = "–"
    load: float = 0.0
    """The 1-minute load average after the model's timings."""


def measure_model(name: str, args: argparse.Namespace) -> Row:
    row = Row(name, nodes=len(load(name).graph.node))
    model = random_model(name)
    compiled, row.import_s, row.compile_s, module = compile_timed(model, name, args.cache)
    row.kernels_fused = len(compiled.kernels("main"))
    row.kernels_unfused = unfused_kernel_count(module)
    inputs = random_inputs(model)
    (ours,) = compiled.run("main", *inputs)
    row.oracle, (expected,) = oracle_outputs(model, inputs)
    error = relative_error(ours, expected)
    row.random_error = f"{error:.1e}" + ("" if error <= RTOL else " (!)")
    feeds = {x.name: a for x, a in zip(input_infos(model), inputs, strict=True)}
    for threads in THREADS:
        compiled.set_num_threads(threads)
        runs = [lambda: compiled.run("main", *inputs)]
        session = onnxruntime_session(model, threads)
        if session is not None:
            runs.append(lambda s=session: s.run(None, feeds))
        seconds = paired_medians(runs, *args.timing, threads=threads)
        row.ours_ms[threads] = 1e3 * seconds[0]
        if session is not None:
            row.ort_ms[threads] = 1e3 * seconds[1]
    compiled.set_num_threads(0)
    row.load = os.getloadavg()[0]
    if not args.no_stored:
        row.stored_error = stored_check(name)
    return row


def stored_check(name: str) -> str:
    """The stored-output check of the shipped model: its max abs error, `(!)` if it fails."""
    model = load(name)
    compiled, *_ = compile_timed(model, name)
    outputs = compiled.run("main", *runner_inputs(model))
    try:
        return f"{check_stored(name, outputs):.1e}"
    except AssertionError:
        error = max(
            float(np.max(np.abs(o - e))) for o, e in zip(outputs, stored_outputs(name), strict=True)
        )
        return f"{error:.1e} (!)"


# --- the table -----------------------------------------------------------------------------------


def fmt_ms(ms: float | None) -> str:
    if ms is None:
        return "–"
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.3g}"


def ratio(row: Row, threads: int) -> str:
    """ours / onnxruntime time on `threads` threads (above 1: ours is slower)."""
    ours, theirs = row.ours_ms.get(threads), row.ort_ms.get(threads)
    if ours is None or not theirs:
        return "–"
    return f"{ours / theirs:.2f}"


def _threads(count: int) -> str:
    return f"{count} thread" + ("" if count == 1 else "s")


def header() -> list[str]:
    timing = [
        f"{side} {_threads(t)} ms" if side != "ours/ort" else f"ours/ort {_threads(t)}"
        for t in THREADS
        for side in ("ours", "ort", "ours/ort")
    ]
    return [
        "model",
        "nodes",
        "kernels unfused",
        "kernels fused",
        "import s",
        "compile s",
        *timing,
        "load",
        "stored: max abs error",
        "random: max rel error",
    ]


def table_row(row: Row) -> list[str]:
    timing = [
        cell
        for t in THREADS
        for cell in (fmt_ms(row.ours_ms.get(t)), fmt_ms(row.ort_ms.get(t)), ratio(row, t))
    ]
    return [
        row.model,
        str(row.nodes),
        str(row.kernels_unfused),
        str(row.kernels_fused),
        f"{row.import_s:.2f}",
        f"{row.compile_s:.1f}",
        *timing,
        f"{row.load:.1f}",
        row.stored_error,
        f"{row.random_error} vs {row.oracle}",
    ]


def markdown_table(rows: list[Row]) -> str:
    names = header()
    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    lines += ["| " + " | ".join(table_row(row)) + " |" for row in rows]
    return "\n".join(lines)


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", help=f"comma-separated (default: {','.join(MODELS)})")
    parser.add_argument(
        "--repeats", type=int, default=5, help="timed rounds (ours, theirs) per median"
    )
    parser.add_argument(
        "--budget", type=float, default=10.0, help="seconds of timed rounds per thread count"
    )
    parser.add_argument("--no-stored", action="store_true", help="skip the stored-output check")
    parser.add_argument(
        "--cache",
        action="store_true",
        help="use the compile cache (for timing runs again: compile s is then a cache hit)",
    )
    parser.add_argument("--markdown", metavar="FILE", help="also write the table to FILE")
    args = parser.parse_args(argv)
    args.timing = (args.repeats, args.budget)
    return args


def _load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    models = args.models.split(",") if args.models else list(MODELS)
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        print(f"unknown models: {', '.join(unknown)} (known: {', '.join(MODELS)})")
        return 2
    print(f"load average {_load_average()} on {CORES} cores")
    rows = []
    for name in models:
        row = measure_model(name, args)
        print(" ".join(f"{k}={v}" for k, v in zip(header(), table_row(row), strict=True)))
        sys.stdout.flush()
        rows.append(row)
    table = markdown_table(rows)
    print("\n" + table + f"\n\nload average {_load_average()}")
    if args.markdown:
        Path(args.markdown).write_text(table + "\n", encoding="utf-8")
    failed = [r.model for r in rows if "(!)" in r.stored_error or "(!)" in r.random_error]
    if failed:
        print(f"\nmismatches: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
