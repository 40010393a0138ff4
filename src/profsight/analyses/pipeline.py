"""Analyses: each turns a profile into plain data (breakdowns, findings), never text.

`diagnose` runs every analysis of `ANALYSES` on a trace and ranks what they find by the
share of step time at stake.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
from msgspec.structs import replace

from profsight.analyses.context import Context, context
from profsight.analyses.findings import (
    capture,
    communication,
    compute,
    device,
    held_back,
    host,
    memory,
    model_habits,
    modules,
    setup,
    sync_copies,
)
from profsight.analyses.findings.fragment import fragment_findings
from profsight.analyses.findings.from_table import breakdown_of, printed_findings
from profsight.analyses.findings.memory import copy_churn
from profsight.analyses.findings.setup import unrecorded_findings
from profsight.analyses.findings.table_python import (
    hot_function_findings,
    hotspot_notes,
    with_metric_rows,
    with_python_hotspots,
)
from profsight.analyses.findings.table_setup import printed_facts, printed_setup
from profsight.analyses.physics import physics_breaks
from profsight.analyses.replay.savings import with_savings
from profsight.analyses.roofline import Roofline
from profsight.analyses.step.printed_parts import PrintedStep, device_bound
from profsight.analyses.step.table_device import printed_device
from profsight.analyses.step.table_step import printed_step
from profsight.analyses.step.table_unrecorded import unrecorded_device_rows
from profsight.analyses.verdict import Verdict, trace_facts, verdict
from profsight.knowledge.advice import (
    AUDIT_CAVEAT,
    COMPUTE_PREFIX,
    INCLUSIVE_DEVICE,
    LEAF_DEVICE,
    READABLE_TABLE_PCT,
    TOO_LITTLE,
    TOO_LITTLE_TRACE,
)
from profsight.knowledge.precedence import HOST_CAUSES
from profsight.knowledge.rows import STEP_PREFIXES
from profsight.malloc_trim import release_grown_memory
from profsight.model.collectives_seen import Communication
from profsight.model.diagnostics import Diagnostic, Level
from profsight.model.findings import PER_SAMPLE, UPPER_BOUND, Finding, explains, ranked, saving
from profsight.model.profile import Profile
from profsight.model.step_windows import Breakdown
from profsight.model.text_profile import PrintedRun

ANALYSES: tuple[Callable[[Context], list[Finding]], ...] = (
    host.run,
    modules.run,
    compute.run,
    model_habits.run,
    device.run,
    sync_copies.run,
    memory.run,
    held_back.run,
    communication.run,
    setup.run,
    capture.run,
)


class Diagnosis(msgspec.Struct, frozen=True):
    breakdown: Breakdown
    findings: tuple[Finding, ...]
    verdict: Verdict | None
    communication: Communication | None = None
    limits: tuple[str, ...] = ()
    """What the input could not tell (a printed table's step model says it)."""
    roofline: Roofline | None = None
    """Each op and shape against the device's ceilings (traces)."""
    diagnostics: tuple[Diagnostic, ...] = ()
    """Figures that break physics (`analyses.physics`): shown, never clamped away."""
    flops_per_step: float | None = None
    """The model's FLOPs per step, where every op that computes has its shapes (the
    workload's signature: two recordings of one run count the same)."""


def diagnose(profile: Profile) -> Diagnosis:
    ctx = context(profile)
    if not ctx.breakdown.steps:
        return Diagnosis(ctx.breakdown, (), None, ctx.comms, roofline=ctx.roofline)
    if not len(ctx.breakdown.row_events) and not ctx.breakdown.has_device:
        # steps that hold no op, range or device work (a window the schedule left empty)
        return Diagnosis(
            ctx.breakdown, (), None, ctx.comms, limits=(TOO_LITTLE_TRACE,), roofline=ctx.roofline
        )
    findings = host.without_explained(_run_all(ctx))
    findings = with_savings(ctx, findings)
    result = _audited(verdict(trace_facts(ctx), findings), ctx.profile.audited)
    findings += model_habits.complexity(result.judgement, result.summary, result.evidence)
    found = tuple(ranked(findings))
    return Diagnosis(
        ctx.breakdown,
        found,
        result,
        ctx.comms,
        roofline=ctx.roofline,
        diagnostics=physics_breaks(ctx.breakdown, found, result, ctx.roofline),
        flops_per_step=ctx.flops.total / ctx.steps
        if ctx.flops.complete and ctx.flops.total > 0
        else None,
    )


def _audited(result: Verdict, audited: list[Diagnostic]) -> Verdict:
    """The verdict with what the trace's audit found, where it found a problem."""
    problems = [d.code.replace("_", " ") for d in audited if d.level is Level.WARNING]
    if not problems:
        return result
    caveat = AUDIT_CAVEAT.format(problems=", ".join(problems))
    return replace(result, evidence=(*result.evidence, caveat))


def _run_all(ctx: Context) -> list[Finding]:
    """Every analysis's findings; the memory each freed goes back to the system before the
    next (`heap`)."""
    release_grown_memory()
    found: list[Finding] = []
    for analysis in ANALYSES:
        found += analysis(ctx)
        release_grown_memory()
    return found


def _too_little(step: PrintedStep, run: PrintedRun, device: bool) -> bool:
    """A fragment without steps or totals, or rows that hold too little of the self time and
    name no phase (device figures, when the table has them, still tell something)."""
    if not run.whole and step.steps == 1:
        return True
    if not any(not r.name.startswith(STEP_PREFIXES) for r in run.table.rows):
        return True  # the step's own row and nothing of what ran in it
    named = [p for p in step.parts if p.rows]
    return step.coverage_pct < READABLE_TABLE_PCT and not named and not device


def _at_most(f: Finding) -> Finding:
    """A finding of a GPU run read on host times alone (a Lightning report): whether the
    device worked meanwhile is unknown, so what removing a stretch of host time saves is at
    most its share, for the input's wait as for a sync's (issue 36: one currency)."""
    if f.category not in HOST_CAUSES or f.basis == PER_SAMPLE or f.gain_pct is None:
        return f
    return replace(f, basis=UPPER_BOUND)


def _table_shared(a: Finding, b: Finding) -> float | None:
    if PER_SAMPLE in (a.basis, b.basis):
        return None
    return min(saving(a), saving(b))


def diagnose_table(run: PrintedRun) -> Diagnosis:
    """The same diagnosis from a printed table's rows (or a Lightning report's actions): the
    step they allow (`printed_step`), the trace's rules on it, and the verdict in the
    trace's words."""
    table = with_metric_rows(run.table, run.profiles)
    step = printed_step(table, exclusive=run.exclusive)
    device = None
    if step is not None:
        device = printed_device(table, step, run.inclusive_device)
        if device is not None and device.work_us > step.step_us:
            step = device_bound(step, device.work_us)  # the device's clock bounds it
            device = printed_device(table, step, run.inclusive_device)
    if step is None or _too_little(step, run, device is not None):
        # no step to judge: what the rows' printed shares still carry, else "not judged"
        found = tuple(ranked(fragment_findings(table, run.inclusive_device)))
        return Diagnosis(Breakdown((), "", "none"), found, None, limits=(TOO_LITTLE,))
    limits: tuple[str, ...] = ()
    if run.inclusive_device:
        limits = (LEAF_DEVICE if device is not None else INCLUSIVE_DEVICE,)
    findings = printed_findings(step, device, table)
    findings += copy_churn(table.rows, step.steps, step.share, device is not None)
    findings = host.without_explained(findings)
    findings = with_python_hotspots(findings, step, run.profiles)
    findings += hot_function_findings(step, run.profiles)
    findings += sync_copies.hook_waits(step, run.profiles)
    findings += printed_setup(step, table, run.inclusive_device)
    facts = printed_facts(step, device, table, run.flops, run.inclusive_device)
    unrecorded = unrecorded_device_rows(table)
    if unrecorded:
        facts = replace(facts, unrecorded=unrecorded)
        # a GPU run's compute is its kernels: the host's times of its ops are not it
        findings = [f for f in findings if not f.category.startswith(COMPUTE_PREFIX)]
        findings += unrecorded_findings(unrecorded, where="table")
    if facts.host_only and facts.device_busy_pct is None:
        findings = [_at_most(f) for f in findings]
    # a table cannot tell how far two host-side fixes remove the same time: the smaller
    # saving is taken as shared (the host's findings of one step explain its idle device),
    # but not with a saving per sample (a larger batch), which is no time of the same step
    findings = explains(findings, _table_shared)
    result = verdict(facts, findings)
    findings += model_habits.complexity(result.judgement, result.summary, result.evidence)
    breakdown, found = breakdown_of(step, device), tuple(ranked(findings))
    return Diagnosis(
        breakdown,
        found,
        result,
        limits=step.limits + limits + hotspot_notes(run.profiles),
        diagnostics=physics_breaks(breakdown, found, result, None),
    )
