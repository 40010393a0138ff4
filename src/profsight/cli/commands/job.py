"""``profsight job PATH...``: a distributed job's per-rank traces, explained as one."""

from __future__ import annotations

import argparse
import sys

from profsight.cli.choices import EXECUTORS, REPORT_FORMATS
from profsight.cli.common import add_output_arguments, byte_size, format_from, positive_int

HELP = "explain a distributed job: a directory of per-rank traces, or the trace files"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("job", help=HELP, description=HELP)
    p.add_argument("paths", nargs="+", help="a directory of traces, or trace files (one per rank)")
    p.add_argument("--format", choices=list(REPORT_FORMATS), default=None)
    p.add_argument(
        "--executor",
        choices=list(EXECUTORS),
        default="process",
        help="where the ranks are analysed: a local process pool (default), this process "
        "(serial), or a Dask cluster (dask)",
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        help="processes (or Dask workers of a local cluster); default: one per core",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="with --executor dask: the scheduler's address (tcp://host:8786); without it a "
        "local cluster is started",
    )
    p.add_argument(
        "--worker-memory",
        type=byte_size,
        default=None,
        metavar="SIZE",
        help="memory each worker may take (e.g. 2GB, 500MB): no more workers than the "
        "available memory allows at that size; a local Dask cluster holds its workers to it",
    )
    add_output_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from profsight.cli.common import write_output
    from profsight.cli.job_progress import rank_progress
    from profsight.job import explain_job
    from profsight.renderers.job_formats import render_job
    from profsight.renderers.job_text import JOB_SUFFIXES

    show = sys.stderr.isatty() if args.progress is None else args.progress
    with rank_progress(show) as on_rank:
        report = explain_job(
            args.paths, args.executor, args.workers, args.scheduler, args.worker_memory, on_rank
        )
    fmt = format_from(args, JOB_SUFFIXES, "text")
    if fmt != "text" or args.output is not None:  # the text report lists them itself
        for note in report.diagnostics:
            print(f"profsight: warning: {note}", file=sys.stderr)
    write_output(render_job(report, fmt), args.output, list(report.sources), args.force)
    return 0
