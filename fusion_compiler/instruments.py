"""Hooks a `PassManager` runs around every pass: IR printing, timing, progress bars."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer


class PassInstrument:
    """Hooks around every pass run by a `PassManager`; the defaults do nothing."""

    def before_pass(self, pass_: ModulePass, module: ModuleOp) -> None:
        pass

    def after_pass(self, pass_: ModulePass, module: ModuleOp) -> None:
        pass


@dataclass
class PrintIRAfterPass(PassInstrument):
    """Prints the module after every pass, headed `// -----// IR after <pass> //----- //`."""

    stream: IO[str] = field(default_factory=lambda: sys.stderr)

    def after_pass(self, pass_: ModulePass, module: ModuleOp) -> None:
        print(f"// -----// IR after {pass_.pipeline_pass_spec()} //----- //", file=self.stream)
        Printer(stream=self.stream).print_op(module)
        print("\n", file=self.stream)


@dataclass
class PassTimer(PassInstrument):
    """Measures the wall time of every pass (verification excluded)."""

    timings: list[tuple[str, float]] = field(default_factory=list)
    _start: float = 0.0

    def before_pass(self, pass_: ModulePass, module: ModuleOp) -> None:
        self._start = time.perf_counter()

    def after_pass(self, pass_: ModulePass, module: ModuleOp) -> None:
        self.timings.append((pass_.name, time.perf_counter() - self._start))

    def report(self) -> str:
        total = sum(seconds for _, seconds in self.timings)
        width = max([len(name) for name, _ in self.timings] + [5])
        lines = ["===-- pass execution timing report --===", f"{'pass':<{width}}   seconds"]
        lines += [f"{name:<{width}}   {seconds:.4f}" for name, seconds in self.timings]
        lines.append(f"{'total':<{width}}   {total:.4f}")
        return "\n".join(lines)
