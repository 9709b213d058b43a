"""Output files of the tools: written to a temporary file beside the target and renamed onto
it only when complete, so an error, Ctrl-C or a kill never leaves a partial file and never
clobbers the file that was there."""

from __future__ import annotations

import os
import tempfile
from contextlib import suppress


class AtomicOutput:
    """A text stream to a temporary file beside `path`; `commit()` renames it onto `path`,
    leaving the `with` block (or `discard()`) without a commit removes it.

    ```python
    with AtomicOutput("out.mlir") as output:
        output.stream.write(text)
        output.commit()
    ```
    """

    def __init__(self, path: str):
        self.path = path
        directory = os.path.dirname(os.path.abspath(path))
        name = os.path.basename(path)
        descriptor, self.temporary = tempfile.mkstemp(
            dir=directory, prefix=f".{name}.", suffix=".tmp"
        )
        self.stream = os.fdopen(descriptor, "w", encoding="utf-8")
        self.done = False

    def commit(self) -> None:
        self.stream.close()
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self.temporary, 0o666 & ~umask)
        os.replace(self.temporary, self.path)
        self.done = True

    def discard(self) -> None:
        if not self.done:
            self.stream.close()
            with suppress(FileNotFoundError):
                os.unlink(self.temporary)
            self.done = True

    def __enter__(self) -> AtomicOutput:
        return self

    def __exit__(self, *exc) -> None:
        self.discard()


def write_atomically(path: str, text: str) -> None:
    """`text` written to `path` in one step: never a partial file."""
    with AtomicOutput(path) as output:
        output.stream.write(text)
        output.commit()
