"""A job report as text, Markdown and JSON (``profsight job``)."""

from __future__ import annotations

import json
import textwrap
from typing import TYPE_CHECKING

from profsight.job.job_document import RANK_ROWS, job_document
from profsight.knowledge.phases import Phase
from profsight.model.findings import Finding
from profsight.names import cut_name
from profsight.renderers.diagnosis import finding_lines
from profsight.renderers.escape import markdown_cell
from profsight.renderers.explained import SUFFIXES
from profsight.units import short_bytes, short_rate, short_time

if TYPE_CHECKING:
    from profsight.job.views import JobData, OperationView, RankView

JOB_SUFFIXES = SUFFIXES
#: Phases shown as columns of the per-rank table (the rest add up into "other").
_COLUMNS = (
    Phase.DATA_LOADING,
    Phase.FORWARD,
    Phase.BACKWARD,
    Phase.OPTIMIZER,
    Phase.COMMUNICATION,
)


def _time(us: float | None) -> str:
    return "-" if us is None else short_time(us)


def _rank_cells(v: RankView, straggler: int | None) -> list[str]:
    shown = sum(v.phases_us.get(p.value, 0.0) for p in _COLUMNS)
    return [
        f"{v.rank}" + (" (straggler)" if v.rank == straggler else ""),
        _time(v.step_us),
        _time(v.wait_us),
        _time(v.busy_us),
        # a trace of device rows only records no host phase
        *(_time(None if v.held else v.phases_us.get(p.value, 0.0)) for p in _COLUMNS),
        _time(None if v.held else max(v.step_us - shown, 0.0)),
        _time(v.device_busy_us),
        _time(v.comm_exposed_us),
        _time(max(v.comm_busy_us - v.comm_exposed_us, 0.0)),
        str(v.last_arrivals),
        f"{v.offset_us:+.0f} µs",
        v.role or "-",
    ]


_RANK_HEADER = [
    "rank",
    "step",
    "waits for others",
    "own work",
    "data",
    "forward",
    "backward",
    "optimizer",
    "collectives",
    "other",
    "device busy",
    "exposed comm",
    "hidden comm",
    "last at",
    "clock offset",
    "in the job",
]
#: What the per-rank columns mean (printed under the table).
_RANK_LEGEND = (
    "waits for others: per step, at collectives, until the last rank arrives (no more than "
    "its exposed communication); own work: the step minus that wait; collectives: its step "
    "thread waiting for a collective (transfer or other ranks); exposed / hidden comm: "
    "collective time with nothing / something computing meanwhile; last at: collectives at "
    "which it arrived last; clock offset: its clock minus rank 0's."
)
_OP_HEADER = ["operation", "backend", "per step", "size", "transfer", "bus bandwidth"]


def _op_cells(o: OperationView) -> list[str]:
    return [
        o.operation,
        o.backend,
        f"{o.calls_per_step:.3g}",
        short_bytes(o.nbytes) if o.nbytes > 0 else "-",
        _time(o.transfer_us),
        short_rate(o.bus_gbps) if o.bus_gbps is not None else "-",
    ]


def _columns(header: list[str], rows: list[list[str]], text: tuple[int, ...] = (0,)) -> list[str]:
    """Aligned columns: the `text` ones to the left, numbers to the right."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    out = [line.rstrip(), "  ".join("-" * w for w in widths)]
    for r in rows:
        cells = [
            c.ljust(w) if i in text or i == len(r) - 1 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
    return out


def _facts(report: JobData) -> list[str]:
    run = report.run
    lines = [
        f"Job: {len(report.ranks)} rank(s)"
        + (f" of {report.world_size}" if report.world_size else "")
        + (f", backend {report.backend}" if report.backend else "")
        + (f", collectives timed by {report.timed_on}" if report.timed_on else ""),
        "Steps in common: "
        + (", ".join("whole trace" if s is None else str(s) for s in report.steps) or "none"),
    ]
    if run:
        lines.append(
            f"Analysed with: {run.get('executor')}"
            + (f", {run['workers']} worker(s)" if run.get("workers") else "")
            + (f" at {run['scheduler']}" if run.get("scheduler") else "")
            + f", {run.get('traces')} trace(s) in {run.get('seconds')} s"
        )
    return lines


def render_job_text(report: JobData, width: int = 120, color: bool = False) -> str:
    straggler = report.straggler.rank if report.straggler else None
    lines = _facts(report)
    lines += ["", "Verdict: " + report.summary, ""]
    lines.append("Per rank (average of the common steps):")
    lines += _columns(_RANK_HEADER, [_rank_cells(v, straggler) for v in report.ranks])
    lines += textwrap.wrap(_RANK_LEGEND, width=max(width, 60))
    if report.operations:
        lines += ["", _operations_title(report) + ":"]
        lines += _columns(_OP_HEADER, [_op_cells(o) for o in report.operations], text=(0, 1))
    if report.findings:
        lines += ["", "Findings, most saved by fixing first:"]
        lines += finding_lines(report.findings)
    lines += ["", "Each rank, as its own trace reads (top rows per step, on all its threads):"]
    for v in report.ranks:
        lines.append(f"  rank {v.rank}: {v.path}")
        lines.append(
            f"    its own verdict: {v.bound or '-'}"
            + (f"; its top finding: {v.top_finding}" if v.top_finding else "")
        )
        for r in v.rows[:RANK_ROWS]:
            side = "device" if r.on_device else "self CPU"
            lines.append(
                f"    {short_time(r.self_us):>9} {side:<8} {r.kind:<13} {cut_name(r.name, 90)}"
            )
    if report.diagnostics:
        lines += ["", "Notes on the input:"]
        lines += [f"  - {d}" for d in report.diagnostics]
    return "\n".join(lines) + "\n"


def render_job_markdown(report: JobData) -> str:
    straggler = report.straggler.rank if report.straggler else None
    out = ["# profsight job report", ""]
    out += [f"- {markdown_cell(line)}" for line in _facts(report)]
    out += ["", "## Verdict", "", markdown_cell(report.summary), "", "## Per rank", ""]
    out += _md_table(_RANK_HEADER, [_rank_cells(v, straggler) for v in report.ranks])
    out += ["", markdown_cell(_RANK_LEGEND)]
    if report.operations:
        out += ["", "## Collectives", "", markdown_cell(_operations_title(report)), ""]
        out += _md_table(_OP_HEADER, [_op_cells(o) for o in report.operations])
    if report.findings:
        out += ["", "## Findings", ""]
        for i, f in enumerate(report.findings, 1):
            out += _md_finding(i, f)
    out += ["", "## Each rank", ""]
    for v in report.ranks:
        out.append(f"### Rank {v.rank}")
        out.append("")
        line = f"{markdown_cell(v.path)}; its own verdict: {markdown_cell(v.bound or '-')}"
        if v.top_finding:
            line += f"; its top finding: {markdown_cell(v.top_finding)}"
        out += [line, ""]
        out += _md_table(
            ["self per step", "side", "kind", "name"],
            [
                [short_time(r.self_us), "device" if r.on_device else "CPU", r.kind, r.name]
                for r in v.rows[:RANK_ROWS]
            ],
        )
        out.append("")
    if report.diagnostics:
        out += ["## Notes on the input", ""]
        out += [f"- {markdown_cell(d)}" for d in report.diagnostics]
    return "\n".join(out) + "\n"


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(markdown_cell(h) for h in header) + " |"]
    out.append("|" + "---|" * len(header))
    out += ["| " + " | ".join(markdown_cell(c) for c in r) + " |" for r in rows]
    return out


def _md_finding(i: int, f: Finding) -> list[str]:
    out = [f"{i}. **{markdown_cell(f.title)}** ({f.category}, {f.severity.name.lower()})", ""]
    out += [f"   - {markdown_cell(e.label)}: {markdown_cell(e.value)}" for e in f.evidence]
    out += [
        "",
        f"   Why: {markdown_cell(f.explanation)}",
        "",
        f"   Fix: {markdown_cell(f.recommendation)}",
        "",
    ]
    return out


def _operations_title(report: JobData) -> str:
    if any(v.wait_us is not None for v in report.ranks):
        return "Collectives per operation (time per call on the last rank to arrive: the transfer)"
    return "Collectives per operation (time per call includes any wait for other ranks)"


def render_job_json(report: JobData) -> str:
    return json.dumps(job_document(report), indent=2, ensure_ascii=False) + "\n"


__all__ = [
    "JOB_SUFFIXES",
    "render_job_json",
    "render_job_markdown",
    "render_job_text",
]
