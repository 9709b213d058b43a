"""The report as one self-contained HTML page: the SVG inline, tables, search and zoom.

Nothing is fetched: the style and the script are in the page, and the graph was laid out when
the page was written. The script pans (drag) and zooms (wheel, buttons) by changing the SVG's
viewBox, and searches node and kernel names (Enter steps through the matches). When it has set
everything up it marks `<body data-status="ready">` (and `data-ready-ms`, the milliseconds from
navigation until then); an error marks it `error` and is shown in the page (the browser test
reads both).
"""

from __future__ import annotations

from html import escape

from fusion_compiler.tools.report.model import FusionReport
from fusion_compiler.tools.report.summary import Timings, group_rows
from fusion_compiler.tools.report.traffic import format_bytes, model_traffic

PAGE_STYLE = """
body { margin: 0; font: 13px sans-serif; display: flex; height: 100vh; color: #222; }
#side { width: 500px; overflow: auto; padding: 10px 14px; border-right: 1px solid #ccc; }
#view { flex: 1; position: relative; overflow: hidden; background: #fafafa; }
#view svg { width: 100%; height: 100%; cursor: grab; }
#tools { position: absolute; top: 8px; right: 8px; display: flex; gap: 4px; }
h1 { font-size: 16px; margin: 4px 0; } h2 { font-size: 14px; margin: 14px 0 4px; }
table { border-collapse: collapse; width: 100%; }
td, th { border-bottom: 1px solid #e3e3e3; padding: 2px 4px; text-align: left; vertical-align: top; }
tr.group-row { cursor: pointer; } tr.group-row:hover { background: #eef6ee; }
.num { text-align: right; white-space: nowrap; }
#search { width: 100%; box-sizing: border-box; padding: 4px; }
#errors { color: #b00; }
.legend span { display: inline-block; margin-right: 10px; }
"""

SCRIPT = r"""
(function () {
  "use strict";
  const body = document.body;
  window.addEventListener("error", function (event) {
    document.getElementById("errors").textContent += "script error: " + event.message + "\n";
    body.dataset.status = "error";
  });
  const svg = document.getElementById("graph");
  const base = svg.viewBox.baseVal;  // live: copy it before the first change
  const full = { x: base.x, y: base.y, width: base.width, height: base.height };
  let box = { x: full.x, y: full.y, w: full.width, h: full.height };
  function apply() { svg.setAttribute("viewBox", box.x + " " + box.y + " " + box.w + " " + box.h); }
  function fit() { box = { x: full.x, y: full.y, w: full.width, h: full.height }; apply(); }
  function zoom(factor, cx, cy) {
    box.x = cx - (cx - box.x) * factor; box.y = cy - (cy - box.y) * factor;
    box.w *= factor; box.h *= factor; apply();
  }
  function pointer(event) {
    const r = svg.getBoundingClientRect();
    const scale = Math.max(box.w / r.width, box.h / r.height);
    return { x: box.x + (event.clientX - r.left) * scale, y: box.y + (event.clientY - r.top) * scale, scale: scale };
  }
  function centre(x, y, width) {
    const r = svg.getBoundingClientRect();
    box.w = width; box.h = width * (r.height / Math.max(r.width, 1));
    box.x = x - box.w / 2; box.y = y - box.h / 2; apply();
  }
  function focus(element) {
    const b = element.getBBox();
    centre(b.x + b.width / 2, b.y + b.height / 2, Math.max(900, b.width * 2.5));
  }
  svg.addEventListener("wheel", function (event) {
    event.preventDefault();
    const p = pointer(event);
    zoom(event.deltaY > 0 ? 1.15 : 1 / 1.15, p.x, p.y);
  }, { passive: false });
  let drag = null;
  svg.addEventListener("mousedown", function (event) { drag = pointer(event); });
  window.addEventListener("mouseup", function () { drag = null; });
  svg.addEventListener("mousemove", function (event) {
    if (!drag) return;
    const p = pointer(event);
    box.x -= p.x - drag.x; box.y -= p.y - drag.y; apply();
  });
  function start() {
    // A tall model opens at its top, at a readable scale; a small one is shown whole.
    const r = svg.getBoundingClientRect();
    const width = Math.max(full.width, 1400);
    if (full.height > width * (r.height / Math.max(r.width, 1)) * 1.5) {
      centre(full.x + full.width / 2, 0, width);
      box.y = full.y; apply();
    } else {
      fit();
    }
  }
  document.getElementById("fit").addEventListener("click", fit);
  document.getElementById("zoom-in").addEventListener("click", function () { zoom(1 / 1.5, box.x + box.w / 2, box.y + box.h / 2); });
  document.getElementById("zoom-out").addEventListener("click", function () { zoom(1.5, box.x + box.w / 2, box.y + box.h / 2); });
  const nodes = Array.from(svg.querySelectorAll("g.node"));
  const search = document.getElementById("search");
  const status = document.getElementById("search-status");
  let matches = [], current = -1;
  search.addEventListener("input", function () {
    const query = search.value.trim().toLowerCase();
    nodes.forEach(function (n) { n.classList.remove("match"); });
    matches = query ? nodes.filter(function (n) {
      return (n.dataset.label + " " + n.dataset.kernel).toLowerCase().indexOf(query) >= 0;
    }) : [];
    matches.forEach(function (n) { n.classList.add("match"); });
    current = -1;
    status.textContent = query ? matches.length + " matching nodes (Enter: next)" : "";
  });
  search.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" || matches.length === 0) return;
    current = (current + 1) % matches.length;
    focus(matches[current]);
    status.textContent = (current + 1) + " of " + matches.length + ": " + matches[current].dataset.label;
  });
  document.querySelectorAll("tr.group-row").forEach(function (row) {
    row.addEventListener("click", function () {
      const target = document.getElementById(row.dataset.target);
      if (target) focus(target);
    });
  });
  start();
  body.dataset.readyMs = String(Math.round(performance.now()));
  body.dataset.status = "ready";
})();
"""


def _group_table(report: FusionReport, timings: Timings | None) -> str:
    rows = []
    for group, row in zip(report.groups, group_rows(report, timings), strict=True):
        t = row.traffic
        target = f"group-{group.id}" if len(group.members) > 1 else f"node-{group.members[0]}"
        times = ""
        if row.fused_ms is not None or row.unfused_ms is not None:
            unfused = "-" if row.unfused_ms is None else f"{row.unfused_ms:.3f}"
            fused = "-" if row.fused_ms is None else f"{row.fused_ms:.3f}"
            times = f"{unfused} → {fused}"
        rows.append(
            f'<tr class="group-row" data-target="{target}" data-kernel="{escape(row.kernel)}">'
            f"<td>{escape(row.kernel)}</td><td>{escape(' '.join(row.ops))}</td>"
            f'<td class="num">{t.launches_unfused} → {t.launches_fused}</td>'
            f'<td class="num">{format_bytes(t.bytes_unfused)} → {format_bytes(t.bytes_fused)}</td>'
            f'<td class="num">{times}</td></tr>'
        )
    return (
        '<table id="groups"><tr><th>kernel</th><th>ops</th><th>launches</th>'
        "<th>intermediate bytes</th><th>ms</th></tr>" + "".join(rows) + "</table>"
    )


def _refusal_list(report: FusionReport) -> str:
    items = []
    for edge in report.refused_edges():
        producer, consumer = report.nodes[edge.producer], report.nodes[edge.consumer]
        items.append(
            f'<li class="refusal" data-producer="{edge.producer}" data-consumer="{edge.consumer}">'
            f"<b>{escape(producer.label)} → {escape(consumer.label)}</b> "
            f"({format_bytes(edge.bytes)}): {escape(edge.refusal or '')}</li>"
        )
    return '<ul id="refusals">' + "".join(items) + "</ul>"


def render_html(report: FusionReport, svg: str, timings: Timings | None = None) -> str:
    total = model_traffic(report)
    measured = ""
    if timings and timings.fused_total is not None and timings.unfused_total is not None:
        measured = (
            f"<p>Measured per run: unfused {timings.unfused_total:.3f} ms → fused "
            f"{timings.fused_total:.3f} ms.</p>"
        )
    fused_groups = sum(1 for g in report.groups if len(g.members) > 1)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>fusion report: {escape(report.source)} @{escape(report.entry)}</title>
<style>{PAGE_STYLE}</style></head>
<body data-status="loading">
<div id="side">
<h1>Fusion report</h1>
<p>{escape(report.source)}, <code>@{escape(report.entry)}</code><br>pipeline <code>{escape(report.pipeline)}</code></p>
<p id="totals">Kernel launches {total.launches_unfused} → {total.launches_fused}
({fused_groups} fused groups). Intermediate traffic {format_bytes(total.bytes_unfused)} →
{format_bytes(total.bytes_fused)}: fusion saves {format_bytes(total.bytes_saved)} per run.</p>
{measured}
<p class="legend"><span style="color:#2b9a2b">━ stays in the kernel</span>
<span style="color:#888">┅ through memory</span><span style="color:#d04040">┅ refused</span></p>
<input id="search" type="search" placeholder="search ops and kernels">
<div id="search-status"></div>
<pre id="errors"></pre>
<h2>Kernels</h2>
{_group_table(report, timings)}
<h2>Edges fuse-ops refused ({len(report.refused_edges())})</h2>
{_refusal_list(report)}
</div>
<div id="view">
<div id="tools"><button id="zoom-in">+</button><button id="zoom-out">−</button><button id="fit">fit</button></div>
{svg}
</div>
<script>{SCRIPT}</script>
</body></html>
"""
