"""Compile time and peak memory per zoo model, stage by stage, from `.onnx` to native code.

    python bench/compile_time.py [--models squeezenet,resnet50] [--rounds N] [--markdown FILE]

Each model (`bench/zoo.py`'s random-weight version: real initializers, not fills) is written
to an `.onnx` file, then, each step in a fresh process with an empty compile cache of its own:

- cold: `fusion-import` to an `.mlir` file as the command line does, parse it, compile it
  (every pass, lower-graph, convert-loop-to-llvm, then LLVM: translation to LLVM IR,
  optimisation, machine code); the seconds of each stage are printed;
- hit: the same `.mlir` compiled again in a new process, as `compile_file` and `fusion-run`
  do: a hit of the cache's file level (`file_cache`), which parses nothing;
- hit process: the same hit as the wall time of a whole new Python process that calls
  `compile_file` on the `.mlir` and exits, as a script that loads the model through the API
  waits before its first run (`fusion-run` parses the file besides: its inputs and checks
  read the IR): the interpreter's start, the modules' imports, the hit, the exit (median of
  three), and of a process that only imports those modules (the imports' share);
- fusion-run: the wall time of `fusion-run FILE --random-inputs` in a new process (median of
  three, after one that parses the file and keeps what a run reads of it, `run_facts`): what
  a user of the command line waits for to run a model the cache holds once, its inference
  included (vgg19's is 0.1-0.15 s of it);
- op edit: one op of the model changed (the middle `Relu` made a `Sigmoid`), imported over
  the cold run's `.mlir` (as a user imports an edited model again) and compiled with the
  cache of the cold run: what a user who edits the graph waits for (the import writes no
  weight, `WeightsWriter`'s update in place; the graph passes run again; the schedule memo
  and the cache hold every kernel but the edited one, which alone is scheduled and
  compiled);
- edit: its largest weight changed instead (the original graph), imported over the same
  `.mlir` and compiled: what a user who retrains or edits weights waits for (the import
  appends the edited weight to the weights file; the load entry packs it again).

The CPU seconds of each step (its process's and its compile workers', user and system) are
printed beside its wall time: what the step costs, which a neighbour's load on a shared
machine does not stretch. Peak memory is the process's maximum resident set (`VmHWM`), which includes the Python
interpreter and the libraries (about 130 MB before any model is read); the peak of a compile
is counted from the end of the import (which `fusion-import` does in its own process), and the
import's own peak is printed apart. `weights MB` is the
size of the model's initializers; `cache MB` what each step added to the compile cache (an
edit should store only what changed: the edited weight, the edited kernel). Timings on a shared machine vary: compare runs made
side by side. On a virtual machine whose memory the host backs on first touch (about a second
per GB on the Zen 3 VMs), a step's import of a weight-heavy model is faster when the step
before it freed memory, whose pages it takes: a compile that wastes less makes the next
import look slower. Compare two builds in both orders.

`--rounds N` runs the steps N times per model, each round from an empty cache of its own (the
same `.onnx` files), and the table gives medians: per step the round of median wall time (its
stages, CPU and memory), and the edits' shares of the cold compile as the median of each
round's edit over that round's cold compile (a stretch of a slower host slows both). On these
shared virtual machines one run moves by up to 1.5x; a share near a limit needs rounds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import import_module
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.zoo import MODELS  # noqa: E402

MODES = ("cold", "hit", "op edit", "edit")


def write_models(name: str, directory: Path) -> tuple[Path, Path, Path, float]:
    """The random-weight model, a copy with one weight changed and a copy with one op changed,
    as `.onnx` files, and the megabytes of its weights."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    from bench.zoo import random_model

    model = random_model(name)
    original = directory / f"{name}.onnx"
    onnx.save(model, str(original))
    megabytes = sum(numpy_helper.to_array(i).nbytes for i in model.graph.initializer) / 2**20
    relus = [node for node in model.graph.node if node.op_type == "Relu"]
    relus[len(relus) // 2].op_type = "Sigmoid"
    op_edited = directory / f"{name}_op_edited.onnx"
    onnx.save(model, str(op_edited))
    relus[len(relus) // 2].op_type = "Relu"
    weights = max(model.graph.initializer, key=lambda i: np.prod(i.dims))
    array = numpy_helper.to_array(weights).copy()
    array.flat[0] += 1.0
    weights.CopyFrom(numpy_helper.from_array(array, weights.name))
    edited = directory / f"{name}_edited.onnx"
    onnx.save(model, str(edited))
    return original, edited, op_edited, megabytes


def measure(onnx_path: Path, mlir: Path, skip_import: bool) -> dict:
    """Import `onnx_path` to `mlir` (unless `skip_import`: the `.mlir` exists), parse and
    compile; the seconds of each stage and the peak memory of this process."""
    from fusion_compiler.driver import (
        DEFAULT_PIPELINE,
        cache_pipeline,
        compile_module,
        parse_read_source,
        read_source,
    )
    from fusion_compiler.instruments import PassTimer
    from fusion_compiler.lowering import file_cache
    from fusion_compiler.tools import fusion_import

    if not skip_import:  # (the modules a parse and a compile need, loaded before the clock
        # starts, as the driver loaded them until it left them to a compile: the steps time
        # the compiler's work, the `hit process` column a process's whole cost; the dialects
        # a parse loads when it meets them, `LATE_DIALECTS`, included)
        import_module("fusion_compiler.dialects.context").load_every_dialect()
        import_module("fusion_compiler.passes.pipeline_pass")

    stages: list[tuple[str, float]] = []
    import_peak = 0.0
    cpu_start = cpu_seconds()
    start = time.perf_counter()
    if not skip_import:
        status = fusion_import.main([str(onnx_path), "-o", str(mlir)])
        assert status == 0, f"fusion-import failed on {onnx_path}"
        stages.append(("import", time.perf_counter() - start))
        import_peak = peak_megabytes()
        reset_peak()  # the compile's peak from here, as if `fusion-import` ran apart
    started = time.perf_counter()
    source = read_source(mlir)
    compiled = file_cache.load(source, cache_pipeline(DEFAULT_PIPELINE))
    if compiled is not None:
        stages.append(("file hit", time.perf_counter() - started))
    else:
        module = parse_read_source(source)
        stages.append(("parse", time.perf_counter() - started))
        timer = PassTimer()
        llvm_stages: list[tuple[str, float]] = []
        compiled = compile_module(module, instruments=[timer], timings=llvm_stages, source=source)
        stages += timer.timings + llvm_stages
    total = time.perf_counter() - start
    cpu = cpu_seconds() - cpu_start
    peak = peak_megabytes()
    return {
        "stages": stages,
        "total": total,
        "cpu_s": cpu,
        "peak_mb": peak,
        "import_peak_mb": import_peak,
        "from_cache": compiled.from_cache,
        "mlir_mb": mlir.stat().st_size / 2**20,
    }


def cpu_seconds() -> float:
    """The CPU seconds (user and system) of this process and of its children that ended (the
    compile's worker processes): the work a compile does, steadier than its wall time on a
    shared machine, where a neighbour's load stretches the wall time but not the work."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def peak_megabytes() -> float:
    """This process's peak resident set: `VmHWM`, which starts afresh at exec (`ru_maxrss`
    would include the parent's peak at fork time), or `ru_maxrss` where there is no /proc."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    (line,) = [line for line in status.splitlines() if line.startswith("VmHWM:")]
    return int(line.split()[1]) / 1024


def reset_peak() -> None:
    """Restarts `VmHWM` from the current resident set (Linux 4.0 and later; else nothing)."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def run_worker(onnx_path: Path, mlir: Path, cache: Path, skip_import: bool) -> dict:
    """`measure` in a fresh process whose compile cache is `cache`."""
    environment = {**os.environ, "FUSION_CACHE_DIR": str(cache), "FUSION_PROGRESS": "0"}
    command = [sys.executable, __file__, "--worker", str(onnx_path), "--mlir", str(mlir)]
    if skip_import:
        command.append("--skip-import")
    before = cache_megabytes(cache)
    result = subprocess.run(command, env=environment, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"worker failed on {onnx_path}:\n{result.stderr[-3000:]}")
    measured = json.loads(result.stdout.strip().splitlines()[-1])
    measured["cache_mb"] = cache_megabytes(cache) - before
    return measured


NOT_A_HIT = 3
"""The exit status of `HIT_PROCESS` when the model was compiled, not loaded."""
HIT_PROCESS = (
    "import sys\n"
    "from fusion_compiler.driver import compile_file\n"
    f"sys.exit(0 if compile_file(sys.argv[1]).from_cache else {NOT_A_HIT})\n"
)
IMPORTS_PROCESS = "import fusion_compiler.driver, fusion_compiler.lowering.file_cache\n"


def process_hit(mlir: Path, cache: Path, runs: int = 3) -> dict:
    """The wall seconds of a new process that loads `mlir` from the cache `cache`
    (`compile_file`, a file hit) and exits, and of one that only imports the modules that
    does: medians of `runs`."""
    environment = {**os.environ, "FUSION_CACHE_DIR": str(cache), "FUSION_PROGRESS": "0"}

    def wall(script: str, *arguments: str) -> float:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", script, *arguments], env=environment)
        if done.returncode == NOT_A_HIT:
            raise RuntimeError(
                f"the hit process on {mlir} compiled the model instead of loading it: the "
                "cache key changed since the cold compile (was the compiler's source edited "
                "during the run? the key covers it)"
            )
        if done.returncode != 0:
            raise RuntimeError(f"the hit process on {mlir} exited with {done.returncode}")
        return time.perf_counter() - start

    hits = sorted(wall(HIT_PROCESS, str(mlir)) for _ in range(runs))
    imports = sorted(wall(IMPORTS_PROCESS) for _ in range(runs))
    return {"total": hits[runs // 2], "imports": imports[runs // 2]}


CLI_RUN = (
    "import sys\nfrom fusion_compiler.tools.fusion_run import main\nsys.exit(main(sys.argv[1:]))\n"
)


def cli_hit(mlir: Path, cache: Path, runs: int = 3) -> dict:
    """The wall seconds of `fusion-run mlir --random-inputs` in a new process: the first run
    (`first`: it parses the file and keeps the run's facts) and the median of `runs` after it
    (`total`: from the cache, no parse)."""
    environment = {**os.environ, "FUSION_CACHE_DIR": str(cache), "FUSION_PROGRESS": "0"}

    def wall() -> float:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", CLI_RUN, str(mlir), "--random-inputs"],
            env=environment,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - start
        if done.returncode != 0 or "from cache" not in done.stdout:
            raise RuntimeError(
                f"fusion-run of {mlir} did not load the model from the cache: {done.stdout}"
                f"{done.stderr[-2000:]}"
            )
        return seconds

    first = wall()
    walls = sorted(wall() for _ in range(runs))
    return {"total": walls[runs // 2], "first": first}


def cache_megabytes(cache: Path) -> float:
    """The megabytes of the files in the compile cache `cache`."""
    return sum(p.stat().st_size for p in cache.rglob("*") if p.is_file()) / 2**20


STEPS = (*MODES, "hit process", "fusion-run")
"""Every step a round measures: the worker's modes, the hit in a new process and the run of
the cached model from the command line."""


def measure_model(name: str, rounds: int = 1) -> tuple[dict, list[dict]]:
    """The table's row of model `name` (`median_row` of `rounds` rounds) and each round's
    measurements (`measure_round`), on `.onnx` files written once."""
    with tempfile.TemporaryDirectory(prefix=f"compile-time-{name}-") as scratch:
        directory = Path(scratch)
        original, edited, op_edited, weights_mb = write_models(name, directory)
        runs = []
        for index in range(rounds):
            folder = directory / f"round{index}"
            folder.mkdir()
            runs.append(measure_round(folder, original, edited, op_edited))
            shutil.rmtree(folder)  # (vgg19's round leaves 1.5 GB)
        return median_row(name, weights_mb, runs), runs


def measure_round(folder: Path, original: Path, edited: Path, op_edited: Path) -> dict:
    """Every step once, in order, the `.mlir`, its weights and the cache in `folder`."""
    cache = folder / "cache"
    mlir = folder / original.with_suffix(".mlir").name
    run = {"cold": run_worker(original, mlir, cache, skip_import=False)}
    run["hit"] = run_worker(original, mlir, cache, skip_import=True)
    run["hit process"] = process_hit(mlir, cache)
    run["fusion-run"] = cli_hit(mlir, cache)
    run["op edit"] = run_worker(op_edited, mlir, cache, skip_import=False)
    run["edit"] = run_worker(edited, mlir, cache, skip_import=False)
    return run


def median_row(name: str, weights_mb: float, runs: list[dict]) -> dict:
    """Per step the round of median wall time (the lower middle one of an even count: a
    round that happened), and each edit's median share of its own round's cold compile."""
    row: dict = {"model": name, "weights_mb": weights_mb, "rounds": len(runs)}
    for step in STEPS:
        ordered = sorted(runs, key=lambda run: run[step]["total"])
        row[step] = ordered[(len(ordered) - 1) // 2][step]
    for step in ("edit", "op edit"):
        row[f"{step} share"] = statistics.median(
            run[step]["total"] / run["cold"]["total"] for run in runs
        )
    return row


def stage_line(name: str, result: dict) -> str:
    stages = " ".join(f"{stage}={seconds:.2f}" for stage, seconds in result["stages"])
    return (
        f"{name}: total {result['total']:.2f} s (CPU {result['cpu_s']:.2f} s), "
        f"peak {result['peak_mb']:.0f} MB, "
        f"from cache {result['from_cache']}, .mlir {result['mlir_mb']:.1f} MB, "
        f"import peak {result['import_peak_mb']:.0f} MB, the cache grew "
        f"{result['cache_mb']:.0f} MB\n    {stages}"
    )


def markdown_table(rows: list[dict]) -> str:
    names = [
        "model",
        "weights MB",
        ".mlir MB",
        "cold s",
        "cold CPU s",
        "cold peak MB",
        "hit s",
        "hit peak MB",
        "hit process s (imports s)",
        "fusion-run s",
        "edit s (% of cold)",
        "op edit s (% of cold)",
        "cache MB: cold / edit / op edit",
    ]
    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    for row in rows:
        cold, hit, edit, op_edit = row["cold"], row["hit"], row["edit"], row["op edit"]
        edit_share = row.get("edit share", edit["total"] / cold["total"])
        op_edit_share = row.get("op edit share", op_edit["total"] / cold["total"])
        cells = [
            row["model"],
            f"{row['weights_mb']:.0f}",
            f"{cold['mlir_mb']:.1f}",
            f"{cold['total']:.1f}",
            f"{cold['cpu_s']:.1f}",
            f"{cold['peak_mb']:.0f}",
            f"{hit['total']:.2f}",
            f"{hit['peak_mb']:.0f}",
            f"{row['hit process']['total']:.2f} ({row['hit process']['imports']:.2f})",
            f"{row['fusion-run']['total']:.2f}",
            f"{edit['total']:.1f} ({100 * edit_share:.0f}%)",
            f"{op_edit['total']:.1f} ({100 * op_edit_share:.0f}%)",
            " / ".join(f"{row[mode]['cache_mb']:.0f}" for mode in ("cold", "edit", "op edit")),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", help=f"comma-separated (default: {','.join(MODELS)})")
    parser.add_argument(
        "--rounds", type=int, default=1, help="rounds per model, medians in the table (default 1)"
    )
    parser.add_argument("--markdown", metavar="FILE", help="also write the table to FILE")
    parser.add_argument("--worker", metavar="ONNX", help=argparse.SUPPRESS)
    parser.add_argument("--mlir", help=argparse.SUPPRESS)
    parser.add_argument("--skip-import", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(measure(Path(args.worker), Path(args.mlir), args.skip_import)))
        return 0
    models = args.models.split(",") if args.models else list(MODELS)
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        print(f"unknown models: {', '.join(unknown)} (known: {', '.join(MODELS)})")
        return 2
    if args.rounds < 1:
        print(f"--rounds: expected a positive integer, got {args.rounds}")
        return 2
    rows = []
    for name in models:
        row, runs = measure_model(name, args.rounds)
        for index, run in enumerate(runs):
            label = name if args.rounds == 1 else f"{name} (round {index + 1})"
            for mode in MODES:
                print(stage_line(f"{label} {mode}", run[mode]), flush=True)
            process = run["hit process"]
            print(
                f"{label} hit process: {process['total']:.2f} s, of which a process importing "
                f"the modules {process['imports']:.2f} s",
                flush=True,
            )
            cli = run["fusion-run"]
            print(
                f"{label} fusion-run: {cli['total']:.2f} s (the first, which parses the file "
                f"and keeps the run's facts: {cli['first']:.2f} s)",
                flush=True,
            )
        rows.append(row)
    table = markdown_table(rows)
    if args.rounds > 1:
        table = (
            f"Medians of {args.rounds} rounds per model (per step the round of median time; "
            "the edits' shares: medians of each round's edit over its cold compile).\n\n" + table
        )
    print("\n" + table)
    if args.markdown:
        Path(args.markdown).write_text(table + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
