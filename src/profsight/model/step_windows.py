"""A step's breakdown as data: each window's phases, device busy and idle time and waits
(StepBreakdown), and the windows of a profile with their average (Breakdown);
analyses.step.breakdown computes them.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import numpy as np

from profsight.knowledge.advice import BORDERLINE_FRACTION
from profsight.knowledge.phases import Phase
from profsight.model.events import F64, I8, I32, I64, Bool

PHASES = list(Phase)


#: Which clock bounds the profiled steps (`clock_bound`).
HOST_CLOCK = "host"
DEVICE_CLOCK = "device"


def clock_bound(step_us: float, waited_us: float) -> str:
    """`DEVICE_CLOCK` when the host spends more than the spread of one run's recordings
    (`BORDERLINE_FRACTION` of the step) waiting for a busy device: ahead of it (the
    window's ``device_lag``), in a wait call while it works, or on a full launch queue;
    else `HOST_CLOCK`: the host's own work sets the pace."""
    if step_us <= 0:
        return HOST_CLOCK
    return DEVICE_CLOCK if waited_us > BORDERLINE_FRACTION * step_us else HOST_CLOCK


def step_time(host: Sequence[float] | F64 | I64, interval: Sequence[float] | F64 | I64) -> float:
    """The steady-state step: the mean host range or the mean interval between completions
    (`windows`), whichever is longer (in the unit they are given in)."""
    if not len(host):
        return 0.0
    return float(max(np.mean(host), np.mean(interval)))


class QueueSummary(msgspec.Struct, frozen=True):
    """What a report says of the launch queues (no per-call arrays)."""

    limit: int
    measured: bool
    max_depth: int
    blocked_us: float
    """Host time in launches made with a full queue, over the whole trace."""


class StepBreakdown(msgspec.Struct, frozen=True):
    name: str
    start_us: float
    wall_us: float
    """The step's window on the slower clock (`analyses.clocks`): it ends when the host range
    and the device work launched in it are both done."""
    host_us: dict[str, float]
    """Phase id -> µs of the step's thread in its host range, and ``device_lag`` for the rest
    of the window; the values add up to `wall_us`."""
    device_busy_us: float | None
    """The union of device work inside the window (None when the trace has no device
    activity at all)."""
    device_idle_us: dict[str, float] = msgspec.field(default_factory=dict)
    """Idle device time by cause: ``startup``, ``held``, ``sync``, ``copy``, ``input``,
    ``host``."""
    host_start_us: float | None = None
    host_wall_us: float | None = None
    """The host's ``ProfilerStep`` range (the whole span's, without steps); None: the window."""
    device_end_us: float | None = None
    """When the last device item launched in the host range ended (None: it launched none)."""
    waited_us: float = 0.0
    """Host time waiting for a busy device: in a wait call (a sync, a blocking copy, a launch
    on a full queue) while the device worked, and the window's ``device_lag``."""
    blocked_us: float = 0.0
    """Host time in launch calls made with their stream's queue full (`launch_queue`)."""
    interval_us: float | None = None
    """From the later of the host start and the previous step's completion to this one's
    (`clocks.windows`): the step on the device's clock (None: `wall_us`). Steps' intervals
    never overlap (their `wall_us` windows can, where a host range is the longer)."""

    @property
    def interval(self) -> float:
        return self.wall_us if self.interval_us is None else self.interval_us

    @property
    def interval_start(self) -> float:
        """Where `interval` starts (µs): it ends with the window, at the step's completion."""
        return self.start_us + self.wall_us - self.interval

    @property
    def host_range_us(self) -> float:
        """The host range's length (the window's, when not recorded apart)."""
        return self.wall_us if self.host_wall_us is None else self.host_wall_us

    @property
    def host_start(self) -> float:
        return self.start_us if self.host_start_us is None else self.host_start_us

    @property
    def lag_us(self) -> float:
        """How long after the host range its device work ended (0: it ended inside)."""
        if self.device_end_us is None:
            return 0.0
        return max(self.device_end_us - (self.host_start + self.host_range_us), 0.0)


_NO_ROWS: I32 = np.zeros(0, np.int32)
_NO_PHASES: I8 = np.zeros(0, np.int8)


class Breakdown(msgspec.Struct, frozen=True):
    steps: tuple[StepBreakdown, ...]
    thread: str
    """Label of the step's thread."""
    windows: str
    """``profiler steps`` or ``whole trace`` (no ProfilerStep ranges)."""
    row_events: I32 = msgspec.field(default_factory=lambda: _NO_ROWS)
    """Events of the step thread's rows (steps excluded) ..."""
    row_phase: I8 = msgspec.field(default_factory=lambda: _NO_PHASES)
    """... and the phase each belongs to (`phase_code`; one byte a row: a huge trace has tens
    of millions; `rows_in` tests them)."""
    scope: str = ""
    """What the steps are, when not one window each (a table's: an average of its totals)."""
    segments: tuple[I64, I64, I8, I32] | None = None
    """The step thread's self segments in order of start (start, end in ns), the
    `phase_code` of each (-1: a row of no phase) and the event each is the self time of:
    where each phase's time lies, for the what-if replay."""
    backward_elsewhere: tuple[I64, I64] | None = None
    """Where backward ran on autograd's own thread (GPU runs), for the replay."""
    queue: QueueSummary | None = None
    """The device's launch queues (None without device work)."""
    ahead: I64 = msgspec.field(default_factory=lambda: np.zeros(0, np.int64))
    """Device items queued ahead of the steps (`clocks.queued_ahead`): no step's work."""
    collective_waits: tuple[I64, I64] | None = None
    """Where the step thread waited for a collective on a worker thread (gloo), outside any
    op (sorted disjoint ns intervals): the ``communication`` time no segment carries, for
    the replay."""

    def _compared(self) -> tuple[object, ...]:
        # the arrays are the replay's working data, not the breakdown's value: equality, the
        # hash and the repr leave them out (as the dataclass's compare=False, repr=False did)
        return (self.steps, self.thread, self.windows, self.scope, self.queue)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Breakdown) or type(other) is not type(self):
            return NotImplemented
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(steps={self.steps!r}, thread={self.thread!r}, "
            f"windows={self.windows!r}, scope={self.scope!r}, queue={self.queue!r})"
        )

    @property
    def span_ns(self) -> tuple[int, int]:
        """From the first step's window start to the last one's end (ns, the trace's clock):
        the steps on the slower clock."""
        first, last = self.steps[0], self.steps[-1]
        return round(first.start_us * 1000), round((last.start_us + last.wall_us) * 1000)

    @property
    def host_span_ns(self) -> tuple[int, int]:
        """From the first step's host start to the last one's host end (ns)."""
        first, last = self.steps[0], self.steps[-1]
        return round(first.host_start * 1000), round((last.host_start + last.host_range_us) * 1000)

    @property
    def intervals_ns(self) -> list[tuple[int, int]]:
        """Each step's interval on the device's clock (ns; never overlapping)."""
        return [
            (round(s.interval_start * 1000), round((s.start_us + s.wall_us) * 1000))
            for s in self.steps
        ]

    @property
    def host_ranges_ns(self) -> tuple[I64, I64]:
        """Each step's host range (ns)."""
        lo = np.array([round(s.host_start * 1000) for s in self.steps], np.int64)
        hi = np.array(
            [round((s.host_start + s.host_range_us) * 1000) for s in self.steps], np.int64
        )
        return lo, hi

    @property
    def bound(self) -> str:
        """Which clock bounds the steps (`clocks.clock_bound`)."""
        avg = self.average()
        return clock_bound(avg.wall_us, avg.waited_us)

    @property
    def described(self) -> str:
        """``3 profiler steps``, or the `scope`."""
        return self.scope or f"{len(self.steps)} {self.windows}"

    @property
    def has_device(self) -> bool:
        return any(s.device_busy_us is not None for s in self.steps)

    def rows_in(self, *phases: Phase) -> Bool:
        """Which of `row_events` belong to one of `phases`."""
        return np.isin(self.row_phase, [phase_code(p) for p in phases])

    def average(self) -> StepBreakdown:
        n = max(len(self.steps), 1)

        def mean(values: list[dict[str, float]]) -> dict[str, float]:
            keys = dict.fromkeys(k for v in values for k in v)  # in order: reproducible output
            return {k: sum(v.get(k, 0.0) for v in values) / n for k in keys}

        busy = [s.device_busy_us for s in self.steps if s.device_busy_us is not None]
        ends = [s.lag_us for s in self.steps if s.device_end_us is not None]
        host_wall = sum(s.host_range_us for s in self.steps) / n
        # the steady step: the slower clock's mean (`clocks.step_time`), not the mean of each
        # step's longer clock
        wall = step_time([s.host_range_us for s in self.steps], [s.interval for s in self.steps])
        lag = Phase.DEVICE_LAG.value
        host = mean([{k: v for k, v in s.host_us.items() if k != lag} for s in self.steps])
        if wall - host_wall > 0:
            host[lag] = wall - host_wall
        busy_us = sum(busy) / n if busy else None
        return StepBreakdown(
            name="average",
            start_us=0.0,
            wall_us=wall,
            host_us=host,
            device_busy_us=busy_us,
            device_idle_us=idle_within(
                mean([s.device_idle_us for s in self.steps]), wall - (busy_us or 0.0)
            ),
            host_start_us=0.0,
            host_wall_us=host_wall,
            # the average lag, as the end of an average host range that starts at 0
            device_end_us=host_wall + sum(ends) / n if ends else None,
            waited_us=sum(s.waited_us for s in self.steps) / n,
            blocked_us=sum(s.blocked_us for s in self.steps) / n,
            interval_us=sum(s.interval for s in self.steps) / n,
        )


def phase_code(phase: Phase | None) -> int:
    """A phase as the byte `Breakdown` keeps per row and segment (-1: none)."""
    return -1 if phase is None else PHASES.index(phase)


def idle_within(idle: dict[str, float], room: float) -> dict[str, float]:
    """Idle causes cut down to `room` (the steady step less its busy time): the per-step
    figures are of each step's longer clock, whose mean passes the steady step by what the
    two clocks traded between steps; that excess is idle time spent waiting on the host
    first, then the rest in proportion."""
    room = max(room, 0.0)
    total = sum(idle.values())
    excess = total - room
    if excess <= 1e-9:
        return idle
    out = dict(idle)
    taken = min(excess, out.get("host", 0.0))
    if "host" in out:
        out["host"] -= taken
    rest = excess - taken
    others = sum(v for k, v in out.items() if k != "host")
    if rest > 0 and others > 0:
        scale = max(others - rest, 0.0) / others
        out = {k: (v if k == "host" else v * scale) for k, v in out.items()}
    return out
