"""Findings from a printed table: each family's rules, on the step model its rows allow.

The rules are the trace's (`analyses.findings`, one module per family): this module fills
their figures from `PrintedStep` and `PrintedDevice`, which rebuild the step from the
rows. Each finding says what the table could not show (`Finding.confidence`): a table has
no timeline, so whether host work overlapped device work, and one step from another, stay
unknown.
"""

from __future__ import annotations

from msgspec.structs import replace

from profsight.analyses.findings import communication, compute, modules, sync_copies
from profsight.analyses.findings import device as idle
from profsight.analyses.findings.host import from_breakdown
from profsight.analyses.findings.memory import allocation_finding
from profsight.analyses.step.printed_parts import PrintedStep
from profsight.analyses.step.table_comms import printed_comms
from profsight.analyses.step.table_device import BLOCKING_COPY, SYNC, PrintedDevice
from profsight.knowledge import advice
from profsight.knowledge.advice import NO_TIMELINE
from profsight.knowledge.ops import lookup_op
from profsight.knowledge.phases import Phase
from profsight.model.findings import Evidence, Finding
from profsight.model.step_windows import Breakdown, StepBreakdown
from profsight.model.table import ProfilerTable

#: Breakdown windows label of a table's step model.
TABLE_WINDOWS = "table rows (totals per step)"


def breakdown_of(step: PrintedStep, device: PrintedDevice | None) -> Breakdown:
    idle = idle_causes(step, device)
    lag = step.phases.get(Phase.DEVICE_LAG.value, 0.0)
    average = StepBreakdown(
        "average",
        0.0,
        step.step_us,
        step.phases,
        None if device is None else device.work_us if device.busy_pct < 100 else step.step_us,
        {k: v * step.step_us / 100 for k, v in idle.items()},
        host_wall_us=step.step_us - lag if lag else None,  # the device ran behind the host
    )
    return Breakdown(
        (average,), "", TABLE_WINDOWS, scope=f"{step.steps} step(s), from the table's totals"
    )


def idle_causes(step: PrintedStep, device: PrintedDevice | None) -> dict[str, float]:
    """% of the step the device can have idled, by what the host did: waiting in syncs and
    blocking copies, loading data, anything else. From totals: each cause is capped by the
    idle time left after the causes before it."""
    if device is None:
        return {}
    idle = device.idle_pct
    sync = min(step.share(device.waits.get(SYNC, 0.0) + device.waits.get(BLOCKING_COPY, 0.0)), idle)
    data = min(step.phase_share(Phase.DATA_LOADING), idle - sync)
    return {"sync": sync, "input": data, "host": max(idle - sync - data, 0.0)}


def printed_findings(
    step: PrintedStep, device: PrintedDevice | None, table: ProfilerTable
) -> list[Finding]:
    comms = printed_comms(table, step, device)
    findings = _phases(step, device)
    findings += modules.from_table(step, device, table)
    findings += compute.from_table(step, device)
    findings += communication.from_table(step, comms)
    if device is not None:
        specific = communication.framework_syncs(sync_copies.from_table(step, device), comms)
        explained = sum(
            f.at_stake_pct for f in [*specific, *findings] if f.category in _IDLE_CAUSES
        )
        findings += specific + idle.from_table(step, device, explained)
    findings += _allocations(step, table)
    return findings


#: Findings whose time is device idle time (the GPU waits while the host does it); copies
#: are device work (busy), so they explain none of it.
_IDLE_CAUSES = frozenset({"host_device_sync", "data_loading"})


def _phases(step: PrintedStep, device: PrintedDevice | None) -> list[Finding]:
    real_steps = not any("whole window" in b for b in (step.basis,))
    found = from_breakdown(breakdown_of(step, device), per_step=real_steps and step.steps > 1)
    out = []
    for f in found:
        rule = next((r for r in advice.PHASE_RULES if f.title.startswith(r.title)), None)
        part = step.merged(rule.phase) if rule is not None else None
        extra = (
            (Evidence("from the rows", part.how, part.rows[:6]),)
            if part is not None and part.rows
            else ()
        )
        note = (
            f"{NO_TIMELINE}: it gives each phase's total time per step, not whether it "
            "overlapped device work, nor how it varied from step to step"
        )
        out.append(replace(f, evidence=(*f.evidence, *extra), confidence=note))
    return out


# ------------------------------------------------------------------------ memory


def _allocations(step: PrintedStep, table: ProfilerTable) -> list[Finding]:
    """Allocation churn: calls of the allocating ops per step (each allocates once)."""
    allocating = [r for r in table.rows if _is_allocating(r.name) and r.calls]
    per_step = sum(r.calls for r in allocating) / step.steps
    evidence = Evidence(
        "allocating op calls", f"{per_step:.0f} per step", tuple(r.name for r in allocating)
    )
    return allocation_finding(
        per_step,
        evidence,
        "the allocating ops' calls",
        f"{NO_TIMELINE}: allocations counted from the allocating ops' calls",
    )


def _is_allocating(name: str) -> bool:
    info = lookup_op(name)
    return info is not None and info.category == "allocation"
