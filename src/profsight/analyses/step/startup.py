"""One-time start-up inside the profiled window: host calls that do once what their
siblings never do again (lazy loading of GPU code in a first kernel launch, cuDNN autotuning,
a torch.compile compilation, allocator growth), and CUPTI's own start-up records.

Left in the window, start-up reads as launch overhead or an idle GPU. profsight moves its
time to a ``startup`` phase, names it (``profiler_setup``), and judges the rest of the step
on the steady state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from profsight.analyses.step import intervals
from profsight.knowledge.advice import (
    STARTUP_DOMINANT_PCT,
    STARTUP_FACTOR,
    STARTUP_MAX_BUSY,
    STARTUP_MIN_CALLS,
    STARTUP_MIN_US,
)
from profsight.knowledge.ops import lookup_op
from profsight.knowledge.rows import (
    BLOCKING_COPY_CALLS,
    COMPILE_ROWS,
    FIRST_USE_CALLS,
    STARTUP_ROWS,
    RowKind,
    classify,
)
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS, PROFILER_STEP_PREFIX, EventKind
from profsight.model.events import I64
from profsight.model.profile import Profile
from profsight.stats import median as median_of
from profsight.stats import unique

#: Op categories whose long calls are waits, not start-up.
WAIT_CATEGORIES = frozenset({"copy", "memcpy", "sync"})
#: Host event kinds whose calls can be one-off start-up.
_HOST_KINDS = frozenset({EventKind.CPU_OP, EventKind.RUNTIME, EventKind.OVERHEAD})


def startup_events(profile: Profile) -> I64:
    """Events that are one-time start-up: outliers among their name's calls, and CUPTI's
    start-up rows (found once per profile: the breakdown, the findings and the replay all
    read them)."""
    return profile.derived("startup_events", lambda: _startup_events(profile))


def _startup_events(profile: Profile) -> I64:
    ev = profile.events
    host = np.flatnonzero(ev.mask(_HOST_KINDS) & (ev.dur > 0))
    if len(host) == 0:
        return host
    known = [i for i, s in enumerate(ev.strings) if s in STARTUP_ROWS]
    first_use = [i for i, s in enumerate(ev.strings) if s in FIRST_USE_CALLS]
    long_first_use = np.isin(ev.name[host], first_use) & (ev.dur[host] >= STARTUP_MIN_US * 1000)
    found = [host[np.isin(ev.name[host], known)], host[long_first_use], compile_events(profile)]
    # a long copy or sync is the host waiting (for the device, maybe for work queued before
    # the window), not start-up
    waits = [i for i, s in enumerate(ev.strings) if is_wait(s)]
    host = host[~np.isin(ev.name[host], waits)]
    names = ev.name[host]
    order = np.argsort(names, kind="stable")
    sorted_names = names[order]
    cuts = np.flatnonzero(np.diff(sorted_names)) + 1
    floor = STARTUP_MIN_US * 1000.0
    step_of = _step_finder(profile)
    for group in np.split(order, cuts):
        if len(group) < STARTUP_MIN_CALLS:
            continue
        calls = host[group]
        dur = ev.dur[calls].astype(np.float64)
        median = float(median_of(dur))
        outlying = (dur >= STARTUP_FACTOR * max(median, 1.0)) & (dur >= floor)
        if not outlying.any():
            continue
        # one-time work happens once, the first time: outliers in two or more profiled steps
        # recur (a large tensor's op among many small ones of its name), and an outlier in a
        # later step than its name's first is no start-up either (a call the machine
        # preempted: on a loaded machine one call in any step can stretch by milliseconds)
        steps = step_of(ev.start[calls])
        outlier_steps = unique(steps[outlying])
        if len(outlier_steps) == 1 and outlier_steps[0] == steps.min():
            found.append(calls[outlying])
    events: I64 = unique(np.concatenate(found))
    kept: I64 = events[_mostly_idle_device(profile, events)]
    return kept


def _step_finder(profile: Profile) -> Callable[[I64], I64]:
    """For host times: the index of the ProfilerStep range they fall in (-1: before the
    first; every time is step 0 in a trace without steps)."""
    ev = profile.events
    ids = [i for i, s in enumerate(ev.strings) if s.startswith(PROFILER_STEP_PREFIX)]
    steps = np.flatnonzero(np.isin(ev.name, ids) & ev.mask(frozenset({EventKind.ANNOTATION})))
    starts = np.sort(ev.start[steps])

    def step_of(times: I64) -> I64:
        if len(starts) == 0:
            return np.zeros(len(times), np.int64)
        found: I64 = np.searchsorted(starts, times, side="right") - 1
        return found

    return step_of


def compile_events(profile: Profile) -> I64:
    """torch.compile's compilation ranges (`COMPILE_ROWS`): one-time, however many calls."""
    ev = profile.events
    names = [i for i, s in enumerate(ev.strings) if COMPILE_ROWS.search(s)]
    ranges = ev.mask(frozenset({EventKind.ANNOTATION, EventKind.CPU_OP, EventKind.PYTHON}))
    found: I64 = np.flatnonzero(ranges & np.isin(ev.name, names) & (ev.dur > 0))
    return found


def _mostly_idle_device(profile: Profile, events: I64) -> np.ndarray[Any, Any]:
    """Which events ran while the device was mostly idle: a long call during which the
    device works is the host waiting for it (a sync, a blocking copy), not start-up."""
    ev = profile.events
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    keep = np.ones(len(events), bool)
    if len(work) == 0 or len(events) == 0:
        return keep
    busy = intervals.union(ev.start[work], ev.end_of(work))
    for k, e in enumerate(events.tolist()):
        lo, hi = int(ev.start[e]), int(ev.end_of(e))
        overlap = intervals.length(*intervals.clip(*busy, lo, hi))
        keep[k] = overlap < STARTUP_MAX_BUSY * max(hi - lo, 1)
    return keep


def startup_intervals(profile: Profile) -> tuple[I64, I64]:
    """The union of the start-up events' intervals (ns)."""
    events = startup_events(profile)
    ev = profile.events
    return intervals.union(ev.start[events], ev.end_of(events))


def is_wait(name: str) -> bool:
    """A copy, a copy call or a sync: a long call of it waited for the device."""
    info = lookup_op(name)
    if info is not None and info.category in WAIT_CATEGORIES:
        return True
    return name in BLOCKING_COPY_CALLS or classify(name) is RowKind.SYNC


def dominates(share_pct: float) -> bool:
    """Whether start-up fills the window so that its steady state cannot be judged (from
    `STARTUP_DOMINANT_PCT`): the verdict is then "not judged" and the start-up finding comes
    first. Below it, the start-up is a one-time cost beside a steady state that can be read."""
    return share_pct >= STARTUP_DOMINANT_PCT
