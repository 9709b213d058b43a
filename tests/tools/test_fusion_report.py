"""`fusion-report`: the report's numbers against hand counts, its kernels against the compiled
pipeline's, each output format, and the command line's errors."""

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.graph import CallLoopOp
from fusion_compiler.driver import FUSION_PIPELINE, UNFUSED_PIPELINE, PassManager
from fusion_compiler.tools.fusion_report import main, render
from fusion_compiler.tools.report.layout import layout
from fusion_compiler.tools.report.model import build_report
from fusion_compiler.tools.report.summary import Timings, text_summary
from fusion_compiler.tools.report.traffic import model_traffic

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

ADD_RELU = """
func.func @main(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %s = graph.add %a, %b : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %r = graph.relu %s : tensor<32x32xf32>
  func.return %r : tensor<32x32xf32>
}
"""

CONV_MAP = 64 * 56 * 56 * 4
"""Bytes of one 1x64x56x56 f32 feature map of the conv examples."""


def _parse(text: str, name: str = "test.mlir") -> ModuleOp:
    return parse_source(make_context(), text, name)


def _report(text: str, pipeline: str = FUSION_PIPELINE):
    return build_report(_parse(text), "test.mlir", "main", pipeline)


def _example(name: str) -> str:
    return (EXAMPLES / name).read_text()


def test_add_relu_by_hand():
    traffic = model_traffic(_report(ADD_RELU))
    # The add's result (4 KiB) is written once and read once by the relu without fusion.
    assert (traffic.launches_unfused, traffic.launches_fused) == (2, 1)
    assert (traffic.bytes_unfused, traffic.bytes_fused) == (2 * 32 * 32 * 4, 0)


def test_add_relu_unfused_build_saves_nothing():
    traffic = model_traffic(_report(ADD_RELU, UNFUSED_PIPELINE))
    assert (traffic.launches_unfused, traffic.launches_fused) == (2, 2)
    assert traffic.bytes_unfused == traffic.bytes_fused == 2 * 32 * 32 * 4


def test_conv_block_by_hand():
    report = _report(_example("conv_block.mlir"))
    traffic = model_traffic(report)
    # conv2d -> add -> relu: two intermediates, each written once and read once.
    assert (traffic.launches_unfused, traffic.launches_fused) == (3, 1)
    assert (traffic.bytes_unfused, traffic.bytes_fused) == (4 * CONV_MAP, 0)
    assert [g.kernel for g in report.groups] == ["fused_conv2d_add_relu"]
    assert all(edge.fused for edge in report.edges if _both_kernels(report, edge))


def test_diamond_by_hand():
    traffic = model_traffic(_report(_example("conv_diamond.mlir")))
    # y: one write, two reads (sigmoid, mul); gate, scaled, sum: one write, one read each.
    assert (traffic.launches_unfused, traffic.launches_fused) == (5, 1)
    assert (traffic.bytes_unfused, traffic.bytes_fused) == (9 * CONV_MAP, 0)


def _both_kernels(report, edge) -> bool:
    return report.nodes[edge.producer].kind == report.nodes[edge.consumer].kind == "kernel"


def _compiled_kernels(text: str) -> list[str]:
    module = _parse(text)
    PassManager(FUSION_PIPELINE).run(module)
    main_function = next(
        op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == "main"
    )
    return [op.callee.string_value() for op in main_function.walk() if isinstance(op, CallLoopOp)]


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.mlir")))
def test_kernels_are_the_compiled_models(example):
    report = _report(_example(example))
    assert sorted(g.kernel for g in report.groups) == sorted(_compiled_kernels(_example(example)))


def test_refused_edges_carry_the_rule():
    report = _report(_example("transformer_block.mlir"))
    refused = report.refused_edges()
    assert refused
    assert all(edge.refusal and not edge.fused for edge in refused)
    assert any("out_ewise_fusable" in edge.refusal for edge in refused)


def test_every_op_is_in_exactly_one_group():
    report = _report(_example("transformer_block.mlir"))
    kernels = [n.id for n in report.nodes if n.kind == "kernel"]
    members = [m for g in report.groups for m in g.members]
    assert sorted(members) == kernels


def test_json_schema():
    report = _report(_example("conv_diamond.mlir"))
    data = json.loads(render(report, "json", Timings(fused_total=1.0, unfused_total=2.0)))
    assert data["version"] == 1
    assert set(data) == {
        "version",
        "source",
        "entry",
        "pipeline",
        "nodes",
        "edges",
        "groups",
        "totals",
    }
    assert set(data["nodes"][0]) == {
        "id", "kind", "label", "op", "shape", "dtype", "bytes", "pattern", "group", "returned"
    }  # fmt: skip
    assert set(data["edges"][0]) == {"producer", "consumer", "bytes", "fused", "refusal"}
    assert data["totals"]["bytes_unfused"] == 9 * CONV_MAP
    assert data["totals"]["ms_fused"] == 1.0
    assert data["groups"][0]["kernel"] == "fused_conv2d_sigmoid_mul_add_relu"


def test_svg_is_well_formed_and_draws_every_group():
    report = _report(_example("transformer_block.mlir"))
    root = ElementTree.fromstring(render(report, "svg", None))
    ids = {element.get("id") for element in root.iter()}
    fused = [g for g in report.groups if len(g.members) > 1]
    assert all(f"group-{g.id}" in ids for g in fused)
    kernels = [n for n in report.nodes if n.kind == "kernel"]
    assert all(f"node-{n.id}" in ids for n in kernels)


def test_layout_keeps_producers_above_consumers():
    report = _report(_example("transformer_block.mlir"))
    boxes = layout(report).nodes
    for edge in report.edges:
        if edge.producer in boxes and edge.consumer in boxes:
            assert boxes[edge.producer].y < boxes[edge.consumer].y


def test_dot_has_a_cluster_per_fused_group():
    report = _report(_example("resnet_block.mlir"))
    dot = render(report, "dot", None)
    assert dot.count("subgraph cluster_") == sum(1 for g in report.groups if len(g.members) > 1)
    assert dot.startswith('digraph "main" {')


def test_text_summary_lists_groups_and_totals():
    text = text_summary(_report(_example("conv_diamond.mlir")))
    assert "fused_conv2d_sigmoid_mul_add_relu" in text
    assert "5 -> 1 kernel launches" in text


def test_command_line_writes_html(tmp_path, capsys):
    output = tmp_path / "report.html"
    assert main([str(EXAMPLES / "conv_block.mlir"), "-o", str(output)]) == 0
    page = output.read_text()
    assert page.startswith("<!DOCTYPE html>") and "fused_conv2d_add_relu" in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "fused_conv2d_add_relu" in capsys.readouterr().out


def test_command_line_format_from_suffix(tmp_path):
    output = tmp_path / "report.json"
    assert main([str(EXAMPLES / "conv_block.mlir"), "-o", str(output)]) == 0
    assert json.loads(output.read_text())["entry"] == "main"


def test_command_line_run_measures_both_builds(tmp_path, capsys):
    output = tmp_path / "report.json"
    assert (
        main([str(EXAMPLES / "add_exp_squeeze.mlir"), "--run", "--runs", "2", "-o", str(output)])
        == 0
    )
    totals = json.loads(output.read_text())["totals"]
    assert totals["ms_fused"] > 0 and totals["ms_unfused"] > 0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["missing.mlir"], "No such file"),
        ([str(EXAMPLES / "conv_block.mlir"), "--entry", "nope"], "no function @nope"),
        (
            [str(EXAMPLES / "conv_block.mlir"), "--pipeline", "no-such-pass"],
            "invalid pass pipeline",
        ),
    ],
)
def test_command_line_errors(arguments, message, capsys):
    assert main(arguments) == 1
    assert message in capsys.readouterr().err


def test_output_directory_is_an_error(tmp_path, capsys):
    assert main([str(EXAMPLES / "conv_block.mlir"), "-o", str(tmp_path)]) == 1
    assert "is a directory" in capsys.readouterr().err


DYNAMIC = """func.func @main(%x: tensor<?x8xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32> {
  %a = graph.add %x, %b : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %r = graph.relu %a : tensor<?x8xf32>
  func.return %r : tensor<?x8xf32>
}
"""


def test_dynamic_ir_is_reported_for_the_shapes_given(tmp_path, capsys):
    path = tmp_path / "dynamic.mlir"
    path.write_text(DYNAMIC)
    out = tmp_path / "report.json"
    assert main([str(path), "--input-shape", "x=4x8", "-o", str(out)]) == 0
    assert "fused_add_relu" in out.read_text()
    capsys.readouterr()
    assert main([str(path), "-o", str(out)]) == 1
    assert "argument %x has the dynamic type tensor<?x8xf32> and no shape was given" in (
        capsys.readouterr().err
    )
