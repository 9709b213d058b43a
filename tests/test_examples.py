"""The example graphs in `examples/`: the eight rows of the fusion table (`TABLE`: the ops of
each graph and the kernels TVM 0.27's FuseOps makes of it).

Every example parses, verifies and round-trips (custom and generic syntax, byte-identical), has
one `func.func @main`, and holds exactly the compute ops of its table row (`graph.constant` not
counted). Its header comment states the same op count and the expected fusion result.

When the whole default pipeline is available, each example is also fused and its kernel calls
counted against the table ("kernels before -> after").
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source, verify_module
from fusion_compiler.dialects.graph import COMPUTE_OPS, CallLoopOp, ConstantOp

EXAMPLES = Path(__file__).parent.parent / "examples"


@dataclass(frozen=True)
class Row:
    """One row of the fusion table."""

    ops: Counter[str]
    kernels_after: int
    fused_calls: int
    """How many of the kernel calls after fusion call a `fused_*` kernel."""

    @property
    def kernels_before(self) -> int:
        return sum(self.ops.values())


def _ops(*names: str) -> Counter[str]:
    return Counter(f"graph.{name}" for name in names)


TABLE = {
    "conv_block": Row(_ops("conv2d", "add", "relu"), 1, 1),
    "ffn": Row(_ops("matmul", "add", "gelu"), 1, 1),
    "add_exp_squeeze": Row(_ops("add", "exp", "squeeze"), 1, 1),
    "conv_diamond": Row(_ops("conv2d", "sigmoid", "mul", "add", "relu"), 1, 1),
    "mlp": Row(_ops(*["matmul", "add", "relu"] * 3), 3, 3),
    "layer_norm_spelled": Row(
        _ops("reduce_mean", "sub", "mul", "reduce_mean", "add", "sqrt", "div", "mul", "add"), 3, 2
    ),
    "resnet_block": Row(
        _ops("conv2d", "batch_norm", "relu", "conv2d", "batch_norm", "add", "relu"), 2, 2
    ),
    "transformer_block": Row(
        _ops(
            *["matmul", "add"] * 3,
            *["reshape", "transpose"] * 3,
            *["matmul", "mul", "softmax", "matmul", "transpose", "reshape", "matmul", "add"],
            *["add", "layer_norm", "matmul", "add", "gelu", "matmul", "add", "add", "layer_norm"],
        ),
        15,
        11,
    ),
}

NAMES = sorted(TABLE)


def _load(name: str) -> tuple[str, ModuleOp]:
    path = EXAMPLES / f"{name}.mlir"
    text = path.read_text()
    module = parse_source(make_context(), text, str(path))
    verify_module(module)
    return text, module


def _print(module: ModuleOp, generic: bool = False) -> str:
    stream = StringIO()
    printer = Printer(stream=stream, print_generic_format=generic)
    printer.print_op(module)
    return stream.getvalue()


def _main(module: ModuleOp) -> func.FuncOp:
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    assert [f.sym_name.data for f in funcs] == ["main"]
    return funcs[0]


def test_every_example_is_in_the_table():
    assert sorted(path.stem for path in EXAMPLES.glob("*.mlir")) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_example_has_the_ops_of_its_table_row(name: str):
    _, module = _load(name)
    main = _main(module)
    compute = [op for op in main.walk() if isinstance(op, COMPUTE_OPS)]
    others = [
        op.name
        for op in main.walk()
        if op is not main and not isinstance(op, (*COMPUTE_OPS, ConstantOp, func.ReturnOp))
    ]
    assert others == []
    assert Counter(op.name for op in compute) == TABLE[name].ops
    assert len(compute) == TABLE[name].kernels_before


@pytest.mark.parametrize("name", NAMES)
def test_example_header_states_the_table_row(name: str):
    text, _ = _load(name)
    row = TABLE[name]
    assert f"// Compute ops: {row.kernels_before} " in text
    assert f"{row.kernels_before} kernels -> {row.kernels_after}" in text


@pytest.mark.parametrize("name", NAMES)
def test_example_round_trips(name: str):
    _, module = _load(name)
    custom = _print(module)
    generic = _print(module, generic=True)
    ctx = make_context()
    assert _print(parse_source(ctx, custom, "custom.mlir")) == custom
    assert _print(parse_source(ctx, generic, "generic.mlir")) == custom
    assert _print(parse_source(ctx, generic, "generic.mlir"), generic=True) == generic


def test_transformer_has_29_compute_ops():
    _, module = _load("transformer_block")
    assert sum(isinstance(op, COMPUTE_OPS) for op in module.walk()) == 29


def _pipeline_available() -> bool:
    """Whether every pass of the default pipeline can be imported (they are written in stages)."""
    from fusion_compiler.driver import PASSES

    try:
        for name in ("legalize-ops", "annotate-pattern", "fuse-ops", "fuse-tir"):
            PASSES[name]()
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _pipeline_available(), reason="the fusion passes are not all there yet")
@pytest.mark.parametrize("name", NAMES)
def test_example_fuses_as_in_the_table(name: str):
    from fusion_compiler.driver import DEFAULT_PIPELINE, PassManager

    _, module = _load(name)
    PassManager(DEFAULT_PIPELINE, ctx=make_context()).run(module)
    calls = [op for op in _main(module).walk() if isinstance(op, CallLoopOp)]
    callees = [call.callee.string_value() for call in calls]
    row = TABLE[name]
    assert len(calls) == row.kernels_after, callees
    assert sum(bool(re.match("fused_", c)) for c in callees) == row.fused_calls, callees
