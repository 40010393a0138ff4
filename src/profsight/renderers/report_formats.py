"""An explanation of a profile as text, Markdown, JSON or HTML: the registry of formats.

Each format has its own module, so that the command line imports only the one asked for
(rich and the HTML page are about 20 ms of start-up that JSON and Markdown do not need)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from profsight.errors import UsageError
from profsight.renderers.explained import SUFFIXES
from profsight.renderers.html import render_html
from profsight.renderers.report_json import render_json_report
from profsight.renderers.report_markdown import render_markdown_report
from profsight.renderers.terminal import render_terminal

if TYPE_CHECKING:
    from profsight.report.build import ReportData

__all__ = ["REPORT_FORMATS", "render_json_report", "render_markdown_report", "render_report"]


def render_text(report: ReportData, width: int = 120, color: bool = False) -> str:
    """The terminal report (plain text without colour)."""
    return render_terminal(report, width=width, color=color)


REPORT_FORMATS: dict[str, Callable[[ReportData], str]] = {
    "text": render_text,
    "markdown": render_markdown_report,
    "json": render_json_report,
    "html": render_html,
}
REPORT_SUFFIXES = SUFFIXES


def render_report(report: ReportData, fmt: str) -> str:
    try:
        return REPORT_FORMATS[fmt](report)
    except KeyError:
        raise UsageError(
            f"unknown format {fmt!r}; use one of: {', '.join(REPORT_FORMATS)}"
        ) from None
