"""A saved report (``profsight explain X --format json -o FILE``) shown again: its JSON as
saved, or its verdict and ranked findings as text, Markdown or a plain page. The full page,
tree and charts come from the profile itself (``profsight explain PROFILE``)."""

from __future__ import annotations

import html
from typing import Any

import msgspec

from profsight.compare.saved_report import SavedReport

#: Said under a saved report's text: what it can and cannot show.
SAVED_NOTE = (
    "A saved report, shown as saved: explain the profile itself for its table, tree and charts."
)


def render_saved(report: SavedReport, fmt: str) -> str:
    if fmt == "json":
        text = msgspec.json.encode(report.document).decode()
        return msgspec.json.format(text, indent=2) + "\n"
    doc = report.document
    verdict = doc.get("verdict") or {}
    findings = [f for f in doc.get("findings", []) if isinstance(f, dict)]
    if fmt == "markdown":
        return _markdown(report.path, _source(doc), verdict, findings)
    if fmt == "html":
        return _html(report.path, _source(doc), verdict, findings)
    return _text(report.path, _source(doc), verdict, findings)


def render_saved_text(report: SavedReport) -> str:
    return render_saved(report, "text")


def render_saved_markdown(report: SavedReport) -> str:
    return render_saved(report, "markdown")


def render_saved_json(report: SavedReport) -> str:
    return render_saved(report, "json")


def render_saved_html(report: SavedReport) -> str:
    return render_saved(report, "html")


def _source(doc: dict[str, Any]) -> str:
    source = doc.get("source")
    return str(source.get("path", "")) if isinstance(source, dict) else str(source or "")


def _finding_line(f: dict[str, Any]) -> str:
    return f"[{f.get('severity', '')}] {f.get('title', '')}  ({f.get('category', '')})"


def _text(path: str, source: str, verdict: dict[str, Any], findings: list[dict[str, Any]]) -> str:
    lines = [f"Saved report: {path} (of {source})"]
    if verdict:
        lines += [f"Verdict: {verdict.get('judgement', '')}", f"  {verdict.get('summary', '')}"]
    lines.append("Findings, most saved by fixing first:")
    for i, f in enumerate(findings, 1):
        lines += [f"{i}. {_finding_line(f)}", f"     fix: {f.get('recommendation', '')}"]
    lines += ["", SAVED_NOTE]
    return "\n".join(lines) + "\n"


def _markdown(
    path: str, source: str, verdict: dict[str, Any], findings: list[dict[str, Any]]
) -> str:
    lines = [f"# Saved report: `{path}`", "", f"Of `{source}`.", ""]
    if verdict:
        lines += [f"**Verdict: {verdict.get('judgement', '')}.** {verdict.get('summary', '')}", ""]
    lines.append("## Findings, most saved by fixing first")
    lines.append("")
    for i, f in enumerate(findings, 1):
        lines.append(f"{i}. {_finding_line(f)}: {f.get('recommendation', '')}")
    lines += ["", SAVED_NOTE]
    return "\n".join(lines) + "\n"


def _html(path: str, source: str, verdict: dict[str, Any], findings: list[dict[str, Any]]) -> str:
    esc = html.escape
    items = "".join(
        f"<li>{esc(_finding_line(f))}<br>fix: {esc(str(f.get('recommendation', '')))}</li>"
        for f in findings
    )
    summary = (
        f"<p><strong>Verdict: {esc(str(verdict.get('judgement', '')))}.</strong> "
        f"{esc(str(verdict.get('summary', '')))}</p>"
        if verdict
        else ""
    )
    return (
        '<!doctype html><html lang="en"><meta charset="utf-8">'
        f"<title>profsight: {esc(path)}</title>"
        f"<h1>Saved report: {esc(path)}</h1><p>Of {esc(source)}.</p>{summary}"
        f"<h2>Findings, most saved by fixing first</h2><ol>{items}</ol>"
        f"<p>{esc(SAVED_NOTE)}</p></html>\n"
    )


__all__ = [
    "SAVED_NOTE",
    "render_saved",
    "render_saved_html",
    "render_saved_json",
    "render_saved_markdown",
    "render_saved_text",
]
