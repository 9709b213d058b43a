"""Problems found while importing a model, and the one error that reports them all.

Converters raise `Unsupported` for a node they cannot translate (an op type, an attribute
value, a non-constant shape input...). The importer catches it, records a `Problem` naming the
node, carries on with the rest of the graph, and at the end raises one `ModelImportError`
listing every problem, which the tools print as

    model.onnx: error: cannot import the model (2 problems)
      node 'nms' (NonMaxSuppression, #12): unsupported op type
      graph input 'x': dimension 0 is dynamic ('N'); fix it with --input-shape x=...
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fusion_compiler.dialects.diagnostics import CompileError


class Unsupported(Exception):
    """This node (or input) cannot be imported; the message says why."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Problem:
    """One thing that stops the import: `where` names a node or a graph input."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


class ModelImportError(CompileError):
    """Every problem of a model, reported at once as `file: error: ...`."""

    def __init__(self, filename: str, problems: Sequence[Problem] = (), message: str = ""):
        self.filename = filename
        self.problems = tuple(problems)
        if not message:
            count = len(self.problems)
            plural = "" if count == 1 else "s"
            lines = [f"cannot import the model ({count} problem{plural})"]
            lines += [f"  {problem}" for problem in self.problems]
            message = "\n".join(lines)
        super().__init__(message)

    def format(self, sources: dict[str, str] | None = None) -> str:
        return f"{self.filename}: error: {self.message}"
