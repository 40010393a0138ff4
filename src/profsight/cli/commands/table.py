"""``profsight table PATH``: torch's profiler table, rebuilt from a trace."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from profsight.cli.choices import TABLE_FORMATS, TABLE_SUFFIXES, group_by, sort_key
from profsight.cli.common import add_output_arguments, format_from, non_negative_int
from profsight.errors import UsageError

if TYPE_CHECKING:
    from profsight.model.table import ProfilerTable

HELP = "print the profiler table (torch's key_averages()) of a trace"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("table", help=HELP, description=HELP)
    p.add_argument("path", help="trace file (.json or .json.gz)")
    p.add_argument(
        "--sort",
        default=None,
        metavar="KEY",
        help="column to sort by, largest first: self_cpu_us, cpu_total_us, "
        "self_device_us, device_total_us, calls, cpu_mem, ... or torch's sort_by names "
        "(self_cpu_time_total, cpu_time_total, self_cuda_time_total, cuda_time_total, "
        "self_device_time_total, count, cpu_memory_usage, ...); default: first occurrence",
    )
    p.add_argument("--limit", type=non_negative_int, default=None, help="show at most N rows")
    p.add_argument(
        "--group-by",
        default="name",
        type=_group_by,
        metavar="BY",
        help="aggregate by op name (torch's default), shape (name and input shapes), module "
        "(nn.Module), or stack[:N] (name and the first N call-stack frames, torch's "
        "group_by_stack_n; N is 5 if not given; traces recorded with "
        "experimental_config=_ExperimentalConfig(verbose=True) carry the stacks)",
    )
    p.add_argument(
        "--format",
        choices=list(TABLE_FORMATS),
        default=None,
        help="text (torch's layout), json, csv or markdown",
    )
    add_output_arguments(p)
    p.set_defaults(run=run)


def _group_by(text: str) -> tuple[str, int]:
    try:
        return group_by(text)
    except UsageError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def run(args: argparse.Namespace) -> int:
    from profsight.cli.common import load_profile, warn, warn_analysis, write_output
    from profsight.knowledge.advice import NO_MODULE_RANGES
    from profsight.model.module_table import has_module_ranges
    from profsight.model.profile import Profile

    sort_by = None if args.sort is None else sort_key(args.sort)  # before a long load
    grouping, frames = args.group_by
    profile = load_profile(args.path, args)
    table = profile.table(group_by=grouping, sort_by=sort_by, limit=args.limit, stack=frames)
    warn_analysis(args.path, profile)
    if grouping == "module" and not has_module_ranges(table):
        warn(f"warning: {args.path}: {NO_MODULE_RANGES}")
    fmt = format_from(args, TABLE_SUFFIXES, "text")
    roof = None
    if grouping == "shape" and fmt != "text" and isinstance(profile, Profile):
        from profsight.analyses.roofline import table_roofline

        roof = table_roofline(profile)
    write_output(_rendered(table, fmt, roof), args.output, [args.path], args.force)
    return 0


def _rendered(
    table: ProfilerTable, fmt: str, roof: dict[tuple[str, str], dict[str, Any]] | None = None
) -> str:
    """The table in `fmt`, importing only what that format needs: the text table is torch's
    layout, from the model; Markdown names each row's kind from the knowledge tables (their
    kernel patterns are about 17 ms of start-up that the text table does without)."""
    if fmt == "text":
        from profsight.model.table import render_torch_table

        return render_torch_table(table)
    from profsight.renderers.table_formats import render_table

    return render_table(table, fmt, roof)
