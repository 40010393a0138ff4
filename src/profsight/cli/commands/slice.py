"""``profsight slice TRACE --steps 3-4 -o small.json.gz``: the steps that matter, for a viewer."""

from __future__ import annotations

import argparse
from pathlib import Path

from profsight.cli.common import add_output_arguments
from profsight.errors import UsageError

HELP = (
    "write the chosen ProfilerStep ranges of a trace as a small trace for Perfetto or "
    "chrome://tracing, with profsight's findings on a track of their own"
)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("slice", help=HELP, description=HELP)
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a trace file (.json or .json.gz); several, or a directory, for a job's ranks",
    )
    p.add_argument(
        "--steps", required=True, metavar="N[-M]", help="ProfilerStep numbers to keep, e.g. 3-4"
    )
    p.add_argument(
        "--ranks",
        default=None,
        metavar="R[,R...]",
        help="the ranks of a job to keep (default: every rank given)",
    )
    add_output_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from profsight.cli.common import warn, write_output
    from profsight.slicing.window import encode, explained_slice, parse_steps, slice_job

    if args.output is None:
        raise UsageError("slice needs -o FILE (.json or .json.gz): a trace is no terminal text")
    if not args.output.endswith((".json", ".json.gz")):
        raise UsageError(f"{args.output}: a slice is written as .json or .json.gz")
    steps = parse_steps(args.steps)
    ranks = _ranks(args.ranks)
    single = len(args.paths) == 1 and not Path(args.paths[0]).is_dir() and ranks is None
    piece = explained_slice(args.paths[0], steps) if single else slice_job(args.paths, steps, ranks)
    write_output(encode(piece, args.output.endswith(".gz")), args.output, args.paths, args.force)
    warn(
        f"{args.output}: ProfilerStep#{piece.steps[0]}-#{piece.steps[1]}, {piece.kept} events "
        f"kept of {piece.kept + piece.dropped}"
    )
    return 0


def _ranks(text: str | None) -> set[int] | None:
    if text is None:
        return None
    try:
        return {int(part) for part in text.split(",") if part.strip()}
    except ValueError:
        raise UsageError(f"--ranks {text!r}: write rank numbers separated by commas") from None
