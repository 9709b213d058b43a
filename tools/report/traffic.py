"""Kernel launches and intermediate memory traffic, without fusion and with it.

The seed's argument for fusion: without it, every value one kernel produces for another is
written to memory and read back by each consumer; inside a fused kernel it stays in registers
or cache. Counted per value produced by a kernel call, from the tensor types:

- without fusion (one kernel per op): the producer writes the value once, and each distinct
  consuming kernel reads it once;
- with fusion: the write happens only if a kernel of another group reads it, and each distinct
  consuming group other than the producer's reads it once.

A value the function returns is written in both builds (it is an output, not an intermediate):
its write is left out of both counts, its reads by other kernels are counted. Inputs and
constants are read by their consumers in both builds and are not intermediates. These are
compulsory bytes of the dataflow; caches may hide some of them, tiling inside a kernel may
read an input more than once: the profiler measures what actually happens.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from fusion_compiler.tools.report.model import FusionReport, ReportEdge


@dataclass(frozen=True)
class Traffic:
    """Launches and intermediate bytes (written + read back), without and with fusion."""

    launches_unfused: int
    launches_fused: int
    bytes_unfused: int
    bytes_fused: int

    @property
    def bytes_saved(self) -> int:
        return self.bytes_unfused - self.bytes_fused


def _consumers(report: FusionReport) -> dict[int, list[ReportEdge]]:
    """Per kernel node, its outgoing edges to kernel consumers."""
    kernel = {node.id for node in report.nodes if node.kind == "kernel"}
    out: dict[int, list[ReportEdge]] = defaultdict(list)
    for edge in report.edges:
        if edge.producer in kernel and edge.consumer in kernel:
            out[edge.producer].append(edge)
    return out


def _value_traffic(report: FusionReport, node: int, edges: list[ReportEdge]) -> tuple[int, int]:
    """(unfused, fused) bytes moved for the results of kernel node `node`."""
    if not edges:
        return 0, 0
    size = report.nodes[node].bytes
    write = 0 if report.nodes[node].returned else size
    group = report.nodes[node].group
    consumers = {edge.consumer for edge in edges}
    other_groups = {report.nodes[c].group for c in consumers} - {group}
    unfused = write + size * len(consumers)
    fused = (write + size * len(other_groups)) if other_groups else 0
    return unfused, fused


def group_traffic(report: FusionReport) -> list[Traffic]:
    """Per group of `report.groups`: its launches and the traffic of the values it produces."""
    out = _consumers(report)
    totals = [[len(g.members), 1, 0, 0] for g in report.groups]
    for node in report.nodes:
        if node.kind != "kernel" or node.group is None:
            continue
        unfused, fused = _value_traffic(report, node.id, out.get(node.id, []))
        totals[node.group][2] += unfused
        totals[node.group][3] += fused
    return [Traffic(*row) for row in totals]


def model_traffic(report: FusionReport) -> Traffic:
    """The whole function's launches and intermediate traffic."""
    rows = group_traffic(report)
    return Traffic(
        sum(r.launches_unfused for r in rows),
        sum(r.launches_fused for r in rows),
        sum(r.bytes_unfused for r in rows),
        sum(r.bytes_fused for r in rows),
    )


def format_bytes(count: float) -> str:
    """`1536` → `1.5 KiB`; binary units, three significant digits."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(count) < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.3g} {unit}"
        count /= 1024
    raise AssertionError("unreachable")
