"""Findings from the step breakdown: a phase past its share of the step (`PHASE_RULES`),
and per-step fixed cost that a small batch cannot amortise."""

from __future__ import annotations

from profsight.analyses.context import Context
from profsight.findings import Evidence, Finding, Severity, severity_for
from profsight.knowledge.advice import (
    MEASURED,
    PER_STEP_ADVICE,
    PER_STEP_OVERHEAD_PCT,
    PHASE_RULES,
    SHORT_STEP_US,
)
from profsight.knowledge.phases import PHASE_LABELS, Phase
from profsight.renderers.units import short_time


def run(ctx: Context) -> list[Finding]:
    findings = []
    if not ctx.breakdown.steps:
        return []
    for rule in PHASE_RULES:
        share = ctx.phase_share(rule.phase.value)
        if share < rule.threshold_pct:
            continue
        us = ctx.average.host_us.get(rule.phase.value, 0.0)
        findings.append(
            Finding(
                category=rule.category,
                severity=severity_for(share),
                title=f"{rule.title}: {share:.0f}% of the step",
                evidence=(
                    Evidence(PHASE_LABELS[rule.phase], f"{short_time(us)} per step ({share:.1f}%)"),
                    Evidence("step time", short_time(ctx.step_us)),
                ),
                explanation=rule.explanation,
                recommendation=rule.recommendation,
                at_stake_pct=share,
                gain_pct=share * rule.recoverable,
                trigger=f"{rule.phase.value} >= {rule.threshold_pct:g}% of the step "
                f"({rule.source})",
            )
        )
    findings.extend(_per_step_overhead(ctx))
    return findings


def _per_step_overhead(ctx: Context) -> list[Finding]:
    fixed = [Phase.FRAMEWORK, Phase.OTHER, Phase.CALLBACKS_LOGGING, Phase.ZERO_GRAD]
    share = sum(ctx.phase_share(p.value) for p in fixed)
    if share < PER_STEP_OVERHEAD_PCT or ctx.step_us >= SHORT_STEP_US:
        return []
    parts = [
        Evidence(PHASE_LABELS[p], f"{ctx.phase_share(p.value):.1f}% of the step")
        for p in fixed
        if ctx.phase_share(p.value) >= 1.0
    ]
    return [
        Finding(
            category="per_step_overhead",
            severity=severity_for(share) if share < 50 else Severity.HIGH,
            title=f"Each step is short ({short_time(ctx.step_us)}) and {share:.0f}% of it is "
            "fixed cost",
            evidence=(Evidence("step time", short_time(ctx.step_us)), *parts),
            explanation="Every step pays the same fixed cost (the training loop, hooks, Python "
            "between ops, zeroing gradients) whatever the batch size; with little work per "
            "step that cost dominates.",
            recommendation=PER_STEP_ADVICE,
            at_stake_pct=share,
            gain_pct=share * 0.5,
            trigger=f"fixed cost >= {PER_STEP_OVERHEAD_PCT:g}% of a step shorter than "
            f"{short_time(SHORT_STEP_US)} ({MEASURED})",
        )
    ]
