"""`Report`: everything a renderer shows about one profile, computed once, as plain data."""

from __future__ import annotations

from typing import Any

import msgspec

from profsight.analyses.device_work import DeviceWork
from profsight.analyses.memory_peak import MemoryPeak
from profsight.analyses.pipeline import diagnose, diagnose_table
from profsight.analyses.roofline import Roofline
from profsight.analyses.source_lines import SourceLines
from profsight.analyses.step.timeline import Timelines, timelines
from profsight.analyses.verdict import Verdict
from profsight.knowledge.rows import LIGHTNING_ACTION_EVENT as LIGHTNING_ACTION
from profsight.knowledge.rows import RowKind
from profsight.knowledge.trace_schema import LEGACY_EXPORTER
from profsight.model.collectives_seen import Communication
from profsight.model.diagnostics import Diagnostic
from profsight.model.findings import Finding
from profsight.model.overview import overview
from profsight.model.profile import Profile
from profsight.model.step_windows import Breakdown
from profsight.model.table import ProfilerTable, Row
from profsight.model.table_build import device_label
from profsight.model.text_profile import TextProfile
from profsight.model.tree import CallTree
from profsight.report.annotate import RowExplanation, explain_row, table_notes
from profsight.report.sections import SECTIONS
from profsight.report.walkthrough import walkthrough
from profsight.units import short_time

#: Rows of the table an explanation shows (the full table is ``profsight table``).
REPORT_ROWS = 25
#: Python frames among the rows that matter (the largest; the others are in the table).
PYTHON_ROWS = 3
#: Rows that get a written note.
NOTED_ROWS = 8
#: Tree nodes under this share of the run are left out of an explanation.
REPORT_MIN_SHARE = 2.0
REPORT_DEPTH = 8


class ExplainedRow(msgspec.Struct, frozen=True):
    row: Row
    explanation: RowExplanation
    called_from: str | None = None
    """The user's function (``path(line): function``) holding most of the row's time, in a
    trace recorded ``with_stack=True`` (`analyses.source_lines`)."""


class ReportData(msgspec.Struct, frozen=True):
    """Everything a renderer shows about one profile, computed once (`api.Report` adds the
    renderings)."""

    source: str
    format: str
    summary: tuple[str, ...]
    """What was profiled, one fact a line."""
    facts: dict[str, Any]
    """The same facts as data (the JSON ``source`` object)."""
    table: ProfilerTable
    """The full table, in the input's order."""
    rows: tuple[ExplainedRow, ...]
    """Every row with its kind and meaning, in `table` order."""
    top: tuple[ExplainedRow, ...]
    """The rows that matter most, largest first."""
    tree: CallTree | None
    """The call tree, pruned for reading (traces only)."""
    notes: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]
    device_name: str = "CUDA"
    sections: dict[str, Any] = msgspec.field(default_factory=dict)
    """Input-specific extras (e.g. a Lightning report's advanced profiles)."""
    breakdown: Breakdown | None = None
    findings: tuple[Finding, ...] = ()
    verdict: Verdict | None = None
    timelines: Timelines | None = None
    """Device busy share and memory over time (traces only), downsampled for charts."""
    communication: Communication | None = None
    """The trace's collectives (distributed runs)."""
    walkthrough: tuple[str, ...] = ()
    """The table read step by step, as the tutorial reads it, ending with the verdict."""
    views: dict[str, Any] = msgspec.field(default_factory=dict)
    """What each registered section computed (`report.sections.SECTIONS`), by its name."""

    @property
    def device_work(self) -> DeviceWork | None:
        """Short kernels, launch delays and copy bandwidth (traces with device work)."""
        work: DeviceWork | None = self.views.get("device_work")
        return work

    @property
    def roofline(self) -> Roofline | None:
        """Each op and shape against the device's ceilings (traces with shapes and device
        work)."""
        roof: Roofline | None = self.views.get("roofline")
        return roof

    @property
    def source_lines(self) -> SourceLines | None:
        """Time by the user's own functions (traces recorded ``with_stack=True``)."""
        lines: SourceLines | None = self.views.get("source_lines")
        return lines

    @property
    def memory_peaks(self) -> tuple[MemoryPeak, ...]:
        """Each memory's peak and the ops holding it (traces recorded
        ``profile_memory=True``)."""
        peaks: tuple[MemoryPeak, ...] = self.views.get("memory_peaks", ())
        return peaks

    @property
    def noted(self) -> tuple[ExplainedRow, ...]:
        return self.top[:NOTED_ROWS]


def build_report(profile: Profile | TextProfile) -> ReportData:
    if isinstance(profile, TextProfile):
        return _text_report(profile)
    table = profile.table()
    tree = profile.tree()
    diagnosis = diagnose(profile)
    views = {s.name: s.compute(profile, diagnosis) for s in SECTIONS}
    lines: SourceLines | None = views.get("source_lines")
    called = lines.called_from if lines is not None else {}
    rows = tuple(
        ExplainedRow(r, explain_row(r, table, tree), called.get(r.name)) for r in table.rows
    )
    summary, facts = _trace_summary(profile)
    facts["flops_per_step"] = diagnosis.flops_per_step
    return ReportData(
        source=profile.source,
        format=profile.format,
        summary=tuple(summary),
        facts=facts,
        table=table,
        rows=rows,
        top=_top(rows, table),
        tree=tree.pruned(depth=REPORT_DEPTH, min_share=REPORT_MIN_SHARE),
        notes=(
            *table_notes(table, any(d.code == "partial_overlap" for d in profile.warnings)),
            *diagnosis.limits,
        ),
        diagnostics=(*profile.warnings, *diagnosis.diagnostics),
        device_name=device_label(profile),
        breakdown=diagnosis.breakdown,
        findings=diagnosis.findings,
        verdict=diagnosis.verdict,
        timelines=timelines(profile, diagnosis.breakdown),
        communication=diagnosis.communication,
        views=views,
        walkthrough=walkthrough(
            table, diagnosis.verdict, any(d.code == "partial_overlap" for d in profile.warnings)
        ),
    )


def _trace_summary(profile: Profile) -> tuple[list[str], dict[str, Any]]:
    """What was profiled, one fact a line, and the same facts as data (JSON ``source``)."""
    o = overview(profile)
    summary = [
        f"Source: {o.source} ({o.format} trace, {o.events:,} events)",
        f"Profiled: {o.steps} step(s) over {short_time(o.window_us)} on {o.threads} thread(s)"
        + (
            f" (the host's events span {short_time(o.host_window_us)}: the device's work "
            "reaches beyond them)"
            if o.window_us > o.host_window_us
            else ""
        ),
        f"Recorded by: {o.torch_era}"
        + (
            ""
            if o.torch_era == LEGACY_EXPORTER
            else ", Lightning's PyTorchProfiler"
            if o.lightning
            else ", torch.profiler"
        ),
    ]
    named = sorted({d for d in o.devices if d})
    if named:
        summary.append(f"Devices listed: {', '.join(named)}")
    elif o.devices:
        summary.append(f"Devices listed: {len(o.devices)}, their names not recorded")
    if o.device_events:
        summary.append(
            f"Device work: {o.device_events:,} kernels/copies, {short_time(o.device_busy_us)} busy"
        )
    elif o.counted_kernels:
        summary.append(
            f"Device work: {o.counted_kernels:,} kernels measured by CUPTI's range profiler "
            "(counters, no run times)"
        )
    else:
        summary.append("Device work: none recorded")
    if o.world_size is not None:
        summary.append(f"Distributed: rank {o.rank} of {o.world_size}")
    facts = {
        "path": o.source,
        "format": o.format,
        "events": o.events,
        "threads": o.threads,
        "steps": o.steps,
        "window_us": o.window_us,
        "host_window_us": o.host_window_us,
        "devices": list(o.devices),
        "device_busy_us": o.device_busy_us,
        "rank": o.rank,
        "world_size": o.world_size,
        "decoded_bytes": o.load.size,
        "decoded_in_chunks": o.load.chunks,
        "decoding_processes": o.load.workers,
        "torch_era": o.torch_era,
        "lightning": o.lightning,
    }
    return summary, facts


def _top(rows: tuple[ExplainedRow, ...], table: ProfilerTable) -> tuple[ExplainedRow, ...]:
    """By device total when the run has device time, else by CPU total; biggest first. At
    most `PYTHON_ROWS` Python frames (``with_stack``): each one's total repeats the ops below
    it, and dozens of nested frames would leave no room for the ops."""
    key = "device_total_us" if table.has_device else "cpu_total_us"
    ordered = sorted(rows, key=lambda e: getattr(e.row, key), reverse=True)
    frames = [e for e in ordered if e.explanation.kind is RowKind.PYTHON]
    dropped = {id(e) for e in frames[PYTHON_ROWS:]}
    kept = [e for e in ordered if id(e) not in dropped]
    return tuple(kept[:REPORT_ROWS])


def _text_report(profile: TextProfile) -> ReportData:
    table = profile.table()
    rows = tuple(ExplainedRow(r, explain_row(r, table)) for r in table.rows)
    summary = [f"Source: {profile.source} ({_FORMAT_NAMES[profile.format]})"]
    facts: dict[str, Any] = {"path": profile.source, "format": profile.format}
    if profile.tables:
        layouts = ", ".join(sorted({t.layout for t in profile.tables}))
        largest = max(len(t.table) for t in profile.tables)
        summary.append(
            f"Tables: {len(profile.tables)}; the largest has {largest} rows ({layouts} layout)"
            + (
                f"; {len(table)} distinct rows from the tables of its run are read and shown"
                if len(table) > largest
                else ""
            )
        )
        facts["tables"] = [
            {"title": t.title, "layout": t.layout, "rows": len(t.table), "footer": t.footer}
            for t in profile.tables
        ]
    if profile.lightning is not None:
        lr = profile.lightning
        summary.append(
            f"Lightning {lr.kind} profiler report"
            + (f" of {lr.stage}" if lr.stage else "")
            + f": {len(lr.actions) or len(lr.profiles)} actions"
            + (f", {lr.total_s:.3f} s in total" if lr.total_s else "")
        )
        facts["lightning"] = {"kind": lr.kind, "stage": lr.stage, "total_s": lr.total_s}
    summary.append("No call tree: a printed table holds aggregated rows only (a trace has more)")
    notes = table_notes(table)
    if any(r.event_kind == LIGHTNING_ACTION for r in table.rows):
        notes = [
            "Lightning's actions nest: optimizer_step contains the closure that runs "
            "training_step and backward, and run_training_epoch contains validation run inside "
            "the epoch, so totals overlap and do not add up.",
            "SimpleProfiler records totals and calls only: no self time, no device time.",
        ]
    diagnosis = diagnose_table(profile.run())
    breakdown = diagnosis.breakdown
    notes += diagnosis.limits
    if breakdown.steps:
        notes.append(
            "From a table: the breakdown divides row totals by the steps; it cannot show "
            "overlap between host and device, per-step variation or where untagged time goes "
            "(a trace can)."
        )
    sections: dict[str, Any] = {}
    if profile.lightning is not None and profile.lightning.advanced:
        sections["advanced"] = dict(profile.lightning.advanced)
    return ReportData(
        source=profile.source,
        format=profile.format,
        summary=tuple(summary),
        facts=facts,
        table=table,
        rows=rows,
        top=_top(rows, table),
        tree=None,
        notes=tuple(notes),
        diagnostics=(*profile.warnings, *diagnosis.diagnostics),
        device_name=table.device_name,
        sections=sections,
        breakdown=breakdown if breakdown.steps else None,
        findings=diagnosis.findings,
        verdict=diagnosis.verdict,
        walkthrough=walkthrough(table, diagnosis.verdict),
    )


_FORMAT_NAMES = {
    "torch_table": "printed torch profiler table",
    "lightning_simple": "Lightning SimpleProfiler report",
    "lightning_advanced": "Lightning AdvancedProfiler report",
}
