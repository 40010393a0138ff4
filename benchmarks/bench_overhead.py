"""What `ExplainingProfiler` costs: training step time and the explanation afterwards.

    python benchmarks/bench_overhead.py [--steps 30] [--rounds 5] [--batch-size 32]

Trains the demo's model (``profsight demo``: ResNet-18 features, linear classifier,
torchmetrics accuracy, synthetic CIFAR-sized data) on the CPU, in one process, with no
profiler, with Lightning's ``PyTorchProfiler`` and with ``ExplainingProfiler``, both with the
same schedule and options (wait 1, warm-up 1, 3 recorded steps; shapes, memory, module
names; Chrome trace export). The three are interleaved over --rounds rounds after one
discarded warm-up fit, and a callback times every training batch (``on_train_batch_start``
to ``on_train_batch_end``).

Prints, per configuration, the median step time over all steps and over the profiled steps
(the three recorded ones; the last also exports the trace), and, for ``ExplainingProfiler``,
the time the explanation took after the fit (load the trace, explain, write the reports)
against the profiled steps' time.

Targets (issue 6): ExplainingProfiler <= PyTorchProfiler + 2% during training; explanation
time < profiled steps' time. The machines are noisy: compare ratios from one run.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.profilers import PyTorchProfiler

from profsight.demo.training import DemoClassifier, feature_extractor, synthetic_loader
from profsight.lightning import ExplainingProfiler

WAIT, WARMUP, ACTIVE = 1, 1, 3
PROFILED = range(WAIT + WARMUP, WAIT + WARMUP + ACTIVE)
CONFIGS = ("none", "PyTorchProfiler", "ExplainingProfiler")


class StepTimer(L.Callback):
    def __init__(self) -> None:
        self.seconds: list[float] = []
        self._start = 0.0

    def on_train_batch_start(self, *args: Any) -> None:
        self._start = time.perf_counter()

    def on_train_batch_end(self, *args: Any) -> None:
        self.seconds.append(time.perf_counter() - self._start)


def profiler_for(config: str, dirpath: Path) -> Any:
    options: dict[str, Any] = {
        "dirpath": dirpath,
        "filename": "bench",
        "export_to_chrome": True,
        "record_module_names": True,
        "record_shapes": True,
        "profile_memory": True,
        "schedule": torch.profiler.schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=1),
    }
    if config == "PyTorchProfiler":
        return PyTorchProfiler(**options)
    if config == "ExplainingProfiler":
        return ExplainingProfiler(**options, log_explanation=False)
    return None


def fit(config: str, steps: int, batch_size: int, dirpath: Path) -> tuple[StepTimer, Any, float]:
    """Step times, the profiler, and the wall time of the whole fit (stage end included)."""
    torch.manual_seed(0)
    timer = StepTimer()
    profiler = profiler_for(config, dirpath)
    trainer = L.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=1,
        limit_train_batches=steps,
        limit_val_batches=0,
        num_sanity_val_steps=0,
        profiler=profiler,
        callbacks=[timer],
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        enable_progress_bar=False,
        default_root_dir=dirpath,
    )
    model = DemoClassifier(feature_extractor()[0])
    started = time.perf_counter()
    trainer.fit(model, synthetic_loader(steps * batch_size, batch_size, seed=0))
    return timer, profiler, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    logging.getLogger("lightning.pytorch").setLevel(logging.WARNING)  # one line per fit

    steps: dict[str, list[float]] = {c: [] for c in CONFIGS}
    profiled: dict[str, list[float]] = {c: [] for c in CONFIGS}
    explained: list[tuple[float, float]] = []  # (explanation seconds, profiled steps' seconds)
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit("none", 6, args.batch_size, Path(tmp) / "warmup")
        for round_ in range(args.rounds):
            for i in range(len(CONFIGS)):
                config = CONFIGS[(i + round_) % len(CONFIGS)]  # rotate the order each round
                timer, profiler, _ = fit(
                    config, args.steps, args.batch_size, Path(tmp) / f"{config}-{round_}"
                )
                steps[config] += timer.seconds
                profiled[config] += [timer.seconds[i] for i in PROFILED]
                if isinstance(profiler, ExplainingProfiler):
                    report = profiler.reports["fit"]
                    explained.append((report.seconds, sum(timer.seconds[i] for i in PROFILED)))

    print(
        f"demo model on the CPU ({torch.get_num_threads()} threads), batch {args.batch_size}, "
        f"{args.steps} steps x {args.rounds} rounds per configuration; medians"
    )
    print(f"{'configuration':<20} {'step (all)':>11} {'vs none':>8} {'step (profiled)':>16}")
    base = statistics.median(steps["none"])
    for config in CONFIGS:
        all_ms = statistics.median(steps[config]) * 1e3
        prof_ms = statistics.median(profiled[config]) * 1e3
        print(f"{config:<20} {all_ms:>8.1f} ms {all_ms / base / 1e3:>7.3f}x {prof_ms:>13.1f} ms")
    ours = statistics.median(steps["ExplainingProfiler"])
    theirs = statistics.median(steps["PyTorchProfiler"])
    ours_p = statistics.median(profiled["ExplainingProfiler"])
    theirs_p = statistics.median(profiled["PyTorchProfiler"])
    print(
        f"ExplainingProfiler / PyTorchProfiler: {ours / theirs:.3f}x over all steps, "
        f"{ours_p / theirs_p:.3f}x over the profiled steps (target <= 1.02x)"
    )
    explain_s = statistics.median(e for e, _ in explained)
    steps_s = statistics.median(s for _, s in explained)
    print(
        f"explanation after the fit: {explain_s:.2f} s; the {ACTIVE} profiled steps: "
        f"{steps_s:.2f} s; ratio {explain_s / steps_s:.2f}x (target < 1x)"
    )


if __name__ == "__main__":
    main()
