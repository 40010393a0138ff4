"""``profsight explain [PATH]``: what was profiled, the rows that matter, the call tree."""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from profsight.cli.choices import REPORT_FORMATS, REPORT_SUFFIXES
from profsight.cli.common import add_output_arguments, format_from, terminal_width

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

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
    from profsight.cli.common import load_profile, warn, warn_analysis, write_output
    from profsight.front_door import JobOptions, open_input
    from profsight.renderers.explained import render_explained
    from profsight.samples import sample_trace

    path = args.path or str(sample_trace())
    with _rank_progress(path, args) as on_rank:
        opened = open_input(path, JobOptions(on_rank=on_rank), lambda p: load_profile(p, args))
    report = opened.report
    fmt = format_from(args, REPORT_SUFFIXES, "text")
    if fmt != "text" or args.output is not None:  # the terminal report lists them itself
        if opened.profile is not None:
            warn_analysis(path, opened.profile)
        elif opened.kind in ("snapshot", "job"):
            prefix = f"{path}: " if opened.kind == "snapshot" else "warning: "
            for note in report.diagnostics:
                warn(f"{prefix}{note}")
    to_terminal = args.output is None
    width = terminal_width() if to_terminal else 120
    color = to_terminal and fmt == "text" and sys.stdout.isatty()
    sources = list(opened.sources or (path,))
    text = render_explained(report, opened.kind, fmt, width, color)
    write_output(text, args.output, sources, args.force)
    return 0


def _rank_progress(path: str, args: argparse.Namespace) -> AbstractContextManager[Any]:
    """A directory's ranks shown as they are read (on a terminal, or with --progress)."""
    if not os.path.isdir(path):
        return nullcontext(None)
    from profsight.cli.job_progress import rank_progress

    return rank_progress(sys.stderr.isatty() if args.progress is None else args.progress)
