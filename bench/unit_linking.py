"""Run time and compile time of a model linked from units against the same model in one unit.

    python bench/unit_linking.py [--runs 30] [--threads 1] [FILE.mlir ...]

The native build compiles every kernel, and the entry functions, as separate units linked into
one engine (`fusion_compiler.lowering.native_units`). This script compiles each model both
ways, from the same lowered module and with the cache off: linked from units (as the driver
does), and as one unit holding every function (LLVM sees each kernel inside the entry that
launches it). It prints the compile seconds of each way (units on all cores, and on one) and
the median run time of the two builds, run alternately (units, one unit, units, ...) in this
process, with their ratio. Outputs are compared bit for bit. Default models: the examples.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from fusion_compiler.driver import DEFAULT_PIPELINE, PassManager, lower_to_entries, parse_file
from fusion_compiler.lowering.compile_cache import NativeCode
from fusion_compiler.lowering.compiled_model import CompiledModel
from fusion_compiler.lowering.jit import JitModule, aligned_empty, host_target_machine
from fusion_compiler.lowering.native_units import compile_units, split_units

ROOT = Path(__file__).resolve().parent.parent


def _lower(unit) -> None:
    PassManager("convert-loop-to-llvm", verify="off").run(unit)


def build(path: Path, linked: bool, jobs: int | None) -> tuple[CompiledModel, float]:
    """The model of `path`, linked from units or in one unit, and its compile seconds."""
    module = parse_file(path)
    start = time.perf_counter()
    lowered, kernels = lower_to_entries(module, DEFAULT_PIPELINE)
    units = split_units(lowered) if linked else [lowered]
    compiled = compile_units(units, _lower, jobs=jobs)
    native = NativeCode(JitModule(compiled, host_target_machine()), kernels, from_cache=False)
    seconds = time.perf_counter() - start
    return CompiledModel.of(module, native), seconds


def _inputs(model: CompiledModel) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    arrays = []
    for parameter in model.main.parameters:
        array = aligned_empty(parameter.shape)
        array[...] = rng.uniform(0.5, 2.0, parameter.shape)
        arrays.append(array)
    return arrays


def measure(path: Path, runs: int) -> str:
    units, units_s = build(path, linked=True, jobs=None)
    _, serial_s = build(path, linked=True, jobs=1)
    whole, whole_s = build(path, linked=False, jobs=1)
    arrays = _inputs(units)
    same = all(
        np.array_equal(a, b, equal_nan=True)
        for a, b in zip(units.run("main", *arrays), whole.run("main", *arrays), strict=True)
    )
    times: dict[str, list[float]] = {"units": [], "whole": []}
    for _ in range(runs):
        for name, model in (("units", units), ("whole", whole)):
            start = time.perf_counter()
            model.run("main", *arrays)
            times[name].append(time.perf_counter() - start)
    linked_ms, whole_ms = (statistics.median(times[k]) * 1e3 for k in ("units", "whole"))
    return (
        f"| {path.stem} | {units_s:.2f} | {serial_s:.2f} | {whole_s:.2f} | {linked_ms:.3f} | "
        f"{whole_ms:.3f} | {whole_ms / linked_ms:.2f} | {'yes' if same else 'NO'} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1, help="threads of parallel loops")
    args = parser.parse_args(argv)
    from fusion_compiler.lowering.threading_runtime import set_default_num_threads

    set_default_num_threads(args.threads)
    files = args.files or sorted((ROOT / "examples").glob("*.mlir"))
    print(
        "| model | compile s, units (all cores) | units (1 job) | one unit | run ms, units | "
        "one unit | one unit / units | same bits |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for path in files:
        print(measure(path, args.runs), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
