"""Whether a profiled window repeats its work: several steps, or one pass.

A window of several steps can be judged on the steps after the first even when one-time
start-up fills much of it; a window of one pass cannot, since that pass is the first and all of
it ran cold (`analyses.step.startup.dominates`). Steps are ``ProfilerStep`` ranges when the
trace has them; otherwise the device's work is read as a sequence of kernel names, which
repeats with the period of an iteration when the window holds several (a benchmark loop, a
training loop profiled without a schedule).
"""

from __future__ import annotations

import numpy as np

from profsight.knowledge.advice import REPEAT_MATCH, REPEAT_MAX_CANDIDATES, REPEAT_MAX_COMPARED
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS
from profsight.model.profile import Profile


def repeats(profile: Profile, profiler_steps: int) -> bool:
    """Whether the window holds its work at least twice: two or more ``ProfilerStep``
    ranges, or device work whose names repeat with a period (`periodic`)."""
    if profiler_steps >= 2:
        return True
    ev = profile.events
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    if len(work) < 2:
        return False
    names = ev.name[work[np.argsort(ev.start[work], kind="stable")]]
    return periodic(names)


def periodic(names: np.ndarray) -> bool:
    """Whether a sequence repeats with some period p (at most half its length, so that it
    holds two whole periods): item i equals item i + p for at least `REPEAT_MATCH` of the
    compared items. The candidates are the places where the first item recurs."""
    n = len(names)
    candidates = np.flatnonzero(names[1 : n // 2 + 1] == names[0])[:REPEAT_MAX_CANDIDATES] + 1
    for p in candidates.tolist():
        m = min(n - p, REPEAT_MAX_COMPARED)
        if float(np.mean(names[:m] == names[p : p + m])) >= REPEAT_MATCH:
            return True
    return False
