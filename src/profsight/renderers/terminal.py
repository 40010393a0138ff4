"""The explanation in a terminal: rich renderables, colour by row kind and severity, bars
for shares, laid out for the console's width. Without colour it is the plain-text report
(``--format text``, ``print(report)``), tested as a snapshot at a fixed width."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from profsight.knowledge.advice import saving_phrase
from profsight.knowledge.phases import PHASE_LABELS, Phase
from profsight.knowledge.rows import RowKind
from profsight.model.findings import Finding, Severity
from profsight.model.step_windows import Breakdown
from profsight.model.table import render_torch_table
from profsight.names import cut_words, distinct_names, evidence_label, fit_name
from profsight.renderers.console import render_to_text
from profsight.renderers.diagnosis import (
    clock_lines,
    communication_lines,
)
from profsight.renderers.tree_text import tree_renderable
from profsight.report.sections import SECTIONS
from profsight.units import short_time

if TYPE_CHECKING:
    from profsight.report.build import ExplainedRow, ReportData

KIND_STYLES: dict[RowKind, str] = {
    RowKind.STEP: "bold white",
    RowKind.LIGHTNING: "magenta",
    RowKind.STRATEGY: "bright_magenta",
    RowKind.MODULE: "cyan",
    RowKind.CALLBACK: "magenta",
    RowKind.DATALOADER: "red",
    RowKind.OPTIMIZER: "yellow",
    RowKind.METRIC: "bright_yellow",
    RowKind.ATEN: "blue",
    RowKind.BACKWARD: "bright_blue",
    RowKind.RUNTIME: "bright_black",
    RowKind.SYNC: "bright_red",
    RowKind.KERNEL: "green",
    RowKind.MEMCPY: "bright_green",
    RowKind.MEMSET: "bright_green",
    RowKind.COMMUNICATION: "bright_cyan",
    RowKind.PYTHON: "white",
    RowKind.USER: "white",
    RowKind.OTHER: "bright_black",
}
PHASE_STYLES: dict[Phase, str] = {
    Phase.DATA_LOADING: "red",
    Phase.FORWARD: "blue",
    Phase.BACKWARD: "bright_blue",
    Phase.OPTIMIZER: "yellow",
    Phase.ZERO_GRAD: "bright_yellow",
    Phase.VALIDATION: "cyan",
    Phase.METRICS: "magenta",
    Phase.CALLBACKS_LOGGING: "bright_magenta",
    Phase.FRAMEWORK: "white",
    Phase.COMMUNICATION: "bright_red",
    Phase.STARTUP: "bright_cyan",
    Phase.DEVICE_LAG: "green",
    Phase.OTHER: "bright_black",
}
SEVERITY_STYLES = {
    Severity.HIGH: "bold red",
    Severity.MEDIUM: "yellow",
    Severity.LOW: "cyan",
    Severity.INFO: "bright_black",
}
BAR = 24


def _bar(share: float, style: str) -> Text:
    filled = max(0, min(BAR, round(share / 100 * BAR)))
    return Text("█" * filled, style=style) + Text("·" * (BAR - filled), style="bright_black")


def _verdict(report: ReportData, width: int) -> RenderableType | None:
    v = report.verdict
    if v is None:
        return None
    body = Text(cut_words(v.summary, width - 4))
    body.append("\n")
    for item in v.evidence:
        body.append(f"\n  {item}", style="bright_black")
    return Panel(
        body,
        title=f"Verdict: {v.judgement.replace('_', ' ')}",
        subtitle=f"bound: {v.bound}",
        title_align="left",
        subtitle_align="left",
    )


def _breakdown(bd: Breakdown | None) -> RenderableType | None:
    if bd is None or not bd.steps:
        return None
    avg = bd.average()
    table = Table.grid(padding=(0, 1))
    for _ in range(4):
        table.add_column()
    for phase, us in sorted(avg.host_us.items(), key=lambda kv: -kv[1]):
        pct = us * 100 / avg.wall_us if avg.wall_us else 0.0
        if pct < 0.5:
            continue
        ph = Phase(phase)
        table.add_row(
            f"{pct:5.1f}%", f"{short_time(us):>9}", _bar(pct, PHASE_STYLES[ph]), PHASE_LABELS[ph]
        )
    title = Text(
        f"Where a step's time goes ({bd.described}, average "
        f"{short_time(avg.wall_us)}{f', on {bd.thread}' if bd.thread else ''})",
        style="bold",
    )
    parts: list[RenderableType] = [title, table]
    if avg.device_busy_us is not None and avg.wall_us:
        busy = avg.device_busy_us * 100 / avg.wall_us
        line = Text("device busy ") + _bar(busy, "green") + Text(f" {busy:.0f}%")
        idle = [f"{short_time(us)} {cause}" for cause, us in avg.device_idle_us.items() if us > 0]
        if idle:
            line.append(f"  idle: {', '.join(idle)}", style="bright_black")
        parts.append(line)
    parts += [Text(line, style="bright_black") for line in clock_lines(bd)]
    if len(bd.steps) > 1:
        parts.append(
            Text(
                "per step: " + ", ".join(f"{s.name} {short_time(s.wall_us)}" for s in bd.steps),
                style="bright_black",
            )
        )
    return Group(*parts)


def _finding(i: int, f: Finding, width: int) -> RenderableType:
    head = Text(f"{i}. ")
    head.append(f"[{f.severity.name.lower()}] ", style=SEVERITY_STYLES[f.severity])
    head.append(cut_words(f.title, width), style="bold")
    phrase = saving_phrase(f.priced, f.gain_pct, f.at_stake_pct, f.gain_spread_pct)
    gain = f", {phrase}" if phrase and f.severity is not Severity.INFO else ""
    head.append(f"  ({f.category}{gain})", style="bright_black")
    lines: list[RenderableType] = [head]
    room = width - _FINDING_INDENT
    lines += [
        _indented(f"- {evidence_label(e.label, e.value, e.rows, room)}: {e.value}", width=width)
        for e in f.evidence
    ]
    lines.append(_indented(f"why: {f.explanation}", width=width))
    lines.append(_indented(f"fix: {f.recommendation}", "green", width=width))
    if f.confidence:
        lines.append(_indented(f"note: {f.confidence}", "bright_black", width=width))
    return Group(*lines)


#: Columns a finding's evidence and prose are indented by.
_FINDING_INDENT = 5


def _indented(
    text: str, style: str = "", left: int = _FINDING_INDENT, width: int | None = None
) -> RenderableType:
    """Text whose wrapped lines stay indented; with `width`, a word longer than a line (a
    name) is cut to the line, not broken over many."""
    if width is not None:
        text = cut_words(text, width - left)
    return Padding(Text(text, style=style), (0, 0, 0, left))


def _rows(report: ReportData, width: int) -> RenderableType:
    dev = report.device_name
    has_dev = report.table.has_device
    numbers = 5 * 11 + (2 * 12 if has_dev else 0)
    bars = width - 14 - numbers - 30 >= BAR + 2
    name_width = max(20, min(60, width - 14 - numbers - (BAR + 2 if bars else 0)))
    table = Table(box=None, header_style="bold", pad_edge=False, expand=False)
    table.add_column("Kind", no_wrap=True)
    table.add_column("Name", overflow="ellipsis", no_wrap=True, max_width=name_width)
    table.add_column("Calls", justify="right")
    table.add_column("Self CPU", justify="right")
    table.add_column("CPU total", justify="right")
    if has_dev:
        table.add_column(f"Self {dev}", justify="right")
        table.add_column(f"{dev} total", justify="right")
    total = report.table.self_device_total_us if has_dev else report.table.self_cpu_total_us
    if bars:
        table.add_column("share of run", no_wrap=True)
    names = distinct_names([e.row.name for e in report.top], name_width)
    for e, name in zip(report.top, names, strict=True):
        r = e.row
        kind = e.explanation.kind
        cells: list[RenderableType] = [
            Text(kind.value, style=KIND_STYLES[kind]),
            Text(name),
            str(r.calls),
            short_time(r.self_cpu_us),
            short_time(r.cpu_total_us),
        ]
        if has_dev:
            cells += [short_time(r.self_device_us), short_time(r.device_total_us)]
        if bars:
            value = r.device_total_us if has_dev else r.cpu_total_us
            share = min(value * 100 / total, 100.0) if total else 0.0
            cells.append(_bar(share, KIND_STYLES[kind]))
        table.add_row(*cells)
    return table


def _row_note(e: ExplainedRow, width: int) -> RenderableType:
    layer = f"  [{e.explanation.kind.value}: {e.explanation.layer}]"
    head = Text("* ")
    head.append(fit_name(e.row.name, width - len(head) - len(layer)), style="bold")
    head.append(layer, style=KIND_STYLES[e.explanation.kind])
    lines = [head, _indented(f"what: {e.explanation.meaning}", left=4, width=width)]
    if e.explanation.reading:
        lines.append(_indented(f"reads: {e.explanation.reading}", left=4, width=width))
    if e.called_from:
        lines.append(_indented(f"from: {e.called_from}", left=4, width=width))
    return Group(*lines)


def report_renderable(report: ReportData, width: int) -> RenderableType:
    parts: list[RenderableType] = [Text("\n".join(report.summary))]
    # a diagnostic names its own level ("info: ...", "warning: ...")
    parts += [_indented(str(d), "yellow", left=0) for d in report.diagnostics]
    for section in (_verdict(report, width), _breakdown(report.breakdown)):
        if section is not None:
            parts += [Text(""), section]
    if report.communication is not None:
        parts += [Text(""), Text("\n".join(communication_lines(report.communication)))]
    for plugin in SECTIONS:
        lines = plugin.lines(plugin.document(report.views.get(plugin.name)))
        if lines:
            parts += [Text(""), Text("\n".join(lines))]
    if report.findings:
        parts += [Text(""), Text("Findings, most saved by fixing first:", style="bold")]
        parts += [_finding(i, f, width) for i, f in enumerate(report.findings, 1)]
    parts += [Text(""), Text("The rows that matter most:", style="bold"), _rows(report, width)]
    parts += [Text(""), Text("What they are and what their numbers say:", style="bold")]
    parts += [_row_note(e, width) for e in report.noted]
    parts += [Text(""), *(Text(f"- {n}") for n in report.notes), Text("")]
    if report.walkthrough:
        parts += [Text("Reading the table, step by step:", style="bold")]
        parts += [
            _indented(f"{i}. {t}", left=2, width=width) for i, t in enumerate(report.walkthrough, 1)
        ]
        parts += [Text("")]
    return Group(*parts)


def _torch_table(report: ReportData) -> str:
    """torch's table of the top rows, full width: wider than the terminal, it is not cut."""
    key = "device_total_us" if report.table.has_device else "cpu_total_us"
    return render_torch_table(report.table.sorted(key).head(len(report.top)))


def render_terminal(report: ReportData, width: int = 120, color: bool = False) -> str:
    """The report at `width`, except torch's table: printed whole (every column, however
    wide), as `profsight table` prints it."""
    title = Text("Profiler table, as torch prints it (top rows by total):", style="bold")
    out = render_to_text(Group(report_renderable(report, width), title), width=width, color=color)
    out += _torch_table(report).rstrip("\n") + "\n"
    if report.tree is not None:
        tree = Group(
            Text("Call tree (nodes under 2% of the run hidden):", style="bold"),
            tree_renderable(report.tree, device_name=report.device_name, width=width),
        )
        out += render_to_text(tree, width=width, color=color)
    return out
