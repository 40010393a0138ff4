"""Findings from the step breakdown: a phase past its share of the step (`PHASE_RULES`),
and per-step fixed cost that a small batch cannot amortise."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from profsight.analyses.context import Context
from profsight.analyses.lead_in import lead_in_spans
from profsight.analyses.step import intervals
from profsight.knowledge.advice import (
    BATCH_SCALE,
    EXPLAINED_BY,
    LEAD_IN_ADVICE,
    LEAD_IN_EXPLANATION,
    LEAD_IN_INPUT_FRACTION,
    LEAD_IN_INPUT_TITLE,
    LEAD_IN_LABEL,
    LEAD_IN_NO_OP,
    LEAD_IN_PCT,
    LEAD_IN_TITLE,
    LEAD_IN_UNNAMED_FRACTION,
    PER_STEP_ADVICE,
    PER_STEP_EXPLANATION,
    PER_STEP_HIGH_PCT,
    PER_STEP_OVERHEAD_PCT,
    PHASE_RULES,
    SHORT_STEP_OPTIMIZER,
    SHORT_STEP_US,
)
from profsight.knowledge.catalogue import condition
from profsight.knowledge.phases import PHASE_LABELS, Phase
from profsight.knowledge.rows import INPUT_MAKING_OPS, STEP_PREFIXES
from profsight.knowledge.trace_schema import HOST_KINDS, PROGRAM_KINDS
from profsight.model.findings import PER_SAMPLE, Evidence, Finding, Severity, severity_for
from profsight.model.step_windows import Breakdown
from profsight.units import short_time

#: The model's own work in a step; the rest is the fixed cost a larger batch amortises.
_MODEL_WORK = (Phase.FORWARD, Phase.BACKWARD, Phase.OPTIMIZER)


def run(ctx: Context) -> list[Finding]:
    return [*from_breakdown(ctx.breakdown), *_lead_in(ctx)]


def _lead_in(ctx: Context) -> list[Finding]:
    """A GPU step whose host works long before it launches the step's first device work
    (preprocessing in the loop: decoding, resizing, tokenising): the device idles meanwhile
    unless earlier work still runs. Named by the ops and ranges in that stretch, by self
    time; the replay prices taking it out of the step."""
    leads = lead_in_spans(ctx)
    if leads is None or not ctx.profile.events.mask(PROGRAM_KINDS).any():
        return []  # (without CPU activity the host's work is unrecorded: the idle GPU says it)
    lo, hi = leads
    lead_us = float((hi - lo).sum()) / 1000.0 / ctx.steps
    share = ctx.share(lead_us * ctx.steps)
    at_stake = ctx.host_at_stake(share)
    if at_stake < LEAD_IN_PCT:
        return []
    ev = ctx.profile.events
    own = ctx.profile.attribution.cpu_self
    inside = np.flatnonzero(
        np.isin(ev.kind, list(HOST_KINDS)) & intervals.overlaps(ev.start, ev.start + 1, (lo, hi))
    )
    step_ids = {i for i, s in enumerate(ev.strings) if s.startswith(STEP_PREFIXES)}
    by_name: dict[int, float] = {}
    for name, us in zip(ev.name[inside].tolist(), own[inside].tolist(), strict=True):
        if name not in step_ids:
            by_name[name] = by_name.get(name, 0.0) + us
    named = sorted(((us, n) for n, us in by_name.items() if us > 0), reverse=True)
    unnamed = max(lead_us * ctx.steps - sum(us for us, _ in named), 0.0)
    evidence = [
        Evidence(LEAD_IN_LABEL, f"{short_time(lead_us)} per step ({share:.0f}% of the step)"),
        *(
            Evidence(ev.strings[n], f"{short_time(us / ctx.steps)} per step", (ev.strings[n],))
            for us, n in named[:_NAMED_HOST]
        ),
    ]
    if unnamed >= lead_us * ctx.steps * LEAD_IN_UNNAMED_FRACTION:
        evidence.append(Evidence(LEAD_IN_NO_OP, f"{short_time(unnamed / ctx.steps)} per step"))
    # the step building its input on the host (tensors made in the loop) is input
    # preparation: the device waits on the input, whoever makes it
    making = sum(us for us, n in named if INPUT_MAKING_OPS.match(ev.strings[n]))
    builds_input = making >= LEAD_IN_INPUT_FRACTION * lead_us * ctx.steps
    return [
        Finding(
            category="data_loading" if builds_input else "host_lead_in",
            severity=severity_for(at_stake),
            title=(LEAD_IN_INPUT_TITLE if builds_input else LEAD_IN_TITLE).format(
                lead=short_time(lead_us), share=share
            ),
            evidence=tuple(evidence),
            explanation=LEAD_IN_EXPLANATION,
            recommendation=LEAD_IN_ADVICE,
            at_stake_pct=at_stake,
            trigger=condition("data_loading" if builds_input else "host_lead_in", "lead_in"),
        )
    ]


#: The ranges and ops named as the lead-in's, at most.
_NAMED_HOST = 4


def from_breakdown(breakdown: Breakdown, per_step: bool | None = None) -> list[Finding]:
    """Phase findings of any breakdown: a trace's, or one rebuilt from a table's rows.
    `per_step`: whether the breakdown's steps are real training steps, so that fixed
    per-step cost can be told from the rest (default: a trace's ProfilerStep windows)."""
    if not breakdown.steps:
        return []
    avg = breakdown.average()

    def share_of(phase: str) -> float:
        return avg.host_us.get(phase, 0.0) * 100.0 / avg.wall_us if avg.wall_us else 0.0

    findings = []
    fired: set[Phase] = set()
    for rule in PHASE_RULES:
        share = share_of(rule.phase.value)
        if share < rule.threshold_pct:
            continue
        fired.add(rule.phase)
        us = avg.host_us.get(rule.phase.value, 0.0)
        findings.append(
            Finding(
                category=rule.category,
                severity=severity_for(share),
                title=f"{rule.title}: {share:.0f}% of the step",
                evidence=(
                    Evidence(PHASE_LABELS[rule.phase], f"{short_time(us)} per step ({share:.1f}%)"),
                    Evidence("step time", short_time(avg.wall_us)),
                ),
                explanation=rule.explanation
                + (
                    SHORT_STEP_OPTIMIZER if _short_update(rule.phase, avg.wall_us, per_step) else ""
                ),
                recommendation=rule.recommendation,
                at_stake_pct=share,
                gain_pct=share,  # the fix takes the phase out of the step (a trace replays it)
                trigger=condition(rule.category, rule.phase.value),
            )
        )
    if per_step is None:
        per_step = breakdown.windows == "profiler steps"
    if not per_step or avg.wall_us <= 0:
        return findings  # without real steps (a trace without ProfilerStep, a table without
        # a step row), per-step cost cannot be told from the rest
    findings.extend(_per_step_overhead(avg.wall_us, share_of, fired))
    return findings


def _short_update(phase: Phase, step_us: float, per_step: bool | None) -> bool:
    return phase is Phase.OPTIMIZER and per_step is not False and step_us < SHORT_STEP_US


def _per_step_overhead(
    step_us: float, share_of: Callable[[str], float], fired: set[Phase]
) -> list[Finding]:
    """A short step whose time is mostly not the model's math (forward, backward, the
    optimizer), spread over many small costs: when one phase with a finding of its own takes
    most of it (a heavy callback, slow data), that finding says it, not this one."""
    model = sum(share_of(p.value) for p in _MODEL_WORK)
    # waiting for collectives is not a fixed cost (the communication finding covers it), nor
    # is the device's lag behind the host (the step is then the device's)
    share = 100.0 - model - share_of(Phase.COMMUNICATION.value) - share_of(Phase.DEVICE_LAG.value)
    dominant = max((share_of(p.value) for p in fired if p not in _MODEL_WORK), default=0.0)
    if share < PER_STEP_OVERHEAD_PCT or step_us >= SHORT_STEP_US or dominant >= share / 2:
        return []
    fixed = [Phase.FRAMEWORK, Phase.OTHER, Phase.CALLBACKS_LOGGING, Phase.DATA_LOADING]
    parts = [
        Evidence(PHASE_LABELS[p], f"{share_of(p.value):.1f}% of the step")
        for p in fixed
        if share_of(p.value) >= 1.0
    ]
    return [
        Finding(
            category="per_step_overhead",
            severity=severity_for(share) if share < PER_STEP_HIGH_PCT else Severity.HIGH,
            title=f"Each step is short ({short_time(step_us)}) and {share:.0f}% of it is "
            "fixed cost",
            evidence=(
                Evidence("step time", short_time(step_us)),
                Evidence("model work (forward, backward, optimizer)", f"{model:.1f}% of the step"),
                *parts,
            ),
            explanation=PER_STEP_EXPLANATION,
            recommendation=PER_STEP_ADVICE,
            at_stake_pct=share,
            # per sample, BATCH_SCALE times the batch shares the fixed cost (a trace replays it)
            gain_pct=share * (1 - 1 / BATCH_SCALE),
            basis=PER_SAMPLE,
            trigger=condition("per_step_overhead", "short_step"),
        )
    ]


def without_explained(findings: list[Finding]) -> list[Finding]:
    """Drop a finding when another one names its cause and takes at least half of its share
    (`knowledge.advice.EXPLAINED_BY`): the per-step overhead that is a module's Python loop,
    the module's own time that is a copy it makes."""
    kept = list(findings)
    for effect, causes in EXPLAINED_BY.items():
        own = max((f.at_stake_pct for f in kept if f.category in causes), default=0.0)
        kept = [f for f in kept if f.category != effect or own < f.at_stake_pct / 2]
    return kept
