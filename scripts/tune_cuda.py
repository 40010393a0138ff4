"""``profsight tune`` on the demo's Lightning ResNet-18 on a CUDA device: the device check
of issue 40, for a session that is lent a GPU.

    python scripts/tune_cuda.py [--out tests/data/tune_cuda] [--steps 30] [--budget 420]

Writes to ``--out``: the baseline's traces (gzip), the report as JSON and Markdown, and
``measured.md`` (what was measured, with the device's name, the date and the commit).
``--target`` tunes another factory (``profsight.demo.tune_target:lightning`` runs the same
on the CPU, to try the script where no GPU is lent).
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from profsight.tune import tune  # noqa: E402
from profsight.tune.render import render_tune  # noqa: E402
from profsight.tune.stack_pass import stack_trace  # noqa: E402
from profsight.tune.trial import Steps  # noqa: E402

TARGET = "profsight.demo.tune_target:lightning_cuda"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "tune_cuda")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--budget", type=float, default=420.0, help="seconds")
    parser.add_argument("--target", default=TARGET)
    args = parser.parse_args()
    import torch

    if args.target == TARGET and not torch.cuda.is_available():
        print("tune_cuda: no CUDA device here", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.out / "work"
    report = tune(
        args.target, steps=Steps(warmup=3, measured=args.steps), budget_s=args.budget, workdir=work
    )
    for trace in (report.trace, stack_trace(report.trace)):
        with open(trace, "rb") as raw, gzip.open(args.out / (Path(trace).name + ".gz"), "wb") as gz:
            shutil.copyfileobj(raw, gz)
    shutil.rmtree(work)
    (args.out / "tune.json").write_text(render_tune(report, "json"))
    (args.out / "tune.md").write_text(render_tune(report, "markdown"))
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "CPU"
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"{now}, commit {commit}, {device}, torch {torch.__version__}", ""]
    lines += [f"* {o.name}: {o.predicted_pct} predicted, {o.comparison}" for o in report.outcomes]
    (args.out / "measured.md").write_text("\n".join(lines) + "\n")
    print(render_tune(report, "markdown"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
