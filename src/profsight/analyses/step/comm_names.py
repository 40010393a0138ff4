"""Which event names are collectives, and the host ranges that time them (the breakdown
takes those out of the host's own work; `step.comms` reads the rest)."""

from __future__ import annotations

import numpy as np

from profsight.analyses.step import intervals
from profsight.knowledge.collectives import COMMUNICATION_NAME, DEVICE_KERNEL, HOST_TIMED, SIZED
from profsight.knowledge.trace_schema import EventKind
from profsight.model.events import I64, Bool, EventStore
from profsight.model.profile import Profile


def name_lut(ev: EventStore) -> tuple[Bool, Bool, Bool, Bool]:
    strings = ev.strings
    device = np.array([DEVICE_KERNEL.search(s) is not None for s in strings] or [False], bool)
    host = np.array([HOST_TIMED.search(s) is not None for s in strings] or [False], bool)
    sized = np.array([SIZED.search(s) is not None for s in strings] or [False], bool)
    comm = np.array([COMMUNICATION_NAME.search(s) is not None for s in strings] or [False], bool)
    return device, host, sized, comm


def host_collective_intervals(profile: Profile) -> tuple[I64, I64]:
    """The union of the host ranges that time collectives (gloo's worker threads, ...)."""
    ev = profile.events
    if not len(ev):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    _, host, _, _ = name_lut(ev)
    timed = np.flatnonzero(host[ev.name] & ~ev.unfinished & (ev.kind != EventKind.KERNEL))
    return intervals.union(ev.start[timed], ev.end_of(timed))
