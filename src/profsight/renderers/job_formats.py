"""A job's report in the format asked for (``--format`` / the output's suffix)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from profsight.renderers.job_html import render_job_html
from profsight.renderers.job_text import render_job_json, render_job_markdown, render_job_text

if TYPE_CHECKING:
    from profsight.job.views import JobData


def render_job(report: JobData, fmt: str) -> str:
    if fmt == "markdown":
        return render_job_markdown(report)
    if fmt == "json":
        return render_job_json(report)
    if fmt == "html":
        return render_job_html(report)
    return render_job_text(report)
