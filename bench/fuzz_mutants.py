"""IR mutants: valid `.mlir` text with tokens deleted, duplicated or swapped, a shape, an element
type or a property value changed; and the check that the tools end every one of them with a
diagnostic (exit status 0 or 1, no "internal error", no traceback, no crash, no hang).

The tools run in-process (`fusion_opt.main`, `fusion_run.main` with their output captured) for
speed; `run_in_subprocess` runs a sample as the user would, under a timeout, to see crashes
(a signal) and hangs as well.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

TOKEN = re.compile(
    r"\s+|%[\w.$-]+|@[\w.$-]+|\"(?:[^\"\\]|\\.)*\"|-?\d+\.\d*(?:[eE][-+]?\d+)?|-?\d+"
    r"|[A-Za-z_][\w.$]*|\S"
)
NUMBERS = (
    "0",
    "1",
    "2",
    "3",
    "5",
    "-1",
    "-7",
    "64",
    "2147483648",
    "9223372036854775807",
    "18446744073709551616",
    "1e39",
    "0.0",
    "-0.5",
)
TYPES = ("f16", "f64", "bf16", "i1", "i32", "i64", "index", "f32", "none")
WORDS = ("true", "false", "graph.relu", "graph.add", "func.return", "loop.for", "tensor", "x")
SHAPE = re.compile(r"(?<=[<x])\d+(?=x)")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def _solid(pieces: list[str]) -> list[int]:
    return [i for i, p in enumerate(pieces) if not p.isspace()]


def _number_or_word(rng: random.Random, old: str) -> str:
    if re.fullmatch(r"-?\d+(\.\d*)?([eE][-+]?\d+)?", old):
        return rng.choice(NUMBERS)
    if old in TYPES:
        return rng.choice(TYPES)
    return rng.choice(WORDS + TYPES + NUMBERS)


def mutate_once(text: str, rng: random.Random) -> tuple[str, str]:
    """One random mutation of `text`, and what it was."""
    kind = rng.choice(["delete", "duplicate", "swap", "replace", "shape", "type"])
    if kind == "shape":
        dims = list(SHAPE.finditer(text))
        if dims:
            m = rng.choice(dims)
            new = rng.choice(("0", "1", "2", "3", "7", "64", "4294967297"))
            return text[: m.start()] + new + text[m.end() :], f"shape dim {m.group()}->{new}"
    if kind == "type":
        spots = [m for m in re.finditer(r"\bf32\b", text)]
        if spots:
            m = rng.choice(spots)
            new = rng.choice(TYPES[:-2])
            return text[: m.start()] + new + text[m.end() :], f"type f32->{new} at {m.start()}"
    pieces = tokens(text)
    solid = _solid(pieces)
    i = rng.choice(solid)
    if kind == "delete":
        what = f"delete {pieces[i]!r}"
        pieces[i] = ""
    elif kind == "duplicate":
        what = f"duplicate {pieces[i]!r}"
        pieces[i] = pieces[i] + " " + pieces[i]
    elif kind == "swap":
        j = (
            rng.choice(solid)
            if rng.random() < 0.3
            else solid[min(solid.index(i) + 1, len(solid) - 1)]
        )
        what = f"swap {pieces[i]!r} {pieces[j]!r}"
        pieces[i], pieces[j] = pieces[j], pieces[i]
    else:
        new = _number_or_word(rng, pieces[i])
        what = f"replace {pieces[i]!r}->{new!r}"
        pieces[i] = new
    return "".join(pieces), what


def mutant(text: str, seed: int) -> tuple[str, list[str]]:
    rng = random.Random(seed)
    whats = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        text, what = mutate_once(text, rng)
        whats.append(what)
    return text, whats


def _tool_mains():
    from fusion_compiler.tools import fusion_opt, fusion_run

    return {
        "fusion-opt": (fusion_opt.main, []),
        "fusion-run": (fusion_run.main, ["--random-inputs", "--check", "--no-cache"]),
    }


def bad_outcome(status: int, stdout: str, stderr: str) -> str | None:
    """What is wrong with how a tool ended, or None when it ended with a diagnostic (or fine)."""
    if "Traceback (most recent call last)" in stderr:
        return "traceback"
    if "internal error" in stderr:
        return "internal error: " + stderr.strip().splitlines()[0][:200]
    if "MISMATCH" in stdout:
        return "mismatch: " + stdout.strip().splitlines()[-1][:200]
    if status < 0:
        return f"killed by signal {-status}"
    if status not in (0, 1, 2):
        return f"exit status {status}"
    if status != 0 and not stderr.strip():
        return "failed without a message"
    return None


def run_in_process(path: Path) -> dict[str, str | None]:
    results = {}
    for name, (main, extra) in _tool_mains().items():
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main([str(path), *extra])
            except SystemExit as exit_:  # argparse
                status = exit_.code if isinstance(exit_.code, int) else 1
            except Exception as exc:  # noqa: BLE001 - that is the bug being looked for
                results[name] = f"escaped: {type(exc).__name__}: {exc}"[:300]
                continue
        results[name] = bad_outcome(status, out.getvalue(), err.getvalue())
    return results


def run_in_subprocess(path: Path, timeout: float = 120.0) -> dict[str, str | None]:
    results = {}
    env = {**os.environ, "FUSION_CACHE_DIR": tempfile.mkdtemp(prefix="fuzz-cache-")}
    for name, (_, extra) in _tool_mains().items():
        module = "fusion_compiler.tools." + name.replace("-", "_")
        try:
            done = subprocess.run(
                [sys.executable, "-m", module, str(path), *extra],
                capture_output=True,
                text=True,
                timeout=timeout,
                env=env,
                check=False,
            )
        except subprocess.TimeoutExpired:
            results[name] = f"hang: no end after {timeout:.0f} s"
            continue
        results[name] = bad_outcome(done.returncode, done.stdout, done.stderr)
    return results
