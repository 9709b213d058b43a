"""The driver's verification policy: after each pass (the test pipeline's), after the whole
pipeline (users' compiles), or never."""

from dataclasses import dataclass

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import CompileError, parse_source
from fusion_compiler.driver import VERIFY_EACH_VARIABLE, PassManager, verify_policy

SOURCE = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.relu %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
"""


@dataclass(frozen=True)
class BreakTerminator(ModulePass):
    """Moves the first op of @main behind its return: IR that does not verify."""

    name = "break-terminator"

    def apply(self, ctx, op: ModuleOp) -> None:
        (main,) = [f for f in op.ops if isinstance(f, func.FuncOp)]
        block = main.body.block
        first = block.first_op
        assert first is not None
        first.detach()
        block.add_op(first)


@dataclass(frozen=True)
class DoNothing(ModulePass):
    name = "do-nothing"

    def apply(self, ctx, op: ModuleOp) -> None:
        pass


def module() -> ModuleOp:
    return parse_source(make_context(), SOURCE, "verify.mlir")


def test_each_names_the_pass_that_broke_the_ir():
    with pytest.raises(CompileError, match="IR after pass 'break-terminator' does not verify"):
        PassManager([BreakTerminator(), DoNothing()], verify="each").run(module())


def test_end_names_the_pipeline_and_how_to_find_the_pass():
    with pytest.raises(CompileError) as caught:
        PassManager([BreakTerminator(), DoNothing()], verify="end").run(module())
    message = str(caught.value)
    assert "pipeline 'break-terminator,do-nothing'" in message
    assert f"{VERIFY_EACH_VARIABLE}=1" in message


def test_off_leaves_verification_to_the_caller():
    broken = PassManager([BreakTerminator()], verify="off").run(module())
    assert isinstance(broken.body.block.first_op, func.FuncOp)


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="verify must be one of"):
        PassManager([DoNothing()], verify="sometimes")


def test_the_compile_functions_follow_the_environment(monkeypatch):
    monkeypatch.setenv(VERIFY_EACH_VARIABLE, "1")
    assert verify_policy() == "each"
    monkeypatch.setenv(VERIFY_EACH_VARIABLE, "0")
    assert verify_policy() == "end"
    monkeypatch.delenv(VERIFY_EACH_VARIABLE)
    assert verify_policy() == "end"


def test_the_test_suite_verifies_after_each_pass():
    # tests/conftest.py sets it, so every compile of the suite checks every pass's output.
    assert verify_policy() == "each"


def test_a_compile_verifies_its_input_and_its_result_only(monkeypatch):
    """Users' compiles ("end"): the parsed input, then the lowered module; not the graph
    passes' result in between (densenet121's graph module: 0.08 s)."""
    from fusion_compiler import driver
    from fusion_compiler.dialects import diagnostics

    monkeypatch.setenv(VERIFY_EACH_VARIABLE, "0")
    verified = []
    original = diagnostics.verify_module
    monkeypatch.setattr(diagnostics, "verify_module", lambda m: verified.append(m) or original(m))
    driver.compile_module(module(), cache=False)
    assert len(verified) == 2
