"""Damaged ONNX files: a small model's bytes set, flipped, inserted, deleted or cut; and the
check that `fusion-import` ends every one of them with a diagnostic (exit status 0 or 1, no
"internal error", no traceback, no crash, no hang), run in-process like the text mutants
(`fuzz_mutants.bad_outcome`), writing the module to stdout or, every other seed, to a file
with its weights file.

The models are those the `onnx` package ships for its backend tests (under 200 KB) and the
static transformer models of `tests/models/`.
"""

from __future__ import annotations

import contextlib
import io
import random
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_SOURCE_BYTES = 200_000


def onnx_sources() -> list[Path]:
    """The models damaged files are made from, in a fixed order (the seeds depend on it)."""
    import onnx

    data = Path(onnx.__file__).parent / "backend" / "test" / "data"
    shipped = [p for p in data.rglob("model.onnx") if p.stat().st_size < MAX_SOURCE_BYTES]
    return sorted(shipped) + sorted((ROOT / "tests" / "models").glob("*_static.onnx"))


def onnx_mutant(seed: int, sources: list[Path]) -> tuple[bytes, str, list[str], bool]:
    """Damaged file `seed`: its bytes, its source, what was done to it, and whether the
    import writes a `.mlir` file (and its weights) rather than printing."""
    rng = random.Random(seed)
    source = rng.choice(sources)
    data = bytearray(source.read_bytes())
    whats = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        at = rng.randrange(len(data))
        kind = rng.choice(["set", "flip", "delete", "insert", "cut"])
        if kind == "set":
            data[at] = rng.randrange(256)
        elif kind == "flip":
            data[at] ^= 1 << rng.randrange(8)
        elif kind == "delete":
            del data[at : at + rng.randrange(1, 9)]
        elif kind == "insert":
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 5)))
        else:
            del data[at:]
        whats.append(f"{kind} {at}")
        if not data:
            data = bytearray(b"\x08")
    return bytes(data), _name(source), whats, rng.random() < 0.5


def _name(source: Path) -> str:
    """`tests/models/...`, or `onnx/backend/test/data/...` for a model of the package."""
    if source.is_relative_to(ROOT):
        return str(source.relative_to(ROOT))
    import onnx

    return "onnx/" + str(source.relative_to(Path(onnx.__file__).parent))


def import_in_process(path: Path, to_file: bool) -> str | None:
    """How `fusion-import` ended on `path` (None: with a diagnostic, or fine)."""
    from fuzz_mutants import bad_outcome

    from fusion_compiler.tools import fusion_import

    out, err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory() as tmp:
        args = [str(path), *(["-o", str(Path(tmp) / "out.mlir")] if to_file else [])]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = fusion_import.main(args)
            except SystemExit as exit_:  # argparse
                status = exit_.code if isinstance(exit_.code, int) else 1
            except Exception as exc:  # noqa: BLE001 - that is the bug being looked for
                return f"escaped: {type(exc).__name__}: {exc}"[:300]
    return bad_outcome(status, out.getvalue(), err.getvalue())
