"""Differential fuzzing at scale (not part of the test run; `tests/bench/test_fuzz_smoke.py`
runs a handful of seeds).

    python bench/fuzz.py graphs  --start 0 --count 10000 [--jobs 2] [--chunk 100] --log LOG
    python bench/fuzz.py mutants --start 0 --count 5000 [--jobs 2] [--subprocess-every 25] --log LOG
    python bench/fuzz.py lit-mutants --start 0 --count 50000 [--chunk 5000] --log LOG
    python bench/fuzz.py onnx-mutants --start 0 --count 20000 [--chunk 5000] --log LOG
    python bench/fuzz.py onnx-graphs --start 0 --count 5000 [--chunk 1000] --log LOG
    python bench/fuzz.py onnx-attributes --start 0 --count 20000 [--chunk 5000] --log LOG
    python bench/fuzz.py digests --log LOG [--every 20]
    python bench/fuzz.py worker-graphs|worker-mutants|worker-lit-mutants|worker-onnx-mutants|
        worker-onnx-graphs|worker-onnx-attributes START COUNT LOG   (one chunk, in-process)

`graphs`: seed s draws a graph of 5-80 ops (`bench/random_graphs.py`; the count is drawn
log-uniformly from the seed, so most graphs are small and cheap, and some are large) and
checks it (`bench/graph_checks.py`): every source op in exactly one kernel, reference ==
unfused == fused natively; it logs the SHA-256 of the fused IR. A failing graph is shrunk
(`bench/fuzz_shrink.py`) and written to `tests/regressions/graphs/` (a test from then on).
`digests` recomputes the fused IR of every `--every`-th logged seed in a fresh process and
compares: the IR is byte-identical across processes. `mutants`: mutant s is a mutation
(`bench/fuzz_mutants.py`) of one of the examples or of a small random graph, run through
`fusion-opt` and `fusion-run --random-inputs --check` in-process, every `--subprocess-every`-th
one also in subprocesses under a timeout; a bad ending writes the mutant to
`tests/regressions/mutants/`. `lit-mutants`: lit mutant s damages a chunk of a lit test's
input or of an example (`bench/fuzz_mutants.py`'s `lit_mutant`) and runs it through
`fusion-opt` with one of the pipelines its RUN lines name, so that every pass meets damaged
input; a bad ending writes it there as `lit_seed*.mlir`, its pipeline in its header.
`onnx-mutants`: a small ONNX model with bytes set, flipped, inserted, deleted or cut
(`bench/fuzz_onnx.py`), imported by `fusion-import`; a bad ending writes the file to
`tests/regressions/onnx/`. `onnx-attributes`: model s of `onnx-graphs` with one integer
attribute of one node set out of range (0, negative, 2**40: `fuzz_onnx.attribute_mutant`),
imported the same way and, if it imports, compiled (a `CompileError` is a fine ending); a bad
ending writes the model there too. `onnx-graphs`: a small valid ONNX model drawn at random
(`bench/fuzz_onnx_draw.py`: ops of the importer with attributes the spec allows; checked by
`bench/fuzz_onnx_graphs.py`), compiled
and run natively and compared with onnxruntime (a float64 run decides where the two differ);
a wrong number or an error that is not a diagnostic writes the model, its inputs and the
float64 outputs to `tests/regressions/onnx_graphs/`. Chunks run in worker processes (a crash
loses one seed, which is logged as a crash with the stack `faulthandler` printed, and the run
goes on). Each log line is one JSON object.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

NODES = (5, 80)
GRAPH_TIMEOUT = 300
MUTANT_SOURCES = sorted((ROOT / "examples").glob("*.mlir"))
MUTANT_REGRESSIONS = ROOT / "tests" / "regressions" / "mutants"
T = TypeVar("T")
ONNX_REGRESSIONS = ROOT / "tests" / "regressions" / "onnx"
ONNX_GRAPH_REGRESSIONS = ROOT / "tests" / "regressions" / "onnx_graphs"


class Hang(BaseException):
    """Raised by the CPU-time alarm; a BaseException, so that neither the tools'
    `run_without_traceback` nor the checks catch it as an ordinary error."""


class WorkerRestart(Exception):
    """The record of a seed after which the worker process must end (the driver starts a
    new one at the next seed)."""


def _alarm(seconds: int):
    """`Hang` after `seconds` of CPU time (not wall time: under `nice` on a busy machine a
    worker may wait far longer than it computes)."""

    def handler(signum, frame):
        raise Hang(f"no end after {seconds} s of CPU time")

    signal.signal(signal.SIGPROF, handler)
    signal.setitimer(signal.ITIMER_PROF, seconds)


def _no_alarm() -> None:
    signal.setitimer(signal.ITIMER_PROF, 0)


def node_count(seed: int) -> int:
    """Log-uniform in NODES: as many graphs of 5-10 ops as of 40-80."""
    low, high = NODES
    return int(low * (high / low) ** random.Random(seed).random())


def graph_of(seed: int):
    from random_graphs import draw_graph

    n = node_count(seed)
    return draw_graph(seed, (n, n))


def _failure(spec) -> str | None:
    from fuzz_shrink import signature
    from graph_checks import check_graph

    try:
        _alarm(GRAPH_TIMEOUT)
        check_graph(spec)
        return None
    except Exception as err:  # noqa: BLE001 - every failure is a finding
        return signature(err)
    finally:
        _no_alarm()


def check_seed(seed: int) -> dict:
    from fuzz_shrink import shrink, write_regression
    from graph_checks import check_graph

    spec = graph_of(seed)
    record = {"mode": "graph", "seed": seed, "nodes": len(spec.nodes)}
    start = time.perf_counter()
    try:
        _alarm(GRAPH_TIMEOUT)
        record["digest"] = check_graph(spec)
        record["status"] = "ok"
    except Hang as err:  # interrupted anywhere: this process's state is not to be trusted
        _no_alarm()
        record.update(status="fail", error=f"Hang: {err}", seconds=time.perf_counter() - start)
        path = write_regression(spec, f"seed{seed}", f"bench/fuzz.py graph seed {seed}:\n{err}")
        record["regression"] = str(path.relative_to(ROOT))
        raise WorkerRestart(record) from None
    except Exception as err:  # noqa: BLE001 - every failure is a finding
        _no_alarm()
        record.update(status="fail", error=f"{type(err).__name__}: {err}"[:2000])
        small = shrink(spec, _failure)
        path = write_regression(small, f"seed{seed}", f"bench/fuzz.py graph seed {seed}:\n{err}")
        record.update(shrunk_nodes=len(small.nodes), regression=str(path.relative_to(ROOT)))
    finally:
        _no_alarm()
    record["seconds"] = round(time.perf_counter() - start, 3)
    return record


def mutant_source(seed: int) -> tuple[str, str]:
    """The valid text mutant `seed` mutates: an example, or a small random graph."""
    rng = random.Random(seed)
    if rng.random() < 0.5:
        path = rng.choice(MUTANT_SOURCES)
        return path.read_text(), path.name
    from graph_spec import build_module
    from random_graphs import draw_graph

    return str(build_module(draw_graph(seed, (2, 6)))), f"graph{seed}"


def check_mutant(seed: int, in_subprocess: bool) -> dict:
    from fuzz_mutants import mutant

    text, source = mutant_source(seed)
    mutated, whats = mutant(text, seed)
    record = {"mode": "mutant", "seed": seed, "source": source, "mutations": whats}
    return _check_damaged(record, mutated, None, in_subprocess)


def check_lit_mutant(seed: int, in_subprocess: bool) -> dict:
    from fuzz_mutants import lit_mutant, lit_mutant_source

    text, source, pipeline = lit_mutant_source(seed)
    mutated, whats = lit_mutant(text, seed)
    passes = pipeline or ""
    record = {"mode": "lit-mutant", "seed": seed, "source": source, "passes": passes}
    record["mutations"] = whats
    return _check_damaged(record, mutated, passes, in_subprocess)


def check_onnx_mutant(seed: int) -> dict:
    from fuzz_onnx import import_in_process, onnx_mutant, onnx_sources

    global _ONNX_SOURCES
    if _ONNX_SOURCES is None:
        _ONNX_SOURCES = onnx_sources()
    data, source, whats, to_file = onnx_mutant(seed, _ONNX_SOURCES)
    record = {"mode": "onnx-mutant", "seed": seed, "source": source, "mutations": whats}

    def run(path: Path) -> dict | None:
        imported = import_in_process(path, to_file)
        return None if imported is None else {"fusion-import": imported}

    return _check_onnx_file(record, data, run)


def check_onnx_attribute(seed: int) -> dict:
    from fuzz_onnx import attribute_mutant, compile_in_process, import_in_process

    record = {"mode": "onnx-attribute", "seed": seed}
    mutant = attribute_mutant(seed)
    if mutant is None:
        return {**record, "status": "ok", "mutations": []}
    data, record["source"], record["mutations"], to_file = mutant

    def run(path: Path) -> dict | None:
        imported = import_in_process(path, to_file)
        if imported is not None:
            return {"fusion-import": imported}
        compiled = compile_in_process(path)
        return None if compiled is None else {"compile": compiled}

    return _check_onnx_file(record, data, run)


def _check_onnx_file(record: dict, data: bytes, run: Callable[[Path], dict | None]) -> dict:
    """`record` completed with how `run` ended on the ONNX file of `data` (None: well, or
    with a diagnostic); a bad ending writes the file to `tests/regressions/onnx/`."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{record['mode']}{record['seed']}.onnx"
        path.write_bytes(data)
        outcome = _alarmed(record, lambda: run(path), lambda: _save_onnx(record, data))
    record["status"] = "fail" if outcome else "ok"
    if outcome:
        record.update(error=outcome, regression=_save_onnx(record, data))
    record["seconds"] = round(time.perf_counter() - start, 3)
    return record


def check_onnx_graph(seed: int) -> dict:
    import fuzz_onnx_graphs

    start = time.perf_counter()
    record = {"mode": "onnx-graph", "seed": seed}
    record = _alarmed(
        record, lambda: fuzz_onnx_graphs.check_seed(seed), lambda: _save_onnx_graph(seed)
    )
    if record["status"] == "fail" and "ops" in record:
        record["regression"] = _save_onnx_graph(seed)
    record["seconds"] = round(time.perf_counter() - start, 3)
    return record


def _save_onnx_graph(seed: int) -> str:
    """Writes model `seed` of `onnx-graphs` to `tests/regressions/onnx_graphs/`, with each set
    of its inputs and their float64 outputs (`seed*.npz`: `input0:NAME`, `output0:NAME`, ...),
    which `tests/test_regressions.py` compares the compiled model with."""
    import numpy as np
    import onnx
    from fuzz_onnx_graphs import checked_case, exact_outputs

    model, input_sets, _ = checked_case(seed)
    ONNX_GRAPH_REGRESSIONS.mkdir(parents=True, exist_ok=True)
    target = ONNX_GRAPH_REGRESSIONS / f"seed{seed}.onnx"
    onnx.save(model, str(target))
    arrays = {}
    for index, inputs in enumerate(input_sets):
        arrays.update({f"input{index}:{name}": value for name, value in inputs.items()})
        outputs = exact_outputs(model, inputs)
        for info, value in zip(model.graph.output, outputs, strict=True):
            arrays[f"output{index}:{info.name}"] = np.asarray(value)
    np.savez(target.with_suffix(".npz"), **arrays)
    return str(target.relative_to(ROOT))


def _alarmed(record: dict, run: Callable[[], T], save: Callable[[], str]) -> T:
    """`run()` under the CPU-time alarm; a hang, interrupted anywhere, is recorded as a
    failure with the input `save()` keeps, and ends this worker (`WorkerRestart`)."""
    try:
        _alarm(GRAPH_TIMEOUT)
        return run()
    except Hang as err:
        _no_alarm()
        record.update(status="fail", error={"in-process": f"hang: {err}"}, regression=save())
        raise WorkerRestart(record) from None
    finally:
        _no_alarm()


_ONNX_SOURCES = None
"""The models `onnx-mutants` damages (`fuzz_onnx.onnx_sources`), listed once per worker."""


def _save_onnx(record: dict, data: bytes) -> str:
    """Writes a damaged file (or an attribute mutant, `attribute_seed*.onnx`) the compiler
    failed on to `tests/regressions/onnx/` (a test from then on), with a note of where it
    came from beside it."""
    ONNX_REGRESSIONS.mkdir(parents=True, exist_ok=True)
    prefix = "attribute_seed" if record["mode"] == "onnx-attribute" else "seed"
    target = ONNX_REGRESSIONS / f"{prefix}{record['seed']}.onnx"
    target.write_bytes(data)
    note = f"bench/fuzz.py {record['mode']} seed {record['seed']} of {record['source']}: "
    target.with_suffix(".txt").write_text(note + f"{record['mutations']}\n")
    return str(target.relative_to(ROOT))


def _check_damaged(record: dict, mutated: str, passes: str | None, in_subprocess: bool) -> dict:
    """`record` completed with how the tools ended on the damaged text `mutated` (`passes`:
    a lit mutant's pipeline for `fusion-opt` alone; None: both tools as they come)."""
    from fuzz_mutants import run_in_process, run_in_subprocess

    seed = record["seed"]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"mutant{seed}.mlir"
        path.write_text(mutated)
        outcome = _alarmed(
            record, lambda: run_in_process(path, passes), lambda: _save_mutant(record, mutated)
        )
        if in_subprocess:
            done = run_in_subprocess(path, passes=passes)
            outcome.update({f"{k} (subprocess)": v for k, v in done.items()})
    bad = {k: v for k, v in outcome.items() if v}
    record["status"] = "fail" if bad else "ok"
    if bad:
        record["error"] = bad
        record["regression"] = _save_mutant(record, mutated)
    record["seconds"] = round(time.perf_counter() - start, 3)
    return record


def _save_mutant(record: dict, mutated: str) -> str:
    """Writes a failing mutant to `tests/regressions/mutants/` (a test from then on), its
    header naming where it came from and, for a lit mutant, its pipeline."""
    MUTANT_REGRESSIONS.mkdir(parents=True, exist_ok=True)
    lit = record["mode"] == "lit-mutant"
    target = MUTANT_REGRESSIONS / f"{'lit_' if lit else ''}seed{record['seed']}.mlir"
    header = f"// bench/fuzz.py {record['mode']} seed {record['seed']} of {record['source']}: "
    header += f"{record['mutations']}\n"
    if lit:
        header += f"// fusion-opt -p '{record['passes']}'\n"
    target.write_text(header + mutated)
    return str(target.relative_to(ROOT))


def code_version() -> str:
    """The commit of the code a worker runs, `+` when the work tree differs from it."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
        return done.stdout.strip()

    return git("rev-parse", "--short", "HEAD") + (
        "+" if git("status", "--porcelain", "-uno") else ""
    )


def worker(mode: str, start: int, count: int, log: Path, every: int) -> None:
    version = code_version()
    if os.environ.get(FAULT_FILE):  # (kept open until the process ends)
        faulthandler.enable(open(os.environ[FAULT_FILE], "w"))  # noqa: SIM115
    with log.open("a") as out:
        for seed in range(start, start + count):
            out.write(json.dumps({"mode": mode, "seed": seed, "status": "start"}) + "\n")
            out.flush()
            try:
                if mode == "graph":
                    record = check_seed(seed)
                elif mode == "lit-mutant":
                    record = check_lit_mutant(seed, every > 0 and seed % every == 0)
                elif mode == "onnx-mutant":
                    record = check_onnx_mutant(seed)
                elif mode == "onnx-graph":
                    record = check_onnx_graph(seed)
                elif mode == "onnx-attribute":
                    record = check_onnx_attribute(seed)
                else:
                    record = check_mutant(seed, every > 0 and seed % every == 0)
            except WorkerRestart as restart:
                out.write(json.dumps(restart.args[0]) + "\n")
                out.flush()
                os._exit(3)
            out.write(json.dumps({**record, "code": version}) + "\n")
            out.flush()


FAULT_FILE = "FUZZ_FAULT_FILE"
"""The environment variable naming the file a worker's `faulthandler` writes a fatal error's
stack into (a segmentation fault in native code: ours, or onnxruntime's)."""


def run_chunk(mode: str, start: int, count: int, log: Path, every: int) -> None:
    """One worker process per chunk; after a crash, the chunk goes on after the seed. The
    crash's record holds the stack `faulthandler` printed (`fault_report`): where it died."""
    end = start + count
    while start < end:
        with tempfile.NamedTemporaryFile("w+", suffix=".fault") as fault:
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    f"worker-{mode}s",
                    str(start),
                    str(end - start),
                    str(log),
                    "--subprocess-every",
                    str(every),
                ],
                check=False,
                env={**os.environ, FAULT_FILE: fault.name},
            )
            report = fault_report(Path(fault.name).read_text(errors="replace"))
        finished = _finished(log, mode)
        missing = [s for s in range(start, end) if s not in finished]
        if not missing:
            return
        start = missing[0]
        if start in _started(log, mode):  # started, never finished: the process died
            record = {"mode": mode, "seed": start, "status": "crash"}
            if report:
                record["error"] = report
            with log.open("a") as out:
                out.write(json.dumps(record) + "\n")
            start += 1


def fault_report(text: str) -> str:
    """The last fatal error `faulthandler` wrote (its kind and the crashed thread's frames,
    innermost first), or "" when there is none."""
    at = text.rfind("Fatal Python error")
    if at < 0:
        return ""
    lines = [line.strip() for line in text[at:].splitlines() if line.strip()]
    return " | ".join(line for line in lines if not line.startswith("Extension modules"))[:1500]


def _records(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def _started(log: Path, mode: str) -> set[int]:
    return {r["seed"] for r in _records(log) if r["mode"] == mode and r["status"] == "start"}


def _finished(log: Path, mode: str) -> set[int]:
    return {r["seed"] for r in _records(log) if r["mode"] == mode and r["status"] != "start"}


def drive(args: argparse.Namespace, mode: str) -> None:
    done = _finished(args.log, mode)
    chunks = []
    for start in range(args.start, args.start + args.count, args.chunk):
        count = min(args.chunk, args.start + args.count - start)
        if not all(s in done for s in range(start, start + count)):
            chunks.append((start, count))
    with ThreadPoolExecutor(args.jobs) as pool:
        for start, count in chunks:  # a thread per worker process
            pool.submit(run_chunk, mode, start, count, args.log, args.subprocess_every)
    summary(args.log)


def digests(args: argparse.Namespace) -> None:
    """Recompute the fused IR of every `--every`-th checked seed here; compare with the log."""
    from graph_checks import fused_ir_digest

    logged = {r["seed"]: r["digest"] for r in _records(args.log) if r.get("digest")}
    sample = sorted(logged)[:: args.every]
    differ = [s for s in sample if fused_ir_digest(graph_of(s)) != logged[s]]
    print(f"digests: {len(sample)} seeds recomputed in a second process, {len(differ)} differ")
    with args.log.open("a") as out:
        out.write(
            json.dumps(
                {
                    "mode": "digests",
                    "seed": -1,
                    "status": "fail" if differ else "ok",
                    "checked": len(sample),
                    "differ": differ,
                }
            )
            + "\n"
        )


def summary(log: Path) -> None:
    latest: dict[tuple, dict] = {}
    for record in _records(log):
        if record["status"] != "start":
            latest[(record["mode"], record["seed"])] = record
    for mode in ("graph", "mutant", "lit-mutant", "onnx-mutant", "onnx-attribute", "onnx-graph"):
        records = [r for (m, _), r in latest.items() if m == mode]
        failed = [r for r in records if r["status"] != "ok"]
        nodes = [r.get("nodes", 0) for r in records]
        print(
            f"{mode}s: {len(records)} run, {len(failed)} failed"
            + (f", {sum(nodes)} ops in all" if mode == "graph" else "")
        )
        if mode == "onnx-graph" and records:  # (what the passing ones were)
            outcomes = Counter(r.get("outcome", r["status"]) for r in records)
            nodes = [len(r.get("ops", [])) for r in records]
            print(f"  outcomes: {dict(sorted(outcomes.items()))}, {sum(nodes)} nodes in all")
        for r in failed[:20]:
            print(f"  seed {r['seed']}: {r['status']}: {str(r.get('error'))[:300]}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "mode",
        choices=[
            "graphs",
            "mutants",
            "lit-mutants",
            "onnx-mutants",
            "onnx-graphs",
            "onnx-attributes",
            "digests",
            "summary",
            "worker-graphs",
            "worker-mutants",
            "worker-lit-mutants",
            "worker-onnx-mutants",
            "worker-onnx-graphs",
            "worker-onnx-attributes",
        ],
    )
    parser.add_argument("numbers", nargs="*")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--chunk", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--every", type=int, default=20)
    parser.add_argument("--subprocess-every", type=int, default=25)
    parser.add_argument("--log", type=Path, default=Path("fuzz.jsonl"))
    args = parser.parse_args(argv)
    if args.mode.startswith("worker-"):
        start, count, log = args.numbers
        mode = args.mode.removeprefix("worker-").removesuffix("s")
        worker(mode, int(start), int(count), Path(log), args.subprocess_every)
    elif args.mode == "digests":
        digests(args)
    elif args.mode == "summary":
        summary(args.log)
    else:
        drive(args, args.mode.removesuffix("s"))


if __name__ == "__main__":
    main()
