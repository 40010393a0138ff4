"""The collectives of one trace as data: each collective, each step's busy and exposed time,
each operation's calls, bytes and bus bandwidth; `analyses.step.comms` finds them.
"""

from __future__ import annotations

from collections import defaultdict

import msgspec

from profsight.knowledge.collectives import (
    bus_factor,
)
from profsight.stats import median

TIMED_ON_DEVICE = "device kernels"
TIMED_ON_HOST = "host ranges"
ENQUEUE_ONLY = "enqueue calls only"


class Collective(msgspec.Struct, frozen=True):
    operation: str
    """Canonical id (`knowledge.collectives.OPERATIONS`): ``all_reduce``, ``all_gather``, ..."""
    name: str
    backend: str
    step: int
    """Index of the breakdown window it was issued in, -1 outside every window."""
    start_ns: int
    """Same clock as the profile's events."""
    end_ns: int
    nbytes: int
    """Message bytes, -1 when the trace does not say."""
    group_size: int
    """Ranks taking part, -1 when unknown."""
    process_group: str = ""
    """``Process Group Name`` where the trace states it (torch >= 2.1), else empty."""

    @property
    def dur_us(self) -> float:
        return (self.end_ns - self.start_ns) / 1000.0

    def bus_gbps(self) -> float | None:
        """Bus bandwidth in GB/s (NCCL tests' convention), None without size or ranks."""
        factor = bus_factor(self.operation, self.group_size)
        if factor is None or self.nbytes <= 0 or self.end_ns <= self.start_ns:
            return None
        return self.nbytes / (self.end_ns - self.start_ns) * factor


class StepComms(msgspec.Struct, frozen=True):
    busy_us: float
    """Time in the window during which some collective runs."""
    exposed_us: float
    """The part of `busy_us` during which nothing computes."""

    @property
    def overlapped_us(self) -> float:
        return max(self.busy_us - self.exposed_us, 0.0)


class OperationStats(msgspec.Struct, frozen=True):
    operation: str
    backend: str
    calls: int
    total_us: float
    nbytes: int
    """Sum of the known message sizes (-1 when none is known)."""
    bus_gbps: float | None
    """Median bus bandwidth of the calls whose size is known."""


class Communication(msgspec.Struct, frozen=True):
    timed_on: str
    """`TIMED_ON_DEVICE`, `TIMED_ON_HOST` or `ENQUEUE_ONLY`."""
    backend: str
    collectives: tuple[Collective, ...]
    steps: tuple[StepComms, ...]
    """One per breakdown window (empty when `ENQUEUE_ONLY`)."""
    step_count: int = 1
    """Breakdown windows (the per-step divisor, timed or not)."""

    @property
    def timed(self) -> bool:
        return self.timed_on != ENQUEUE_ONLY

    def average(self) -> StepComms:
        n = max(self.step_count, 1)
        return StepComms(
            sum(s.busy_us for s in self.steps) / n, sum(s.exposed_us for s in self.steps) / n
        )

    def operations(self) -> list[OperationStats]:
        groups: dict[tuple[str, str], list[Collective]] = defaultdict(list)
        for c in self.collectives:
            groups[(c.operation, c.backend)].append(c)
        out = []
        for (operation, backend), calls in groups.items():
            sizes = [c.nbytes for c in calls if c.nbytes > 0]
            rates = [r for r in (c.bus_gbps() for c in calls) if r is not None]
            out.append(
                OperationStats(
                    operation,
                    backend,
                    len(calls),
                    sum(c.dur_us for c in calls) if self.timed else 0.0,
                    sum(sizes) if sizes else -1,
                    float(median(rates)) if rates and self.timed else None,
                )
            )
        return sorted(out, key=lambda o: (-o.total_us, -o.calls))


__all__ = [
    "ENQUEUE_ONLY",
    "TIMED_ON_DEVICE",
    "TIMED_ON_HOST",
    "Collective",
    "Communication",
    "OperationStats",
    "StepComms",
]
