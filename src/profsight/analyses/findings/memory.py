"""The memory family: device memory near its capacity, allocation churn, and copies that
allocate a large new tensor on every call (a tensor grown by ``torch.cat``, ``.clone()`` or
``.contiguous()`` of large tensors inside the step).

The evidence is the row's own allocations (``Self CPU Mem`` / ``Self CUDA Mem``, recorded with
``profile_memory=True``) per call, next to its own time: a trace's table and a printed table
both have them, so both read this the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from profsight.analyses.context import Context
from profsight.analyses.memory_peak import memory_peaks
from profsight.knowledge import advice
from profsight.knowledge.advice import ALLOCATIONS_PER_STEP
from profsight.knowledge.catalogue import condition
from profsight.knowledge.ops import lookup_op
from profsight.knowledge.trace_schema import DEVICE_MEMORY_DEVICE_TYPES, EventKind
from profsight.model.findings import Evidence, Finding, Severity, severity_for
from profsight.model.table import Row
from profsight.units import short_bytes, short_time

COPY_CATEGORY = "copy"


def copy_churn(
    rows: Iterable[Row], steps: int, share: Callable[[float], float], device: bool
) -> list[Finding]:
    """`share`: per-step µs -> % of the step. `device`: judge device time (a GPU run)."""
    findings = []
    for row in rows:
        info = lookup_op(row.name)
        if info is None or info.category != COPY_CATEGORY or not row.calls:
            continue
        per_call = max(row.self_cpu_mem, row.self_device_mem) / row.calls
        if per_call < advice.LARGE_COPY_BYTES:
            continue
        own = (row.self_device_us if device else row.self_cpu_us) / steps
        pct = share(own)
        if pct < advice.COPY_CHURN_PCT:
            continue
        findings.append(
            Finding(
                category="memory",
                severity=severity_for(pct),
                title=f"{row.name} allocates and fills {per_call / 2**20:.1f} MiB per call: "
                f"{pct:.0f}% of the step",
                evidence=(
                    Evidence(
                        "own allocations",
                        f"{per_call / 2**20:.1f} MiB per call, {row.calls / steps:.0f} calls "
                        "per step",
                        (row.name,),
                    ),
                    Evidence("own time", f"{short_time(own)} per step ({pct:.1f}%)", (row.name,)),
                ),
                explanation=advice.COPY_CHURN_EXPLANATION,
                recommendation=advice.COPY_CHURN_ADVICE,
                at_stake_pct=pct,
                gain_pct=pct,  # the copy gone (a trace replays it)
                trigger=condition("memory", "copy_churn"),
            )
        )
    return findings


def run(ctx: Context) -> list[Finding]:
    """The family on a trace."""
    found = memory_limit(ctx) if ctx.has_device and ctx.breakdown.has_device else []
    found += allocation_churn(ctx)
    found += optimizer_state(ctx)
    found += copy_churn(
        ctx.table.rows, ctx.steps, lambda us: ctx.share(us * ctx.steps), ctx.has_device
    )
    return found


def memory_limit(ctx: Context) -> list[Finding]:
    """Device memory near its capacity: the peak allocated by tensors against the device's
    total memory, with what the caching allocator reserved beside it."""
    ev = ctx.profile.events
    devices = ctx.profile.meta.devices
    mem = (ev.kind == EventKind.MEMORY) & np.isin(
        ev.mem_device_type, list(DEVICE_MEMORY_DEVICE_TYPES)
    )
    if not mem.any() or not devices:
        return []
    peak = int(ev.allocated[mem].max())
    reserved = int(ev.reserved[mem].max()) if len(ev.reserved) else -1
    capacity = devices[0].get("totalGlobalMem")
    if not isinstance(capacity, int) or peak <= 0 or peak < capacity * advice.MEMORY_PEAK_FRACTION:
        return []
    pct = peak * 100 / capacity
    gib = 2**30
    evidence = [Evidence("peak allocated", f"{peak / gib:.1f} GiB of {capacity / gib:.1f} GiB")]
    if reserved > 0:
        evidence.append(Evidence("peak reserved (caching allocator)", f"{reserved / gib:.1f} GiB"))
    evidence += _held_at_peak(ctx)
    return [
        Finding(
            category="memory",
            severity=Severity.HIGH,
            title=f"{advice.MEMORY_LIMIT_TITLE} {pct:.0f}% of the GPU's",
            evidence=tuple(evidence),
            explanation=advice.MEMORY_LIMIT_EXPLANATION,
            recommendation=advice.memory_limit_advice(ctx.arch),
            at_stake_pct=0.0,
            trigger=condition("memory", "peak"),
        )
    ]


def _held_at_peak(ctx: Context) -> list[Evidence]:
    """What to shrink first: the ops whose allocations the device's peak held, and what it
    held from before the window (`analyses.memory_peak`)."""
    peaks = [p for p in memory_peaks(ctx.profile) if p.memory == "device" and p.blocks_known]
    if not peaks:
        return []
    peak = peaks[0]
    shown = peak.held_by[: advice.PEAK_OPS_IN_EVIDENCE]
    held = ", ".join(f"{h.op} {short_bytes(h.bytes)}" for h in shown) or "none"
    return [
        Evidence(advice.HELD_AT_PEAK, held, tuple(h.op for h in shown)),
        Evidence(advice.HELD_BEFORE_WINDOW, short_bytes(peak.before_window_bytes)),
    ]


def optimizer_state(ctx: Context) -> list[Finding]:
    """An optimizer state larger than the model, from torch's own categories at the peak
    (a live profiler's: a trace file has no tensor identities to categorise)."""
    found = []
    for memory, categories in (ctx.profile.memory_categories or {}).items():
        state = categories.get("optimizer_state", 0)
        params = (ctx.profile.parameter_bytes or {}).get(memory, 0)
        peak = sum(categories.values())
        if params <= 0 or state <= params or state < advice.OPTIMIZER_STATE_SHARE * peak:
            continue
        where = "CPU" if memory == "cpu" else "device"
        pct = state * 100 / peak
        found.append(
            Finding(
                category="memory",
                severity=Severity.LOW,
                title=advice.OPTIMIZER_STATE_TITLE.format(
                    ratio=state / params, pct=pct, memory=where
                ),
                evidence=(
                    Evidence("optimizer state at the peak", short_bytes(state)),
                    Evidence("the model's parameters", short_bytes(params)),
                    Evidence("gradients at the peak", short_bytes(categories.get("gradient", 0))),
                    Evidence(f"{where} memory peak (torch's memory profiler)", short_bytes(peak)),
                ),
                explanation=advice.OPTIMIZER_STATE_EXPLANATION,
                recommendation=advice.OPTIMIZER_STATE_ADVICE,
                at_stake_pct=0.0,
                trigger=condition("memory", "optimizer_state"),
            )
        )
    return found


def allocation_churn(ctx: Context) -> list[Finding]:
    ev = ctx.profile.events
    allocations = int(((ev.kind == EventKind.MEMORY) & (ev.nbytes > 0)).sum())
    per_step = allocations / ctx.steps
    evidence = Evidence("[memory] allocations", f"{per_step:.0f} per step")
    return allocation_finding(per_step, evidence, "[memory] events")


def allocation_finding(
    per_step: float, evidence: Evidence, counted: str, confidence: str = ""
) -> list[Finding]:
    """Allocation churn past `ALLOCATIONS_PER_STEP`, counted from `counted`."""
    if per_step < ALLOCATIONS_PER_STEP:
        return []
    return [
        Finding(
            category="memory",
            severity=Severity.LOW,
            title=advice.ALLOCATION_TITLE.format(per_step=per_step),
            evidence=(evidence,),
            explanation=advice.ALLOCATION_EXPLANATION,
            recommendation=advice.ALLOCATION_ADVICE,
            at_stake_pct=0.0,
            trigger=condition("memory", "allocations"),
            confidence=confidence,
        )
    ]
