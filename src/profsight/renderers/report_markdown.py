"""An explanation of a profile as Markdown (the sections of the terminal report, as text)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from profsight.model.tree import TreeNode
from profsight.names import MARKDOWN_NAME, cut_words, markdown_name
from profsight.renderers.diagnosis import (
    breakdown_lines,
    communication_lines,
)
from profsight.renderers.escape import markdown_cell
from profsight.report.sections import SECTIONS
from profsight.units import short_time

if TYPE_CHECKING:
    from profsight.report.build import ReportData


def _md(text: str) -> str:
    """Prose as inert Markdown, no word (a name it quotes) over `MARKDOWN_NAME` characters."""
    return markdown_cell(cut_words(text, MARKDOWN_NAME))


def render_markdown_report(report: ReportData) -> str:
    lines = ["# profsight report", ""]
    lines += [f"- {markdown_cell(line)}" for line in report.summary]
    if report.verdict is not None:
        lines += ["", "## Verdict", "", _md(report.verdict.summary)]
    if report.breakdown is not None and report.breakdown.steps:
        lines += [
            "",
            "## Step time",
            "",
            "```",
            *breakdown_lines(report.breakdown, report.device_name),
            "```",
        ]
    if report.communication is not None:
        lines += [
            "",
            "## Collectives",
            "",
            "```",
            *communication_lines(report.communication),
            "```",
        ]
    for section in SECTIONS:
        # names come from the trace: no backtick may close the block; the text's heading
        # line gives way to the Markdown heading
        text = section.lines(section.document(report.views.get(section.name)))
        block = [line.replace("`", "'") for line in text]
        if block:
            lines += ["", f"## {section.title}", "", "```", *block[1:], "```"]
    if report.findings:
        lines += ["", "## Findings", ""]
        for i, f in enumerate(report.findings, 1):
            lines.append(f"{i}. **{_md(f.title)}** ({f.category}, {f.severity.name.lower()})")
            for item in f.evidence:
                label = markdown_cell(markdown_name(item.label))
                lines.append(f"   - {label}: {_md(item.value)}")
            lines.append(f"   - why: {_md(f.explanation)}")
            lines.append(f"   - fix: {_md(f.recommendation)}")
            if f.confidence:
                lines.append(f"   - note: {_md(f.confidence)}")
    if report.diagnostics:
        lines += ["", "## Notes on the input", ""]
        lines += [f"- {markdown_cell(str(d))}" for d in report.diagnostics]
    dev = report.device_name
    lines += ["", "## The rows that matter most", ""]
    head = ["Kind", "Name", "Calls", "Self CPU", "CPU total"]
    if report.table.has_device:
        head += [f"Self {dev}", f"{dev} total"]
    lines += ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    for e in report.top:
        r = e.row
        cells = [
            e.explanation.kind.value,
            markdown_cell(markdown_name(r.name)),
            str(r.calls),
            short_time(r.self_cpu_us),
            short_time(r.cpu_total_us),
        ]
        if report.table.has_device:
            cells += [short_time(r.self_device_us), short_time(r.device_total_us)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## What they are", ""]
    for e in report.noted:
        lines.append(
            f"- **{markdown_cell(markdown_name(e.row.name))}** ({e.explanation.kind.value}: "
            f"{_md(e.explanation.layer)}): {_md(e.explanation.meaning)}"
        )
        if e.explanation.reading:
            lines.append(f"  - {_md(e.explanation.reading)}")
    lines += [""] + [f"- {_md(n)}" for n in report.notes]
    if report.walkthrough:
        lines += ["", "## Reading the table, step by step", ""]
        lines += [f"{i}. {_md(t)}" for i, t in enumerate(report.walkthrough, 1)]
    if report.tree is not None:
        lines += ["", "## Call tree", ""]
        _tree_markdown(report.tree.root, 0, lines)
    return "\n".join(lines) + "\n"


def _tree_markdown(node: TreeNode, depth: int, lines: list[str]) -> None:
    for child in node.children:
        device = f", device {short_time(child.device_total_us)}" if child.device_total_us else ""
        lines.append(
            f"{'  ' * depth}- {markdown_cell(markdown_name(child.name))} ×{child.calls}: "
            f"CPU {short_time(child.cpu_total_us)} (self {short_time(child.cpu_self_us)}){device}"
        )
        _tree_markdown(child, depth + 1, lines)
