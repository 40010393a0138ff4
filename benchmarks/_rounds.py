"""Paired measurement: the tasks of one trace warmed, then timed in interleaved rounds.

Each task first runs once untimed (the warm-up: bytecode compiled, the trace in the page
cache, and the run whose memory is sampled, see `_measure`), then every task runs once per
round, for `repeat` rounds, every other round in the reverse order (no task always runs
after the same one): a slow minute of the machine hits all of them, and their ratios are
read from one run. A task's time is the median of its rounds.

A peer that is slow (its warm-up took over `slow_s`) is timed in the first round only; one
that failed to load, or ran out of time, in its warm-up is not run again (its warm-up
stands, as a failure or as a lower bound).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from _measure import Run, run_process


@dataclass
class Task:
    name: str
    argv: list[str]
    env: dict[str, str]
    peer: bool = False
    """Another tool: run under a time limit (and `preexec`'s memory limit)."""
    timeout: float | None = None
    preexec: Callable[[], None] | None = None

    def run(self, sample: bool) -> Run:
        return run_process(self.argv, self.env, sample, self.timeout, self.preexec)


@dataclass
class Result:
    """One task on one trace: its warm-up and its timed runs."""

    warm: Run
    runs: list[Run] = field(default_factory=list)

    @property
    def seconds(self) -> float | None:
        """Median whole-process seconds of the timed runs; the warm-up's where it timed out
        (a lower bound); None where it failed."""
        if self.warm.timed_out:
            return self.warm.wall
        walls = [r.wall for r in self.runs if r.wall is not None]
        return statistics.median(walls) if walls and len(walls) == len(self.runs) else None

    @property
    def inner_seconds(self) -> float | None:
        """Median of the task's own time, in its process (`_task.py` tasks only)."""
        own = [r.inner.get("seconds") for r in self.runs]
        values = [float(s) for s in own if isinstance(s, (int, float))]
        return statistics.median(values) if values else None

    @property
    def peak(self) -> int:
        """Bytes: the sampled peak of all processes (warm-up), at least every run's maxrss."""
        return max([self.warm.peak, *(r.maxrss for r in self.runs)])

    @property
    def failed(self) -> list[str]:
        for run in (self.warm, *self.runs):
            if run.failed:
                return run.failed
        return []

    @property
    def timed_out(self) -> bool:
        return self.warm.timed_out or any(r.timed_out for r in self.runs)

    @property
    def loaded(self) -> bool:
        """Whether it ran to its end (perhaps with a part of its work failed)."""
        return self.seconds is not None and not self.timed_out

    def as_json(self) -> dict[str, object]:
        return {
            "seconds": self.seconds,
            "inner_seconds": self.inner_seconds,
            "walls": [r.wall for r in self.runs],
            "warm_wall": self.warm.wall,
            "peak": self.peak,
            "tree_peak": self.warm.tree_peak,
            "pss_peak": self.warm.pss_peak,
            "maxrss": max([self.warm.maxrss, *(r.maxrss for r in self.runs)]),
            "failed": self.failed,
            "timed_out": self.timed_out,
        }


def measure(
    tasks: Sequence[Task], repeat: int, slow_s: float, say: Callable[[str], None] = print
) -> dict[str, Result]:
    """Warm every task, then `repeat` interleaved rounds, every other one in the reverse
    order; each task's `Result`."""
    results: dict[str, Result] = {}
    rounds: dict[str, int] = {}
    for task in tasks:
        warm = task.run(sample=True)
        results[task.name] = Result(warm)
        rounds[task.name] = repeat
        if task.peer and (warm.wall is None or warm.timed_out):
            rounds[task.name] = 0
        elif task.peer and warm.wall is not None and warm.wall > slow_s:
            rounds[task.name] = 1
        say(f"  warm {task.name}: {_seconds(warm)}")
    for i in range(repeat):
        for task in tasks if i % 2 == 0 else tasks[::-1]:  # (no task always runs after another)
            if i < rounds[task.name]:
                results[task.name].runs.append(task.run(sample=False))
        say(f"  round {i + 1}: " + ", ".join(_summary(results, t.name, i) for t in tasks))
    return results


def _seconds(run: Run) -> str:
    if run.timed_out:
        return f"out of time after {run.wall:.0f} s"
    if run.wall is None:
        return f"failed ({'; '.join(run.failed)})"
    return f"{run.wall:.2f} s" + (" (part-way)" if run.failed else "")


def _summary(results: dict[str, Result], name: str, i: int) -> str:
    runs = results[name].runs
    return f"{name} {_seconds(runs[i])}" if i < len(runs) else f"{name} -"
