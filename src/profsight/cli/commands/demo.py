"""``profsight demo``: train the seed's ResNet-18 with Lightning, profile it, explain it."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HELP = "profile a short Lightning training of a ResNet-18 on synthetic data and explain it"
INSTALL_HINT = "pip install torch==2.13.0 && pip install 'profsight[torch]'"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help=HELP, description=HELP)
    p.add_argument(
        "--device",
        choices=("cpu", "cuda", "auto"),
        default="auto",
        help="where to train (auto: cuda when available)",
    )
    p.add_argument("--steps", type=positive_int, default=8, help="training steps (default 8)")
    p.add_argument("--batch-size", type=positive_int, default=32, help="(default 32)")
    p.add_argument(
        "--out",
        default="profsight-demo",
        metavar="DIR",
        help="folder for the traces and fit-report.html/.md/.json (default ./profsight-demo)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        import lightning  # noqa: F401  (imported here only to give the hint when it is missing)
        import torch
        import torchmetrics  # noqa: F401
    except ImportError as exc:
        print(
            f"profsight: error: the demo needs torch and Lightning ({exc}); {INSTALL_HINT}",
            file=sys.stderr,
        )
        return 2
    from profsight.cli.common import terminal_width
    from profsight.demo.training import run_demo
    from profsight.renderers.terminal import render_terminal

    # the console script sets one BLAS/OpenMP thread for profsight's own decoding; the demo's
    # training should run as the user's would, on every core it may use
    torch.set_num_threads(_usable_cores())
    result = run_demo(
        out=Path(args.out), device=args.device, steps=args.steps, batch_size=args.batch_size
    )
    tty = sys.stdout.isatty()
    width = terminal_width() if tty else 120
    sys.stdout.write(render_terminal(result.fit.report, width=width, color=tty))
    html = next(p for p in result.fit.files if p.suffix == ".html")
    others = ", ".join(p.name for p in result.fit.files if p != html)
    print(
        f"\nDemo: {args.steps} training steps of batch {args.batch_size} on {result.device} "
        f"({result.backbone}'s ResNet-18), {result.seconds:.1f} s; "
        f"explained in {result.fit.seconds:.1f} s."
    )
    print(f"Trace:  {result.fit.trace}")
    print(f"Report: {html}  (also {others})")
    return 0


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def _usable_cores() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return max(1, len(affinity(0)) if affinity else os.cpu_count() or 1)
