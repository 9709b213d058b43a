"""`fusion-opt`: xDSL's opt driver with the graph and loop dialects and the fusion passes.

Every flag of `xdsl-opt` keeps working (`-p`, `--split-input-file`, `--verify-diagnostics`,
`--print-op-generic`, `-t llvm`, `--print-between-passes`, `--time-passes`, ...). Differences:

- parse and verify errors print `file:line:col: error: message` with the source line and a
  caret, on stderr, and the exit status is 1 (with `--verify-diagnostics` they go to stdout and
  the status is 0, as in xdsl-opt, so lit tests can check them);
- the IR is verified after every pass and a failure names the pass;
- `--print-between-passes` and `--time-passes` are served by the project's pass manager.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from itertools import accumulate

from xdsl.dialects.builtin import ModuleOp
from xdsl.xdsl_opt_main import xDSLOptMain

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.context import DIALECTS
from fusion_compiler.dialects.diagnostics import CompileError, parse_source, verify_module
from fusion_compiler.driver import DEFAULT_PIPELINE, NATIVE_PIPELINE, PASSES, PassManager
from fusion_compiler.errors import FusionError
from fusion_compiler.instruments import PassTimer, PrintIRAfterPass
from fusion_compiler.tools.errors import format_error, run_without_traceback
from fusion_compiler.tools.output_files import AtomicOutput

SPLIT_MARKER = "// -----"


def _llvm_text_target() -> type:
    """`-t llvm`'s target, imported when asked for: the LLVM dialect and llvmlite's library
    are 50 ms of every `fusion-opt` start (each lit test's), which most runs never use."""
    from fusion_compiler.lowering.llvm_text import LLVMTextTarget  # (no llvmlite objects)

    return LLVMTextTarget


class FusionOptMain(xDSLOptMain):
    """The opt driver of the project."""

    pass_manager: PassManager | None = None
    pipeline_error: FusionError | None = None

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(
            description="fusion-opt: the fusion compiler's modular optimizer", args=args
        )

    def register_all_dialects(self):
        super().register_all_dialects()
        registered = set(self.ctx.registered_dialect_names)
        for dialect in DIALECTS:
            if dialect.name not in registered:
                self.ctx.register_dialect(dialect.name, lambda d=dialect: d)

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in PASSES.items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        super().register_all_targets()
        self.available_targets["llvm"] = _llvm_text_target

    def setup_pipeline(self):
        instruments = []
        self.timer = PassTimer() if self.args.time_passes else None
        if self.timer is not None:
            instruments.append(self.timer)
        if self.args.print_between_passes:
            instruments.append(PrintIRAfterPass(sys.stdout))
        try:
            self.pass_manager = PassManager(
                self.args.passes,
                verify="off" if self.args.disable_verify else "each",
                instruments=instruments,
                ctx=self.ctx,
            )
        except FusionError as err:
            self.pipeline_error = err

    def run(self) -> int:
        if self.pipeline_error is not None:
            print(format_error(self.pipeline_error), file=sys.stderr)
            return 2
        if self.args.input_file == "-":  # standard input, as in mlir-opt
            self.args.input_file = None
        name = self.get_input_name()
        text = self._read_input()
        if not self.args.output_file:
            status = self._run_chunks(text, name, sys.stdout)
        else:  # complete or nothing: an error or Ctrl-C leaves the file that was there
            with AtomicOutput(self.args.output_file) as output:
                status = self._run_chunks(text, name, output.stream)
                if status == 0:
                    output.commit()
        if self.timer is not None:
            print(self.timer.report(), file=sys.stderr)
        return status

    def _read_input(self) -> str:
        stream, _ = self.get_input_stream()
        with stream:
            return stream.read().decode("utf-8")

    def _chunks(self, text: str) -> list[tuple[str, int]]:
        if not self.args.split_input_file:
            return [(text, 0)]
        pieces = text.split(SPLIT_MARKER)
        offsets = accumulate([0, *[piece.count("\n") for piece in pieces[:-1]]])
        return list(zip(pieces, offsets, strict=True))

    def _run_chunks(self, text: str, name: str, output) -> int:
        for index, (chunk, line_offset) in enumerate(self._chunks(text)):
            if index > 0:
                output.write(f"{SPLIT_MARKER}\n")
            try:
                output.write(self._process(chunk, name, line_offset))
            except CompileError as err:
                if self.args.verify_diagnostics or self.args.parsing_diagnostics:
                    print(err.format({name: text}))
                    continue
                print(err.format({name: text}), file=sys.stderr)
                return 1
            output.flush()
        return 0

    def _process(self, chunk: str, name: str, line_offset: int) -> str:
        module = parse_source(self.ctx, chunk, name, line_offset)
        if not self.args.disable_verify:
            verify_module(module)
        assert self.pass_manager is not None
        self.pass_manager.run(module)
        if self.args.target == "llvm":
            _require_llvm_dialect(module)
        try:
            return self.output_resulting_program(module)
        except CompileError:
            raise
        except Exception as err:  # a target that cannot print this IR
            raise CompileError(f"cannot emit target '{self.args.target}': {err}") from None


def _require_llvm_dialect(module: ModuleOp) -> None:
    """`-t llvm` prints the llvm dialect as LLVM IR: say which passes get a module there."""
    left = next((op for op in module.ops if not op.name.startswith("llvm.")), None)
    if left is None:
        return
    lowering = ",".join(NATIVE_PIPELINE)
    needed = lowering if isinstance(left, loop.FuncOp) else f"{DEFAULT_PIPELINE},{lowering}"
    raise CompileError(
        f"-t llvm prints a module in the llvm dialect, and '{left.name}' is not: "
        f"run it through -p {needed}",
        left,
    )


def main(argv: Sequence[str] | None = None) -> int:
    return run_without_traceback(lambda: FusionOptMain(argv).run(), "fusion-opt")


if __name__ == "__main__":
    sys.exit(main())
