"""`ExplainingProfiler`: Lightning's `PyTorchProfiler` that explains what it recorded.

    from profsight.integrations.lightning_profiler import ExplainingProfiler

    trainer = L.Trainer(profiler=ExplainingProfiler())
    trainer.fit(model, loader)
    # ./profsight/fit-[Strategy]SingleDeviceStrategy.training_step.<ns>.pt.trace.json.gz
    # ./profsight/fit-report.html, fit-report.md, fit-report.json               (profsight)

It records as `PyTorchProfiler` does (same arguments, the same trace files, named as
Lightning names them), with defaults that make a useful trace: a schedule of one wait, one
warm-up and three recorded steps, once; module names, input shapes and memory recorded
(the FLOP counts and the allocation findings read them); Chrome traces exported into
``./profsight`` when no ``dirpath`` is given, gzip-compressed (``.pt.trace.json.gz``:
``tensorboard_trace_handler(use_gzip=True)``) unless ``compress_traces=False``.

Why compressed: a Kineto trace is JSON with every op's shapes, strides and ids spelled out;
three recorded steps of a small 2-layer GRU on a CPU (its time loop is ~12,000 ops a step)
wrote 20 MB uncompressed, 1.1 MB compressed (measured with torch 2.13; `tests/
test_integrations.py` holds it under a bound). ``with_stack`` stays off: it multiplies the
events by every Python frame, and the diagnosis does not need it.

Lightning calls ``describe()`` once at the end of each stage (fit, validate, test,
predict), after the stage's traces are written; there it explains the stage's main trace
(``training_step`` for fit, ``validation_step`` for validate, ...), logs the explanation
and writes ``{stage}-report.{html,md,json}`` next to the traces (replacing those of an
earlier run in the same folder).

Under DDP every rank records and exports its own trace, as with `PyTorchProfiler`; only
global rank 0 explains its trace and writes the reports. A failed explanation never stops
training: it is logged in one line.

Needs torch and Lightning; ``import profsight`` does not import this module.
"""

from __future__ import annotations

import logging
import re
import shutil
import time
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

import msgspec
import torch
from lightning.pytorch.profilers import PyTorchProfiler
from lightning.pytorch.utilities import rank_zero_info, rank_zero_only

from profsight.api import Report, explain_profile
from profsight.integrations.native_capture import CapturingProfile
from profsight.loaders import load
from profsight.loaders.native_log import NativeLog

__all__ = ["DEFAULT_DIRPATH", "ExplainingProfiler", "StageReport", "default_schedule"]

#: The logger users configure: named where they import the profiler from.
_log = logging.getLogger("profsight.lightning")

#: Where traces and reports go when no ``dirpath`` is given.
DEFAULT_DIRPATH = "profsight"
#: The step hook whose trace is a stage's main trace (Lightning's action names end with it).
STAGE_STEP = {
    "fit": "training_step",
    "validate": "validation_step",
    "test": "test_step",
    "predict": "predict_step",
}
#: The trace files ``tensorboard_trace_handler`` writes (``.gz`` when it compresses).
TRACE_GLOB = "*.pt.trace.json*"
#: Report files written per stage: ``{stage}-report{suffix}``.
REPORT_SUFFIXES: dict[str, Callable[[Report], str]] = {
    ".html": Report.html,
    ".md": Report.markdown,
    ".json": Report.json,
}

_WAIT, _WARMUP, _ACTIVE = 1, 1, 3


def default_schedule() -> Any:
    """One wait step, one warm-up step, three recorded steps, once."""
    return torch.profiler.schedule(wait=_WAIT, warmup=_WARMUP, active=_ACTIVE, repeat=1)


class StageReport(msgspec.Struct, frozen=True):
    """What `ExplainingProfiler` produced at the end of one stage."""

    stage: str
    trace: Path
    """The trace that was explained."""
    report: Report
    files: tuple[Path, ...]
    """The report files written (html, md, json)."""
    seconds: float
    """How long loading the trace, explaining it and writing the reports took."""


class ExplainingProfiler(PyTorchProfiler):
    """`PyTorchProfiler` that explains each stage's trace when the stage ends.

    Takes `PyTorchProfiler`'s arguments (and, through them, ``torch.profiler.profile``'s);
    ``log_explanation=False`` keeps the explanation out of the log (the reports are still
    written and kept in `reports`).
    """

    def __init__(
        self,
        dirpath: str | Path | None = None,
        filename: str | None = None,
        group_by_input_shapes: bool = False,
        emit_nvtx: bool = False,
        export_to_chrome: bool = True,
        row_limit: int = 20,
        sort_by_key: str | None = None,
        record_module_names: bool = True,
        table_kwargs: dict[str, Any] | None = None,
        *,
        log_explanation: bool = True,
        compress_traces: bool = True,
        **profiler_kwargs: Any,
    ) -> None:
        self._own_schedule = "schedule" not in profiler_kwargs
        # our own handler writes the traces (compressed), unless the caller brought one
        self._gzip_traces = compress_traces and "on_trace_ready" not in profiler_kwargs
        profiler_kwargs.setdefault("schedule", default_schedule())
        profiler_kwargs.setdefault("record_shapes", True)
        profiler_kwargs.setdefault("profile_memory", True)
        super().__init__(
            dirpath=DEFAULT_DIRPATH if dirpath is None else dirpath,
            filename=filename,
            group_by_input_shapes=group_by_input_shapes,
            emit_nvtx=emit_nvtx,
            export_to_chrome=export_to_chrome,
            row_limit=row_limit,
            sort_by_key=sort_by_key,
            record_module_names=record_module_names,
            table_kwargs=table_kwargs,
            **profiler_kwargs,
        )
        self.log_explanation = log_explanation
        self.reports: dict[str, StageReport] = {}
        """Each explained stage's report, by stage name."""
        self._traces_before: set[Path] = set()
        self._native_log = NativeLog()
        """torch's C++ warnings printed while the stage's profiler started, stepped and
        stopped (`integrations.native_capture`): notes of the stage's report."""
        if self._gzip_traces:
            self._has_on_trace_ready = True  # keeps Lightning from installing its own

    def _create_profiler(self, profiler: Any) -> Any:
        if profiler is not torch.profiler.profile:  # emit_nvtx, torch without Kineto
            return super()._create_profiler(profiler)
        made = super()._create_profiler(_LightningProfile)
        assert isinstance(made, _LightningProfile)
        made.native_log = self._native_log
        return made

    def stop(self, action_name: str) -> None:
        if (
            self._gzip_traces
            and isinstance(self.profiler, torch.profiler.profile)  # not emit_nvtx
            and any(action_name.endswith(f) for f in self.STEP_FUNCTIONS)
        ):
            # set before Lightning's stop() steps the profiler, which may end the window
            self.profiler.on_trace_ready = self._trace_handler(action_name)
        super().stop(action_name)

    def _trace_handler(self, action_name: str) -> Callable[[Any], None]:
        """Lightning's own ``on_trace_ready`` (lightning/pytorch/profilers/pytorch.py,
        ``PyTorchProfiler.stop``), writing ``.pt.trace.json.gz``."""

        def on_trace_ready(profiler: Any) -> None:
            if self.dirpath is None:
                _log.warning("profsight: no trace exported: dirpath is None")
                return
            if self._export_to_chrome:
                name = self._prepare_filename(action_name=action_name, extension="")
                handler = torch.profiler.tensorboard_trace_handler(
                    str(self.dirpath), name, use_gzip=True
                )
                handler(profiler)
            if self._export_to_flame_graph:
                stacks = self._prepare_filename(action_name=action_name, extension=".stack")
                profiler.export_stacks(str(Path(self.dirpath) / stacks), metric=self._metric)

        return on_trace_ready

    def setup(self, stage: str, local_rank: int | None = None, log_dir: str | None = None) -> None:
        super().setup(stage=stage, local_rank=local_rank, log_dir=log_dir)
        # the traces already there belong to earlier stages or runs, not to this one
        self._traces_before = set(_traces(self.dirpath))
        self._native_log.counts.clear()

    def _should_override_schedule(self) -> bool:
        # Lightning records every step of a stage too short for its default schedule; ours has
        # the same shape, so the same, but judged on the stage's own steps only (a short
        # sanity check must not switch the schedule off for a whole fit).
        if super()._should_override_schedule():
            return True
        schedule = self._schedule
        if not self._own_schedule or self._lightning_module is None or schedule is None:
            return False
        current = {
            "fit": schedule.is_training,
            "validate": schedule.is_validating,
            "test": schedule.is_testing,
            "predict": schedule.is_predicting,
        }.get(_stage_name(self._stage), False)
        return bool(current and self._total_steps < _WAIT + _WARMUP + _ACTIVE)

    def describe(self) -> None:
        super().describe()  # Lightning's summary; stops the profiler, so the traces are written
        if getattr(rank_zero_only, "rank", 0) != 0 or self.dirpath is None:
            return
        stage = _stage_name(self._stage)
        try:
            self._explain_stage(stage)
        except Exception as exc:  # never stop training because an explanation failed
            _log.warning("profsight: could not explain the %s profile: %s", stage, _one_line(exc))

    def _explain_stage(self, stage: str) -> None:
        assert self.dirpath is not None
        started = time.perf_counter()
        trace = self._main_trace(stage)
        if trace is None:
            _log.warning(
                "profsight: no trace of the %s stage in %s (it needs at least %d steps, or "
                "export_to_chrome=True)",
                stage,
                self.dirpath,
                _WAIT + _WARMUP + 1,
            )
            return
        profile = load(str(trace))
        profile.diagnostics += self._native_log.diagnostics()
        report = explain_profile(profile)
        files = []
        for suffix, render in REPORT_SUFFIXES.items():
            path = Path(self.dirpath) / f"{stage}-report{suffix}"
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(render(report), encoding="utf-8")
            tmp.replace(path)
            files.append(path)
        self.reports[stage] = StageReport(
            stage, trace, report, tuple(files), time.perf_counter() - started
        )
        if self.log_explanation:
            width = shutil.get_terminal_size((120, 24)).columns
            written = ", ".join(map(str, files))
            rank_zero_info(f"{report.text(width=width)}\nprofsight: wrote {written}")

    def _main_trace(self, stage: str) -> Path | None:
        """The newest trace this stage wrote for its step hook, else its largest new trace."""
        prefix = self._prepare_filename(extension="") + "-"
        new = [
            p
            for p in _traces(self.dirpath)
            if p.name.startswith(prefix) and p not in self._traces_before
        ]
        if not new:
            return None
        hook = STAGE_STEP.get(stage)
        main = [p for p in new if hook and re.search(rf"\.{hook}\.\d+\.pt\.trace\.json", p.name)]
        if main:
            return max(main, key=lambda p: (p.stat().st_mtime_ns, p.name))
        return max(new, key=lambda p: p.stat().st_size)


class _LightningProfile(CapturingProfile):
    """The profile `ExplainingProfiler` records with: torch's own, numbering its steps as
    torch does, one more per ``step()``.

    Lightning's ``PyTorchProfiler.stop`` sets ``step_num`` to the stage's own step count
    before each ``step()`` (its schedule wrapper ignores the number it is given, so the
    count only names the steps). A fit with a validation loader starts with the sanity
    check's validation steps, whose steps move the schedule into recording, and then the
    training count starts again at 0: one trace held ProfilerStep#2, #1, #2, #3, #4 (the
    first one opened by the last sanity step, holding the first training step). Here each
    step takes the number torch would give it: #2, #3, #4, #5, #6."""

    def step(self) -> None:
        self.step_num = self.__dict__.get("_steps_taken", 0)  # a new profile has taken none
        super().step()
        self.__dict__["_steps_taken"] = self.step_num


def _traces(dirpath: str | Path | None) -> list[Path]:
    if dirpath is None:
        return []
    directory = Path(dirpath)
    if not directory.is_dir():
        return []
    return [p for p in directory.glob(TRACE_GLOB) if p.is_file()]


def _stage_name(stage: Any) -> str:
    """Lightning passes its ``TrainerFn`` enum (a ``str`` subclass); None outside a Trainer."""
    if stage is None:
        return "profile"
    return str(stage.value if isinstance(stage, Enum) else stage)


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"
