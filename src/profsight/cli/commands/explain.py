"""``profsight explain [PATH]``: what was profiled, the rows that matter, the call tree."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from typing import TYPE_CHECKING

from profsight.cli.choices import REPORT_FORMATS, REPORT_SUFFIXES
from profsight.cli.common import add_output_arguments, format_from

if TYPE_CHECKING:
    from profsight.model.rank_split import RankParts
    from profsight.report.build import ReportData

HELP = "explain a profile (no PATH: a bundled Lightning ResNet-18 sample trace)"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("explain", help=HELP, description=HELP)
    p.add_argument(
        "path",
        nargs="?",
        default=None,
        help="trace file (.json or .json.gz), printed table, memory snapshot "
        "(torch.cuda.memory._dump_snapshot's .pickle), or a directory of per-rank traces "
        "(then as `profsight job`)",
    )
    p.add_argument("--format", choices=list(REPORT_FORMATS), default=None)
    add_output_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from profsight.cli.common import load_profile, warn_analysis, write_output
    from profsight.loaders import is_snapshot
    from profsight.model.rank_split import rank_parts
    from profsight.model.text_profile import TextProfile
    from profsight.report.build import build_report
    from profsight.samples import sample_trace

    path = args.path or str(sample_trace())
    if os.path.isdir(path):
        from profsight.cli.commands import job

        args.paths, args.executor, args.workers, args.scheduler = [path], "process", None, None
        args.worker_memory = None
        return job.run(args)
    if is_snapshot(path):
        return _snapshot(path, args)
    profile = load_profile(path, args)
    if not isinstance(profile, TextProfile) and (parts := rank_parts(profile)):
        return _job(parts, path, args)
    report = build_report(profile)
    fmt = format_from(args, REPORT_SUFFIXES, "text")
    if fmt != "text" or args.output is not None:  # the terminal report lists them itself
        warn_analysis(path, profile)
    write_output(_rendered(report, fmt, args.output is None), args.output, [path], args.force)
    return 0


def _rendered(report: ReportData, fmt: str, to_terminal: bool) -> str:
    """The report in `fmt`, importing only that format's renderer: rich and the HTML page
    are about 20 ms of start-up that JSON and Markdown do without."""
    if fmt == "json":
        from profsight.renderers.report_json import render_json_report

        return render_json_report(report)
    if fmt == "markdown":
        from profsight.renderers.report_markdown import render_markdown_report

        return render_markdown_report(report)
    from profsight.renderers.report_formats import render_report, render_text

    if fmt == "text" and to_terminal:
        width = shutil.get_terminal_size((120, 24)).columns
        return render_text(report, width=width, color=sys.stdout.isatty())
    return render_report(report, fmt)


def _snapshot(path: str, args: argparse.Namespace) -> int:
    """A memory snapshot (``torch.cuda.memory._dump_snapshot``): its peaks, what holds them."""
    from profsight.cli.common import warn, write_output
    from profsight.renderers.snapshot_report import SNAPSHOT_SUFFIXES, render_snapshot
    from profsight.report.snapshot import explain_snapshot

    report = explain_snapshot(path)
    fmt = format_from(args, SNAPSHOT_SUFFIXES, "text")
    if fmt != "text" or args.output is not None:
        for note in report.diagnostics:
            warn(f"{path}: {note}")
    write_output(render_snapshot(report, fmt), args.output, [path], args.force)
    return 0


def _job(parts: RankParts, path: str, args: argparse.Namespace) -> int:
    """A trace that holds several ranks, explained as `profsight job` explains a job."""
    from profsight.cli.common import write_output
    from profsight.job import explain_ranks
    from profsight.renderers.job_formats import render_job
    from profsight.renderers.job_text import JOB_SUFFIXES

    report = explain_ranks(parts, path)
    fmt = format_from(args, JOB_SUFFIXES, "text")
    if fmt != "text" or args.output is not None:
        for note in report.diagnostics:
            print(f"profsight: warning: {note}", file=sys.stderr)
    write_output(render_job(report, fmt), args.output, [path], args.force)
    return 0
