"""A GPU step's lead-in: from its host range's start to its first launch of device work.

Until that launch the step gives the device nothing to run; what the host does meanwhile
(preprocessing in the loop, building the batch) is the lead-in finding's
(`analyses.findings.host`), and the replay prices taking it out (`analyses.replay.whatif`).
"""

from __future__ import annotations

import numpy as np

from profsight.analyses.context import Context
from profsight.analyses.step import intervals
from profsight.analyses.step.breakdown import phase_intervals
from profsight.analyses.step.startup import startup_intervals
from profsight.knowledge.phases import Phase
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS
from profsight.model.events import I64


def lead_in_spans(ctx: Context) -> tuple[I64, I64] | None:
    """Per step, its host range's start to the first launch of device work in it (None on a
    run without device work launched in its steps)."""
    if not ctx.has_device or not ctx.breakdown.steps:
        return None
    ev = ctx.profile.events
    launcher = ctx.profile.attribution.launcher
    launched = launcher[(launcher >= 0) & ev.mask(DEVICE_WORK_KINDS)]
    if not len(launched):
        return None
    starts = np.sort(ev.start[launched])
    lo, hi = ctx.breakdown.host_ranges_ns
    first = starts[np.minimum(np.searchsorted(starts, lo), len(starts) - 1)]
    ok = (first >= lo) & (first < hi)
    if not ok.all():
        return None  # a step that launched nothing is no GPU step to judge this way
    # the batch's fetch is the data-loading finding's, whatever share it takes; one-time
    # start-up before a first launch (a first cuBLAS call initialising the context) is the
    # start-up finding's: no step of the steady state waits for it
    data = phase_intervals(ctx.breakdown, Phase.DATA_LOADING)
    startup = startup_intervals(ctx.profile)
    gone = intervals.union(
        np.concatenate([data[0], startup[0]]), np.concatenate([data[1], startup[1]])
    )
    return intervals.minus(intervals.union(lo, first), gone)
