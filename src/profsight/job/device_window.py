"""A rank whose trace holds device rows only: one window over its device work.

A merged job trace filtered down to its collective kernels (TraceLens's TraceFuse merge kept
only the NCCL kernels and their annotations), or a rank exported with the device timelines
alone, has no host thread: no ``ProfilerStep``, no op, no step thread, so the step model has
no window and every collective lies outside one. Such a rank is still a rank of the job: its
collectives start when it arrives and end when the last rank has, which is all the
straggler needs. Its one window runs from its first device item to the end of its last
(`StepSummary.number` None, as a trace without steps has); what computes in it is the other
device work the file holds.

What the window cannot say is how busy or idle the device was: rows left out of the file
(its compute kernels, filtered away) would have filled it. So the device's busy time is not
given (None) and the rank's own findings say nothing about idle time; a note says why.
"""

from __future__ import annotations

import numpy as np
from msgspec.structs import replace

from profsight.analyses.step import intervals
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS, HOST_KINDS
from profsight.model.collectives_seen import Collective, Communication
from profsight.model.profile import Profile
from profsight.stats import unique

#: What a rank's trace holds, when not a whole rank (`RankSummary.held`).
DEVICE_ONLY = "device rows only"
COLLECTIVES_ONLY = "only collectives (their kernels)"


def device_only(profile: Profile) -> bool:
    """Whether the trace holds device work and no host event at all."""
    ev = profile.events
    return bool(ev.mask(DEVICE_WORK_KINDS).any()) and not ev.mask(HOST_KINDS).any()


def device_window(
    profile: Profile, comms: Communication | None
) -> tuple[tuple[int, int], float, float, tuple[Collective, ...]]:
    """The rank's one window (ns, its clock), its communication busy and exposed µs in it,
    and its collectives placed in that window (step 0)."""
    ev = profile.events
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    lo, hi = int(ev.start[work].min()), int(ev.end_of(work).max())
    collectives = comms.collectives if comms is not None else ()
    if not collectives:
        return (lo, hi), 0.0, 0.0, ()
    busy = intervals.clip(
        *intervals.union(
            np.array([c.start_ns for c in collectives], np.int64),
            np.array([c.end_ns for c in collectives], np.int64),
        ),
        lo,
        hi,
    )
    # what computes: the device work that is no collective's kernel
    comm_names = {c.name for c in collectives}
    comm_ids = [i for i, s in enumerate(ev.strings) if s in comm_names]
    other = work[~np.isin(ev.name[work], comm_ids)]
    compute = intervals.union(ev.start[other], ev.end_of(other))
    total = intervals.length(*busy)
    hidden = intervals.overlap(busy, compute)
    placed = tuple(replace(c, step=0) if lo <= c.start_ns < hi else c for c in collectives)
    return (lo, hi), total / 1000.0, (total - hidden) / 1000.0, placed


def held_note(ranks: list[int], held: str) -> str:
    """What the job's notes say of the ranks whose traces hold `held`."""
    who = (
        f"rank {ranks[0]}: its trace holds"
        if len(ranks) == 1
        else ("ranks " + ", ".join(map(str, ranks)) + ": their traces hold")
    )
    return (
        f"{who} {held}, no host op: a window runs from a rank's first device item to its "
        "last, only the collectives are compared, and idle time is not judged (what the file "
        "leaves out would have filled it)"
    )


def collectives_only(profile: Profile, collectives: tuple[Collective, ...]) -> bool:
    """Whether every device item of the trace is a collective's kernel."""
    ev = profile.events
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    names = {c.name for c in collectives}
    return bool(len(work)) and all(ev.strings[n] in names for n in unique(ev.name[work]))


__all__ = [
    "COLLECTIVES_ONLY",
    "DEVICE_ONLY",
    "collectives_only",
    "device_only",
    "device_window",
    "held_note",
]
