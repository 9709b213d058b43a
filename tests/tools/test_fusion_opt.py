"""`fusion-opt` as a user runs it (a subprocess): output, error format, exit statuses and
`--split-input-file` positions; never a Python traceback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fusion_compiler.tools.errors import TRACEBACK_VARIABLE, run_without_traceback

ROOT = Path(__file__).parent.parent.parent
EXAMPLES = ROOT / "examples"
SCRIPT = Path(sys.executable).parent / "fusion-opt"
COMMAND = (
    [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "fusion_compiler.tools.fusion_opt"]
)

GOOD = """\
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.relu %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
"""

BAD_ADD = """\
func.func @main(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x3xf32> {
  %y = graph.add %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
"""


def fusion_opt(*args: str) -> subprocess.CompletedProcess[str]:
    """Run fusion-opt (without FUSION_TRACEBACK) and check that it printed no traceback."""
    environment = {k: v for k, v in os.environ.items() if k != TRACEBACK_VARIABLE}
    result = subprocess.run(
        [*COMMAND, *args], capture_output=True, text=True, check=False, env=environment, cwd=ROOT
    )
    assert "Traceback" not in result.stdout + result.stderr
    return result


@pytest.fixture
def write(tmp_path: Path):
    def write(text: str, name: str = "input.mlir") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


def _error_lines(stderr: str) -> list[tuple[str, int, int, str]]:
    return [
        (m[1], int(m[2]), int(m[3]), m[4])
        for m in re.finditer(r"^(.*?):(\d+):(\d+): error: (.*)$", stderr, re.MULTILINE)
    ]


# ---------------------------------------------------------------------------------------------
# Success
# ---------------------------------------------------------------------------------------------


def test_good_input_prints_the_module_and_exits_0(write):
    result = fusion_opt(str(write(GOOD)))
    assert result.returncode == 0
    assert result.stderr == ""
    assert "%y = graph.relu %x : tensor<4x8xf32>" in result.stdout


def test_output_file(write, tmp_path):
    out = tmp_path / "out.mlir"
    result = fusion_opt(str(write(GOOD)), "-o", str(out))
    assert result.returncode == 0
    assert result.stdout == ""
    assert out.read_text() == fusion_opt(str(write(GOOD))).stdout


def test_a_failed_run_leaves_the_existing_output_file_alone(write, tmp_path):
    out = tmp_path / "out.mlir"
    out.write_text("the previous output\n")
    result = fusion_opt(str(write(BAD_ADD)), "-o", str(out))
    assert result.returncode == 1
    assert out.read_text() == "the previous output\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["input.mlir", "out.mlir"]


def test_an_interrupted_run_leaves_no_partial_output(write, tmp_path, monkeypatch):
    from fusion_compiler.tools import fusion_opt as tool

    out = tmp_path / "out.mlir"
    out.write_text("the previous output\n")
    process = tool.FusionOptMain._process
    calls = []

    def interrupted_on_the_second_chunk(self, *args):
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return process(self, *args)

    monkeypatch.setattr(tool.FusionOptMain, "_process", interrupted_on_the_second_chunk)
    source = write(GOOD + "// -----\n" + GOOD)
    assert tool.main([str(source), "--split-input-file", "-o", str(out)]) == 130
    assert len(calls) == 2  # the first chunk was written to the temporary file
    assert out.read_text() == "the previous output\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["input.mlir", "out.mlir"]


def test_a_dash_reads_standard_input():
    environment = {k: v for k, v in os.environ.items() if k != TRACEBACK_VARIABLE}
    result = subprocess.run(
        [*COMMAND, "-"], input=GOOD, capture_output=True, text=True, check=False, env=environment
    )
    assert result.returncode == 0, result.stderr
    assert "%y = graph.relu %x : tensor<4x8xf32>" in result.stdout


def test_generic_output_parses_back_to_the_same_custom_output(write):
    custom = fusion_opt(str(write(GOOD))).stdout
    generic = fusion_opt(str(write(GOOD)), "--print-op-generic").stdout
    assert '"graph.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>' in generic
    assert fusion_opt(str(write(generic, "generic.mlir"))).stdout == custom


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.mlir")), ids=lambda p: p.stem)
def test_examples_print_to_a_fixed_point(example, write):
    first = fusion_opt(str(example))
    assert first.returncode == 0, first.stderr
    second = fusion_opt(str(write(first.stdout)))
    assert second.stdout == first.stdout


# ---------------------------------------------------------------------------------------------
# Errors: `file:line:col: error: message`, the source line, a caret; exit status 1
# ---------------------------------------------------------------------------------------------


def test_verify_error_format(write):
    path = write(BAD_ADD)
    result = fusion_opt(str(path))
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"{path}:2:3: error: graph.add: operand shapes 2x3 (lhs) and 4x5 (rhs) are not "
        "broadcast-compatible",
        "  %y = graph.add %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x3xf32>",
        "  ^",
    ]


@pytest.mark.parametrize(
    ("text", "line", "col", "message"),
    [
        (GOOD.replace("%x : tensor", "%x tensor"), 2, 22, "Expected ':'"),
        (
            GOOD.replace("graph.relu", "graph.frobnicate"),
            2,
            None,
            "graph.frobnicate is not registered",
        ),
        (
            GOOD.replace("tensor<4x8xf32>\n  func", "tensor<4x9xf32>\n  func"),
            2,
            None,
            "tensor<4x9xf32>",
        ),
        (
            GOOD.replace("4x8", "?x8").replace(
                "graph.relu %x : tensor<?x8xf32>",
                "graph.reshape %x : (tensor<?x8xf32>) -> tensor<?x8xf32>",
            ),
            2,
            3,
            "graph.reshape: the result tensor<?x8xf32> has a dynamic dimension",
        ),
        (
            GOOD.replace("xf32", "xf16"),
            2,
            3,
            "graph.relu: operand #0 must have f32, i64 or i32 elements",
        ),
        (
            GOOD.replace(
                "graph.relu %x : tensor<4x8xf32>",
                "graph.transpose %x {perm = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>",
            ),
            2,
            3,
            "graph.transpose: perm [1, 1] is not a permutation of the 2 axes of 4x8",
        ),
    ],
    ids=["syntax", "unknown-op", "type-mismatch", "dynamic", "f16", "transpose"],
)
def test_bad_inputs_give_a_located_error_and_exit_1(write, text, line, col, message):
    path = write(text)
    result = fusion_opt(str(path))
    assert result.returncode == 1
    errors = _error_lines(result.stderr)
    assert len(errors) == 1, result.stderr
    filename, got_line, got_col, got_message = errors[0]
    assert filename == str(path)
    assert got_line == line
    assert col is None or got_col == col
    assert message in got_message
    source, caret = result.stderr.splitlines()[1:3]
    assert source == text.splitlines()[line - 1]
    assert caret == " " * (got_col - 1) + "^"


def test_conv2d_channel_mismatch_names_both_shapes(write):
    text = """\
func.func @main(%x: tensor<1x64x56x56xf32>, %w: tensor<64x32x3x3xf32>) -> tensor<1x64x56x56xf32> {
  %y = "graph.conv2d"(%x, %w) <{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64}> : (tensor<1x64x56x56xf32>, tensor<64x32x3x3xf32>) -> tensor<1x64x56x56xf32>
  func.return %y : tensor<1x64x56x56xf32>
}
"""
    result = fusion_opt(str(write(text)))
    assert result.returncode == 1
    [(_, line, col, message)] = _error_lines(result.stderr)
    assert (line, col) == (2, 3)
    assert "64x32x3x3" in message and "1x64x56x56" in message


def test_missing_input_file():
    result = fusion_opt("/nonexistent/input.mlir")
    assert result.returncode == 1
    assert "No such file or directory" in result.stderr
    assert "/nonexistent/input.mlir" in result.stderr


def test_llvm_target_prints_ir_that_llvm_parses():
    """`-t llvm` prints with `llvm_text`, as the JIT compiles (without the host's loop hints)."""
    import llvmlite.binding as llvm

    from fusion_compiler.driver import DEFAULT_PIPELINE, NATIVE_PIPELINE

    pipeline = ",".join([DEFAULT_PIPELINE, *NATIVE_PIPELINE])
    result = fusion_opt(str(EXAMPLES / "ffn.mlir"), "-p", pipeline, "-t", "llvm")
    assert result.returncode == 0, result.stderr
    assert 'define void @"fused_matmul_add_gelu' in result.stdout
    assert "!llvm.loop" not in result.stdout
    llvm.parse_assembly(result.stdout).verify()


def test_llvm_target_on_unlowered_ir_names_the_passes_it_needs():
    result = fusion_opt(str(EXAMPLES / "ffn.mlir"), "-t", "llvm")
    assert result.returncode == 1
    assert "-t llvm prints a module in the llvm dialect, and 'func.func' is not" in result.stderr
    assert "lower-graph,convert-loop-to-llvm" in result.stderr
    kernels = fusion_opt(str(EXAMPLES / "ffn.mlir"), "-p", "legalize-ops", "-t", "llvm")
    assert "run it through -p lower-graph,convert-loop-to-llvm" in kernels.stderr


@pytest.mark.parametrize(
    "pipeline, first",
    [
        ("fuse-ops", "run legalize-ops,annotate-pattern first"),
        ("fuse-tir", "run legalize-ops,annotate-pattern,fuse-ops first"),
        ("lower-graph", "run the fusion pipeline"),
        ("convert-loop-to-llvm", "run lower-graph"),
    ],
)
def test_a_pass_on_ir_it_cannot_act_on_says_what_must_run_first(pipeline, first):
    result = fusion_opt(str(EXAMPLES / "ffn.mlir"), "-p", pipeline)
    assert result.returncode == 1
    assert f"error: {pipeline}: the pass " in result.stderr and first in result.stderr


def test_constraint_errors_say_why(write):
    text = (
        GOOD.replace(
            "graph.relu %x : tensor<4x8xf32>",
            '"graph.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x9xf32>',
        )
        .replace("func.return %y : tensor<4x8xf32>", "func.return %y : tensor<4x9xf32>")
        .replace("-> tensor<4x8xf32> {", "-> tensor<4x9xf32> {")
    )
    result = fusion_opt(str(write(text)))
    assert result.returncode == 1
    [(_, _, _, message)] = _error_lines(result.stderr)
    assert "tensor<4x8xf32>" in message and "tensor<4x9xf32>" in message


# ---------------------------------------------------------------------------------------------
# --split-input-file: positions are those of the whole file
# ---------------------------------------------------------------------------------------------

SPLIT = """\
func.func @first(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}

// -----

func.func @second(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x3xf32> {
  %y = "graph.add"(%a, %b) : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @third(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = graph.relu %x : tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @fourth(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = "graph.transpose"(%x) <{perm = array<i64: 0, 0>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
"""


def test_split_input_file_reports_whole_file_positions(write):
    path = write(SPLIT)
    result = fusion_opt(str(path), "--split-input-file", "--verify-diagnostics")
    assert result.returncode == 0
    errors = re.findall(r"^(.*?):(\d+):(\d+): error: (.*)$", result.stdout, re.MULTILINE)
    assert [(int(line), int(col)) for _, line, col, _ in errors] == [(8, 3), (22, 3)]
    lines = SPLIT.splitlines()
    assert '"graph.add"' in lines[8 - 1] and '"graph.transpose"' in lines[22 - 1]
    assert "operand shapes 2x3 (lhs) and 4x5 (rhs)" in errors[0][3]
    assert "perm [0, 0]" in errors[1][3]
    # The chunks that verify are printed, separated like the input.
    assert result.stdout.count("// -----") == 3
    assert "func.func @first" in result.stdout and "func.func @third" in result.stdout


def test_split_input_file_stops_at_the_first_error_without_verify_diagnostics(write):
    path = write(SPLIT)
    result = fusion_opt(str(path), "--split-input-file")
    assert result.returncode == 1
    assert [(line, col) for _, line, col, _ in _error_lines(result.stderr)] == [(8, 3)]
    assert "func.func @first" in result.stdout
    assert "func.func @third" not in result.stdout


def test_split_input_file_positions_of_syntax_errors(write):
    text = SPLIT.replace("%y = graph.relu %x : tensor<2xf32>", "%y = graph.relu %x tensor<2xf32>")
    result = fusion_opt(str(write(text)), "--split-input-file", "--verify-diagnostics")
    errors = re.findall(r":(\d+):(\d+): error: (.*)$", result.stdout, re.MULTILINE)
    assert (int(errors[1][0]), int(errors[1][1])) == (15, 22)
    assert errors[1][2] == "Expected ':'"


def test_without_split_input_file_the_marker_is_a_comment(write):
    result = fusion_opt(str(write(SPLIT)))
    assert result.returncode == 1
    assert [(line, col) for _, line, col, _ in _error_lines(result.stderr)] == [(8, 3)]


# ---------------------------------------------------------------------------------------------
# -p: pass pipelines
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ("no-such-pass", "Unrecognized passes: ['no-such-pass']"),
        ("legalize-ops,no-such-pass", "no-such-pass"),
        ("fuse-ops{no-such-option=3}", "no-such-option"),
        ("fuse-ops{max-depth=}", "fuse-ops{max-depth=}"),
    ],
)
def test_bad_pipeline_is_an_error_with_exit_status_2(write, pipeline, message):
    result = fusion_opt(str(write(GOOD)), "-p", pipeline)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: invalid pass pipeline '{pipeline}'")
    assert message in result.stderr


def test_known_pipeline_runs(write):
    result = fusion_opt(
        str(EXAMPLES / "conv_block.mlir"), "-p", "legalize-ops,annotate-pattern,fuse-ops,fuse-tir"
    )
    assert result.returncode == 0, result.stderr
    assert "fused_conv2d_add_relu" in result.stdout


# ---------------------------------------------------------------------------------------------
# Internal errors (tools/errors.py): a message and status 3, the traceback only on request
# ---------------------------------------------------------------------------------------------


def _crash() -> int:
    raise RuntimeError("boom")


def test_internal_errors_have_no_traceback(capsys, monkeypatch):
    monkeypatch.delenv(TRACEBACK_VARIABLE, raising=False)
    assert run_without_traceback(_crash, "fusion-opt") == 3
    err = capsys.readouterr().err
    assert "fusion-opt: internal error: RuntimeError: boom" in err
    assert TRACEBACK_VARIABLE in err
    assert "Traceback" not in err


def test_internal_errors_show_the_traceback_on_request(monkeypatch):
    monkeypatch.setenv(TRACEBACK_VARIABLE, "1")
    with pytest.raises(RuntimeError, match="boom"):
        run_without_traceback(_crash, "fusion-opt")
