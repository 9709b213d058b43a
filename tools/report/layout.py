"""A layered drawing of the dataflow graph, computed when the report is built.

Top to bottom, one layer per step of the longest path from the inputs (Sugiyama's first step);
within a layer, nodes sit under the mean position of their producers, then, sweeping upwards,
over the mean of their consumers, pushed apart to keep a minimum gap. Each sweep is
O(n log n), so a 1,700-node model lays out in well under a second. Constants are not drawn
(each kernel node lists the bytes of the constants it reads): weights would double the width
of every layer. Group boxes are the bounding boxes of their members.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from fusion_compiler.tools.report.model import FusionReport

NODE_WIDTH = 184.0
NODE_HEIGHT = 50.0
GAP_X = 28.0
LAYER_HEIGHT = 96.0
MARGIN = 40.0
SWEEPS = 4


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class Layout:
    nodes: dict[int, Box]
    """Per drawn node id (inputs and kernels), its box."""
    groups: dict[int, Box]
    """Per group id, the box around its members."""
    width: float
    height: float


def drawn_nodes(report: FusionReport) -> list[int]:
    return [node.id for node in report.nodes if node.kind != "constant"]


def _neighbours(report: FusionReport, drawn: set[int]):
    producers: dict[int, list[int]] = defaultdict(list)
    consumers: dict[int, list[int]] = defaultdict(list)
    for edge in report.edges:
        if edge.producer in drawn and edge.consumer in drawn:
            producers[edge.consumer].append(edge.producer)
            consumers[edge.producer].append(edge.consumer)
    return producers, consumers


def _layers(order: list[int], producers, consumers) -> dict[int, int]:
    """Longest path from the sources; an input sits just above its first consumer."""
    layer: dict[int, int] = {}
    for node in order:
        layer[node] = 1 + max((layer[p] for p in producers[node]), default=-1)
    for node in order:
        if not producers[node] and consumers[node]:
            layer[node] = max(0, min(layer[c] for c in consumers[node]) - 1)
    return layer


def _place_row(row: list[int], desired: dict[int, float]) -> dict[int, float]:
    """Positions for one layer: in order of desired x, at least a node's width apart, centred
    on the desired positions."""
    ordered = sorted(row, key=lambda n: (desired[n], n))
    step = NODE_WIDTH + GAP_X
    placed: dict[int, float] = {}
    cursor = float("-inf")
    for node in ordered:
        cursor = max(desired[node], cursor + step)
        placed[node] = cursor
    shift = sum(desired[n] - placed[n] for n in ordered) / len(ordered)
    return {n: x + shift for n, x in placed.items()}


def _sweep(rows: list[list[int]], x: dict[int, float], neighbours) -> None:
    for row in rows:
        desired = {
            n: sum(x[m] for m in neighbours[n]) / len(neighbours[n]) if neighbours[n] else x[n]
            for n in row
        }
        x.update(_place_row(row, desired))


def layout(report: FusionReport) -> Layout:
    order = drawn_nodes(report)
    producers, consumers = _neighbours(report, set(order))
    layer = _layers(order, producers, consumers)
    depth = max(layer.values(), default=0) + 1
    rows: list[list[int]] = [[] for _ in range(depth)]
    for node in order:
        rows[layer[node]].append(node)
    x = {n: i * (NODE_WIDTH + GAP_X) for row in rows for i, n in enumerate(row)}
    for _ in range(SWEEPS):
        _sweep(rows, x, producers)
        _sweep(list(reversed(rows)), x, consumers)
    _sweep(rows, x, producers)
    left = min(x.values(), default=0.0) - MARGIN
    boxes = {
        n: Box(x[n] - left, MARGIN + layer[n] * LAYER_HEIGHT, NODE_WIDTH, NODE_HEIGHT)
        for n in order
    }
    width = max((b.x + b.width for b in boxes.values()), default=0.0) + MARGIN
    height = depth * LAYER_HEIGHT + MARGIN
    return Layout(boxes, _group_boxes(report, boxes), width, height)


def _group_boxes(report: FusionReport, boxes: dict[int, Box]) -> dict[int, Box]:
    pad = 10.0
    result = {}
    for group in report.groups:
        members = [boxes[n] for n in group.members if n in boxes]
        if len(group.members) < 2 or not members:
            continue
        x0 = min(b.x for b in members) - pad
        y0 = min(b.y for b in members) - pad - 14.0
        x1 = max(b.x + b.width for b in members) + pad
        y1 = max(b.y + b.height for b in members) + pad
        result[group.id] = Box(x0, y0, x1 - x0, y1 - y0)
    return result
