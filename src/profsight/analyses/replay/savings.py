"""What each finding's fix would save: its edit of the step graph (`replay.whatif`),
replayed (`replay.engine`). "Could save" is the measured steady step minus the replayed one,
as a share of the measured step, with the replay's resolution of it (`engine.saving_spread`).
"""

from __future__ import annotations

import numpy as np
from msgspec.structs import replace

from profsight.analyses.context import Context
from profsight.analyses.replay.combine import both
from profsight.analyses.replay.engine import (
    Edit,
    StepGraph,
    replay,
    replay_steps,
    saving_spread,
    step_graph,
)
from profsight.analyses.replay.whatif import edit_for
from profsight.knowledge import advice
from profsight.knowledge.precedence import PROFILE_CATEGORY
from profsight.malloc_trim import release_grown_memory
from profsight.model.findings import Evidence, Finding, Severity, explains, severity_for
from profsight.units import short_time


def graph_of(ctx: Context) -> StepGraph | None:
    if not ctx.breakdown.steps or ctx.breakdown.segments is None:
        return None
    lo, hi = ctx.breakdown.host_span_ns
    steps = ctx.breakdown.host_ranges_ns
    return step_graph(ctx.profile, lo, hi, steps) if hi > lo else None


def with_savings(ctx: Context, findings: list[Finding]) -> list[Finding]:
    """Each finding with what its fix saves, replayed; severity follows it. A host-side
    cause that explains most of a less specific finding's saving ranks by that saving
    (`model.findings.explains`): what two fixes save in common is replayed with both made.
    The memory each edit and replay freed goes back to the system before the next
    (`heap`): on a huge trace an edit holds a few floats per event."""
    graph = graph_of(ctx)
    release_grown_memory()
    measured, steps = replay_steps(graph) if graph is not None else (0.0, np.zeros(0))
    if graph is None or measured <= 0:
        return [_not_estimated(f) for f in findings]
    out = []
    edits: dict[int, Edit] = {}
    for f in findings:
        # information (where the time goes) is not a change to price
        edit = None if f.severity is Severity.INFO else edit_for(ctx, graph, f)
        release_grown_memory()
        if edit is None:
            out.append(_not_estimated(f))
            continue
        after, after_steps = replay_steps(graph, edit)
        release_grown_memory()
        saved = (measured - after) * 100.0 / measured
        spread = saving_spread(steps, after_steps)
        spread_pct = None if spread is None else spread * 100.0 / measured
        line = Evidence(
            "what-if replay",
            f"{edit.label}: {short_time(measured)} → {short_time(after)} per step"
            + (" per sample" if edit.per != 1.0 else "")
            + (
                advice.WITHIN_RESOLUTION.format(spread=spread_pct)
                if spread_pct is not None and abs(saved) < spread_pct
                else ""
            ),
        )
        if f.category == PROFILE_CATEGORY:
            # one-time start-up: what it costs this window, not what a steady step saves
            out.append(replace(f, gain_pct=None, basis="", evidence=(*f.evidence, line)))
            continue
        severity = f.severity if f.severity is Severity.INFO else severity_for(saved)
        priced = replace(
            f,
            gain_pct=saved,
            gain_spread_pct=spread_pct,
            basis=edit.basis,
            severity=severity,
            evidence=(*f.evidence, line),
        )
        edits[id(priced)] = edit
        out.append(priced)

    def shared(a: Finding, b: Finding) -> float | None:
        ea, eb = edits.get(id(a)), edits.get(id(b))
        together = both(ea, eb) if ea is not None and eb is not None else None
        if together is None or graph is None:
            return None
        after = replay(graph, together)
        saved = (measured - after) * 100.0 / measured
        return (a.gain_pct or 0.0) + (b.gain_pct or 0.0) - saved

    return explains(out, shared)


def _not_estimated(f: Finding) -> Finding:
    """A trace's finding that no edit prices: its saving is not estimated (a share it
    concerns is not what its fix saves)."""
    return replace(f, gain_pct=None, basis="")


__all__ = ["graph_of", "with_savings"]
