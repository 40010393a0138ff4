"""When the profile itself is the problem: say so instead of misreading it as a bottleneck."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from profsight.analyses.step import intervals
from profsight.analyses.step.context import Context
from profsight.analyses.step.flops import MATMULS
from profsight.analyses.step.startup import compile_events, startup_events
from profsight.analyses.step.unrecorded import unrecorded_device
from profsight.knowledge import advice
from profsight.knowledge.advice import (
    PROFILER_OVERHEAD_PCT,
    STACK_FRAMES_PER_STEP,
    STARTUP_FACTOR,
    STARTUP_MIN_US,
)
from profsight.knowledge.trace_schema import LAUNCH_KINDS, EventKind
from profsight.model.events import MISSING
from profsight.model.findings import Evidence, Finding, Severity, severity_for

#: Ops whose FLOPs need their input shapes (``record_shapes=True``).
SHAPED_OPS = frozenset({*MATMULS, "aten::convolution", "aten::_convolution", "aten::linear"})


def run(ctx: Context) -> list[Finding]:
    findings = []
    codes = {d.code: d for d in ctx.profile.warnings}
    if "truncated" in codes:
        findings.append(
            setup_finding(
                advice.TRUNCATED_TITLE, codes["truncated"].message, advice.TRUNCATED_ADVICE
            )
        )
    unrecorded = unrecorded_device(ctx.profile)
    listed_only = not ctx.profile.events.mask(LAUNCH_KINDS).any()
    if unrecorded:
        findings.append(
            replace(
                setup_finding(
                    advice.NO_DEVICE_ACTIVITY_TITLE,
                    advice.NO_DEVICE_ACTIVITY_EXPLANATION.format(evidence="; ".join(unrecorded))
                    + (advice.NOTHING_LAUNCHED if len(unrecorded) == 1 and listed_only else ""),
                    advice.NO_DEVICE_ACTIVITY_ADVICE,
                ),
                severity=Severity.HIGH,
                evidence=tuple(Evidence("the trace shows a GPU", e) for e in unrecorded),
                blocks=True,
                trigger="a GPU shown (devices, runtime calls or GPU-only ops) with no kernel, "
                "copy or memset recorded",
            )
        )
    findings += _startup(ctx)
    findings += _activity_and_shapes(ctx)
    findings += _profiler_cost(ctx)
    steps = ctx.breakdown.steps
    if ctx.breakdown.windows == "whole trace":
        findings.append(
            setup_finding(
                advice.NO_STEPS_TITLE, advice.NO_STEPS_EXPLANATION, advice.NO_STEPS_ADVICE
            )
        )
    if ctx.breakdown.windows == "profiler steps" and len(steps) < advice.MIN_STEPS:
        findings.append(
            setup_finding(
                advice.FEW_STEPS_TITLE.format(steps=len(steps)),
                advice.FEW_STEPS_EXPLANATION,
                advice.FEW_STEPS_ADVICE,
            )
        )
    if len(steps) >= advice.WARMUP_MIN_STEPS:
        walls = np.array([s.wall_us for s in steps])
        median = float(np.median(walls[1:]))
        if walls[0] > advice.WARMUP_OUTLIER * median:
            findings.append(
                setup_finding(
                    advice.WARMUP_TITLE.format(ratio=walls[0] / median),
                    advice.WARMUP_EXPLANATION,
                    advice.WARMUP_ADVICE,
                )
            )
    if "launched_before_window" in codes:
        findings.append(
            setup_finding(
                advice.LAUNCHED_BEFORE_WINDOW_TITLE,
                codes["launched_before_window"].message,
                codes["launched_before_window"].remedy,
            )
        )
    return findings


def _startup(ctx: Context) -> list[Finding]:
    """One-time start-up inside the profiled steps, at stake by the share it takes (ranked,
    as every finding, by what the replay says removing it saves)."""
    share = ctx.share(ctx.startup_us * ctx.steps)
    if share < PROFILER_OVERHEAD_PCT:
        return []
    events = startup_events(ctx.profile)
    ev = ctx.profile.events
    compiled = compile_events(ctx.profile)
    if len(compiled):
        union = intervals.union(ev.start[compiled], ev.end_of(compiled))
        seconds = intervals.length(*union) / 1e9
        return [_startup_finding(share, advice.COMPILE_STARTUP.format(seconds=seconds))]
    longest = events[np.argsort(-ev.dur[events])][:3] if len(events) else events
    names = [f"{ev.strings[ev.name[e]]} ({ev.dur[e] / 1e6:.1f} ms)" for e in longest.tolist()]
    return [_startup_finding(share, advice.STARTUP_EXPLANATION.format(calls=", ".join(names)))]


def _startup_finding(share: float, explanation: str) -> Finding:
    return replace(
        setup_finding(
            advice.STARTUP_TITLE.format(share=share),
            explanation,
            advice.STARTUP_ADVICE,
        ),
        severity=severity_for(share),
        at_stake_pct=share,
        trigger=f"one-off calls ({STARTUP_FACTOR:g}x their kind's median, >= "
        f"{STARTUP_MIN_US / 1000:g} ms) or torch.compile's compile ranges >= "
        f"{PROFILER_OVERHEAD_PCT:g}% of the window",
    )


def _activity_and_shapes(ctx: Context) -> list[Finding]:
    """Matmuls and convolutions without their shapes."""
    findings = []
    ev = ctx.profile.events
    strings = ev.strings
    shaped_ids = [i for i, text in enumerate(strings) if text in SHAPED_OPS]
    if np.isin(ev.name, shaped_ids).any() and not (ev.shapes != MISSING).any():
        findings.append(
            setup_finding(
                advice.NO_SHAPES_TITLE, advice.NO_SHAPES_EXPLANATION, advice.NO_SHAPES_ADVICE
            )
        )
    return findings


def _profiler_cost(ctx: Context) -> list[Finding]:
    """The profiler's own work inside the steps, and Python stack tracing's share of it."""
    findings: list[Finding] = []
    ev = ctx.profile.events
    steps = ctx.breakdown.steps
    # the profiler's host events inside the steps' host ranges (disjoint), over the steps
    wall_us = ctx.step_us * len(steps)
    if not steps or wall_us <= 0:
        return findings
    lo = np.array([s.host_start * 1000.0 for s in steps])
    hi = lo + np.array([s.host_range_us * 1000.0 for s in steps])
    overhead = np.flatnonzero(ev.mask(frozenset({EventKind.OVERHEAD})))
    overhead_us = float(_inside(ev.start[overhead], ev.end_of(overhead), lo, hi).sum()) / 1000.0
    names = ", ".join(sorted(set(ev.names(overhead))))
    findings += profiler_cost_finding(
        overhead_us * 100.0 / wall_us,
        advice.PROFILER_COST_TITLE,
        advice.PROFILER_COST_EXPLANATION.format(names=names, ms=overhead_us / 1000.0),
    )
    python = np.flatnonzero(ev.mask(frozenset({EventKind.PYTHON})))
    frames = int((_inside(ev.start[python], ev.start[python] + 1, lo, hi) > 0).sum())
    if frames / len(steps) >= STACK_FRAMES_PER_STEP:
        findings.append(
            setup_finding(
                advice.STACK_TRACING_TITLE,
                advice.STACK_TRACING_EXPLANATION.format(frames=frames / len(steps)),
                advice.STACK_TRACING_ADVICE,
            )
        )
    return findings


def _inside(
    start: np.ndarray[Any, Any],
    end: np.ndarray[Any, Any],
    lo: np.ndarray[Any, Any],
    hi: np.ndarray[Any, Any],
) -> np.ndarray[Any, Any]:
    """Nanoseconds of each interval inside the step window it starts in (sorted, disjoint
    windows [lo, hi)); 0 for one that starts in none."""
    k = np.searchsorted(lo, start, side="right") - 1
    at = np.maximum(k, 0)
    overlap = np.minimum(end, hi[at]) - np.maximum(start, lo[at])
    inside: np.ndarray[Any, Any] = np.where(k >= 0, np.maximum(overlap, 0), 0)
    return inside


def profiler_cost_finding(share: float, title: str, explanation: str) -> list[Finding]:
    """The profiler's own work, `share` % of the steps (a trace) or of the self CPU time (a
    table: `title` says which), past `PROFILER_OVERHEAD_PCT`."""
    if share < PROFILER_OVERHEAD_PCT:
        return []
    return [setup_finding(title.format(share=share), explanation, advice.PROFILER_COST_ADVICE)]


def setup_finding(title: str, explanation: str, recommendation: str) -> Finding:
    """A finding about the profile itself (category ``profiler_setup``)."""
    return Finding(
        category="profiler_setup",
        severity=Severity.LOW,
        title=title,
        evidence=(),
        explanation=explanation,
        recommendation=recommendation,
        at_stake_pct=0.0,
        trigger="profile quality check",
    )
