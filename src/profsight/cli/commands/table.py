"""``profsight table PATH``: torch's profiler table, rebuilt from a trace."""

from __future__ import annotations

import argparse

from profsight.cli.choices import GROUP_BYS, TABLE_FORMATS
from profsight.cli.common import add_output_arguments, format_from, non_negative_int

HELP = "print the profiler table (torch's key_averages()) of a trace"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("table", help=HELP, description=HELP)
    p.add_argument("path", help="trace file (.json or .json.gz)")
    p.add_argument(
        "--sort",
        default=None,
        help="column to sort by, largest first: self_cpu_us, cpu_total_us, "
        "self_device_us, device_total_us, calls, cpu_mem, ... or torch's names "
        "(cpu_time_total, self_cuda_time_total, ...); default: first occurrence",
    )
    p.add_argument("--limit", type=non_negative_int, default=None, help="show at most N rows")
    p.add_argument(
        "--group-by",
        choices=GROUP_BYS,
        default="name",
        help="aggregate by op name (torch's default), by name and input shapes, or by nn.Module",
    )
    p.add_argument(
        "--format",
        choices=list(TABLE_FORMATS),
        default=None,
        help="text (torch's layout), json, csv or markdown",
    )
    add_output_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from profsight.cli.common import load_profile, warn_analysis, write_output
    from profsight.renderers.table_formats import TABLE_SUFFIXES, render_table

    profile = load_profile(args.path, args)
    table = profile.table(group_by=args.group_by, sort_by=args.sort, limit=args.limit)
    warn_analysis(args.path, profile)
    fmt = format_from(args, TABLE_SUFFIXES, "text")
    write_output(render_table(table, fmt), args.output, [args.path], args.force)
    return 0
