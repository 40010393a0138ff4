"""A memory snapshot's report in the terminal, Markdown, JSON (``profsight-snapshot/1``)
and HTML (the report page, with its memory chart and `#ps-snapshot`)."""

from __future__ import annotations

import json

from profsight.compare.snapshot_diff import SnapshotDiff, snapshot_diff_document
from profsight.knowledge.snapshot_sites import (
    HOLDER_MEANING,
    HOLDERS,
    PHASE_PHRASE,
    SITES_SHOWN,
    SITES_TEXT_SHOWN,
    SNAPSHOT_PAGE_TEXTS,
    SNAPSHOT_TITLE,
)
from profsight.renderers.escape import markdown_cell as md_cell
from profsight.renderers.explained import SUFFIXES, VIEWS
from profsight.renderers.html import SCHEMA, page
from profsight.report.snapshot import SnapshotReport, blocks, device_document, snapshot_document
from profsight.units import short_bytes

SNAPSHOT_SUFFIXES = SUFFIXES


def render_snapshot_json(report: SnapshotReport) -> str:
    return json.dumps(snapshot_document(report), indent=2, ensure_ascii=False) + "\n"


def render_snapshot(report: SnapshotReport, fmt: str) -> str:
    if fmt == "json":
        return render_snapshot_json(report)
    if fmt == "markdown":
        return render_snapshot_markdown(report)
    if fmt == "html":
        return render_snapshot_html(report)
    return render_snapshot_text(report)


def render_snapshot_text(report: SnapshotReport) -> str:
    lines = [f"profsight: {report.source}", SNAPSHOT_TITLE, ""]
    lines += [f"  {d}" for d in (f"note: {x}" for x in report.diagnostics)]
    for p, summary in zip(report.peaks, report.summary, strict=True):
        lines += [summary, "", "  held at the peak, by where and when it was allocated:"]
        lines += [f"    {short_bytes(p.holders[h]):>10}  {h}" for h in HOLDERS if p.holders[h]]
        lines += ["", "  by site (your code's innermost frame, or the autograd node):"]
        lines += [
            f"    {short_bytes(s.bytes):>10}  {blocks(s.blocks):>12}  {s.label}  [{s.holder}]"
            for s in p.sites[:SITES_TEXT_SHOWN]
        ]
        if len(p.sites) > SITES_TEXT_SHOWN:
            lines.append(f"    ... {len(p.sites) - SITES_TEXT_SHOWN} more sites (--format json)")
        lines.append("")
    lines += [f"what to shrink first: {a}" for a in report.advice]
    return "\n".join(lines).rstrip() + "\n"


def render_snapshot_markdown(report: SnapshotReport) -> str:
    out = [f"# {SNAPSHOT_TITLE}", "", md_cell(report.source), ""]
    out += [f"- {md_cell(s)}" for s in report.summary]
    out += [f"- note: {md_cell(d)}" for d in report.diagnostics]
    out += [f"- what to shrink first: {md_cell(a)}" for a in report.advice]
    for p in report.peaks:
        out += ["", f"## Device {p.device}: peak {short_bytes(p.peak_bytes)}", ""]
        out += ["| held by | bytes | what it is |", "|---|---:|---|"]
        out += [
            f"| {h} | {short_bytes(p.holders[h])} | {md_cell(HOLDER_MEANING[h])} |"
            for h in HOLDERS
            if p.holders[h]
        ]
        out += ["", "| site | bytes | blocks | holder |", "|---|---:|---:|---|"]
        out += [
            f"| {md_cell(s.label)} | {short_bytes(s.bytes)} | {s.blocks} | {s.holder} |"
            for s in p.sites[:SITES_SHOWN]
        ]
    return "\n".join(out) + "\n"


def render_snapshot_html(report: SnapshotReport) -> str:
    first = max(report.peaks, key=lambda p: p.peak_bytes, default=None)
    timelines = None
    if first is not None and first.timeline and first.times_known:
        width = first.timeline[0][0] * 2
        timelines = {
            "bucket_us": width,
            "memory": {"device": [v for _, v in first.timeline]},
            "steps": [],
        }
    data = {
        "schema": SCHEMA,
        "source": report.source,
        "summary": list(report.summary) + [f"what to shrink first: {a}" for a in report.advice],
        "diagnostics": list(report.diagnostics),
        "notes": [],
        "device": f"device {first.device}"
        if first is not None and len(report.peaks) > 1
        else "device",
        "has_device": True,
        "timelines": timelines,
        "snapshot": {
            **SNAPSHOT_PAGE_TEXTS,
            "devices": [device_document(p) for p in report.peaks],
            "holders": [{"holder": h, "meaning": HOLDER_MEANING[h]} for h in HOLDERS],
        },
    }
    return page(f"profsight: {report.source}", SNAPSHOT_TITLE, data)


SNAPSHOT_DIFF_FORMATS = tuple(VIEWS["snapshot_diff"])


def render_snapshot_diff(diff: SnapshotDiff, fmt: str, limit: int = SITES_SHOWN) -> str:
    if fmt == "json":
        return json.dumps(snapshot_diff_document(diff), indent=2, ensure_ascii=False) + "\n"
    lines = _diff_lines(diff, limit, markdown=fmt == "markdown")
    return "\n".join(lines).rstrip() + "\n"


def _change(before: int, after: int) -> str:
    sign = "+" if after >= before else "-"
    moved = short_bytes(abs(after - before))
    return f"{short_bytes(before)} -> {short_bytes(after)} ({sign}{moved})"


def _diff_lines(diff: SnapshotDiff, limit: int, markdown: bool) -> list[str]:
    esc = md_cell if markdown else (lambda text: text)
    out = [("# " if markdown else "") + "Memory snapshots compared", ""]
    if markdown:
        out += [f"- before: {esc(diff.before)}", f"- after: {esc(diff.after)}", ""]
    else:
        out += [f"before: {diff.before}", f"after:  {diff.after}", ""]
    for d in diff.devices:
        head = f"device {d.device}: peak {_change(d.peak_before, d.peak_after)}"
        if d.phase_before != d.phase_after:
            was, now = PHASE_PHRASE[d.phase_before], PHASE_PHRASE[d.phase_after]
            head += f"; reached in {was} before, in {now} after"
        out += [("## " if markdown else "") + head, ""]
        rows = [(h, a, b) for h, (a, b) in d.holders.items() if a or b]
        if markdown:
            out += ["| held by | before | after |", "|---|---:|---:|"]
            out += [f"| {h} | {short_bytes(a)} | {short_bytes(b)} |" for h, a, b in rows]
            out += ["", "| site | before | after |", "|---|---:|---:|"]
            out += [
                f"| {esc(s.site)} | {short_bytes(s.before)} | {short_bytes(s.after)} |"
                for s in d.sites[:limit]
            ]
        else:
            out += [f"  {h:<22} {_change(a, b)}" for h, a, b in rows]
            out += ["", "  sites that changed most:"]
            out += [f"    {_change(s.before, s.after):<40} {s.site}" for s in d.sites[:limit]]
        out.append("")
    for device in diff.only_before:
        out.append(f"device {device}: only in the run before")
    for device in diff.only_after:
        out.append(f"device {device}: only in the run after")
    return out
