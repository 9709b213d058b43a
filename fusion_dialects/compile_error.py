"""`CompileError`, the error every stage raises for a problem in its input, and where in the
source it is. Its own module, without xDSL: a tool that reports one before (or without)
parsing anything, such as `fusion-run` of a model the cache holds, does not load the IR
machinery for it (`diagnostics` re-exports it with the parser that makes most of them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from fusion_compiler.errors import FusionError

if TYPE_CHECKING:
    from xdsl.ir import Operation


@dataclass(frozen=True)
class SourcePosition:
    filename: str
    line: int
    column: int


class CompileError(FusionError):
    """A problem with the program being compiled (not a bug of the compiler)."""

    def __init__(self, message: str, op: Operation | None = None, position=None):
        super().__init__(message)
        self.message = message
        self.op = op
        self.position: SourcePosition | None = position or (op_position(op) if op else None)

    def add_prefix(self, prefix: str) -> None:
        """Put `prefix` (a pass name and a colon, say) in front of the message, once."""
        if not self.message.startswith(prefix):
            self.message = prefix + self.message
            self.args = (self.message,)

    def format(self, sources: dict[str, str] | None = None) -> str:
        """`file:line:col: error: message`, then the source line and a caret when known."""
        if self.position is None:
            return f"error: {self.message}"
        pos = self.position
        text = f"{pos.filename}:{pos.line}:{pos.column}: error: {self.message}"
        line = source_line(sources or {}, pos)
        if line is not None:
            text += f"\n{line}\n{' ' * (pos.column - 1)}^"
        return text


def op_position(op: Operation) -> SourcePosition | None:
    """Where `op` (or its nearest located ancestor) came from, if known."""
    from xdsl.dialects.builtin import FileLineColLoc

    current: Operation | None = op
    while current is not None:
        loc = current.location
        if isinstance(loc, FileLineColLoc):
            return SourcePosition(loc.filename.data, loc.line.data, loc.column.data)
        current = current.parent_op()
    return None


def source_line(sources: dict[str, str], pos: SourcePosition) -> str | None:
    text = sources.get(pos.filename)
    if text is None:
        return None
    lines = text.splitlines()
    return lines[pos.line - 1] if 0 < pos.line <= len(lines) else None
