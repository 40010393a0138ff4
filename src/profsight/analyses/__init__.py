"""Analyses: each turns a profile into plain data (breakdowns, findings), never text.

`diagnose` runs every analysis of `ANALYSES` on a trace and ranks what they find by the
share of step time at stake.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from profsight.analyses import comm_findings, compute, device, model, modules, phases, setup
from profsight.analyses.breakdown import Breakdown
from profsight.analyses.comms import Communication
from profsight.analyses.context import Context, context
from profsight.analyses.verdict import Verdict, verdict
from profsight.findings import Finding, ranked
from profsight.model.profile import Profile

ANALYSES: tuple[Callable[[Context], list[Finding]], ...] = (
    phases.run,
    modules.run,
    compute.run,
    model.run,
    device.run,
    comm_findings.run,
    setup.run,
)


@dataclass(frozen=True)
class Diagnosis:
    breakdown: Breakdown
    findings: tuple[Finding, ...]
    verdict: Verdict | None
    communication: Communication | None = None


def diagnose(profile: Profile) -> Diagnosis:
    ctx = context(profile)
    if not ctx.breakdown.steps:
        return Diagnosis(ctx.breakdown, (), None, ctx.comms)
    findings = [f for analysis in ANALYSES for f in analysis(ctx)]
    result = verdict(ctx, findings)
    findings += model.complexity(ctx, result.judgement, result.summary, result.evidence)
    return Diagnosis(ctx.breakdown, tuple(ranked(findings)), result, ctx.comms)
