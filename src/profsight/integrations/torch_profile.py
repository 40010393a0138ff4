"""`profsight.profile`: ``torch.profiler.profile`` with useful defaults, that explains itself.

    with profsight.profile() as prof:
        for batch in loader:
            train_step(batch)
            prof.step()
    prof.explain()             # prints the explanation, returns the Report
    prof.report().html()       # the Report, built once

Defaults, each replaced by passing the argument: CPU activity, plus CUDA when a CUDA device
is available; ``record_shapes``, ``profile_memory`` and ``with_modules`` on; a schedule of
one wait step, one warm-up step and three recorded steps, once (so ``prof.step()`` must be
called after each step, and the loop must run at least three; ``schedule=None`` records
everything between start and stop, as torch does without a schedule). Every other keyword argument
goes to ``torch.profiler.profile`` unchanged.

Needs torch; ``import profsight`` imports this module only when ``profsight.profile`` is used.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from typing import Any

import torch
from torch.profiler import ProfilerAction, ProfilerActivity

from profsight.api import Report, explain_profile
from profsight.errors import UsageError
from profsight.integrations.native_capture import CapturingProfile

__all__ = ["ExplainingProfile", "default_activities", "profile"]

_WAIT, _WARMUP, _ACTIVE = 1, 1, 3


def default_activities() -> list[ProfilerActivity]:
    """CPU, and CUDA when a CUDA device is available."""
    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    return activities


class ExplainingProfile(CapturingProfile):
    """A ``torch.profiler.profile`` with `report` and `explain` once it has stopped; the
    warnings torch's C++ side prints while it starts, steps and stops are notes of the
    report (`integrations.native_capture`), not raw lines on stderr."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._report: Report | None = None
        self._running = False

    def start(self) -> None:
        self._report = None
        self._running = True
        super().start()

    def stop(self) -> None:
        super().stop()
        self._running = False

    def report(self) -> Report:
        """The explanation of what was recorded (built on the first call)."""
        if self._running:
            raise UsageError("the profiler is still running: call report() after the with block")
        if self._report is None:
            if self.profiler is None:
                raise UsageError(
                    "nothing was recorded: the schedule never reached a recording step (call "
                    "prof.step() after every step of the loop; the default schedule records "
                    "steps 3 to 5), or the profiler was never started"
                )
            self._report = explain_profile(self)
        return self._report

    def explain(self, width: int | None = None) -> Report:
        """Print the explanation (for a terminal: its width, colours) and return the Report."""
        report = self.report()
        tty = sys.stdout.isatty()
        if width is None:
            width = shutil.get_terminal_size((120, 24)).columns if tty else 120
        print(report.text(width=width, color=tty))
        return report


class _Default:
    """The marker for "no schedule argument given" (``schedule=None`` is torch's own)."""


_DEFAULT_SCHEDULE = _Default()


def profile(
    *,
    activities: list[ProfilerActivity] | None = None,
    schedule: Callable[[int], ProfilerAction] | _Default | None = _DEFAULT_SCHEDULE,
    record_shapes: bool = True,
    profile_memory: bool = True,
    with_modules: bool = True,
    **kwargs: Any,
) -> ExplainingProfile:
    """A ``torch.profiler.profile`` (see the module docstring for the defaults) that explains
    itself when it has stopped: ``prof.explain()``, ``prof.report()``."""
    if isinstance(schedule, _Default):
        schedule = torch.profiler.schedule(wait=_WAIT, warmup=_WARMUP, active=_ACTIVE, repeat=1)
    return ExplainingProfile(
        activities=default_activities() if activities is None else activities,
        schedule=schedule,
        record_shapes=record_shapes,
        profile_memory=profile_memory,
        with_modules=with_modules,
        **kwargs,
    )
