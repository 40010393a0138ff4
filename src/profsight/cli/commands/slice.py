"""``profsight slice TRACE --steps 3-4 -o small.json.gz``: the steps that matter, for a viewer."""

from __future__ import annotations

import argparse

from profsight.cli.common import add_output_arguments

HELP = (
    "write the chosen ProfilerStep ranges of a trace as a small trace for Perfetto or "
    "chrome://tracing, with profsight's findings on a track of their own"
)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("slice", help=HELP, description=HELP)
    p.add_argument("path", help="trace file (.json or .json.gz)")
    p.add_argument(
        "--steps", required=True, metavar="N[-M]", help="ProfilerStep numbers to keep, e.g. 3-4"
    )
    add_output_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from profsight.cli.common import warn, write_output
    from profsight.errors import UsageError
    from profsight.trace_slice import encode, explained_slice, parse_steps

    if args.output is None:
        raise UsageError("slice needs -o FILE (.json or .json.gz): a trace is no terminal text")
    if not args.output.endswith((".json", ".json.gz")):
        raise UsageError(f"{args.output}: a slice is written as .json or .json.gz")
    piece = explained_slice(args.path, parse_steps(args.steps))
    write_output(encode(piece, args.output.endswith(".gz")), args.output, [args.path], args.force)
    warn(
        f"{args.output}: ProfilerStep#{piece.steps[0]}-#{piece.steps[1]}, {piece.kept} events "
        f"kept of {piece.kept + piece.dropped}"
    )
    return 0
