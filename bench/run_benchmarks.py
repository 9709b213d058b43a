"""Our fused and unfused builds side by side with numpy (op by op) and onnxruntime.

    python bench/run_benchmarks.py [--repeats N] [--threads 1|all|both] [--cases a,b]
                                   [--budget SECONDS] [--markdown bench/RESULTS.md]

Every case of `bench/cases.py` is one graph-dialect module. Our builds compile it with the
default pipeline and with fusion off (compile time reported apart, never timed with the runs);
numpy runs the case's op-by-op float32 implementation; onnxruntime, when installed, runs the
module exported by `bench/onnx_export.py`; on the cases with a matrix product, the `blas` build
(`fusion_compiler.driver.BLAS_PIPELINE`: products dispatched to OpenBLAS by
fuse-ops-by-pattern), when the `blas` extra is installed, runs alternately with our two. Each implementation's output is checked once against
the reference evaluator (max abs error column, `(!)` past `fusion-run --check`'s tolerance).
Times are medians of up to `--repeats` runs after a warm-up. Our fused and unfused builds and
onnxruntime run alternately (fused, unfused, blas, onnxruntime, fused, ...: a load change on the
shared machine hits all alike, `timing.alternating_samples`); numpy then runs in a block of
consecutive runs, set up just before it. Slow cases get fewer runs (each implementation about
`--budget` / 4 seconds, at least 3). Ratios divide the other implementation's time by our fused
build's time. Nothing is compared across processes.

onnxruntime was timed in a block of its own after ours until the VMs' speed was seen to drift
within a case: on a 2-core Zen 3, 1 thread, the transformer_block row measured onnxruntime /
fused 0.71, 0.91, 0.97 in three runs that way, and 1.06, 1.03, 1.01 with the two alternating in
one process (`alternating_samples`, 30 rounds); the ratio is what the benchmark is read for.

Each thread setting runs in a subprocess of this script, whose environment is set before numpy
is imported: `1` sets OMP/OPENBLAS/MKL/FUSION_NUM_THREADS=1 (and threadpoolctl limits, if
installed) and onnxruntime's intra_op_num_threads=1; `all` gives our builds, numpy and
onnxruntime every core. OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from that
environment (together), since they slow a current numpy.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
for _path in (str(ROOT), str(BENCH)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from timing import TURN_CALLS, alternating_samples  # noqa: E402

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "FUSION_NUM_THREADS")
SLOW_BLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
IMPLEMENTATIONS = ("fused", "unfused", "numpy", "onnxruntime", "blas")
MIN_REPEATS = 3
CORES = os.cpu_count() or 1


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=20, help="runs per median (default 20)")
    parser.add_argument("--threads", choices=("1", "all", "both"), default="both")
    parser.add_argument("--cases", help="comma-separated case names (default: every case)")
    parser.add_argument("--budget", type=float, default=5.0, help="seconds of runs per case")
    parser.add_argument("--markdown", metavar="FILE", help="also write the tables to FILE")
    parser.add_argument("--worker", metavar="JSON", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


# --- the worker: one thread setting, in its own process ------------------------------------------


def limit_threads(threads: str):
    """threadpoolctl's limit for the setting (None without threadpoolctl) and the BLAS info."""
    import numpy as np

    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        blas = np.__config__.CONFIG["Build Dependencies"]["blas"]
        return None, f"{blas['name']} {blas['version']} (threadpoolctl not installed)"
    limiter = threadpool_limits(limits=1 if threads == "1" else CORES)
    pools = [
        f"{p['internal_api']} {p['version']} ({p.get('architecture', '?')} kernels, "
        f"{p['num_threads']} thread{'s' if p['num_threads'] != 1 else ''})"
        for p in threadpool_info()
    ]
    return limiter, "; ".join(pools) or "none found"


def onnxruntime_runner(ort, module, inputs, threads: int):
    """A call of an onnxruntime session of `module` (exported to ONNX) on `threads` threads,
    sequential execution, CPU provider: the peer every benchmark measures against."""
    from onnx_export import export_function

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    model = export_function(module).SerializeToString()
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    feeds = {arg.name: x for arg, x in zip(session.get_inputs(), inputs, strict=True)}
    return lambda: session.run(None, feeds)[0]


def check_output(output, reference) -> dict:
    """Max abs error against the reference; whether it is within fusion-run's tolerance."""
    import numpy as np

    from fusion_compiler.tools.fusion_run import CHECK_ATOL_SCALE, CHECK_RTOL

    if output.shape != reference.shape:
        return {"error": float("inf"), "ok": False}
    error = np.abs(output.astype(np.float64) - reference)
    bound = CHECK_ATOL_SCALE * float(np.max(np.abs(reference))) + CHECK_RTOL * np.abs(reference)
    return {"error": float(np.max(error)), "ok": bool(np.all(error <= bound))}


def _run_count(warm_up: float, repeats: int, budget: float) -> int:
    """`repeats`, or fewer when one run takes long (the budget's share, at least MIN_REPEATS)."""
    share = budget / len(IMPLEMENTATIONS)
    return min(repeats, max(MIN_REPEATS, int(share / max(warm_up, 1e-9))))


def _timed(run) -> tuple[object, float]:
    start = time.perf_counter()
    output = run()
    return output, time.perf_counter() - start


def measure(run, repeats: int, budget: float) -> tuple[object, float, int]:
    """The output of a warm-up run, then the median seconds of consecutive runs and their
    count (`_run_count`)."""
    output, warm_up = _timed(run)
    count = _run_count(warm_up, repeats, budget)
    times = [_timed(run)[1] for _ in range(count)]
    return output, statistics.median(times), count


def measure_alternately(runs: dict, repeats: int, budget: float, threads: int = 1) -> dict:
    """`measure` for several implementations (on `threads` threads) whose runs take turns
    (`timing.alternating_samples`): what a ratio between them needs on a shared machine."""
    warm = {label: _timed(run) for label, run in runs.items()}
    count = _run_count(max(seconds for _, seconds in warm.values()), repeats, budget)
    rounds = -(-count // TURN_CALLS)  # about `count` samples of each
    samples = dict(
        zip(runs, alternating_samples(list(runs.values()), rounds, threads), strict=True)
    )
    return {label: (warm[label][0], statistics.median(samples[label]), count) for label in runs}


def measure_case(case, args: argparse.Namespace, ort) -> dict:
    from cases import random_inputs

    from fusion_compiler.dialects.reference.evaluator import evaluate
    from fusion_compiler.driver import (
        BLAS_PIPELINE,
        DEFAULT_PIPELINE,
        UNFUSED_PIPELINE,
        compile_module,
    )
    from fusion_compiler.lowering import blas_library

    module = case.build()
    inputs = random_inputs(module)
    (reference,) = evaluate(module, "main", inputs)
    compile_s, kernels = {}, {}

    def compiled(label: str, pipeline: str):
        start = time.perf_counter()
        model = compile_module(module, pipeline, cache=False)
        compile_s[label] = time.perf_counter() - start
        kernels[label] = len(model.kernels("main"))
        return lambda: model.run("main", *inputs)[0]

    # Our builds and onnxruntime run alternately: their ratios are the questions the benchmark
    # answers (module docstring). numpy is set up just before its own block of runs.
    paired = {
        "fused": compiled("fused", DEFAULT_PIPELINE),
        "unfused": compiled("unfused", UNFUSED_PIPELINE),
    }
    if has_matmul(module) and blas_library.is_installed():
        paired["blas"] = compiled("blas", BLAS_PIPELINE)
    threads = 1 if args.threads == "1" else CORES
    if ort is not None:
        paired["onnxruntime"] = onnxruntime_runner(ort, module, inputs, threads)
    measured = measure_alternately(paired, args.repeats, args.budget, threads)
    measured["numpy"] = measure(lambda: case.numpy(*inputs), args.repeats, args.budget)
    return {
        "case": case.name,
        "summary": case.summary,
        "ms": {label: 1e3 * seconds for label, (_, seconds, _) in measured.items()},
        "runs": {label: count for label, (_, _, count) in measured.items()},
        "check": {label: check_output(out, reference) for label, (out, _, _) in measured.items()},
        "kernels": kernels,
        "compile_s": compile_s,
    }


def has_matmul(module) -> bool:
    """Whether the case has a matrix product (the rows the `blas` build is measured on)."""
    from fusion_compiler.dialects.graph import MatmulOp

    return any(isinstance(op, MatmulOp) for op in module.walk())


def import_onnxruntime():
    try:
        import onnx  # noqa: F401  (the exporter needs it)
        import onnxruntime
    except ImportError:
        return None
    return onnxruntime


def worker(args: argparse.Namespace) -> None:
    import numpy as np
    from cases import BY_NAME

    _limiter, blas = limit_threads(args.threads)
    ort = import_onnxruntime()
    info = {
        "threads": args.threads,
        "numpy": f"numpy {np.__version__}, BLAS: {blas}",
        "onnxruntime": f"onnxruntime {ort.__version__}" if ort else "onnxruntime: not installed",
    }
    print(f"[threads={args.threads}] {info['numpy']}; {info['onnxruntime']}", flush=True)
    rows = []
    for name in args.cases.split(","):
        row = measure_case(BY_NAME[name], args, ort)
        times = ", ".join(f"{label} {ms:.3f} ms" for label, ms in row["ms"].items())
        print(f"[threads={args.threads}] {name}: {times}", flush=True)
        rows.append(row)
    Path(args.worker).write_text(json.dumps({"info": info, "rows": rows}))


# --- the driver: one worker per thread setting, then the tables ----------------------------------


def worker_environment(threads: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SLOW_BLAS_VARS}
    count = "1" if threads == "1" else str(CORES)
    env.update(dict.fromkeys(THREAD_VARS, count))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return env


def run_worker(threads: str, args: argparse.Namespace, cases: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--worker", str(out)]
        command += ["--threads", threads, "--repeats", str(args.repeats)]
        command += ["--budget", str(args.budget), "--cases", ",".join(cases)]
        subprocess.run(command, env=worker_environment(threads), check=True)
        return json.loads(out.read_text())


def fmt_ms(ms: float | None) -> str:
    if ms is None:
        return "–"
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.3g}"


def fmt_ratio(other: float | None, fused: float) -> str:
    if other is None:
        return "–"
    ratio = other / fused
    return f"{ratio:.2f}" if ratio >= 0.1 else f"{ratio:.3f}"


def fmt_errors(check: dict) -> str:
    parts = []
    for label in IMPLEMENTATIONS:
        if label in check:
            verdict = "" if check[label]["ok"] else " (!)"
            parts.append(f"{check[label]['error']:.1e}{verdict}")
    return " / ".join(parts)


HEADER = (
    "case",
    "fused ms",
    "unfused ms",
    "numpy ms",
    "onnxruntime ms",
    "unfused/fused",
    "numpy/fused",
    "onnxruntime/fused",
    "kernels fused/unfused",
    "max abs error fused / unfused / numpy / ort / blas",
    "compile s fused/unfused",
    "blas ms",
    "blas/fused",
)


def table_row(row: dict) -> list[str]:
    ms = row["ms"]
    fused = ms["fused"]
    return [
        row["case"],
        fmt_ms(fused),
        fmt_ms(ms["unfused"]),
        fmt_ms(ms["numpy"]),
        fmt_ms(ms.get("onnxruntime")),
        fmt_ratio(ms["unfused"], fused),
        fmt_ratio(ms["numpy"], fused),
        fmt_ratio(ms.get("onnxruntime"), fused),
        f"{row['kernels']['fused']}/{row['kernels']['unfused']}",
        fmt_errors(row["check"]),
        f"{row['compile_s']['fused']:.2f}/{row['compile_s']['unfused']:.2f}",
        fmt_ms(ms.get("blas")),
        fmt_ratio(ms.get("blas"), fused),
    ]


def markdown_table(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(table_row(row)) + " |" for row in rows]
    return "\n".join(lines)


SETTING_TITLES = {
    "1": "Single-threaded: our builds, numpy/BLAS and onnxruntime on 1 thread",
    "all": f"All cores: our builds, numpy/BLAS and onnxruntime on {CORES} threads",
}


def section(result: dict) -> str:
    info = result["info"]
    title = SETTING_TITLES[info["threads"]]
    return f"## {title}\n\n{info['numpy']}; {info['onnxruntime']}.\n\n" + markdown_table(
        result["rows"]
    )


def machine_line() -> str:
    import llvmlite.binding as llvm

    from fusion_compiler.lowering.jit import CodegenTarget

    host, target = llvm.get_host_cpu_name(), CodegenTarget.host().cpu
    compiled = "" if target == host else f", our code compiled for {target} (FUSION_TARGET_CPU)"
    return (
        f"{host} (llvmlite host CPU){compiled}, {CORES} cores, "
        f"{platform.system()} {platform.machine()}, Python {platform.python_version()}"
    )


def source_line() -> str:
    """The commit measured, and whether the work tree differed from it."""
    git = ["git", "-C", str(ROOT)]
    try:
        commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True)
        status = subprocess.run([*git, "status", "--porcelain", "-uno"], capture_output=True)
    except OSError:
        return "unknown (no git)"
    dirty = " plus uncommitted changes" if status.stdout.strip() else ""
    return commit.stdout.decode().strip() + dirty


def report(results: list[dict], args: argparse.Namespace, argv: list[str], load: str) -> str:
    command = " ".join(["python bench/run_benchmarks.py", *argv])
    today = datetime.date.today().isoformat()
    removed = [v for v in SLOW_BLAS_VARS if v in os.environ]
    notes = [
        f"Generated by `{command}` on {today}.",
        "",
        f"- Machine: {machine_line()}; load average {load} when the run started (the machine "
        "is shared: read medians and ratios, not single numbers).",
        f"- Source: commit {source_line()}.",
        f"- Times: medians in ms of up to {args.repeats} runs after a warm-up per "
        "implementation; our fused and unfused builds (and the blas build on the rows with a "
        "matrix product) and onnxruntime run alternately (fused, unfused, blas, onnxruntime, "
        "fused, ...), numpy in a block of consecutive runs; slow cases get "
        f"fewer runs (at least {MIN_REPEATS}, about {args.budget / len(IMPLEMENTATIONS):.2g} s "
        "each).",
        "- Ratios: the other implementation's time / our fused build's time (> 1: fused is "
        "faster).",
        "- blas: `BLAS_PIPELINE`, matrix products and their bias through OpenBLAS's "
        "`cblas_sgemm` (scipy-openblas32, pthreads, on the same thread count), the rest "
        "fused and scheduled as usual; – where a case has no product.",
        "- Errors: max abs difference from the reference evaluator; `(!)` marks one outside "
        "`fusion-run --check`'s tolerance.",
        "- numpy's gelu takes erf from `fusion_compiler.dialects.reference` (numpy has none).",
        f"- OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE: {'unset for the runs' if removed else 'not set'}.",
    ]
    cases = "\n".join(f"- `{row['case']}`: {row['summary']}" for row in results[0]["rows"])
    body = "\n\n".join(section(result) for result in results)
    return "# Benchmarks\n\n" + "\n".join(notes) + "\n\n" + body + "\n\nCases:\n\n" + cases + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_arguments(argv)
    if args.worker:
        worker(args)
        return 0
    from cases import BY_NAME  # (imports numpy: fine here, the workers have their own)

    cases = args.cases.split(",") if args.cases else list(BY_NAME)
    unknown = [name for name in cases if name not in BY_NAME]
    if unknown:
        print(f"unknown cases: {', '.join(unknown)} (known: {', '.join(BY_NAME)})")
        return 2
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    settings = ["1", "all"] if args.threads == "both" else [args.threads]
    results = [run_worker(threads, args, cases) for threads in settings]
    text = report(results, args, argv, load)
    print("\n" + text)
    if args.markdown:
        Path(args.markdown).write_text(text, encoding="utf-8")
        print(f"wrote {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
