"""Progress bars for imports and compiles that take more than a second, on a terminal only.

```python
with import_progress(len(model.graph.node), "resnet50.onnx") as progress:
    module = import_model(model, progress=progress)         # one step per ONNX node
with compile_progress(DEFAULT_PIPELINE, "resnet50.onnx") as instruments:
    compiled = compile_module(module, instruments=instruments)  # one step per pass, then LLVM
```

A bar is drawn with tqdm (an optional dependency: without it there is no bar) on standard
error, only when that stream is a terminal, and only once the work has taken `DELAY` seconds,
so quick imports, cache hits, pipes, CI logs and tests print nothing. `FUSION_PROGRESS=0` turns
bars off everywhere. The compile bar names the pass that runs and ends with the LLVM step
(optimisation and code generation), which has no finer progress.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from fusion_compiler.driver import NATIVE_PIPELINE, parse_pipeline
from fusion_compiler.instruments import PassInstrument
from fusion_compiler.lowering.schedule_memo import split_schedule

__all__ = ["DELAY", "ProgressBar", "PassProgress", "compile_progress", "import_progress"]

DELAY = 1.0
"""Seconds of work before a bar appears."""

DISABLE_VARIABLE = "FUSION_PROGRESS"

LOWERING_PASSES = NATIVE_PIPELINE
"""The passes `compile_module` runs after the pipeline; the LLVM step follows them."""


def _tqdm() -> Any:
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


def shows_progress(stream: IO[str]) -> bool:
    """Whether bars are drawn on `stream`: a terminal, tqdm installed, not switched off."""
    if os.environ.get(DISABLE_VARIABLE) == "0" or _tqdm() is None:
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class ProgressBar:
    """A bar of `total` steps that appears after `delay` seconds, or a no-op (`active` False)."""

    def __init__(
        self,
        total: int,
        description: str,
        unit: str,
        *,
        stream: IO[str] | None = None,
        delay: float = DELAY,
    ):
        stream = stream if stream is not None else sys.stderr
        self.active = shows_progress(stream)
        self._bar = None
        self._start, self._delay = time.monotonic(), delay
        if self.active:
            self._bar = _tqdm()(
                total=total, desc=description, unit=unit, file=stream, delay=delay, leave=False
            )

    def update_to(self, done: int) -> None:
        """`done` steps of `total` are finished."""
        if self._bar is not None and done > self._bar.n:
            self._bar.update(done - self._bar.n)
            shown = time.monotonic() - self._start >= self._delay
            if done >= self._bar.total and shown:
                self._bar.refresh()  # the last step is drawn even within tqdm's mininterval

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.update(1)

    def set_status(self, text: str, *, now: bool = False) -> None:
        """Show `text` after the bar (the step under way): at the next redraw, or `now` (before a
        long step, during which nothing else redraws the bar), once the bar has appeared."""
        if self._bar is not None:
            shown = now and time.monotonic() - self._start >= self._delay
            self._bar.set_postfix_str(text, refresh=shown)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


@contextmanager
def import_progress(
    nodes: int, filename: str, *, stream: IO[str] | None = None, delay: float = DELAY
) -> Iterator[Callable[[int], None] | None]:
    """A `progress(done)` callback for `import_model` (None when no bar is shown)."""
    bar = ProgressBar(nodes, f"import {filename}", "node", stream=stream, delay=delay)
    try:
        yield bar.update_to if bar.active else None
        bar.update_to(nodes)
    finally:
        bar.close()


WORKERS_STATUS = "schedule-kernels, convert-loop-to-llvm, llvm"
"""The step named while worker processes schedule and compile kernels, when there are enough
of them (`lowering/schedule_workers.py`): after the last fusion pass."""


class PassProgress(PassInstrument):
    """Advances a bar by one step after each pass and names the step under way; after the pass
    named `workers_after` (the last before schedule-kernels, when the memo applies), the step
    under way is the worker processes' scheduling."""

    def __init__(self, bar: ProgressBar, workers_after: str | None = None):
        self.bar = bar
        self.workers_after = workers_after

    def before_pass(self, pass_: ModulePass, module: ModuleOp) -> None:
        self.bar.set_status(pass_.name)

    def after_pass(self, pass_: ModulePass, module: ModuleOp) -> None:
        self.bar.advance()
        if pass_.name == self.workers_after:
            self.bar.set_status(WORKERS_STATUS, now=True)
        if pass_.name == LOWERING_PASSES[0]:
            # The rest (convert-loop-to-llvm, then LLVM) runs per unit, on worker processes
            # (`lowering/native_units.py`), where no instrument sees it.
            self.bar.set_status("convert-loop-to-llvm, llvm", now=True)


@contextmanager
def compile_progress(
    pipeline: str, filename: str, *, stream: IO[str] | None = None, delay: float = DELAY
) -> Iterator[list[PassInstrument]]:
    """The instruments for `compile_module(..., instruments=...)` (empty when no bar is shown):
    one step per pass of `pipeline`, one per lowering pass, one for LLVM."""
    steps = len(parse_pipeline(pipeline)) if pipeline else 0
    bar = ProgressBar(
        steps + len(LOWERING_PASSES) + 1,
        f"compile {filename}",
        "step",
        stream=stream,
        delay=delay,
    )
    parts = split_schedule(pipeline)
    fusion = parse_pipeline(parts[0]) if parts is not None and parts[0] else ()
    workers_after = fusion[-1].name if fusion else None
    try:
        yield [PassProgress(bar, workers_after)] if bar.active else []
        bar.update_to(steps + len(LOWERING_PASSES) + 1)  # LLVM is done (or the cache hit)
    finally:
        bar.close()
