"""The report's graph in Graphviz's dot language: one cluster per fused group."""

from __future__ import annotations

import json

from fusion_compiler.tools.report.model import FusionReport
from fusion_compiler.tools.report.traffic import format_bytes


def _quote(text: str) -> str:
    return json.dumps(text)


def render_dot(report: FusionReport) -> str:
    lines = [f"digraph {_quote(report.entry)} {{", "  node [shape=box, fontsize=10];"]
    drawn = {node.id for node in report.nodes if node.kind != "constant"}
    for group in report.groups:
        if len(group.members) < 2:
            continue
        lines.append(f"  subgraph cluster_{group.id} {{ label={_quote(group.kernel)};")
        lines += [f"    n{member};" for member in group.members]
        lines.append("  }")
    for node in report.nodes:
        if node.id not in drawn:
            continue
        shape = "x".join(str(d) for d in node.shape)
        label = f"{node.label}\n{shape} {node.dtype}\n{node.pattern}"
        lines.append(f"  n{node.id} [label={_quote(label)}];")
    for edge in report.edges:
        if edge.producer not in drawn or edge.consumer not in drawn:
            continue
        style = "solid" if edge.fused else "dashed"
        colour = "darkgreen" if edge.fused else ("red" if edge.refusal else "gray40")
        attrs = f"label={_quote(format_bytes(edge.bytes))}, style={style}, color={colour}"
        if edge.refusal:
            attrs += f", tooltip={_quote(edge.refusal)}"
        lines.append(f"  n{edge.producer} -> n{edge.consumer} [{attrs}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
