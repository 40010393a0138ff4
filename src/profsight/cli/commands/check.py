"""``profsight check PATH --max NAME=LIMIT ...``: budgets for CI; exit 5 when one is broken.

Each budget gets one line on stdout (``ok`` or ``BROKEN``, with its figure); when any is
broken, stderr gets one line that counts them (``profsight: 1 of 2 budgets broken``), so a CI
log that merges the two streams states each budget once.
"""

from __future__ import annotations

import argparse
import sys

HELP = "check a run against budgets (step time, phases, device busy, findings) for CI"
_EPILOG = (
    "NAME: a phase (data_loading, forward, backward, optimizer, ...) or device_busy, as a % "
    "of the step; step_time, as a time (120ms, 0.12s, 120000us); a finding category "
    "(host_device_sync, ...; finding:NAME where it is also a phase), as the % of the step "
    "at stake. Exit 0: every budget holds; 5: one is broken; 1: the input can't be read; "
    "2: bad budget syntax."
)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("check", help=HELP, description=HELP, epilog=_EPILOG)
    p.add_argument(
        "path", help="a trace, a printed table or Lightning report, or a saved JSON report"
    )
    p.add_argument(
        "--max", action="append", default=[], metavar="NAME=LIMIT", help="an upper budget"
    )
    p.add_argument(
        "--min", action="append", default=[], metavar="NAME=LIMIT", help="a lower budget"
    )
    p.add_argument(
        "--fail-on",
        default=None,
        metavar="LEVEL",
        help="fail on any finding at or above LEVEL: high, medium or low "
        "('severity>=LEVEL', quoted, works too)",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar while loading (default: for large files on a terminal)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from profsight.cli.exit_codes import EXIT_BUDGET, EXIT_OK
    from profsight.cli.reports import load_document
    from profsight.compare.budgets import check, parse_budget, parse_fail_on
    from profsight.errors import UsageError

    budgets = [parse_budget(a, "max") for a in args.max]
    budgets += [parse_budget(a, "min") for a in args.min]
    fail_on = None if args.fail_on is None else parse_fail_on(args.fail_on)
    if not budgets and fail_on is None:
        raise UsageError("check needs a budget: --max NAME=LIMIT, --min NAME=LIMIT or --fail-on")
    outcomes = check(load_document(args.path, args), budgets, fail_on)
    for outcome in outcomes:
        print(f"{'ok' if outcome.holds else 'BROKEN':<6} {outcome.message}")
    broken = [o for o in outcomes if not o.holds]
    if broken:
        count = f"{len(broken)} of {len(outcomes)} budget{'s' if len(outcomes) > 1 else ''}"
        print(f"profsight: {count} broken", file=sys.stderr)
    return EXIT_BUDGET if broken else EXIT_OK
