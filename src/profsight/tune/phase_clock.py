"""The optimizer's step, timed in a trial without the profiler.

The profiler's cost per recorded op is no uniform stretch of the step: a phase of many small
ops (an optimizer run one tensor at a time) is stretched more than one of a few large ops.
The fix's share of the profiled step then overstates its share of the real one (issue 40:
the fused optimizer of a batch-4 MLP predicted 18-23% against 11-13% measured, its profiled
step 2.2-2.7 times the timed one). So the trial times the phase the fix changes as it runs
unprofiled, and the prediction takes the profiled phase's saving at the timed phase's
length (`plan`).
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any

from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)


class OptimizerClock:
    """Each ``optimizer.step``'s time while `on`, through torch's global step hooks: from
    the step's start, or from `closure_done` where the step runs a closure first (Lightning
    runs the forward and backward inside ``optimizer.step``), to its end."""

    def __init__(self) -> None:
        self.on = False
        self.total_s = 0.0
        self.calls = 0
        self._start: float | None = None
        self._handles: list[Any] = []

    def __enter__(self) -> OptimizerClock:
        self._handles = [
            register_optimizer_step_pre_hook(self._pre),
            register_optimizer_step_post_hook(self._post),
        ]
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def closure_done(self) -> None:
        """The step's closure has run: its update starts now."""
        if self._start is not None:
            self._start = time.perf_counter()

    def per_step(self, steps: int) -> float | None:
        """Seconds per step in the optimizer over `steps` timed steps (None: it timed no
        optimizer step)."""
        return self.total_s / steps if self.calls and steps else None

    def _pre(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        self._start = time.perf_counter()

    def _post(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if self.on and self._start is not None:
            self.total_s += time.perf_counter() - self._start
            self.calls += 1
        self._start = None
