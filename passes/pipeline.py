"""The Python pass-manager API.

```python
from fusion_compiler.passes.pipeline import PassManager, PassTimer

timer = PassTimer()
pm = PassManager("legalize-ops,annotate-pattern,fuse-ops{max-depth=8},fuse-tir", instruments=[timer])
pm.run(module)          # verifies the IR after every pass (verify_each=True by default)
print(timer.report())
```

A pipeline is a comma-separated list of pass names with options in braces, exactly as on the
`fusion-opt -p` command line. `DEFAULT_PIPELINE` is the fusion pipeline of DESIGN.md.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import ArgSpecParseError

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import CompileError, verify_module
from fusion_compiler.passes.registry import available_passes

FUSION_PIPELINE = "legalize-ops,annotate-pattern,fuse-ops,fuse-tir"
"""TVM's fusion pipeline: graph IR in, fused `loop.func` kernels called through
`graph.call_loop` out (kernels as fuse-tir builds them, unscheduled)."""

DEFAULT_PIPELINE = f"{FUSION_PIPELINE},schedule-kernels"
"""The fusion pipeline, then the scheduling of every kernel: what `fusion-run` compiles."""

UNFUSED_PIPELINE = "legalize-ops,annotate-pattern,fuse-ops{opt-level=0},fuse-tir,schedule-kernels"
"""The default pipeline with fusion switched off: one (scheduled) kernel per graph op."""


class PassInstrument:
    """Hooks around every pass run by a `PassManager`."""

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


def parse_pipeline(spec: str) -> tuple[ModulePass, ...]:
    """The passes of a pipeline string such as `"legalize-ops,fuse-ops{max-depth=8}"`."""
    try:
        return PassPipeline.parse_spec(available_passes(), spec).passes
    except ArgSpecParseError as err:
        raise CompileError(f"invalid pass pipeline '{spec}': {err}") from None
    except (ValueError, TypeError, KeyError) as err:
        raise CompileError(f"invalid pass pipeline '{spec}': {err}") from None


class PassManager:
    """Runs a pipeline of module passes, verifying the IR after each one."""

    def __init__(
        self,
        pipeline: str | Sequence[ModulePass] = DEFAULT_PIPELINE,
        *,
        verify_each: bool = True,
        instruments: Sequence[PassInstrument] = (),
        ctx: Context | None = None,
    ):
        self.passes = parse_pipeline(pipeline) if isinstance(pipeline, str) else tuple(pipeline)
        self.verify_each = verify_each
        self.instruments = tuple(instruments)
        self.ctx = ctx or make_context()

    def run(self, module: ModuleOp) -> ModuleOp:
        """Apply every pass in order to `module`, in place; returns it for chaining."""
        for pass_ in self.passes:
            for instrument in self.instruments:
                instrument.before_pass(pass_, module)
            pass_.apply(self.ctx, module)
            for instrument in self.instruments:
                instrument.after_pass(pass_, module)
            if self.verify_each:
                self._verify_after(pass_, module)
        return module

    @staticmethod
    def _verify_after(pass_: ModulePass, module: ModuleOp) -> None:
        try:
            verify_module(module)
        except CompileError as err:
            raise CompileError(
                f"IR after pass '{pass_.name}' does not verify: {err.message}", err.op
            ) from None
