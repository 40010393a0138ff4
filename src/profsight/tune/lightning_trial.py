"""A trial of a `LightningTraining`: ``Trainer.fit`` for the warm-up and measured steps, each
step timed from one training batch's end to the next (the batch's fetch, its step, the
callbacks, logging and any validation the Trainer runs meanwhile), then a second, short fit
under Lightning's ``PyTorchProfiler`` for the baseline's trace."""

from __future__ import annotations

import logging
import shutil
import time
import warnings
from pathlib import Path
from typing import Any

import lightning as L
import msgspec
import torch
from lightning.pytorch.profilers import PyTorchProfiler

from profsight.errors import UsageError
from profsight.integrations.native_capture import captured_stderr
from profsight.knowledge.tuning import BATCH, LOADER, MODEL, OPTIMIZER, TRAINER
from profsight.loaders.native_log import NativeLog
from profsight.tune.handover import HandOver, probe
from profsight.tune.loop import LightningTraining
from profsight.tune.phase_clock import OptimizerClock
from profsight.tune.stack_pass import stack_trace
from profsight.tune.trial import MAX_MEASURED, Steps, failure_line, with_model_settings

#: Training batches of the profiled fit: one wait, one warm-up, three recorded, one more.
PROFILED_BATCHES = 6
_QUIET = {
    "logger": False,
    "enable_checkpointing": False,
    "enable_progress_bar": False,
    "enable_model_summary": False,
    "num_sanity_val_steps": 0,
    "devices": 1,
}


class Fitted(msgspec.Struct, frozen=True):
    seconds: tuple[float, ...]
    loss: float | None
    batch_size: int | None
    steps_per_epoch: int | None
    cpu_s: float | None
    early: tuple[float, ...]
    handover: HandOver | None = None
    ended_with: str = ""
    optimizer_s: float | None = None


class StepTimer(L.Callback):
    """Each training step's time, batch end to batch end, after the warm-up; the last loss."""

    def __init__(self, steps: Steps, device: str) -> None:
        self.steps = steps
        self.warmup = steps.warmup
        self.sync = torch.cuda.synchronize if device.startswith("cuda") else None
        self.seconds: list[float] = []
        self.loss: float | None = None
        self.early: list[float] = []
        """The warm-up steps' losses, in order."""
        self._last: float | None = None
        self._ends = 0
        self._cpu_start: float | None = None
        self.cpu_s: float | None = None
        """The process's CPU time over the measured steps (all its threads)."""
        self.steps_per_epoch: int | None = None
        self.clock = OptimizerClock()
        """The optimizer's steps over the timed steps (on from the warm-up's last end)."""

    @property
    def done(self) -> bool:
        """Whether the steps are timed."""
        return self.steps.timed(len(self.seconds), sum(self.seconds))

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        batches = trainer.num_training_batches
        self.steps_per_epoch = int(batches) if batches != float("inf") else None

    def on_before_optimizer_step(
        self, trainer: L.Trainer, pl_module: L.LightningModule, optimizer: Any
    ) -> None:
        self.clock.closure_done()

    def on_train_batch_end(
        self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, batch: Any, i: int
    ) -> None:
        if self.sync is not None:
            self.sync()
        now, cpu = time.perf_counter(), time.process_time()
        if self._ends == self.warmup:
            self._cpu_start = cpu
            self.clock.on = True
        if self._last is not None and self._ends > self.warmup:
            self.seconds.append(now - self._last)
            if self._cpu_start is not None:
                self.cpu_s = cpu - self._cpu_start
            if self.done:
                trainer.should_stop = True
                self.clock.on = False
        self._last, self._ends = now, self._ends + 1
        if len(self.seconds) > self.steps.measured:
            return  # (the loss is the measured-th step's: the steps beyond only time)
        loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
        if isinstance(loss, torch.Tensor):
            self.loss = float(loss.detach())
            if self._ends <= self.warmup:
                self.early.append(self.loss)


def run_lightning(
    training: LightningTraining,
    by_target: dict[str, dict[str, object]],
    steps: Steps,
    trace: str,
    probe_workers: int = 0,
) -> Fitted:
    """What the timed fit measured, and the baseline's trace written to `trace`."""
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    loader_settings = dict(by_target[LOADER])
    batch_size = training.batch_size
    if by_target[BATCH]:
        if batch_size is None:
            raise UsageError("a larger batch needs LightningTraining.batch_size")
        batch_size *= int(str(next(iter(by_target[BATCH].values()))))
        loader_settings["batch_size"] = batch_size
    timer = StepTimer(steps, training.device)
    most = steps.warmup + max(steps.measured, MAX_MEASURED) + 1  # (the timer stops it)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Lightning's advice on the user's setup: not ours
        with timer.clock:
            ended_with = _timed_fit(training, by_target, loader_settings, most, timer)
        # (before the profiled fit: a worker forked after Kineto's threads started can abort)
        handover = probe(training.train_loader, probe_workers) if probe_workers else None
        if trace:
            _profiled(training, by_target, loader_settings, trace)
    return Fitted(
        tuple(timer.seconds),
        timer.loss,
        batch_size,
        timer.steps_per_epoch,
        timer.cpu_s,
        tuple(timer.early),
        handover,
        ended_with,
        timer.clock.per_step(len(timer.seconds)),
    )


def _timed_fit(
    training: LightningTraining,
    by_target: dict[str, dict[str, object]],
    loader_settings: dict[str, object],
    steps: int,
    timer: StepTimer,
) -> str:
    """The timed fit; what it raised once its steps were timed ("" if nothing). Lightning
    tears the loaders down after the last step (their workers shut), and what fails there,
    or raises again while Lightning handles it (`failure_line`: both), is no reason to lose
    the steps' figures; before that, it is the trial's failure."""
    try:
        _fit(training, by_target, loader_settings, steps, [timer], None)
    except Exception as exc:
        if not timer.done:
            raise
        return failure_line(exc)
    return ""


def _fit(
    training: LightningTraining,
    by_target: dict[str, dict[str, object]],
    loader_settings: dict[str, object],
    steps: int,
    callbacks: list[L.Callback],
    profiler: Any,
) -> None:
    val_settings = {k: v for k, v in loader_settings.items() if k != "batch_size"}
    val = training.val_loader(**val_settings) if training.val_loader else None
    options: dict[str, Any] = {**_QUIET, **training.trainer, **by_target[TRAINER]}
    own = options.get("callbacks") or []
    own = list(own) if isinstance(own, (list, tuple)) else [own]
    options.update(max_steps=steps, max_epochs=-1, callbacks=[*own, *callbacks])
    options.setdefault("accelerator", training.device)
    if val is None:
        options["limit_val_batches"] = 0
    if profiler is not None:
        options.update(profiler=profiler, max_steps=-1, max_epochs=1)
        options["limit_train_batches"] = steps
    trainer = L.Trainer(**options)
    # (Lightning fits a compiled module as its own)
    module = with_model_settings(training.module(**by_target[OPTIMIZER]), by_target[MODEL])
    trainer.fit(
        module, train_dataloaders=training.train_loader(**loader_settings), val_dataloaders=val
    )


def _profiled(
    training: LightningTraining,
    by_target: dict[str, dict[str, object]],
    loader_settings: dict[str, object],
    trace: str,
) -> None:
    """Short fits under ``PyTorchProfiler``: its training-step trace copied to `trace`, and
    that of a second fit with the Python stack to `stack_trace(trace)`."""
    for path, stack in ((trace, False), (stack_trace(trace), True)):
        folder = Path(trace).parent / ("lightning-stack" if stack else "lightning")
        folder.mkdir(parents=True, exist_ok=True)
        profiler = PyTorchProfiler(
            dirpath=str(folder),
            filename="tune",
            record_shapes=not stack,
            with_stack=stack,
            schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1),
        )
        with captured_stderr(NativeLog()):  # torch's native lines while it profiles: kept off
            _fit(training, by_target, loader_settings, PROFILED_BATCHES, [], profiler)
        found = sorted(
            folder.glob("*training_step*.pt.trace.json"), key=lambda p: p.stat().st_mtime
        )
        if not found:
            raise UsageError("Lightning's profiler wrote no training-step trace")
        shutil.copyfile(found[-1], path)
