"""`fusion-run --profile`: a profiling build, and the table (or JSON) of what it measured.

    fusion-run FILE --random-inputs --profile [--profile-runs N] [--profile-top K]
               [--profile-json OUT.json] [--peak-gflops G] [--peak-gbps B]

With `--profile` (or `--profile-json`, which implies it) the model is compiled as a profiling
build (`lower-graph{profile=true}`, cached apart from the normal build), which every other
option (`--check`, `--bench`, `--outputs`) then uses as well: its results are the same, the
timers only add two clock reads per launch. After the run, `--profile-runs` runs (default
10) are timed launch by launch inside the native entry and the table is printed
(`fusion_compiler.lowering.profile_report`); `--profile-json` also writes it as JSON. The
roofs are this machine's, measured once and cached (`machine_roofs`), or those given: the
FMA peak of one core in GFLOP/s, the memory bandwidth in GB/s.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from fusion_compiler.dialects.compile_error import CompileError
from fusion_compiler.lowering.compiled_model import CompiledModel

DEFAULT_RUNS = 10


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("profiling")
    group.add_argument(
        "--profile", action="store_true", help="time every kernel launch and print a table"
    )
    group.add_argument(
        "--profile-json", metavar="OUT.json", help="write the profile as JSON (implies --profile)"
    )
    group.add_argument(
        "--profile-runs", type=int, metavar="N", help=f"runs to profile (default {DEFAULT_RUNS})"
    )
    group.add_argument("--profile-top", type=int, metavar="K", help="print the K longest kernels")
    group.add_argument(
        "--peak-gflops", type=float, metavar="G", help="the FMA peak of one core (GFLOP/s)"
    )
    group.add_argument("--peak-gbps", type=float, metavar="B", help="memory bandwidth (GB/s)")


def wanted(args: argparse.Namespace) -> bool:
    return bool(args.profile or args.profile_json)


def check_options(args: argparse.Namespace) -> None:
    """User errors in the profiling options, found before anything is compiled."""
    dependent = {
        "--profile-runs": args.profile_runs,
        "--profile-top": args.profile_top,
        "--peak-gflops": args.peak_gflops,
        "--peak-gbps": args.peak_gbps,
    }
    given = [option for option, value in dependent.items() if value is not None]
    if given and not wanted(args):
        raise CompileError(f"{given[0]}: only with --profile")
    for option in ("--profile-runs", "--profile-top"):
        value = dependent[option]
        if value is not None and value < 1:
            raise CompileError(f"{option}: expected a positive integer, got {value}")
    for option in ("--peak-gflops", "--peak-gbps"):
        value = dependent[option]
        if value is not None and not (math.isfinite(value) and value > 0):
            raise CompileError(f"{option}: expected a positive number, got {value}")
    if args.profile_json is not None and Path(args.profile_json).is_dir():
        raise CompileError(f"--profile-json {args.profile_json}: is a directory, expected a file")


def profile(args: argparse.Namespace, model: CompiledModel, inputs: list[np.ndarray]) -> None:
    """Profile `args.entry` of the profiling build `model` and report it."""
    from fusion_compiler.lowering.machine_roofs import machine_roofs, team_size  # (10 ms)

    roofs = machine_roofs(team_size(model.num_threads), args.peak_gflops, args.peak_gbps)
    runs = args.profile_runs or DEFAULT_RUNS
    result = model.profile(args.entry, *inputs, runs=runs, roofs=roofs)
    print(result.table(top=args.profile_top))
    if args.profile_json:
        text = json.dumps(result.to_json(), indent=1)
        Path(args.profile_json).write_text(text + "\n", encoding="utf-8")
