"""``profsight diff BEFORE AFTER``: what got faster or slower between two runs, per step."""

from __future__ import annotations

import argparse

from profsight.cli.choices import DIFF_BYS, DIFF_FORMATS
from profsight.cli.common import add_output_arguments, format_from

HELP = "compare two runs: step time, phases, rows that got faster or slower, findings"
_INPUT = "a trace, a printed table or Lightning report, or a saved JSON report"


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
    add_output_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from profsight.cli.common import write_output
    from profsight.cli.reports import load_document
    from profsight.compare.diff import compare
    from profsight.renderers.diff_render import (
        DIFF_SUFFIXES,
        ROWS_SHOWN,
        render_diff,
        render_diff_html,
        render_diff_markdown,
        render_diff_text,
    )

    diff = compare(load_document(args.before, args), load_document(args.after, args), by=args.by)
    fmt = format_from(args, DIFF_SUFFIXES, "text")
    limit = ROWS_SHOWN if args.limit is None else max(args.limit, 0)
    if fmt == "text":
        text = render_diff_text(diff, limit)
    elif fmt == "markdown":
        text = render_diff_markdown(diff, limit)
    elif fmt == "html":
        text = render_diff_html(diff, limit)
    else:
        text = render_diff(diff, fmt)
    write_output(text, args.output, [args.before, args.after], args.force)
    return 0
