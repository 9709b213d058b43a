"""IR mutants: valid `.mlir` text with tokens deleted, duplicated or swapped, a shape, an element
type or a property value changed; and the check that the tools end every one of them with a
diagnostic (exit status 0 or 1, no "internal error", no traceback, no crash, no hang).

Lit mutants (`lit_mutant`): a chunk of a lit test's input or of an example (graph or loop
level), damaged by those mutations and by whole-line ones (a line deleted, repeated or moved,
a character deleted, a fragment inserted, the text cut short), run through `fusion-opt` with
one of the pipelines its RUN lines name (or none, or the default pipeline for graph-level
text): every pass of the compiler sees damaged input, not only the parser and the fusion
pipeline.

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


ROOT = Path(__file__).resolve().parent.parent
LIT_SOURCES = sorted(
    [
        *(ROOT / "examples").glob("*.mlir"),
        *(p for p in (ROOT / "tests" / "filecheck").rglob("*.mlir") if "Output" not in p.parts),
    ]
)
"""The inputs lit mutants are made from: the examples and every lit test's input."""

RUN_PASSES = re.compile(r"-p\s+('[^']*'|\S+)")
"""A pipeline a RUN line gives `fusion-opt` (quoted or not)."""

FRAGMENTS = ("{", "}", "(", ")", ",", ":", "->", "%0", "tensor<", ">", "^bb1:", " 0 ", " -1 ")
FRAGMENTS += ("x0x", "?x", "<>", "[]", "dense<", "array<i64: ", '"', " step %c0 ", " parallel ")
"""What `mutate_lines_once` inserts: punctuation, names, shapes, literals' heads, keywords."""


def lit_chunks(path: Path) -> tuple[list[str], list[str]]:
    """The chunks of `path` (split as `--split-input-file` splits), their comment lines
    (RUN, CHECK, expected errors) dropped; and the pipelines its RUN lines name."""
    text = path.read_text()
    runs = [line for line in text.splitlines() if "RUN:" in line]
    passes = [m.group(1).strip("'") for line in runs for m in RUN_PASSES.finditer(line)]
    chunks = [
        "\n".join(line for line in chunk.splitlines() if not line.lstrip().startswith("//"))
        for chunk in re.split(r"^// -----.*$", text, flags=re.M)
    ]
    return [c for c in chunks if c.strip()], passes


def lit_mutant_source(seed: int) -> tuple[str, str, str | None]:
    """The text lit mutant `seed` mutates (a chunk of a lit input or example), its name, and
    the pipeline `fusion-opt` runs on it (None: parse, verify and print only)."""
    from fusion_compiler.driver import DEFAULT_PIPELINE

    rng = random.Random(seed)
    path = rng.choice(LIT_SOURCES)
    chunks, passes = lit_chunks(path)
    chunk = rng.choice(chunks) if chunks else ""
    graph_level = "graph." in chunk and "loop.func" not in chunk
    pipelines = [None, *passes, *([DEFAULT_PIPELINE] if graph_level else [])]
    return chunk, str(path.relative_to(ROOT)), rng.choice(pipelines)


def mutate_lines_once(text: str, rng: random.Random) -> tuple[str, str]:
    """One random mutation of `text` line by line, and what it was."""
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    kind = rng.choice(["delete line", "repeat line", "move line", "delete char", "insert", "cut"])
    if kind == "delete line":
        del lines[i]
    elif kind == "repeat line":
        lines.insert(i, lines[rng.randrange(len(lines))])
    elif kind == "move line":
        lines.insert(rng.randrange(len(lines)), lines.pop(i))
    elif kind == "delete char" and lines[i]:
        at = rng.randrange(len(lines[i]))
        lines[i] = lines[i][:at] + lines[i][at + 1 :]
    elif kind == "insert":
        at = rng.randrange(len(lines[i]) + 1)
        lines[i] = lines[i][:at] + rng.choice(FRAGMENTS) + lines[i][at:]
    elif kind == "cut":
        joined = "\n".join(lines)
        at = rng.randrange(len(joined) + 1)
        return joined[:at], f"cut at {at}"
    return "\n".join(lines), f"{kind} {i + 1}"


def lit_mutant(text: str, seed: int) -> tuple[str, list[str]]:
    """Lit mutant `seed` of `text`: one to three mutations, by token or by line."""
    rng = random.Random(seed)
    whats = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        if text.strip() and rng.random() < 0.5:
            text, what = mutate_lines_once(text, rng)
        elif text.strip():
            text, what = mutate_once(text, rng)
        else:
            break
        whats.append(what)
    return text, whats


PASSES_HEADER = re.compile(r"^// fusion-opt -p '([^']*)'", re.M)
"""How a saved lit mutant names the pipeline it fails with (`saved_passes`)."""


def saved_passes(text: str) -> str | None:
    """The pipeline a saved mutant's header names, or None (a mutant of the first kind)."""
    match = PASSES_HEADER.search(text)
    return match.group(1) if match else None


def _tool_mains(passes: str | None = None):
    """The tools a mutant runs through, and their arguments: with `passes` (a lit mutant's
    pipeline, "" for none), `fusion-opt` alone with it."""
    from fusion_compiler.tools import fusion_opt, fusion_run

    if passes is not None:
        return {"fusion-opt": (fusion_opt.main, ["-p", passes] if passes else [])}
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


def run_in_process(path: Path, passes: str | None = None) -> dict[str, str | None]:
    results = {}
    for name, (main, extra) in _tool_mains(passes).items():
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


def run_in_subprocess(
    path: Path, timeout: float = 120.0, passes: str | None = None
) -> dict[str, str | None]:
    results = {}
    env = {**os.environ, "FUSION_CACHE_DIR": tempfile.mkdtemp(prefix="fuzz-cache-")}
    for name, (_, extra) in _tool_mains(passes).items():
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
