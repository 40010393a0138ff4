"""``profsight tree PATH``: the call tree, with self and total time per node."""

from __future__ import annotations

import argparse

from profsight.cli.choices import TREE_FORMATS, TREE_SUFFIXES
from profsight.cli.common import (
    add_output_arguments,
    format_from,
    non_negative_int,
    percent,
    terminal_width,
)

HELP = "print the call tree of a trace: steps, Lightning actions, modules, ops, kernels"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("tree", help=HELP, description=HELP)
    p.add_argument("path", help="trace file (.json or .json.gz)")
    p.add_argument("--depth", type=non_negative_int, default=None, help="show at most N levels")
    p.add_argument(
        "--min-share",
        type=percent,
        default=1.0,
        metavar="PCT",
        help="hide nodes under PCT %% of the total CPU and device time (default 1)",
    )
    p.add_argument("--format", choices=TREE_FORMATS, default=None)
    add_output_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from profsight.cli.common import load_profile, warn_analysis, write_output
    from profsight.model.table_build import device_label
    from profsight.model.text_profile import TextProfile
    from profsight.renderers.tree_text import render_tree_json, render_tree_text

    profile = load_profile(args.path, args)
    if isinstance(profile, TextProfile):
        profile.tree()  # raises: a printed table has no call tree
    tree = profile.tree().pruned(depth=args.depth, min_share=args.min_share)
    warn_analysis(args.path, profile)
    fmt = format_from(args, TREE_SUFFIXES, "text")
    if fmt == "json":
        text = render_tree_json(tree)
    else:
        width = terminal_width() if args.output is None else 160
        text = render_tree_text(tree, width=width, device_name=device_label(profile))
    write_output(text, args.output, [args.path], args.force)
    return 0
