"""``profsight diff BEFORE AFTER``: what got faster or slower between two runs, per step."""

from __future__ import annotations

import argparse

from profsight.cli.choices import DIFF_BYS, DIFF_FORMATS, DIFF_SUFFIXES, SNAPSHOT_DIFF_SUFFIXES
from profsight.cli.common import add_output_arguments, format_from, percent, terminal_width

HELP = "compare two runs: step time, phases, rows that got faster or slower, findings"
_INPUT = "a trace, a printed table or Lightning report, a saved JSON report, or a memory snapshot"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("diff", help=HELP, description=HELP)
    p.add_argument("before", help=f"the run before: {_INPUT}")
    p.add_argument("after", help=f"the run after: {_INPUT}")
    p.add_argument("--format", choices=list(DIFF_FORMATS), default=None)
    p.add_argument(
        "--by",
        choices=list(DIFF_BYS),
        default="total",
        help="rank rows by the change of their total (default) or self time",
    )
    p.add_argument(
        "--limit", type=int, default=None, metavar="N", help="rows per list (not in JSON)"
    )
    p.add_argument(
        "--noise",
        type=percent,
        default=None,
        metavar="PCT",
        help="how much two runs of the same script differ on this machine, %% of the step "
        "(warm-up, clocks, caches, neighbours: no run's own steps show it); changes within it "
        "are noise (default: the runs' step-to-step spread only)",
    )
    add_output_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from profsight.cli.common import write_output
    from profsight.cli.reports import load_document
    from profsight.compare.diff import compare
    from profsight.loaders import is_snapshot
    from profsight.renderers.diff_render import (
        ROWS_SHOWN,
        render_diff,
        render_diff_html,
        render_diff_markdown,
        render_diff_text,
    )

    snapshots = [is_snapshot(p) for p in (args.before, args.after)]
    if any(snapshots):
        return _snapshots(args, all(snapshots))
    diff = compare(
        load_document(args.before, args),
        load_document(args.after, args),
        by=args.by,
        run_noise_pct=args.noise,
    )
    fmt = format_from(args, DIFF_SUFFIXES, "text")
    limit = ROWS_SHOWN if args.limit is None else max(args.limit, 0)
    if fmt == "text":
        width = terminal_width() if args.output is None else 120
        text = render_diff_text(diff, limit, width)
    elif fmt == "markdown":
        text = render_diff_markdown(diff, limit)
    elif fmt == "html":
        text = render_diff_html(diff, limit)
    else:
        text = render_diff(diff, fmt)
    write_output(text, args.output, [args.before, args.after], args.force)
    return 0


def _snapshots(args: argparse.Namespace, both: bool) -> int:
    """Two memory snapshots: each device's peak, by holder and by site, before and after."""
    from profsight.cli.common import write_output
    from profsight.compare.snapshot_diff import compare_snapshots
    from profsight.errors import UsageError
    from profsight.knowledge.snapshot_sites import SITES_SHOWN
    from profsight.renderers.snapshot_report import SNAPSHOT_DIFF_FORMATS, render_snapshot_diff
    from profsight.report.snapshot import explain_snapshot

    if not both:
        raise UsageError(
            "one input is a memory snapshot and the other is not: diff compares two "
            "snapshots, or two traces, tables or reports"
        )
    fmt = format_from(args, SNAPSHOT_DIFF_SUFFIXES, "text")
    if fmt not in SNAPSHOT_DIFF_FORMATS:
        raise UsageError(
            f"two memory snapshots are compared as {', '.join(SNAPSHOT_DIFF_FORMATS)}, not {fmt}"
        )
    diff = compare_snapshots(explain_snapshot(args.before), explain_snapshot(args.after))
    limit = SITES_SHOWN if args.limit is None else max(args.limit, 0)
    write_output(
        render_snapshot_diff(diff, fmt, limit), args.output, [args.before, args.after], args.force
    )
    return 0
