"""Damaged ONNX files: a small model's bytes set, flipped, inserted, deleted or cut
(`onnx_mutant`), or a valid drawn model with one integer attribute pushed out of range
(`attribute_mutant`); and the check that `fusion-import` ends every one of them with a
diagnostic (exit status 0 or 1, no "internal error", no traceback, no crash, no hang), run
in-process like the text mutants (`fuzz_mutants.bad_outcome`), writing the module to stdout
or, every other seed, to a file with its weights file. An attribute mutant that imports is
compiled too, which must end with a `CompileError` if it does not end well.

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
    """`onnx/backend/test/data/...` for a model of the package, else `tests/models/...`
    (the package first: a virtual environment inside the repository, as the README's quick
    start makes, holds the package's models under the repository too)."""
    import onnx

    package = Path(onnx.__file__).parent
    if source.is_relative_to(package):
        return "onnx/" + str(source.relative_to(package))
    return str(source.relative_to(ROOT))


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


OUT_OF_RANGE = (0, -1, -3, 1, 2, 7, 100, 2**40)
"""The values an attribute mutant gives an integer attribute: zero, negatives, small ones
that may not fit the node, and sizes no machine holds."""


def attribute_mutant(seed: int) -> tuple[bytes, str, list[str], bool] | None:
    """Model `seed` of `onnx-graphs` (`fuzz_onnx_draw.draw_model`: valid) with one integer
    attribute of one node set to a value of `OUT_OF_RANGE` (one element of a list), as
    `onnx_mutant` gives it; None when the model has no integer attribute."""
    from fuzz_onnx_draw import draw_model
    from onnx import AttributeProto

    drawn = draw_model(seed)
    if drawn is None:
        return None
    model = drawn[0]
    rng = random.Random(seed)
    kinds = (AttributeProto.INT, AttributeProto.INTS)
    nodes = [n for n in model.graph.node if any(a.type in kinds for a in n.attribute)]
    if not nodes:
        return None
    node = rng.choice(nodes)
    attribute = rng.choice([a for a in node.attribute if a.type in kinds])
    value = rng.choice(OUT_OF_RANGE)
    if attribute.type == AttributeProto.INT:
        attribute.i = value
    elif attribute.ints:
        attribute.ints[rng.randrange(len(attribute.ints))] = value
    what = f"{node.op_type} {attribute.name} -> {value}"
    return model.SerializeToString(), f"onnx-graphs seed {seed}", [what], rng.random() < 0.5


def compile_in_process(path: Path) -> str | None:
    """How a compile of the model at `path` ended (None: compiled, or a `CompileError`)."""
    import onnx

    from fusion_compiler import driver
    from fusion_compiler.dialects.diagnostics import CompileError
    from fusion_compiler.frontend.onnx_importer import import_model

    try:
        driver.compile_module(import_model(onnx.load(str(path))), cache=False)
    except CompileError:
        return None
    except Exception as exc:  # noqa: BLE001 - that is the bug being looked for
        return f"escaped: {type(exc).__name__}: {exc}"[:300]
    return None
