"""Findings from a printed table: the trace's rules, on the step model its rows allow.

Each rule here is a trace rule (same category, same threshold from `knowledge.advice`)
applied to the figures `PrintedStep` and `PrintedDevice` rebuild from the rows. Each finding
says what the table could not show (`Finding.confidence`): a table has no timeline, so
whether host work overlapped device work, and one step from another, stay unknown.
"""

from __future__ import annotations

from dataclasses import replace

from profsight.analyses.findings.compute import compute_finding
from profsight.analyses.findings.host import from_breakdown
from profsight.analyses.findings.model_habits import allocation_finding
from profsight.analyses.step.breakdown import Breakdown, StepBreakdown
from profsight.analyses.step.table_device import BLOCKING_COPY, QUEUE_FULL, SYNC, PrintedDevice
from profsight.analyses.step.table_step import PrintedStep
from profsight.knowledge import advice
from profsight.knowledge.hardware import arch_speedup
from profsight.knowledge.lightning_names import (
    CUT_MARK,
    LIGHTNING_MODULE_PREFIX,
    TORCH_LAYERS,
    module_class,
)
from profsight.knowledge.op_families import (
    COMPUTE_FINDINGS,
    COPIES,
    FAMILY_LABELS,
    OPTIMIZER,
    op_family,
)
from profsight.knowledge.ops import lookup_op
from profsight.knowledge.phases import Phase
from profsight.knowledge.rows import RowKind
from profsight.model.findings import UPPER_BOUND, Evidence, Finding, severity_for
from profsight.model.row_kind import row_kind
from profsight.model.table import ProfilerTable, Row
from profsight.units import short_time

#: Breakdown windows label of a table's step model.
TABLE_WINDOWS = "table rows (totals per step)"

NO_TIMELINE = "from the table alone: it has no timeline"


def breakdown_of(step: PrintedStep, device: PrintedDevice | None) -> Breakdown:
    idle = idle_causes(step, device)
    average = StepBreakdown(
        "average",
        0.0,
        step.step_us,
        step.phases,
        None if device is None else device.work_us if device.busy_pct < 100 else step.step_us,
        {k: v * step.step_us / 100 for k, v in idle.items()},
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
    findings = _phases(step, device)
    findings += _modules(step, device, table)
    findings += _tiny_ops(step, device, table)
    findings += _compute(step, device)
    if device is not None:
        specific = _syncs(step, device) + _copies(step, device) + _precision(step, device)
        explained = sum(
            f.at_stake_pct for f in [*specific, *findings] if f.category in _IDLE_CAUSES
        )
        findings += specific + _idle(step, device, explained)
    findings += _allocations(step, table)
    return findings


#: Findings whose time is device idle time (the GPU waits while the host does it); copies
#: are device work (busy), so they explain none of it.
_IDLE_CAUSES = frozenset({"host_device_sync", "data_loading"})


def _at_stake(step: PrintedStep, device: PrintedDevice | None, share: float) -> float:
    """Host-side time costs the step no more than the device idles (a trace rule)."""
    return share if device is None else min(share, device.idle_pct)


def _phases(step: PrintedStep, device: PrintedDevice | None) -> list[Finding]:
    real_steps = not any("whole window" in b for b in (step.basis,))
    found = from_breakdown(breakdown_of(step, device), per_step=real_steps and step.steps > 1)
    out = []
    for f in found:
        rule = next((r for r in advice.PHASE_RULES if f.title.startswith(r.title)), None)
        part = step.part(rule.phase) if rule is not None else None
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


# ------------------------------------------------------------------------ your model


def _modules(
    step: PrintedStep, device: PrintedDevice | None, table: ProfilerTable
) -> list[Finding]:
    """A module's own time (outside its child modules): from the module tree the names'
    paths give (``[pl][module]<class>: <path>``), else torch's self time (its Python only)."""
    modules = [r for r in table.rows if row_kind(r, table) is RowKind.MODULE and r.cpu_total_us]
    # a child module missing from a table cut to its top rows would read as the parent's own
    # time: the paths are used only when every row is printed
    children = _module_children(modules) if step.coverage_pct >= advice.FULL_TABLE_PCT else None
    findings = []
    for row in modules:
        cls = module_class(row.name).rsplit(".", 1)[-1]
        if cls in TORCH_LAYERS or (row.name.endswith(CUT_MARK) and cls not in row.name):
            continue
        if children is not None:
            kids = children.get(row.name, [])
            own = row.cpu_total_us - sum(k.cpu_total_us for k in kids)
            how = "its total less its child modules' totals (the paths in the names)"
        else:
            own = row.self_cpu_us
            how = (
                "torch's self time: its own Python only (the table cut names or rows of the "
                "modules inside it, so its own ops cannot be told from theirs)"
            )
        share = _at_stake(step, device, step.share(own / step.steps))
        fraction = own / row.cpu_total_us
        if share < advice.MODULE_OWN_PCT or fraction < advice.MODULE_OWN_FRACTION:
            continue
        findings.append(
            Finding(
                category="module_overhead",
                severity=severity_for(share),
                title=f"{_label(row.name)} spends {fraction:.0%} of its time outside its layers",
                evidence=(
                    Evidence(
                        "own time (outside child modules)",
                        f"{short_time(own / step.steps)} per step, {share:.1f}% of the step",
                        (row.name,),
                    ),
                    Evidence("total time", f"{short_time(row.cpu_total_us / step.steps)} per step"),
                    Evidence("how", how),
                ),
                explanation=advice.MODULE_OWN_EXPLANATION,
                recommendation=advice.MODULE_ADVICE,
                at_stake_pct=share,
                gain_pct=share,
                trigger=f"own time >= {advice.MODULE_OWN_PCT:g}% of the step and >= "
                f"{advice.MODULE_OWN_FRACTION:.0%} of the module's total ({advice.MEASURED})",
                confidence=f"{NO_TIMELINE}: the module's total holds its backward only if it "
                "runs inside it (it does not: backward is autograd's), so this is forward work",
            )
        )
    return findings


def _label(name: str) -> str:
    body = name.removeprefix(LIGHTNING_MODULE_PREFIX)
    cls, _, path = body.partition(": ")
    return f"{path} ({cls.rsplit('.', 1)[-1]})" if path else body


def _module_children(modules: list[Row]) -> dict[str, list[Row]] | None:
    """Each module row's direct child module rows, from the paths in the names; None when a
    name was cut before its path could place it."""
    placed: dict[str, tuple[str, str, bool]] = {}
    for row in modules:
        name = row.name
        cut = name.endswith(CUT_MARK)
        body = name[: -len(CUT_MARK)] if cut else name
        body = body.removeprefix(LIGHTNING_MODULE_PREFIX)
        if ": " not in body:
            return None
        cls, path = body.split(": ", 1)
        if not path:
            return None
        placed[name] = (cls, path, cut)
    children: dict[str, list[Row]] = {}
    whole = {n: p for n, (_, p, cut) in placed.items() if not cut}
    for row in modules:
        cls, path, cut = placed[row.name]
        parents = [
            n
            for n, p in whole.items()
            if n != row.name and (path.startswith(p + ".") or (cut and path == p))
        ]
        if cut and not parents:
            return None
        if parents:
            parent = max(parents, key=lambda n: len(whole[n]))
            children.setdefault(parent, []).append(row)
    return children


def _tiny_ops(
    step: PrintedStep, device: PrintedDevice | None, table: ProfilerTable
) -> list[Finding]:
    """Many ops of a few microseconds each: a Python loop over tensors. Ops of the optimizer's
    own update are left out, and so is as much tiny-op time as the optimizer takes (its
    per-parameter loop is tiny ops too: a table cannot tell whose they are)."""
    tiny = [
        r
        for r in table.rows
        if row_kind(r, table) is RowKind.ATEN
        and r.calls
        and r.cpu_total_us > 0
        and r.cpu_avg_us < advice.TINY_OP_US
        and op_family(_category(r.name)) != OPTIMIZER
    ]
    calls = sum(r.calls for r in tiny) / step.steps
    if calls < advice.TINY_OPS_PER_STEP:
        return []
    us = sum(r.self_cpu_us for r in tiny) / step.steps
    us = max(us - step.phases.get(Phase.OPTIMIZER.value, 0.0), 0.0)
    share = _at_stake(step, device, step.share(us))
    if share < advice.MODULE_OWN_PCT:
        return []
    top = [r.name for r in sorted(tiny, key=lambda r: -r.calls)[:4]]
    return [
        Finding(
            category="module_overhead",
            severity=severity_for(share),
            title=f"{calls:.0f} tiny op calls per step",
            evidence=(
                Evidence(
                    f"op calls under {short_time(advice.TINY_OP_US)} each",
                    f"{calls:.0f} per step (every dispatch level counts), their own time "
                    f"{share:.1f}% of the step",
                    tuple(top),
                ),
            ),
            explanation=advice.TINY_OPS_EXPLANATION,
            recommendation=advice.MODULE_ADVICE,
            at_stake_pct=share,
            gain_pct=share,
            trigger=f">= {advice.TINY_OPS_PER_STEP} ops under {short_time(advice.TINY_OP_US)} per "
            f"step, >= {advice.MODULE_OWN_PCT:g}% of the step ({advice.MEASURED})",
            confidence=f"{NO_TIMELINE}: the rows do not say which module or pass (forward, "
            "backward) ran these ops",
        )
    ]


def _category(name: str) -> str | None:
    info = lookup_op(name)
    return info.category if info else None


# ------------------------------------------------------------------------ compute


def _compute(step: PrintedStep, device: PrintedDevice | None) -> list[Finding]:
    """Where the compute goes: device time by family on a device run, else the ops' self
    CPU time by family (self times add up, so the shares are exact for the printed rows)."""
    spent = device.family_us if device is not None else step.family_self_us
    rows = device.family_rows if device is not None else step.family_rows
    by_category: dict[str, float] = {}
    for family, us in spent.items():
        category = COMPUTE_FINDINGS.get(family)
        if category is not None:
            by_category[category] = by_category.get(category, 0.0) + us
    if not by_category:
        return []
    top = max(by_category, key=lambda k: by_category[k])
    share = step.share(by_category[top])
    if share < advice.COMPUTE_PCT:
        return []
    where = f"{device.name} time" if device is not None else "self CPU time"
    leaders = sorted(
        (r for f, rs in rows.items() if COMPUTE_FINDINGS.get(f) == top for r in rs),
        key=lambda r: -(r.self_device_us if device is not None else r.self_cpu_us),
    )[:4]
    evidence = tuple(
        Evidence(
            r.name,
            f"{short_time((r.self_device_us if device else r.self_cpu_us) / step.steps)}"
            f" {where} per step, {r.calls / step.steps:.0f} calls per step",
            (r.name,),
        )
        for r in leaders
    )
    return [
        compute_finding(
            top,
            share,
            evidence,
            f"{where} ({FAMILY_LABELS.get(_family_of(top), top)})",
            f"{NO_TIMELINE}: self times of every pass are summed (forward, backward, "
            "validation and metrics alike)",
        )
    ]


def _family_of(category: str) -> str:
    return next(f for f, c in COMPUTE_FINDINGS.items() if c == category)


# ------------------------------------------------------------------------ the device


def _syncs(step: PrintedStep, device: PrintedDevice) -> list[Finding]:
    """The host blocked in syncs and in copies that waited for earlier device work. It costs
    the step only where the device idled meanwhile: at most the idle time, and at least the
    part of the wait that the device's total work cannot cover."""
    waited = device.waits.get(SYNC, 0.0) + max(
        device.waits.get(BLOCKING_COPY, 0.0) - device.copy_us, 0.0
    )
    wait_share = step.share(waited)
    share = min(wait_share, device.idle_pct)
    if share < advice.SYNC_PCT:
        return []
    least = max(wait_share - device.busy_pct, 0.0)
    rows = (*device.wait_rows.get(SYNC, ()), *device.wait_rows.get(BLOCKING_COPY, ()))
    return [
        Finding(
            category="host_device_sync",
            severity=severity_for(share),
            title=f"The host waits for the GPU {wait_share:.0f}% of the step",
            evidence=(
                Evidence(
                    "host blocked in syncs and blocking copies",
                    f"{short_time(waited)} per step ({wait_share:.0f}% of the step)",
                    tuple(r.name for r in rows),
                ),
                Evidence(
                    "device work",
                    f"{short_time(device.work_us)} per step: busy at most "
                    f"{device.busy_pct:.0f}% of the step",
                ),
                Evidence(
                    "device idle during the waits", f"{least:.0f}% to {share:.0f}% of the step"
                ),
            ),
            explanation=advice.SYNC_EXPLANATION,
            recommendation=advice.SYNC_ADVICE,
            at_stake_pct=share,
            gain_pct=share,
            trigger=f"host waits that the device may have idled through >= {advice.SYNC_PCT:g}% "
            f"of the step ({advice.MEASURED})",
            confidence=f"{NO_TIMELINE}: whether the GPU idled during the waits is bounded, not "
            "measured (between the two figures above)",
        )
    ]


def _copies(step: PrintedStep, device: PrintedDevice) -> list[Finding]:
    """Copies the host waited for (their call's host time is close to their device time, so
    they were not asynchronous), or copies the rows name as from pageable memory."""
    pageable = [r for r in device.family_rows.get(COPIES, ()) if "Pageable" in r.name]
    blocking = device.waits.get(BLOCKING_COPY, 0.0)
    # the copies at stake: those named pageable, else all when their calls waited for them
    copy_us = sum(r.self_device_us for r in pageable) / step.steps if pageable else 0.0
    if not pageable and blocking:
        copy_us = device.copy_us
    share = step.share(copy_us)
    if share < advice.COPY_PCT:
        return []
    rows = device.wait_rows.get(BLOCKING_COPY, ())
    return [
        Finding(
            category="memcpy",
            severity=severity_for(share),
            title=f"Copies the host waits for: {share:.1f}% of the step",
            evidence=(
                Evidence(
                    "device time of the copies",
                    f"{short_time(copy_us)} per step",
                    tuple(r.name for r in device.family_rows.get("copies", ())[:4]),
                ),
                Evidence(
                    "host time in the copy calls",
                    f"{short_time(blocking)} per step",
                    tuple(r.name for r in rows),
                ),
            ),
            explanation=advice.PAGEABLE_EXPLANATION,
            recommendation=advice.PAGEABLE_ADVICE,
            at_stake_pct=share,
            gain_pct=share,
            trigger="copies >= 1% of the step, named pageable or with as much host time in "
            "their calls as on the device",
            confidence=f"{NO_TIMELINE}: the copies' direction and memory kind are inferred from "
            "their host time",
        )
    ]


def _precision(step: PrintedStep, device: PrintedDevice) -> list[Finding]:
    if not device.tensor_cores or not device.work_us:
        return []
    share_dev = device.fp32_matrix_us * 100 / device.work_us
    if share_dev < advice.FP32_ON_TENSOR_CORES_PCT:
        return []
    share = min(step.share(device.fp32_matrix_us), device.busy_pct)
    speedup = arch_speedup(device.arch)
    return [
        Finding(
            category="low_precision",
            severity=severity_for(share),
            title=f"{share_dev:.0f}% of GPU time is FP32 matrix math on a tensor-core GPU",
            evidence=tuple(
                Evidence(r.name, f"{short_time(r.self_device_us / step.steps)} per step", (r.name,))
                for r in device.fp32_rows[:4]
            ),
            explanation=advice.FP32_EXPLANATION,
            recommendation=advice.mixed_precision(device.arch),
            at_stake_pct=share,
            # at the tensor cores' peak ratio, the most the kernels can gain
            gain_pct=share * (1 - 1 / speedup) if speedup else None,
            basis=UPPER_BOUND,
            trigger=f"FP32 GEMM/conv >= {advice.FP32_ON_TENSOR_CORES_PCT:g}% of device time on "
            f"a GPU of {device.arch} or later (its kernels are built for it; {advice.TB_PLUGIN}:"
            " tensor-core eligible work not on tensor cores)",
            confidence=f"{NO_TIMELINE}: the GPU is known only from its kernels' names (at "
            f"least {device.arch})",
        )
    ]


def _idle(step: PrintedStep, device: PrintedDevice, explained: float) -> list[Finding]:
    """The idle time no more specific finding explains."""
    if device.busy_pct >= advice.GPU_IDLE_PCT:
        return []
    idle = device.idle_pct
    rest = max(idle - explained, 0.0)
    mean = device.mean_kernel_us
    launch_bound = mean is not None and mean < advice.SHORT_KERNEL_US
    evidence = [
        Evidence(
            "device work",
            f"{short_time(device.work_us)} per step: busy at most {device.busy_pct:.0f}% of the "
            f"step ({short_time(step.step_us)})",
        ),
        Evidence("idle not explained by another finding", f"{rest:.0f}% of the step"),
    ]
    if mean is not None:
        evidence.append(
            Evidence(
                "kernel launches",
                f"{device.launches:.0f} per step, {short_time(mean)} of device work each",
                tuple(r.name for r in device.launch_rows),
            )
        )
    if device.waits.get(QUEUE_FULL):
        return []  # the launch queue was full: the host is ahead of the device
    common = {
        "severity": severity_for(rest),
        "evidence": tuple(evidence),
        "at_stake_pct": rest,
        "gain_pct": rest,
        "confidence": f"{NO_TIMELINE}: busy is an upper bound (kernels on several streams may "
        "overlap)",
    }
    if launch_bound:
        return [
            Finding(
                category="launch_overhead",
                title=f"The GPU idles {idle:.0f}% of the step between many tiny kernels",
                explanation=advice.LAUNCH_EXPLANATION,
                recommendation=advice.LAUNCH_ADVICE,
                trigger=f"device busy < {advice.GPU_IDLE_PCT:g}% ({advice.TB_PLUGIN}) and "
                f"device work per launch < {short_time(advice.SHORT_KERNEL_US)}",
                **common,  # type: ignore[arg-type]
            )
        ]
    return [
        Finding(
            category="gpu_idle",
            title=f"The GPU is idle {idle:.0f}% of the step",
            explanation=advice.GPU_IDLE_EXPLANATION,
            recommendation=advice.GPU_IDLE_ADVICE,
            trigger=f"device busy < {advice.GPU_IDLE_PCT:g}% of the step ({advice.TB_PLUGIN})",
            **common,  # type: ignore[arg-type]
        )
    ]


# ------------------------------------------------------------------------ memory


def _allocations(step: PrintedStep, table: ProfilerTable) -> list[Finding]:
    """Allocation churn: calls of the allocating ops per step (each allocates once)."""
    allocating = [r for r in table.rows if _category(r.name) == "allocation" and r.calls]
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
