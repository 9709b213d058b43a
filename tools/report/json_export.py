"""The report as JSON, for tools: nodes, edges, groups with their traffic, and totals.

Schema (version 1): `{"version", "source", "entry", "pipeline", "nodes": [{"id", "kind",
"label", "op", "shape", "dtype", "bytes", "pattern", "group", "returned"}], "edges":
[{"producer", "consumer", "bytes", "fused", "refusal"}], "groups": [{"id", "kernel", "members",
"pattern", "launches_unfused", "launches_fused", "bytes_unfused", "bytes_fused", "ms_unfused",
"ms_fused"}], "totals": {"launches_unfused", "launches_fused", "bytes_unfused", "bytes_fused",
"ms_unfused", "ms_fused"}}`. Bytes are intermediate bytes written and read back (see
`traffic.py`); times are milliseconds per run, null when not measured.
"""

from __future__ import annotations

import dataclasses
import json

from fusion_compiler.tools.report.model import FusionReport
from fusion_compiler.tools.report.summary import Timings, group_rows
from fusion_compiler.tools.report.traffic import model_traffic

SCHEMA_VERSION = 1


def report_dict(report: FusionReport, timings: Timings | None = None) -> dict:
    timings = timings or Timings()
    groups = []
    for group, row in zip(report.groups, group_rows(report, timings), strict=True):
        groups.append(
            {
                "id": group.id,
                "kernel": group.kernel,
                "members": list(group.members),
                "pattern": group.pattern,
                "launches_unfused": row.traffic.launches_unfused,
                "launches_fused": row.traffic.launches_fused,
                "bytes_unfused": row.traffic.bytes_unfused,
                "bytes_fused": row.traffic.bytes_fused,
                "ms_unfused": row.unfused_ms,
                "ms_fused": row.fused_ms,
            }
        )
    total = model_traffic(report)
    return {
        "version": SCHEMA_VERSION,
        "source": report.source,
        "entry": report.entry,
        "pipeline": report.pipeline,
        "nodes": [dict(dataclasses.asdict(n), shape=list(n.shape)) for n in report.nodes],
        "edges": [dataclasses.asdict(e) for e in report.edges],
        "groups": groups,
        "totals": {
            "launches_unfused": total.launches_unfused,
            "launches_fused": total.launches_fused,
            "bytes_unfused": total.bytes_unfused,
            "bytes_fused": total.bytes_fused,
            "ms_unfused": timings.unfused_total,
            "ms_fused": timings.fused_total,
        },
    }


def render_json(report: FusionReport, timings: Timings | None = None) -> str:
    return json.dumps(report_dict(report, timings), indent=1) + "\n"
