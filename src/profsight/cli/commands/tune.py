"""``profsight tune MODULE:FUNCTION``: apply the fixes a short profile of the user's training
asks for, one trial each, and measure what each saves."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from profsight.cli.common import add_output_arguments, format_from, rich_bar, write_output
from profsight.errors import UsageError

HELP = "try the fixes a profile of your training asks for, each in its own run, and measure them"
DEMO_TARGET = "profsight.demo.tune_target:lightning"
_SUFFIXES = {".txt": "text", ".md": "markdown", ".json": "json", ".html": "html"}
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("tune", help=HELP, description=HELP)
    p.add_argument(
        "target",
        nargs="?",
        help="MODULE:FUNCTION or FILE.py:FUNCTION returning a profsight.tune.Training or "
        "LightningTraining",
    )
    p.add_argument(
        "--demo",
        action="store_true",
        help="tune the demo's Lightning training of a ResNet-18 on synthetic data",
    )
    p.add_argument("--warmup", type=int, default=3, help="steps before timing (default 3)")
    p.add_argument("--steps", type=int, default=20, help="steps timed per trial (default 20)")
    p.add_argument("--budget", type=_duration, default=None, help="time for all trials: 90s, 10m")
    p.add_argument("--price", type=float, default=None, help="price of one device-hour")
    p.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="FIX",
        help="a fix (torch.compile) or finding category (optimizer) not to try; repeatable",
    )
    p.add_argument("--format", choices=["text", "markdown", "json", "html"], default=None)
    add_output_arguments(p)
    p.set_defaults(run=run)


def _duration(text: str) -> float:
    unit = text[-1:].lower()
    number = text[:-1] if unit in _UNITS else text
    try:
        value = float(number) * _UNITS.get(unit, 1.0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is no duration (90s, 10m, 1h)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a budget must be positive")
    return value


def run(args: argparse.Namespace) -> int:
    if args.demo == bool(args.target):
        raise UsageError("tune: name a target (MODULE:FUNCTION) or --demo, not both or neither")
    if args.steps < 2 or args.warmup < 0:
        raise UsageError("tune: --steps must be at least 2 and --warmup at least 0")
    fmt = format_from(args, _SUFFIXES, "text")
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UsageError("tune: needs torch (pip install torch==2.13.0)") from None
    from profsight.cli.threads import users_threads
    from profsight.tune import tune
    from profsight.tune.render import render_tune
    from profsight.tune.trial import Steps

    users_threads()  # numpy is loaded: the trials' processes get the user's threads

    if os.getcwd() not in sys.path:  # MODULE:FUNCTION of the folder it is run in
        sys.path.insert(0, os.getcwd())
    with _progress(args.progress) as progress:
        report = tune(
            DEMO_TARGET if args.demo else args.target,
            steps=Steps(warmup=args.warmup, measured=args.steps),
            budget_s=args.budget,
            price=args.price,
            progress=progress,
            skip=tuple(args.skip),
        )
    write_output(render_tune(report, fmt), args.output, [], args.force)
    return 0


@contextmanager
def _progress(wanted: bool | None) -> Iterator[Callable[[str, int, int], None] | None]:
    """A bar over the runs on a terminal, a line per run elsewhere; none with
    ``--no-progress``."""
    if wanted is False:
        yield None
        return
    if not sys.stderr.isatty() and not wanted:

        def line(text: str, done: int, total: int) -> None:
            print(f"profsight tune: {text}", file=sys.stderr, flush=True)

        yield line
        return
    from rich.progress import MofNCompleteColumn

    with rich_bar(MofNCompleteColumn()) as bar:
        task = bar.add_task("tune", total=None)

        def update(text: str, done: int, total: int) -> None:
            bar.update(task, description=text, completed=done, total=total)
            bar.refresh()

        yield update
