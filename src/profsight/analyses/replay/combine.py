"""Two fixes at once: the edit that makes both changes (`both`), so that the replay can tell
how much of two findings' savings is the same time.

What two fixes save in common is what each saves alone less what they save together: two
findings whose fixes remove the same idle time of the device explain the same time, and the
more specific one names its cause (`model.findings.explains`).
"""

from __future__ import annotations

import numpy as np

from profsight.analyses.replay.engine import Edit
from profsight.model.events import F64, I64
from profsight.stats import union, unique


def both(a: Edit, b: Edit) -> Edit | None:
    """The edit making the changes of `a` and of `b`; where both change the same host time
    or device item, the larger change holds (the smaller factor). None when they cannot
    be made together as one step: a change of the batch (per sample), or one edit taking
    the work a removed stretch launched with it and the other not."""
    if a.per != 1.0 or b.per != 1.0 or a.drop_removed_work != b.drop_removed_work:
        return None
    waits = [w for w in (a.free_waits, b.free_waits) if w is not None]
    latency = [x for x in (a.no_latency, b.no_latency) if x is not None]
    no_latency = (
        (latency[0] | latency[1]) if len(latency) == 2 else (latency[0] if latency else None)
    )
    return Edit(
        f"{a.label} and {b.label}",
        host=_host(a.host + b.host),
        drop_removed_work=a.drop_removed_work,
        device=_device(a.device, b.device),
        free_waits=union(*waits) if len(waits) == 2 else (waits[0] if waits else None),
        no_latency=no_latency,
        release_held=a.release_held or b.release_held,
    )


def _host(sets: tuple[tuple[I64, I64, F64], ...]) -> tuple[tuple[I64, I64, F64], ...]:
    """Sets of host stretches (each sorted and disjoint) as one set, disjoint: each piece of
    time at the smallest factor any set gives it."""
    if len(sets) <= 1:
        return sets
    cuts = unique(np.concatenate([np.concatenate([s, e]) for s, e, _ in sets]))
    if len(cuts) < 2:
        return ()
    lo, hi = cuts[:-1], cuts[1:]
    factor = np.full(len(lo), np.inf)
    for starts, ends, f in sets:
        if not len(starts):
            continue
        j = np.searchsorted(starts, lo, side="right") - 1
        at = np.maximum(j, 0)
        inside = (j >= 0) & (lo < ends[at])
        np.minimum(factor, np.where(inside, f[at], np.inf), out=factor)
    keep = np.isfinite(factor)
    return ((lo[keep], hi[keep], factor[keep]),)


def _device(a: tuple[I64, F64] | None, b: tuple[I64, F64] | None) -> tuple[I64, F64] | None:
    """Device items scaled by either edit, each by the smaller factor."""
    if a is None or b is None:
        return a if b is None else b
    items = np.concatenate([a[0], b[0]])
    factors = np.concatenate([a[1], b[1]])
    order = np.lexsort((factors, items))
    items, factors = items[order], factors[order]
    first = np.ones(len(items), bool)
    first[1:] = items[1:] != items[:-1]
    return items[first], factors[first]
