"""The Python entry points that take "anything the profiler produced"."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from msgspec.structs import asdict

from profsight.compare.saved_report import SavedReport
from profsight.errors import InputError
from profsight.front_door import open_input
from profsight.job import RankListener
from profsight.job import explain_job as _explain_job
from profsight.job.views import JobData
from profsight.renderers.html import in_frame, notebook_html, render_html
from profsight.renderers.job_html import notebook_job_html, render_job_html
from profsight.renderers.job_text import render_job_json, render_job_markdown, render_job_text
from profsight.renderers.report_json import render_json_report
from profsight.renderers.report_markdown import render_markdown_report
from profsight.renderers.saved_text import render_saved
from profsight.renderers.snapshot_report import (
    render_snapshot,
    render_snapshot_html,
    render_snapshot_markdown,
    render_snapshot_text,
)
from profsight.renderers.terminal import render_terminal
from profsight.report.build import ReportData
from profsight.report.snapshot import SnapshotReport
from profsight.report.snapshot import explain_snapshot as _explain_snapshot


class Report(ReportData, frozen=True):
    """One profile explained: its table, call tree, findings and verdict, and its renderings
    (``print(report)``, ``.markdown()``, ``.json()``, ``.html()``; Jupyter shows the page)."""

    @classmethod
    def of(cls, data: ReportData) -> Report:
        return cls(**asdict(data))

    def text(self, width: int = 120, color: bool = False) -> str:
        return render_terminal(self, width=width, color=color)

    def markdown(self) -> str:
        return render_markdown_report(self)

    def json(self) -> str:
        return render_json_report(self)

    def _repr_html_(self) -> str:
        """Jupyter shows the page inline, in a frame of its own (its ids, styles, script)."""
        return notebook_html(self)

    def html(self) -> str:
        """The self-contained HTML page (``profsight explain X -o report.html``)."""
        return render_html(self)

    def __str__(self) -> str:
        return self.text()


def explain(source: Any) -> Report | JobReport | MemorySnapshotReport | SavedReportView:
    """Explain anything profsight reads, as ``profsight explain`` does (`front_door`): a
    trace or printed table (a path, or the table's text), a directory of per-rank traces or
    a trace holding several ranks (a `JobReport`), a memory snapshot (a
    `MemorySnapshotReport`), a report profsight saved as JSON (a `SavedReportView`), a loaded
    profile, or a finished ``torch.profiler.profile`` object.

    Each report prints as text (``print(report)``), and has ``.markdown()``, ``.json()`` and
    ``.html()``; Jupyter shows its page. A job's ranks are read in a local process pool
    (`explain_job` chooses another executor).
    """
    opened = open_input(source)
    report = opened.report
    if opened.kind == "job":
        assert isinstance(report, JobData)
        return JobReport.of(report)
    if opened.kind == "snapshot":
        assert isinstance(report, SnapshotReport)
        return MemorySnapshotReport.of(report)
    if opened.kind == "saved":
        assert isinstance(report, SavedReport)
        return SavedReportView(report.path, report.document)
    assert isinstance(report, ReportData)
    return Report.of(report)


def explain_profile(source: Any) -> Report:
    """`explain` for what must be one profile (a trace, a table, a live profiler): its
    `Report`. Raises `InputError` for a job, a memory snapshot or a saved report."""
    report = explain(source)
    if not isinstance(report, Report):
        raise InputError(
            str(source), "holds a job, a memory snapshot or a saved report, not one profile"
        )
    return report


class SavedReportView(SavedReport, frozen=True):
    """A report profsight saved (``--format json``), read back, with its renderings: the
    JSON as saved, its verdict and findings as text, Markdown or a plain page."""

    def text(self) -> str:
        return render_saved(self, "text")

    def markdown(self) -> str:
        return render_saved(self, "markdown")

    def json(self) -> str:
        return render_saved(self, "json")

    def html(self) -> str:
        return render_saved(self, "html")

    def _repr_html_(self) -> str:
        return in_frame(self.html())

    def __str__(self) -> str:
        return self.text()


class JobReport(JobData, frozen=True):
    """A job of several ranks explained (`explain_job`), with its renderings."""

    @classmethod
    def of(cls, data: JobData) -> JobReport:
        return cls(**asdict(data))

    def text(self, width: int = 120, color: bool = False) -> str:
        return render_job_text(self, width=width, color=color)

    def markdown(self) -> str:
        return render_job_markdown(self)

    def json(self) -> str:
        return render_job_json(self)

    def html(self) -> str:
        return render_job_html(self)

    def _repr_html_(self) -> str:
        return notebook_job_html(self)

    def __str__(self) -> str:
        return self.text()


def explain_job(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    executor: str = "process",
    workers: int | None = None,
    scheduler: str | None = None,
    worker_memory: int | None = None,
    on_rank: RankListener | None = None,
) -> JobReport:
    """Explain a job from a directory of per-rank traces, or the trace files themselves.

    `executor`: ``process`` (a local process pool, the default), ``serial`` or ``dask``
    (`scheduler`: a Dask scheduler's address; none starts a local cluster). `workers`: how
    many ranks are read at once. `worker_memory`: the bytes each worker may take
    (``--worker-memory``). `on_rank(summary, finished, total)`: told each trace's summary
    (or failure) as soon as it is ready, in the order they finish.
    """
    data = _explain_job(paths, executor, workers, scheduler, worker_memory, on_rank)
    return JobReport.of(data)


class MemorySnapshotReport(SnapshotReport, frozen=True):
    """A memory snapshot explained (`explain_snapshot`): each device's peak and what holds
    it, with its renderings."""

    @classmethod
    def of(cls, data: SnapshotReport) -> MemorySnapshotReport:
        return cls(**asdict(data))

    def text(self) -> str:
        return render_snapshot_text(self)

    def markdown(self) -> str:
        return render_snapshot_markdown(self)

    def json(self) -> str:
        return render_snapshot(self, "json")

    def html(self) -> str:
        return render_snapshot_html(self)

    def _repr_html_(self) -> str:
        return in_frame(self.html())

    def __str__(self) -> str:
        return self.text()


def explain_snapshot(path: str | os.PathLike[str]) -> MemorySnapshotReport:
    """Explain a memory snapshot: the pickle ``torch.cuda.memory._dump_snapshot`` writes
    (plain or gzip). It is read as plain data: no code in it runs."""
    return MemorySnapshotReport.of(_explain_snapshot(path))
