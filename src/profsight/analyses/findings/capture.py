"""A CUDA-graph capture in the profiled window (`analyses.step.capture_phase`): what it is.

Where the capture phase fills the window, the profile shows no step: the finding says so
first, blocks the verdict's reading (not judged: profile the replays), and no FLOP/s,
utilisation or roofline is judged from it. A smaller capture (a first step that records its
graph) is a note: one-time set-up beside the steps.
"""

from __future__ import annotations

import numpy as np
from msgspec.structs import replace

from profsight.analyses.context import Context
from profsight.analyses.findings.setup import setup_finding
from profsight.analyses.step.capture_phase import Captures, captures, recording_mask
from profsight.knowledge.advice import PROFILER_OVERHEAD_PCT
from profsight.knowledge.catalogue import condition
from profsight.knowledge.graph_capture import (
    CAPTURE_ADVICE,
    CAPTURE_EXPLANATION,
    CAPTURE_PART_ADVICE,
    CAPTURE_PART_TITLE,
    CAPTURE_TITLE,
)
from profsight.knowledge.trace_schema import EventKind
from profsight.model.findings import Evidence, Finding, Severity
from profsight.units import short_time


def run(ctx: Context) -> list[Finding]:
    """The capture finding of a trace (none without a capture, or one too small to matter:
    under `PROFILER_OVERHEAD_PCT` of the window)."""
    found = captures(ctx.profile)
    if found is None or found.share_pct < PROFILER_OVERHEAD_PCT:
        return []
    dominant = found.dominant
    # a finding about the profile itself: built as the others of its category are
    finding = setup_finding(
        CAPTURE_TITLE if dominant else f"{CAPTURE_PART_TITLE}: {found.share_pct:.0f}%",
        CAPTURE_EXPLANATION,
        CAPTURE_ADVICE if dominant else CAPTURE_PART_ADVICE,
    )
    return [
        replace(
            finding,
            severity=Severity.HIGH if dominant else Severity.LOW,
            evidence=capture_evidence(ctx, found),
            at_stake_pct=found.share_pct,
            blocks=dominant,
            trigger=condition("profiler_setup", "capture"),
        )
    ]


def capture_evidence(ctx: Context, found: Captures) -> tuple[Evidence, ...]:
    """What shows the capture: its share, the graphs, what was recorded instead of run."""
    ev = ctx.profile.events
    ops = np.flatnonzero((ev.kind == EventKind.CPU_OP) & ctx.profile.attribution.is_row)
    recorded_ops = int(recording_mask(ctx.profile, ops).sum())
    lo, hi = found.window
    evidence = [
        Evidence(
            "capture phase",
            f"{found.share_pct:.0f}% of the profiled window ({short_time((hi - lo) / 1e3)})",
        ),
        Evidence(
            "graphs captured",
            f"{found.graphs} (stream capture begun), {found.instantiated} instantiated",
        ),
        Evidence(
            "recorded, not run",
            f"{short_time(found.recording_ms * 1e3)} of stream capture: {recorded_ops:,} ops"
            + (f", {found.launches:,} kernel launches" if found.launches else "")
            + f" recorded into the graphs; {found.ran} of their kernels ran",
        ),
    ]
    return tuple(evidence)


def not_judged_lines(ctx: Context) -> tuple[str, ...]:
    """For the verdict: why a window that is a capture is not judged, and that no FLOP/s is
    read from it (empty: no capture fills the window)."""
    found = captures(ctx.profile)
    if found is None or not found.dominant:
        return ()
    return (
        f"a CUDA-graph capture fills {found.share_pct:.0f}% of the profiled window: no step ran",
        "no FLOP/s or utilisation: the captured ops' kernels went into the graphs, not to "
        "the device",
    )


__all__ = ["capture_evidence", "not_judged_lines", "run"]
