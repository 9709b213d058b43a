"""The report's graph as SVG: nodes by pattern kind, group boxes, edges by what they cost.

Edges inside a fused group are solid and green (the value stays in the kernel); edges through
memory are grey and dashed; edges between two kernels that fuse-ops refused to fuse are red and
dashed, with the rule in their tooltip. Every edge is labelled with its tensor's bytes. Element
ids and `data-` attributes are what the HTML page's script and the browser test look up.
"""

from __future__ import annotations

from html import escape

from fusion_compiler.tools.report.layout import Box, Layout
from fusion_compiler.tools.report.model import FusionReport, ReportEdge, ReportNode
from fusion_compiler.tools.report.traffic import format_bytes

PATTERN_COLOURS = {
    "elemwise": "#d9f2d9",
    "broadcast": "#d5f0ef",
    "injective": "#dbe7fb",
    "comm_reduce": "#eadcf7",
    "out_ewise_fusable": "#fde2c8",
    "tuple": "#f3f3c9",
    "opaque": "#e6e6e6",
}

STYLE = """
.node rect { stroke: #555; stroke-width: 1; }
.node.input rect { fill: #ffffff; stroke-dasharray: 3 2; }
.node text { font: 12px sans-serif; fill: #222; }
.node text.op { font-weight: bold; }
.node.match rect { stroke: #d40000; stroke-width: 3; }
.group rect { fill: none; stroke: #2b7a2b; stroke-width: 2; rx: 10; }
.group text { font: bold 12px sans-serif; fill: #2b7a2b; }
.edge { fill: none; stroke-width: 1.5; }
.edge.fused { stroke: #2b9a2b; stroke-width: 2.5; }
.edge.memory { stroke: #888; stroke-dasharray: 5 3; }
.edge.refused { stroke: #d04040; stroke-dasharray: 5 3; }
.edge-label { font: 10px sans-serif; fill: #555; }
"""


def _edge_class(edge: ReportEdge) -> str:
    if edge.fused:
        return "fused"
    return "refused" if edge.refusal is not None else "memory"


def _edge_svg(edge: ReportEdge, source: Box, target: Box) -> str:
    x0, y0 = source.x + source.width / 2, source.y + source.height
    x1, y1 = target.x + target.width / 2, target.y
    bend = max(24.0, (y1 - y0) / 2)
    path = (
        f"M{x0:.1f},{y0:.1f} C{x0:.1f},{y0 + bend:.1f} {x1:.1f},{y1 - bend:.1f} {x1:.1f},{y1:.1f}"
    )
    size = format_bytes(edge.bytes)
    tip = f"{size}" + (f"; not fused: {edge.refusal}" if edge.refusal else "")
    kind = _edge_class(edge)
    label_x, label_y = (x0 + x1) / 2 + 4, (y0 + y1) / 2 + 3
    return (
        f'<path class="edge {kind}" data-producer="{edge.producer}" '
        f'data-consumer="{edge.consumer}" d="{path}" marker-end="url(#arrow)">'
        f"<title>{escape(tip)}</title></path>"
        f'<text class="edge-label" x="{label_x:.1f}" y="{label_y:.1f}">{escape(size)}</text>'
    )


def _node_svg(node: ReportNode, box: Box, constants: int, kernel: str | None) -> str:
    shape = "x".join(str(d) for d in node.shape) or "scalar"
    third = node.pattern if node.kind == "kernel" else "input"
    if constants:
        third += f" + {format_bytes(constants)} const"
    tip = f"{node.label}: {node.op} {shape}x{node.dtype} ({format_bytes(node.bytes)}), {third}"
    if kernel:
        tip += f"; kernel {kernel}"
    fill = PATTERN_COLOURS.get(node.pattern, "#e6e6e6") if node.kind == "kernel" else "#fff"
    cx = box.x + 8
    return (
        f'<g class="node {node.kind}" id="node-{node.id}" data-label="{escape(node.label)}" '
        f'data-kernel="{escape(kernel or "")}">'
        f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.width:.0f}" '
        f'height="{box.height:.0f}" rx="5" fill="{fill}"/>'
        f'<text class="op" x="{cx:.1f}" y="{box.y + 15:.1f}">{escape(node.label)}</text>'
        f'<text x="{cx:.1f}" y="{box.y + 30:.1f}">{escape(shape)} {escape(node.dtype)}</text>'
        f'<text x="{cx:.1f}" y="{box.y + 44:.1f}">{escape(third)}</text>'
        f"<title>{escape(tip)}</title></g>"
    )


def _constant_bytes(report: FusionReport) -> dict[int, int]:
    """Per consumer node, the bytes of the constants it reads (constants are not drawn)."""
    constants = {node.id for node in report.nodes if node.kind == "constant"}
    result: dict[int, int] = {}
    for edge in report.edges:
        if edge.producer in constants:
            result[edge.consumer] = result.get(edge.consumer, 0) + edge.bytes
    return result


def render_svg(report: FusionReport, drawing: Layout) -> str:
    """The standalone SVG document of the report's graph."""
    parts = [
        f'<svg id="graph" xmlns="http://www.w3.org/2000/svg" width="{drawing.width:.0f}" '
        f'height="{drawing.height:.0f}" viewBox="0 0 {drawing.width:.0f} {drawing.height:.0f}">',
        f"<style>{STYLE}</style>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#777"/></marker></defs>',
    ]
    for group in report.groups:
        box = drawing.groups.get(group.id)
        if box is None:
            continue
        parts.append(
            f'<g class="group" id="group-{group.id}" data-kernel="{escape(group.kernel)}">'
            f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.width:.1f}" '
            f'height="{box.height:.1f}"/><text x="{box.x + 8:.1f}" y="{box.y + 14:.1f}">'
            f"{escape(group.kernel)}</text></g>"
        )
    for edge in report.edges:
        source, target = drawing.nodes.get(edge.producer), drawing.nodes.get(edge.consumer)
        if source is not None and target is not None:
            parts.append(_edge_svg(edge, source, target))
    constants = _constant_bytes(report)
    for node in report.nodes:
        box = drawing.nodes.get(node.id)
        if box is None:
            continue
        kernel = report.groups[node.group].kernel if node.group is not None else None
        parts.append(_node_svg(node, box, constants.get(node.id, 0), kernel))
    parts.append("</svg>")
    return "\n".join(parts)
