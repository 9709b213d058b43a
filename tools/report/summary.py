"""The report's tables: one row per kernel of the fused model, and the model's totals.

Printed to the terminal by `fusion-report` and shown in the HTML page. Measured times are
optional (`Timings`): per kernel of the fused build and per kernel of the unfused build (whose
kernels are the report's kernel nodes, one per op), as the profiler or `--run` gives them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fusion_compiler.tools.report.model import FusionReport
from fusion_compiler.tools.report.traffic import Traffic, format_bytes, group_traffic, model_traffic


@dataclass(frozen=True)
class Timings:
    """Measured milliseconds per run: per kernel name, fused and unfused, and whole runs."""

    fused_kernels: dict[str, float] = field(default_factory=dict)
    unfused_kernels: dict[str, float] = field(default_factory=dict)
    fused_total: float | None = None
    unfused_total: float | None = None


@dataclass(frozen=True)
class GroupRow:
    kernel: str
    ops: tuple[str, ...]
    pattern: str
    traffic: Traffic
    fused_ms: float | None
    unfused_ms: float | None


def group_rows(report: FusionReport, timings: Timings | None = None) -> list[GroupRow]:
    """One row per kernel of the fused model, in launch order (by first member)."""
    timings = timings or Timings()
    rows = []
    for group, traffic in zip(report.groups, group_traffic(report), strict=True):
        labels = tuple(report.nodes[n].label for n in group.members)
        unfused = [timings.unfused_kernels.get(label) for label in labels]
        unfused_ms = (
            sum(t for t in unfused if t is not None)
            if all(t is not None for t in unfused)
            else None
        )
        fused_ms = timings.fused_kernels.get(group.kernel)
        rows.append(GroupRow(group.kernel, labels, group.pattern, traffic, fused_ms, unfused_ms))
    return rows


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def text_summary(report: FusionReport, timings: Timings | None = None) -> str:
    """The terminal table: fused groups (two or more ops) and the model's totals."""
    timings = timings or Timings()
    rows = [row for row in group_rows(report, timings) if len(row.ops) > 1]
    total = model_traffic(report)
    header = ["kernel", "ops", "launches", "intermediate bytes", "ms unfused -> fused"]
    table = [header]
    for row in rows:
        t = row.traffic
        table.append(
            [
                row.kernel,
                " ".join(row.ops),
                f"{t.launches_unfused} -> {t.launches_fused}",
                f"{format_bytes(t.bytes_unfused)} -> {format_bytes(t.bytes_fused)}",
                f"{_ms(row.unfused_ms)} -> {_ms(row.fused_ms)}",
            ]
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = [f"@{report.entry} of {report.source}: {len(rows)} fused groups"]
    lines += [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)) for line in table
    ]
    lines.append(
        f"model: {total.launches_unfused} -> {total.launches_fused} kernel launches; "
        f"intermediate traffic {format_bytes(total.bytes_unfused)} -> "
        f"{format_bytes(total.bytes_fused)} (saves {format_bytes(total.bytes_saved)}); "
        f"{len(report.refused_edges())} edges not fused"
    )
    if timings.fused_total is not None and timings.unfused_total is not None:
        lines.append(
            f"measured: unfused {timings.unfused_total:.3f} ms -> fused "
            f"{timings.fused_total:.3f} ms per run"
        )
    return "\n".join(lines)
