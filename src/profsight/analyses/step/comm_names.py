"""Which event names are collectives, and the host ranges that time them (the breakdown
takes those out of the host's own work; `step.comms` reads the rest)."""

from __future__ import annotations

import numpy as np

from profsight.analyses.step import intervals
from profsight.knowledge.collectives import COMMUNICATION_NAME, DEVICE_KERNEL, HOST_TIMED, SIZED
from profsight.knowledge.trace_schema import EventKind
from profsight.model.events import I64, Bool
from profsight.model.profile import Profile


def name_lut(profile: Profile) -> tuple[Bool, Bool, Bool, Bool]:
    """Per string of the trace (index it with ``events.name``): a collective's device kernel,
    a host range that times a collective, a sized collective call, any communication. One
    pass over the distinct names, once per profile, never one per event."""
    return profile.derived("comm_names", lambda: _lut(profile.events.strings))


def _lut(strings: list[str]) -> tuple[Bool, Bool, Bool, Bool]:
    device = np.array([DEVICE_KERNEL.search(s) is not None for s in strings] or [False], bool)
    host = np.array([HOST_TIMED.search(s) is not None for s in strings] or [False], bool)
    sized = np.array([SIZED.search(s) is not None for s in strings] or [False], bool)
    comm = np.array([COMMUNICATION_NAME.search(s) is not None for s in strings] or [False], bool)
    return device, host, sized, comm


def is_communication(profile: Profile, index: I64) -> Bool:
    """Which of the events at `index` are communication (`COMMUNICATION_NAME`)."""
    comm: Bool = name_lut(profile)[3][profile.events.name[index]]
    return comm


def host_collective_intervals(profile: Profile) -> tuple[I64, I64]:
    """The union of the host ranges that time collectives (gloo's worker threads, ...)."""
    ev = profile.events
    if not len(ev):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    _, host, _, _ = name_lut(profile)
    timed = np.flatnonzero(host[ev.name] & ~ev.unfinished & (ev.kind != EventKind.KERNEL))
    return intervals.union(ev.start[timed], ev.end_of(timed))
