"""An explanation of a profile as text, Markdown or JSON (output contract ``profsight/1``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from profsight.errors import UsageError
from profsight.model.tree import TreeNode
from profsight.renderers.escape import markdown_cell
from profsight.renderers.table_formats import render_markdown
from profsight.renderers.table_text import render_torch_table
from profsight.renderers.tree_text import render_tree_text
from profsight.renderers.units import short_time
from profsight.report import Report

SCHEMA = "profsight/1"


def _overview_lines(report: Report) -> list[str]:
    o = report.overview
    lines = [
        f"Source: {o.source} ({o.format} trace, {o.events:,} events)",
        f"Profiled: {o.steps} step(s) over {short_time(o.window_us)} on {o.threads} thread(s)",
    ]
    if o.devices:
        lines.append(f"Devices listed: {', '.join(sorted(set(o.devices)))}")
    if o.device_events:
        lines.append(
            f"Device work: {o.device_events:,} kernels/copies, {short_time(o.device_busy_us)} busy"
        )
    else:
        lines.append("Device work: none recorded (CPU-only run, or CUDA activity not profiled)")
    if o.world_size is not None:
        lines.append(f"Distributed: rank {o.rank} of {o.world_size}")
    return lines


def render_text(report: Report, width: int = 120, color: bool = False) -> str:
    parts = ["\n".join(_overview_lines(report)), ""]
    for diag in report.diagnostics:
        parts.append(f"note: {diag}")
    parts += ["", "Top rows of the profiler table (torch's layout):", ""]
    parts.append(render_torch_table(report.top_rows))
    parts += ["Call tree (nodes under 2% of the run hidden):", ""]
    parts.append(
        render_tree_text(report.tree, width=width, color=color, device_name=report.device_name)
    )
    return "\n".join(parts)


def render_markdown_report(report: Report) -> str:
    lines = ["# profsight report", ""]
    lines += [f"- {markdown_cell(line)}" for line in _overview_lines(report)]
    if report.diagnostics:
        lines += ["", "## Notes", ""]
        lines += [f"- {markdown_cell(str(d))}" for d in report.diagnostics]
    lines += ["", "## Top rows", "", render_markdown(report.top_rows)]
    lines += ["## Call tree", ""]
    _tree_markdown(report.tree.root, 0, lines)
    return "\n".join(lines) + "\n"


def _tree_markdown(node: TreeNode, depth: int, lines: list[str]) -> None:
    for child in node.children:
        device = f", device {short_time(child.device_total_us)}" if child.device_total_us else ""
        lines.append(
            f"{'  ' * depth}- {markdown_cell(child.name)} ×{child.calls}: "
            f"CPU {short_time(child.cpu_total_us)} (self {short_time(child.cpu_self_us)}){device}"
        )
        _tree_markdown(child, depth + 1, lines)


def report_document(report: Report) -> dict[str, Any]:
    o = report.overview
    return {
        "schema": SCHEMA,
        "source": {
            "path": o.source,
            "format": o.format,
            "events": o.events,
            "threads": o.threads,
            "steps": o.steps,
            "window_us": o.window_us,
            "devices": list(o.devices),
            "device_busy_us": o.device_busy_us,
            "rank": o.rank,
            "world_size": o.world_size,
            "decoded_bytes": o.load.size,
            "decoded_in_chunks": o.load.chunks,
            "decoding_processes": o.load.workers,
        },
        "table": report.table.to_records(),
        "tree": report.tree.root.to_dict(),
        "diagnostics": [
            {
                "code": d.code,
                "level": d.level.value,
                "message": d.message,
                "count": d.count,
                "remedy": d.remedy,
            }
            for d in report.diagnostics
        ],
    }


def render_json_report(report: Report) -> str:
    text = msgspec.json.encode(report_document(report)).decode()
    return msgspec.json.format(text, indent=2) + "\n"


REPORT_FORMATS: dict[str, Callable[[Report], str]] = {
    "text": render_text,
    "markdown": render_markdown_report,
    "json": render_json_report,
}
REPORT_SUFFIXES = {".txt": "text", ".md": "markdown", ".json": "json"}


def render_report(report: Report, fmt: str) -> str:
    try:
        return REPORT_FORMATS[fmt](report)
    except KeyError:
        raise UsageError(
            f"unknown format {fmt!r}; use one of: {', '.join(REPORT_FORMATS)}"
        ) from None
