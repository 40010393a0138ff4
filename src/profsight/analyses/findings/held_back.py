"""The held-back finding: launched work the device idled beside (`step.held` measures it)."""

from __future__ import annotations

import numpy as np

from profsight.analyses.context import Context
from profsight.analyses.step.held import held_items
from profsight.analyses.step.startup import startup_events
from profsight.knowledge.advice import (
    HELD_ADVICE,
    HELD_BACK_US,
    HELD_EXPLANATION,
    HELD_PCT,
)
from profsight.knowledge.catalogue import condition
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS
from profsight.model.events import I64
from profsight.model.findings import Evidence, Finding, severity_for
from profsight.model.profile import Profile
from profsight.units import short_time


def run(ctx: Context) -> list[Finding]:
    """The held-back finding: how long the device idled while launched work waited."""
    held_us = ctx.held_us
    share = held_us * 100 / ctx.step_us if ctx.step_us else 0.0
    if share < HELD_PCT:
        return []
    profile = ctx.profile
    ev = profile.events
    items, lo, hi = held_items(profile, startup_events(profile))
    first, last = ctx.breakdown.span_ns
    inside = (hi > first) & (lo < last)
    items, lo, hi = items[inside], lo[inside], hi[inside]
    launcher = profile.attribution.launcher
    evidence = [
        Evidence(
            "device idle while launched work waited",
            f"{short_time(held_us)} per step ({share:.0f}% of the step)",
        )
    ]
    if len(items):
        k = int(np.argmax(hi - lo))
        item, call = int(items[k]), int(launcher[items[k]])
        evidence.append(
            Evidence(
                f"items waiting >= {short_time(HELD_BACK_US)} with the device free",
                f"{len(items) / ctx.steps:.0f} per step; the longest "
                f"{short_time((hi[k] - lo[k]) / 1000.0)} after {ev.strings[ev.name[call]]}",
                (ev.strings[ev.name[item]],),
            )
        )
        firsts = _first_runs(profile, items)
        if firsts:
            evidence.append(
                Evidence(
                    "first run of their kernel or copy",
                    f"{firsts} of {len(items)} (GPU code still loading lazily is one cause)",
                )
            )
    return [
        Finding(
            category="gpu_held",
            severity=severity_for(share),
            title=f"Launched work waited {share:.0f}% of the step with the GPU free",
            evidence=tuple(evidence),
            explanation=HELD_EXPLANATION,
            recommendation=HELD_ADVICE,
            at_stake_pct=share,
            trigger=condition("gpu_held", "held"),
        )
    ]


def _first_runs(profile: Profile, items: I64) -> int:
    """How many of `items` are the first of their name on the device."""
    ev = profile.events
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    order = work[np.argsort(ev.start[work], kind="stable")]
    _, first = np.unique(ev.name[order], return_index=True)
    return int(np.isin(items, order[first]).sum())
