"""A comparison of two runs (`RunDiff`) as text, Markdown, JSON (``profsight/diff/1``) or one
self-contained HTML page.

The HTML page follows `profsight.renderers.html`: the data goes in as escaped JSON inside a
``<script type="application/json">`` element and the page's script builds every element with
DOM calls and ``textContent``, so no name from a trace is ever parsed as markup.
"""

from __future__ import annotations

import html
import textwrap
from pathlib import PurePath
from typing import Any

import msgspec

from profsight.compare.diff import Change, FindingChange, RowChange, RunDiff, Status
from profsight.compare.facts import RunFacts
from profsight.knowledge.phases import PHASE_LABELS, Phase
from profsight.model.findings import Severity
from profsight.names import cut_from_start, cut_name, cut_to_read, markdown_name
from profsight.renderers.escape import markdown_cell
from profsight.renderers.explained import view_renderer
from profsight.renderers.template import fill, script_json
from profsight.units import short_bytes, short_flops, short_time

#: Rows shown per list (slower, faster, new, gone) in text and Markdown; JSON has them all.
ROWS_SHOWN = 10
_NAME_WIDTH = 48
#: The name column's least width, however narrow the terminal.
_NARROWEST_NAME = 16
#: Wrapped lines' indent.
_IN = "  "
_KEY_LABELS = {
    "cpu_total_us": "CPU total",
    "self_cpu_us": "self CPU",
    "device_total_us": "device total",
    "self_device_us": "self device",
}
_LISTS: tuple[tuple[Status, str], ...] = (
    ("slower", "Slower"),
    ("faster", "Faster"),
    ("new", "New (only in the after run)"),
    ("gone", "Gone (only in the before run)"),
    ("recounted", "Called more or less often (time under the noise floor)"),
)


def _time(us: float | None) -> str:
    return "-" if us is None else short_time(us)


def _signed(us: float | None) -> str:
    if us is None:
        return "-"
    return ("+" if us >= 0 else "-") + short_time(abs(us))


def _pct(change: Change) -> str:
    pct = change.pct
    return "" if pct is None else f"{pct:+.1f}%"


def _moved(change: Change) -> str:
    """``12.3 ms → 15.6 ms (+3.30 ms, +26.8%)``."""
    if change.before is None or change.after is None:
        return f"{_time(change.before)} → {_time(change.after)}"
    pct = _pct(change)
    return (
        f"{_time(change.before)} → {_time(change.after)} "
        f"({_signed(change.delta)}{', ' + pct if pct else ''})"
    )


def _moved_bytes(change: Change) -> str:
    """``215 MB → 180 MB (-16.3%)``."""

    def size(n: float | None) -> str:
        return "-" if n is None else short_bytes(n)

    pct = _pct(change)
    return f"{size(change.before)} → {size(change.after)}" + (f" ({pct})" if pct else "")


def _side(run: RunFacts, room: int = 10_000) -> str:
    """The run's source, its start cut where the line would pass `room` columns."""
    tail = f" ({run.format or 'report'}, {run.steps} step{'s' * (run.steps != 1)})"
    return cut_from_start(run.source, max(room - len(tail), _NARROWEST_NAME)) + tail


def _verdict(side: tuple[str | None, str | None]) -> str:
    bound, judgement = side
    if bound is None and judgement is None:
        return "none"
    return f"{bound}-bound, {(judgement or '').replace('_', ' ')}"


def _phase_label(phase: str) -> str:
    try:
        return PHASE_LABELS[Phase(phase)]
    except ValueError:
        return phase


def _has_device(diff: RunDiff) -> bool:
    return diff.device_busy is not None or any(
        r.times["device_total_us"].after or r.times["device_total_us"].before for r in diff.rows
    )


def _unlike(diff: RunDiff) -> list[str]:
    """Said before anything is compared, where the two runs ran different work."""
    if diff.alike:
        return []
    if diff.flops is not None:
        why = (
            f"the model's FLOPs per step went {short_flops(diff.flops.before or 0.0)} → "
            f"{short_flops(diff.flops.after or 0.0)} (another model, batch or input shape)"
        )
    else:
        why = f"only {diff.shared_pct:.0f}% of the ops' time is in ops both ran"
    return [f"Unlike runs: {why}; what follows compares two different workloads."]


def _noise(diff: RunDiff) -> str:
    """The step's change against what its recordings vary by."""
    if diff.noise_us is None:
        return ""
    spread = short_time(diff.noise_us)
    if diff.step_noise == "within":
        return f"; within the noise (±{spread} between recordings of one run): no difference"
    return f"; beyond the noise (±{spread})"


def _headline(diff: RunDiff) -> list[str]:
    lines = [*_unlike(diff), f"Step time: {_moved(diff.step)}{_noise(diff)}"]
    if diff.device_busy is not None:
        lines.append(f"Device busy: {_moved(diff.device_busy)}")
    for memory, change in diff.memory_peaks.items():
        lines.append(f"Memory peak ({memory}): {_moved_bytes(change)}")
    if diff.verdict == ((None, None), (None, None)):
        lines.append("Verdict: none (only a trace gives one)")
    elif diff.verdict_changed:
        lines.append(f"Verdict: {_verdict(diff.verdict[0])} → {_verdict(diff.verdict[1])}")
    else:
        lines.append(f"Verdict: unchanged ({_verdict(diff.verdict[1])})")
    return lines


def _row_cells(r: RowChange, device: bool) -> list[str]:
    t = r.times
    cells = [
        f"{_fmt_calls(r.calls.before)} → {_fmt_calls(r.calls.after)}",
        f"{_time(t['cpu_total_us'].before)} → {_time(t['cpu_total_us'].after)}",
        f"{_time(t['self_cpu_us'].before)} → {_time(t['self_cpu_us'].after)}",
    ]
    if device:
        cells += [
            f"{_time(t['device_total_us'].before)} → {_time(t['device_total_us'].after)}",
            f"{_time(t['self_device_us'].before)} → {_time(t['self_device_us'].after)}",
        ]
    cells += [_signed(r.delta_us), _pct(r.change) or r.status]
    return [*cells, _KEY_LABELS[r.key]] if device else cells


def _compact_cells(r: RowChange) -> list[str]:
    """Calls, the ranking time before and after, the change, and which time it is."""
    t = r.times[r.key]
    return [
        f"{_fmt_calls(r.calls.before)} → {_fmt_calls(r.calls.after)}",
        f"{_time(t.before)} → {_time(t.after)}",
        _signed(r.delta_us),
        _pct(r.change) or r.status,
        _KEY_LABELS[r.key],
    ]


def _fmt_calls(calls: float | None) -> str:
    if calls is None:
        return "-"
    if calls >= 10:  # whole calls as they are, else one decimal (96.7, not 96.6667)
        return f"{calls:,.0f}" if calls == round(calls) else f"{calls:,.1f}"
    return f"{calls:.2g}"


_HEAD = ["Calls/step", "CPU total", "Self CPU"]
_DEVICE_HEAD = ["Device total", "Self device"]
_TAIL = ["Change", "%"]


def _row_head(device: bool) -> list[str]:
    return ["Name", *_HEAD, *([*_DEVICE_HEAD, *_TAIL, "Of"] if device else _TAIL)]


def _finding_line(f: FindingChange, markdown: bool) -> str:
    cell = markdown_cell if markdown else str
    sev = f.severity
    if sev.before is not None and sev.after is not None and sev.before != sev.after:
        level = f"{_severity(sev.before)} → {_severity(sev.after)}"
    else:
        level = _severity(sev.after if sev.after is not None else sev.before)
    stake = f.at_stake
    if stake.before is not None and stake.after is not None:
        at = f": {stake.before:.1f}% → {stake.after:.1f}% of the step at stake"
    else:
        at = f": {(stake.after if stake.after is not None else stake.before) or 0:.1f}% at stake"
    return f"- [{level}] {cell(f.title)} ({f.category}){at}"


def _severity(value: float | None) -> str:
    return "-" if value is None else Severity(int(value)).name.lower()


def _finding_lines(diff: RunDiff, markdown: bool) -> list[str]:
    lines: list[str] = []
    for title, findings in (
        ("Findings resolved", diff.resolved),
        ("New findings", diff.new_findings),
        ("Findings in both runs", diff.kept),
    ):
        if findings:
            lines += ["", f"## {title}" if markdown else f"{title}:", ""]
            lines += [("" if markdown else "  ") + _finding_line(f, markdown) for f in findings]
    if not (diff.resolved or diff.new_findings or diff.kept):
        lines += ["", "No findings in either run."]
    return lines


def render_diff_text(diff: RunDiff, limit: int = ROWS_SHOWN, width: int = 120) -> str:
    """The comparison as text, its tables in `width` columns (the name column gives way:
    each row shows the time that ranks it, its calls and its change; JSON has every time)."""
    lines = [
        "Comparing two runs (times per profiled step):",
        f"  before: {_side(diff.before, width - 10)}",
        f"  after:  {_side(diff.after, width - 10)}",
        "",
        *(w for line in _headline(diff) for w in textwrap.wrap(line, width, subsequent_indent=_IN)),
    ]
    if diff.phases:
        lines += ["", "Where a step's time goes:"]
        lines.append(f"  {'before':>9} {'after':>9} {'change':>10} {'%':>8}  phase")
        for phase, c in diff.phases.items():
            label = cut_name(_phase_label(phase), max(width - 43, _NARROWEST_NAME))
            lines.append(
                f"  {_time(c.before):>9} {_time(c.after):>9} {_signed(c.delta):>10} "
                f"{_pct(c):>8}  {label}"
            )
    head = ["Calls/step", "Time/step", "Change", "%", "Of"]
    widths = [10, 18, 9, 8, 12]
    name_width = max(_NARROWEST_NAME, min(_NAME_WIDTH, width - 2 - sum(w + 1 for w in widths)))
    for status, title in _LISTS:
        rows = diff.with_status(status)
        if not rows:
            continue
        shown = f"top {limit} of {len(rows)}" if len(rows) > limit else f"{len(rows)}"
        heading = f"{title} ({shown}, by change of {diff.by} time per step):"
        lines += ["", *textwrap.wrap(heading, width, subsequent_indent=_IN), ""]
        header = f"  {'Name':<{name_width}}" + "".join(
            f" {h:>{w}}" for h, w in zip(head, widths, strict=True)
        )
        lines += [header, "  " + "-" * (len(header) - 2)]
        for r in rows[:limit]:
            name = cut_to_read(r.name, name_width)
            cells = _compact_cells(r)
            lines.append(
                f"  {name:<{name_width}}"
                + "".join(f" {c:>{w}}" for c, w in zip(cells, widths, strict=True))
            )
    if not any(diff.with_status(s) for s, _ in _LISTS):
        lines += ["", "No row changed by more than the noise floor."]
    for line in _finding_lines(diff, markdown=False):
        lines += textwrap.wrap(line, width, subsequent_indent=_IN * 2) or [""]
    return "\n".join(lines) + "\n"


def render_diff_markdown(diff: RunDiff, limit: int = ROWS_SHOWN) -> str:
    lines = [
        "# profsight: comparing two runs",
        "",
        "Times per profiled step.",
        "",
        f"- before: {markdown_cell(_side(diff.before))}",
        f"- after: {markdown_cell(_side(diff.after))}",
        *(f"- {markdown_cell(line)}" for line in _headline(diff)),
    ]
    if diff.phases:
        lines += ["", "## Where a step's time goes", ""]
        lines += ["| Phase | Before | After | Change | % |", "|---|---:|---:|---:|---:|"]
        for phase, c in diff.phases.items():
            lines.append(
                f"| {markdown_cell(_phase_label(phase))} | {_time(c.before)} | {_time(c.after)} "
                f"| {_signed(c.delta)} | {_pct(c)} |"
            )
    device = _has_device(diff)
    head = _row_head(device)
    for status, title in _LISTS:
        rows = diff.with_status(status)
        if not rows:
            continue
        lines += ["", f"## {title}", ""]
        if len(rows) > limit:
            lines += [f"Top {limit} of {len(rows)}, by change of {diff.by} time per step.", ""]
        lines += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
        for r in rows[:limit]:
            cells = [markdown_cell(markdown_name(r.name)), *_row_cells(r, device)]
            lines.append("| " + " | ".join(cells) + " |")
    lines += _finding_lines(diff, markdown=True)
    return "\n".join(lines) + "\n"


def render_diff_json(diff: RunDiff) -> str:
    text = msgspec.json.encode(diff.to_dict()).decode()
    return msgspec.json.format(text, indent=2) + "\n"


HTML_SCHEMA = "profsight-diff-html/1"


def diff_page_data(diff: RunDiff, limit: int = ROWS_SHOWN) -> dict[str, Any]:
    """What the HTML page shows, as display strings (the page only lays them out), and the
    whole comparison as data (``diff``, the JSON output)."""
    device = _has_device(diff)
    lists = []
    for status, title in _LISTS:
        rows = diff.with_status(status)
        if rows:
            shown = f"top {limit} of {len(rows)}" if len(rows) > limit else f"{len(rows)}"
            lists.append(
                {
                    "title": f"{title} ({shown}, by change of {diff.by} time per step)",
                    "head": _row_head(device),
                    "rows": [[r.name, *_row_cells(r, device)] for r in rows[:limit]],
                }
            )
    findings = [
        {"title": title, "items": [_finding_line(f, markdown=False)[2:] for f in items]}
        for title, items in (
            ("Findings resolved", diff.resolved),
            ("New findings", diff.new_findings),
            ("Findings in both runs", diff.kept),
        )
        if items
    ]
    return {
        "schema": HTML_SCHEMA,
        "sides": [f"before: {_side(diff.before)}", f"after: {_side(diff.after)}"],
        "headline": _headline(diff),
        "phases": {
            "head": ["Phase", "Before", "After", "Change", "%"],
            "rows": [
                [_phase_label(p), _time(c.before), _time(c.after), _signed(c.delta), _pct(c)]
                for p, c in diff.phases.items()
            ],
        },
        "lists": lists,
        "findings": findings,
        "diff": diff.to_dict(),
    }


def render_diff_html(diff: RunDiff, limit: int = ROWS_SHOWN) -> str:
    """One self-contained page: no request leaves it (its CSP forbids them)."""
    title = html.escape(
        f"profsight diff: {PurePath(diff.before.source).name} → {PurePath(diff.after.source).name}"
    )
    slots = {
        "title": title,
        "css": _CSS,
        "js": _JS,
        "data": script_json(diff_page_data(diff, limit)),
    }
    return fill(_PAGE, slots)


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; \
style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>{{title}}</title>
<style>{{css}}</style>
</head>
<body>
<h1>profsight: comparing two runs</h1>
<p>Times per profiled step.</p>
<main id="ps-diff"></main>
<noscript><p>This page needs JavaScript to lay out its data.</p></noscript>
<script type="application/json" id="ps-diff-data">{{data}}</script>
<script>{{js}}</script>
</body>
</html>
"""
_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { padding: 2px 10px; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; max-width: 40em; overflow-wrap: anywhere; }
.ps-slower { color: #b00020; } .ps-faster { color: #1b7f3b; }
"""
_JS = """
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("ps-diff-data").textContent);
  var root = document.getElementById("ps-diff");
  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined) { node.textContent = text; }
    if (cls) { node.className = cls; }
    return node;
  }
  function list(items) {
    var ul = el("ul");
    items.forEach(function (item) { ul.appendChild(el("li", item)); });
    return ul;
  }
  function table(head, rows, cls) {
    var t = el("table", undefined, cls), tr = el("tr");
    head.forEach(function (h) { tr.appendChild(el("th", h)); });
    t.appendChild(tr);
    rows.forEach(function (row) {
      var r = el("tr");
      row.forEach(function (cell) { r.appendChild(el("td", cell)); });
      t.appendChild(r);
    });
    return t;
  }
  root.appendChild(list(data.sides));
  root.appendChild(list(data.headline));
  if (data.phases.rows.length) {
    root.appendChild(el("h2", "Where a step's time goes"));
    root.appendChild(table(data.phases.head, data.phases.rows));
  }
  data.lists.forEach(function (part) {
    root.appendChild(el("h2", part.title));
    var cls = part.title.indexOf("Faster") === 0 ? "ps-faster" : "ps-slower";
    root.appendChild(table(part.head, part.rows, cls));
  });
  data.findings.forEach(function (part) {
    root.appendChild(el("h2", part.title));
    root.appendChild(list(part.items));
  });
})();
"""


def render_diff(diff: RunDiff, fmt: str) -> str:
    text: str = view_renderer("diff", fmt)(diff)
    return text
