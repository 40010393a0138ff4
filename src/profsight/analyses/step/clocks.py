"""The step on two clocks: what the host launched in each profiled step, wherever it ran.

The host queues device work and goes on, so a ``ProfilerStep`` range on the host is not the
step the hardware ran. A step here is the host's range *and* the device work launched from
inside it (each item through its launch call's correlation; a CUDA graph's kernels through
their ``cudaGraphLaunch``). It completes when both are done.

`windows` turns each step's host range and the end of its device work into the step's
interval on the device's clock:

* completions are monotone: ``c[i] = max(host end, device end)``, never before ``c[i - 1]``;
* a step's interval runs from the later of its host start and the previous completion to its
  own completion: with a lagging device, the time between completions; without, the host
  range exactly. Intervals never overlap;
* the first step has no previous completion in the trace. When its device work ends after
  its host range, its interval starts at the later of: its host start, the end of the device
  work queued ahead of its own on its streams (launched before it and still running when it
  began: the backlog of the steps before the window, which the previous step's completion
  cannot precede), and one steady-state period (the mean interval between the later
  completions) before its completion; yet no later than its own first device item (once
  that backlog ended): what the step launched is the step's, and a device that began it
  early (its first kernels sparse while the host fills the queue) worked on the step. It is
  never shorter than its host range (so it tends to the host range as the lag tends to
  nothing). Otherwise the pipeline's fill (the host's lead over a lagging device, before
  the device began the step's work) would count as a step's time.

The step time (`step_time`) is the slower clock's steady pace: the mean host range or the
mean interval, whichever is longer. It is an average, not a sum of per-step maxima: when
the slower clock alternates between steps (a host range of 166 ms beside a device interval
of 115 ms, then the reverse), the larger of each pair overstates the run (HTA's trace_diff
trace: 135 ms of per-step maxima for a run whose completions come every 118 ms and whose
host ranges average 124 ms). A step's own figure is the longer of its two lengths. The
replay (`analyses.replay`) computes the same from replayed host ranges and device ends, so
what a fix saves is in the same currency.
"""

from __future__ import annotations

import msgspec
import numpy as np

from profsight.knowledge.advice import STEP_TRACK_BUSY_FRACTION
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS, PROGRAM_KINDS
from profsight.model.events import F64, I64, Bool
from profsight.model.profile import Profile
from profsight.model.step_windows import DEVICE_CLOCK, HOST_CLOCK, clock_bound, step_time
from profsight.stats import unique


class StepClocks(msgspec.Struct, frozen=True):
    """Each step's device end and its interval on the device's clock (ns)."""

    device_hi: F64
    """End of the last device item launched in the host range (NaN: none)."""
    lo: I64
    hi: I64
    """The step's interval on the device's clock (`windows`)."""
    ahead: I64 = msgspec.field(default_factory=lambda: np.zeros(0, np.int64))
    """The device items queued ahead of the steps (`queued_ahead`): no step's work, wherever
    they run."""


def windows(
    host_lo: I64,
    host_hi: I64,
    device_hi: F64,
    backlog: float = float("nan"),
    first_start: float = float("nan"),
) -> tuple[I64, I64]:
    """Each step's window (lo, hi) from its host range and the end of its device work
    (NaN: none), by the rules of the module docstring; `backlog`: when the device work queued
    ahead of the first step's ended (NaN: none); `first_start`: when the first step's own
    first device item started (NaN: none). Steps in order of host start."""
    n = len(host_lo)
    if n == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty
    device = np.nan_to_num(np.asarray(device_hi, np.float64), nan=-np.inf)
    done = np.maximum(host_hi.astype(np.float64), np.ceil(device))
    done = np.maximum.accumulate(done)
    start = host_lo.astype(np.float64)
    start[1:] = np.maximum(start[1:], done[:-1])
    if done[0] > host_hi[0]:
        # the previous completion: no earlier than the work queued ahead ended, and, in the
        # steady state, one period before this one; the interval never shorter than the host
        # range, so that it tends to the host range as the device's lag tends to nothing
        previous = float(backlog) if backlog > host_lo[0] else float(host_lo[0])
        if n >= 2:
            previous = max(previous, done[0] - (done[-1] - done[0]) / (n - 1))
        if first_start == first_start:  # its own work began earlier: that is the step's too
            previous = min(previous, max(first_start, backlog if backlog == backlog else 0.0))
        start[0] = min(previous, done[0] - float(host_hi[0] - host_lo[0]))
    hi = np.rint(done).astype(np.int64)
    lo = np.minimum(np.rint(start).astype(np.int64), hi)
    return lo, hi


def step_of(host_lo: I64, host_hi: I64, at: I64) -> I64:
    """The step (index) whose host range [lo, hi) holds each time `at` (-1: none; a
    negative time, no launch call, is in none)."""
    step = np.searchsorted(host_lo, at, side="right") - 1
    inside = (at >= 0) & (step >= 0)
    inside[inside] &= at[inside] < host_hi[step[inside]]
    found: I64 = np.where(inside, step, -1)
    return found


def launch_times(profile: Profile, items: I64) -> I64:
    """When each device item's launch call started (ns; -1: no launch call in the trace).
    A CUDA graph's kernels carry the correlation of their ``cudaGraphLaunch``, so they
    start from it."""
    ev = profile.events
    launcher = profile.attribution.launcher[items]
    at: I64 = np.where(launcher >= 0, ev.start[np.maximum(launcher, 0)], -1)
    return at


def step_clocks(profile: Profile, host_lo: I64, host_hi: I64) -> StepClocks:
    """The two clocks of the steps whose host ranges are [host_lo, host_hi) (in order)."""
    ev = profile.events
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    n = len(host_lo)
    device_hi = np.full(n, np.nan)
    before = float("nan")
    ahead = np.zeros(0, np.int64)
    first = float("nan")
    if len(work) and n:
        at = launch_times(profile, work)
        step = step_of(host_lo, host_hi, at)
        end = ev.end_of(work)
        lane = ev.lane(work)
        before = backlog_end(ev.start[work], end, at, lane, step == 0, int(host_lo[0]))
        ahead = work[queued_ahead(ev.start[work], at, lane, step == 0, int(host_lo[0]))]
        device_hi = device_ends(step, end.astype(np.float64), n)
        if (step == 0).any():
            first = float(ev.start[work[step == 0]].min())
    lo, hi = windows(host_lo, host_hi, device_hi, before, first)
    return StepClocks(device_hi, lo, hi, ahead)


def device_ends(step: I64, end: F64, n: int) -> F64:
    """Per step of `n`, the end of the last item launched in it (`step`: -1 none; NaN: it
    launched nothing)."""
    last = np.full(n, -np.inf)
    mine = step >= 0
    if mine.any():
        np.maximum.at(last, step[mine], end[mine])
    out: F64 = np.where(np.isfinite(last), last, np.nan)
    return out


def backlog_end(
    start: I64 | F64, end: I64 | F64, launch_at: I64, lane: I64, first: Bool, lo: int
) -> float:
    """When the device work queued ahead of the first step's ended (NaN: none, or the first
    step launched nothing): items on the streams the first step launched to, launched
    before it (or by no call in the trace), still running at its start, that began before
    its own first item on their stream did."""
    if not first.any():
        return float("nan")
    ahead = np.zeros(len(lane), bool)
    queued = (launch_at < lo) & (end > lo)
    for key in unique(lane[first]).tolist():
        on = lane == key
        ahead |= on & queued & (start < start[first & on].min())
    return float(end[ahead].max()) if ahead.any() else float("nan")


def queued_ahead(start: I64 | F64, launch_at: I64, lane: I64, first: Bool, lo: int) -> Bool:
    """The device items that are the work of the steps before the profiled ones: launched
    before the first step's host range, or by no call in the trace (the recording began
    while the device still ran them) and queued on a stream the first step launched to
    ahead of its own first item there. No step in the trace launched them, so none of its
    windows holds them; an item of no launch on a stream the steps never used (a runtime's
    transfer, a trace whose exporter dropped the links) cannot be told apart and stays."""
    ahead: Bool = (launch_at >= 0) & (launch_at < lo)
    unlinked = launch_at < 0
    for key in unique(lane[first]).tolist():
        on = lane == key
        ahead |= on & unlinked & (start < start[first & on].min())
    return ahead


__all__ = [
    "DEVICE_CLOCK",
    "HOST_CLOCK",
    "StepClocks",
    "backlog_end",
    "clock_bound",
    "device_ends",
    "launch_times",
    "queued_ahead",
    "step_clocks",
    "step_of",
    "step_time",
    "windows",
]


# ------------------------------------------------ a trace without ProfilerStep ranges


def step_track(profile: Profile, rows: I64) -> int:
    """Without steps, the thread that runs the loop: of the threads busy at least
    `STEP_TRACK_BUSY_FRACTION` of the busiest one, the one whose work starts first. The
    busiest alone can be autograd's own thread, whose backward of a GPU run outweighs a
    compiled forward, yet starts only when the forward on the loop's thread is done."""
    ev = profile.events
    busy = np.bincount(ev.track[rows], weights=profile.attribution.cpu_self[rows])
    candidates = np.flatnonzero(busy >= STEP_TRACK_BUSY_FRACTION * busy.max())
    first = [int(ev.start[rows[ev.track[rows] == t]].min()) for t in candidates.tolist()]
    return int(candidates[int(np.argmin(first))])


def whole_trace(profile: Profile, rows: I64) -> tuple[int, int]:
    """The window of a trace without steps: from its first row to its last, whatever thread
    (DESIGN: without steps the window runs from the first event on). A trace recorded without
    CPU activity holds only the runtime's calls on the host, which say nothing of where the
    program's work began or ended: its window runs from its first event to its last, the
    device's too, so that time in which the device idled after work it was still running
    when the profiler started stays in it. (Not Kineto's span of the collection, ``PyTorch
    Profiler (0)``: before the first event it holds nothing to read; an A4000 ViT step's
    span is 3.23 s for 116 ms of recorded work.)"""
    ev = profile.events
    lo, hi = int(ev.start[rows].min()), int(ev.end_of(rows).max())
    if ev.mask(PROGRAM_KINDS)[rows].any():
        return lo, hi
    timed = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    if not len(timed):
        return lo, hi
    return min(lo, int(ev.start[timed].min())), max(hi, int(ev.end_of(timed).max()))
