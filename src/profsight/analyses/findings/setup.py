"""When the profile itself is the problem: say so instead of misreading it as a bottleneck."""

from __future__ import annotations

from typing import Any

import numpy as np
from msgspec.structs import replace

from profsight.analyses.context import Context
from profsight.analyses.measured_flops import (
    MeasuredFlops,
    measured_figures,
    measured_flops,
    top_kernels,
)
from profsight.analyses.step import intervals
from profsight.analyses.step.flops import MATMULS
from profsight.analyses.step.startup import compile_events, startup_events
from profsight.analyses.step.unrecorded import unrecorded_device
from profsight.knowledge import advice
from profsight.knowledge.advice import (
    PROFILER_OVERHEAD_PCT,
    STACK_FRAMES_PER_STEP,
)
from profsight.knowledge.catalogue import condition
from profsight.knowledge.trace_schema import (
    LAUNCH_KINDS,
    PROFILER_STEP_PREFIX,
    PROGRAM_KINDS,
    EventKind,
)
from profsight.model.events import MISSING
from profsight.model.findings import Evidence, Finding, Severity, severity_for
from profsight.stats import median as median_of

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
    measured = measured_flops(ctx.profile)
    if measured is not None:
        findings.append(range_profiled_finding(measured))
    else:
        unrecorded = unrecorded_device(ctx.profile)
        listed_only = not ctx.profile.events.mask(LAUNCH_KINDS).any()
        findings += unrecorded_findings(unrecorded, listed_only and len(unrecorded) == 1)
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
    findings += _first_step(ctx)
    if "launched_before_window" in codes:
        findings.append(
            setup_finding(
                advice.LAUNCHED_BEFORE_WINDOW_TITLE,
                codes["launched_before_window"].message,
                codes["launched_before_window"].remedy,
            )
        )
    return findings


def steps_before(ctx: Context) -> int | None:
    """How many steps ran before the first recorded one, read from its ``ProfilerStep#N``
    number (`advice.WARMED_UP_STEPS` says what torch's schedule makes of it); None when the
    trace has no numbered profiler steps."""
    if ctx.breakdown.windows != "profiler steps" or not ctx.breakdown.steps:
        return None
    number = ctx.breakdown.steps[0].name.removeprefix(PROFILER_STEP_PREFIX)
    return int(number) if number.isdigit() else None


def _first_step(ctx: Context) -> list[Finding]:
    """A first profiled step slower than the others: a warm-up is advised only when the
    trace shows none ran (the first recorded step is #0 or #1); after a warm-up the outlier
    is something else, said as such."""
    steps = ctx.breakdown.steps
    if len(steps) < advice.WARMUP_MIN_STEPS:
        return []
    walls = np.array([s.wall_us for s in steps])
    median = float(median_of(walls[1:]))
    if walls[0] <= advice.WARMUP_OUTLIER * median:
        return []
    ratio = walls[0] / median
    before = steps_before(ctx)
    if before is not None and before >= advice.WARMED_UP_STEPS:
        return [
            setup_finding(
                advice.WARMED_UP_TITLE.format(ratio=ratio, before=before),
                advice.WARMED_UP_EXPLANATION.format(before=before),
                advice.WARMED_UP_ADVICE,
            )
        ]
    return [
        setup_finding(
            advice.WARMUP_TITLE.format(ratio=ratio),
            advice.WARMUP_EXPLANATION,
            advice.WARMUP_AFTER_ONE_ADVICE if before == 1 else advice.WARMUP_ADVICE,
        )
    ]


def _startup(ctx: Context) -> list[Finding]:
    """One-time start-up inside the profiled steps. Where it dominates the window
    (`Context.startup_dominates`) the profile is not judged and it comes first; elsewhere it
    is a one-time cost, no part of the steady step its fix would shorten, and ranks after
    what is."""
    share = ctx.startup_pct
    if share < PROFILER_OVERHEAD_PCT:
        return []
    events = startup_events(ctx.profile)
    ev = ctx.profile.events
    compiled = compile_events(ctx.profile)
    if len(compiled):
        union = intervals.union(ev.start[compiled], ev.end_of(compiled))
        seconds = intervals.length(*union) / 1e9
        explanation = advice.COMPILE_STARTUP.format(seconds=seconds)
    else:
        longest = events[np.argsort(-ev.dur[events])][:3] if len(events) else events
        names = [f"{ev.strings[ev.name[e]]} ({ev.dur[e] / 1e6:.1f} ms)" for e in longest.tolist()]
        explanation = advice.STARTUP_EXPLANATION.format(calls=", ".join(names))
    return [_startup_finding(share, explanation, steps_before(ctx), ctx.startup_dominates)]


def _startup_finding(
    share: float, explanation: str, before: int | None = None, dominant: bool = False
) -> Finding:
    """`before`: the steps that ran before the recorded ones (`steps_before`): a schedule
    that warmed up is not told to add a warm-up. `dominant`: start-up fills the window
    (`analyses.step.startup.dominates`)."""
    warmed_up = before is not None and before >= advice.WARMED_UP_STEPS
    return replace(
        setup_finding(
            (advice.STARTUP_DOMINANT_TITLE if dominant else advice.STARTUP_TITLE).format(
                share=share
            ),
            explanation,
            advice.STARTUP_AFTER_WARMUP_ADVICE.format(before=before)
            if warmed_up
            else advice.STARTUP_ADVICE,
        ),
        severity=Severity.HIGH if dominant else severity_for(share),
        at_stake_pct=share,
        blocks=dominant,
        evidence=(
            Evidence("one-time start-up", f"{share:.0f}% of the profiled window"),
            Evidence(
                "dominates the window" if dominant else "steady step",
                f"from {advice.STARTUP_DOMINANT_PCT:g}% of the window"
                if dominant
                else advice.STARTUP_ONE_TIME,
            ),
        ),
        trigger=condition("profiler_setup", "startup"),
    )


def shapes_recorded(ctx: Context) -> bool:
    """Whether the trace was recorded with ``record_shapes=True``: its header says so
    (Kineto writes ``"record_shapes": 1``), or an op carries its ``Input Dims``."""
    flag = ctx.profile.meta.flag("record_shapes")
    return flag if flag is not None else bool((ctx.profile.events.shapes != MISSING).any())


def has_compiled_regions(ctx: Context) -> bool:
    """Whether torch.compile's code ran in the trace (`advice.COMPILED_REGION_ROWS`)."""
    ev = ctx.profile.events
    ids = [i for i, text in enumerate(ev.strings) if advice.COMPILED_REGION_ROWS.match(text)]
    return bool(ids) and bool(np.isin(ev.name, ids).any())


def flops_unknown(ctx: Context, uncounted: int) -> str:
    """Why FLOPs are unknown, for the verdict's evidence: record_shapes is asked for only
    of a trace recorded without it; with it, the shapes compiled regions hide are said."""
    if shapes_recorded(ctx) and has_compiled_regions(ctx):
        return advice.COMPILED_FLOPS_UNKNOWN
    if uncounted:
        return advice.FLOPS_UNCOUNTED.format(uncounted=uncounted)
    return advice.FLOPS_UNKNOWN


def _activity_and_shapes(ctx: Context) -> list[Finding]:
    """A host recorded without CPU activity (its runtime calls only); matmuls and
    convolutions without their shapes, in a trace recorded without them."""
    findings = []
    ev = ctx.profile.events
    if ev.mask(LAUNCH_KINDS).any() and not ev.mask(PROGRAM_KINDS).any():
        findings.append(
            setup_finding(
                advice.NO_CPU_ACTIVITY_TITLE,
                advice.NO_CPU_ACTIVITY_EXPLANATION,
                advice.NO_CPU_ACTIVITY_ADVICE,
            )
        )
    strings = ev.strings
    shaped_ids = [i for i, text in enumerate(strings) if text in SHAPED_OPS]
    if np.isin(ev.name, shaped_ids).any() and not shapes_recorded(ctx):
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
        trigger=condition("profiler_setup", "check"),
    )


def unrecorded_findings(
    evidence: tuple[str, ...], nothing_launched: bool = False, where: str = "trace"
) -> list[Finding]:
    """A GPU run whose device activity was not recorded (`evidence`: what shows the GPU, in
    a trace or a table's rows); `nothing_launched`: only the listed devices show it."""
    if not evidence:
        return []
    return [
        replace(
            setup_finding(
                advice.NO_DEVICE_ACTIVITY_TITLE,
                advice.NO_DEVICE_ACTIVITY_EXPLANATION.format(
                    where=where, evidence="; ".join(evidence)
                )
                + (advice.NOTHING_LAUNCHED if nothing_launched else ""),
                advice.NO_DEVICE_ACTIVITY_ADVICE,
            ),
            severity=Severity.HIGH,
            evidence=tuple(Evidence(f"the {where} shows a GPU", e) for e in evidence),
            blocks=True,
            trigger=condition("profiler_setup", "unrecorded"),
        )
    ]


def range_profiled_finding(measured: MeasuredFlops) -> Finding:
    """A trace whose kernels CUPTI's range profiler measured: their counters are read, their
    run times need a second profile (not more device activity: it was on)."""
    return replace(
        setup_finding(
            advice.RANGE_PROFILED_TITLE,
            advice.RANGE_PROFILED_EXPLANATION.format(kernels=measured.kernels),
            advice.RANGE_PROFILED_ADVICE,
        ),
        severity=Severity.HIGH,
        evidence=(
            Evidence("measured by the range profiler", f"{measured.kernels:,} kernels"),
            Evidence("measured FLOPs", measured_figures(measured)),
            *(Evidence(name, value) for name, value in top_kernels(measured)),
        ),
        blocks=True,
        trigger=condition("profiler_setup", "unrecorded"),
    )
