"""The verdict: which resource bounds the step, and is the model too small, too heavy or
starved by its data for this hardware?"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
from msgspec.structs import replace

from profsight import json_text
from profsight.analyses.context import Context
from profsight.analyses.device_work import moves_data
from profsight.analyses.findings.capture import not_judged_lines
from profsight.analyses.findings.setup import flops_unknown
from profsight.analyses.measured_flops import measured_flops, measured_line
from profsight.analyses.step import intervals
from profsight.analyses.step.startup import dominates
from profsight.analyses.step.step_facts import StepFacts
from profsight.analyses.step.unrecorded import counted_kernels
from profsight.knowledge import advice
from profsight.knowledge.advice import (
    BORDERLINE_FRACTION,
    BUSY_SPLIT_SHOWN_PCT,
    CLOCK_EVIDENCE,
    COPY_BOUND_PREFIX,
    CPU_COMPUTE_PCT,
    DOMINANT_PCT,
    EFFICIENT_MFU_PCT,
    HELD_DOMINANT_PCT,
    HELD_VERDICT,
    INFERENCE_NOTE,
    INPUT_BOUND_PCT,
    MEMORY_LIMIT_TITLE,
    NO_DEVICE_VERDICT,
    RANGE_PROFILED_VERDICT,
    REST_BUSY,
    SATURATED_PCT,
    SHORT_STEP_US,
    STARTUP_DOMINANT_PCT,
    STARVED_PCT,
)
from profsight.knowledge.graph_capture import CAPTURE_VERDICT
from profsight.knowledge.kernels import matrix_precision
from profsight.knowledge.phases import Phase
from profsight.knowledge.rows import RowKind
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS, EventKind
from profsight.model.findings import CATEGORY_LABELS, Finding, Severity, ranked
from profsight.model.step_windows import DEVICE_CLOCK
from profsight.stats import unique
from profsight.units import short_flops, short_time

#: The judgement of a run the profile cannot judge (its GPU's work was not recorded).
NOT_JUDGED = "not_judged"


class Verdict(msgspec.Struct, frozen=True):
    bound: str
    """``input``, ``host``, ``compute``, ``memory``, ``communication`` or ``sync``."""
    judgement: str
    """``starved_by_data``, ``too_small_for_hardware``, ``too_heavy_for_hardware`` or
    ``balanced``."""
    summary: str
    device_busy_pct: float | None
    data_wait_pct: float
    step_us: float
    mfu_pct: float | None = None
    evidence: tuple[str, ...] = msgspec.field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "bound": self.bound,
            "judgement": self.judgement,
            "summary": self.summary,
            "device_busy_pct": self.device_busy_pct,
            "data_wait_pct": round(self.data_wait_pct, 2),
            "step_us": self.step_us,
            "mfu_pct": self.mfu_pct,
            "evidence": list(self.evidence),
        }


def trace_facts(ctx: Context) -> StepFacts:
    """A trace's step facts: its step windows' average."""
    step = ctx.step_us
    avg = ctx.average
    unrecorded = ctx.unrecorded
    captured = not_judged_lines(ctx)
    compute, mfu = _compute_evidence(ctx, timed=not unrecorded)
    if captured:  # a capture ran no step: no FLOP/s or utilisation is read from it
        compute, mfu = list(captured), None
    busy = None
    steady_busy = ctx.steady_busy_us
    if ctx.has_device and steady_busy is not None and ctx.steady_us:
        busy = steady_busy * 100 / ctx.steady_us  # the steady state's
    if busy is not None:
        compute = [*_busy_split(ctx), *compute]
        if ctx.breakdown.bound == DEVICE_CLOCK:
            compute.insert(
                0,
                CLOCK_EVIDENCE.format(
                    host=short_time(avg.host_range_us), lag=short_time(avg.lag_us)
                ),
            )
    return StepFacts(
        step_us=step,
        steps=ctx.steps,
        phase_pct={p.value: ctx.phase_share(p.value) for p in Phase},
        device_busy_pct=busy,
        device_idle_pct={k: v * 100 / step for k, v in avg.device_idle_us.items()} if step else {},
        compute=tuple(compute),
        mfu_pct=mfu,
        timeline=True,
        unrecorded=unrecorded,
        measured_kernels=counted_kernels(ctx.profile),
        captured=captured,
    )


def _busy_split(ctx: Context) -> list[str]:
    """The device's busy time split into computing (kernels) and moving data (copies,
    memsets and a runtime's transfers that no kernel overlaps), over the steps' span."""
    lo, hi = ctx.breakdown.span_ns
    ev = ctx.profile.events
    moving = moves_data(ev)  # a runtime's transfers recorded as kernels too
    steps = np.ones(len(ev), bool)
    steps[ctx.breakdown.ahead] = False  # the work of the steps before the profiled ones
    moving &= steps
    kernels = np.flatnonzero((ev.kind == EventKind.KERNEL) & ~moving & steps)
    moves = np.flatnonzero(moving)
    k = intervals.clip(*intervals.union(ev.start[kernels], ev.end_of(kernels)), lo, hi)
    m = intervals.clip(*intervals.union(ev.start[moves], ev.end_of(moves)), lo, hi)
    span = max(hi - lo, 1)
    computing = intervals.length(*k) * 100 / span
    copying = (intervals.length(*m) - intervals.overlap(k, m)) * 100 / span
    out = []
    if copying >= BUSY_SPLIT_SHOWN_PCT:
        out.append(
            f"device computing {computing:.0f}% of the step, "
            f"copying (no kernel meanwhile) {copying:.0f}%"
        )
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS) & steps)
    lanes = ev.lane(work)
    per_stream = [
        intervals.clip(*intervals.union(ev.start[on], ev.end_of(on)), lo, hi)
        for on in (work[lanes == lane] for lane in unique(lanes))
    ]
    both = intervals.at_least_two(per_stream) * 100 / span
    if both >= BUSY_SPLIT_SHOWN_PCT:
        out.append(
            f"{len(per_stream)} streams; two or more busy at once {both:.0f}% of the step "
            "(work overlapping on the device)"
        )
    return out


def verdict(facts: StepFacts, findings: list[Finding]) -> Verdict:
    decided = _decide(facts, findings)
    if facts.inference:
        decided = replace(
            decided,
            summary=INFERENCE_NOTE.format(latency=short_time(facts.step_us)) + decided.summary,
            evidence=(*decided.evidence, "inference: no backward or optimizer step recorded"),
        )
    actionable = ranked([f for f in findings if f.severity is not Severity.INFO])
    data_first = bool(actionable) and actionable[0].category == "data_loading"
    near = _borderline(facts, data_first)
    if not near:
        return replace(decided, mfu_pct=facts.mfu_pct)
    note = advice.BORDERLINE_NOTE.format(figures="; ".join(near))
    return replace(
        decided,
        mfu_pct=facts.mfu_pct,
        summary=decided.summary + note,
        evidence=(*decided.evidence, *(f"borderline: {n}" for n in near)),
    )


def _borderline(facts: StepFacts, data_first: bool) -> list[str]:
    """The figures the verdict's decision turns on that lie within `BORDERLINE_FRACTION` of
    their threshold, each with both numbers."""
    busy = facts.device_busy_pct
    checks: list[tuple[str, float | None, float, str]] = [
        ("one-time start-up", facts.phase(Phase.STARTUP), STARTUP_DOMINANT_PCT, "%"),
        ("launched work held back", facts.device_idle_pct.get("held"), HELD_DOMINANT_PCT, "%"),
        ("device busy", busy, STARVED_PCT, "%"),
        ("device busy", busy, SATURATED_PCT, "%"),
    ]
    if data_first:  # data loading decides only when it is the first thing to change
        checks.append(("data loading", facts.phase(Phase.DATA_LOADING), INPUT_BOUND_PCT, "%"))
    if busy is not None and busy >= SATURATED_PCT:
        checks.append(("share of the device's peak", facts.mfu_pct, EFFICIENT_MFU_PCT, "%"))
    if busy is None:
        checks.append(("step", facts.step_us / 1000.0, SHORT_STEP_US / 1000.0, " ms"))
    out = []
    for label, value, threshold, unit in checks:
        if value is None or not value:
            continue
        if abs(value - threshold) <= BORDERLINE_FRACTION * threshold:
            out.append(
                advice.BORDERLINE_FIGURE.format(
                    label=label, value=value, threshold=threshold, unit=unit
                )
            )
    return out


def _decide(ctx: StepFacts, findings: list[Finding]) -> Verdict:
    # one function: the verdict is one ordered ladder of checks, the first that holds decides;
    # split, the order would be spread over functions
    data = ctx.phase(Phase.DATA_LOADING)
    step = ctx.step_us
    categories = {f.category for f in findings}
    # device memory at its limit (the peak finding); allocation or copy churn is not
    limit = [
        f for f in findings if f.category == "memory" and f.title.startswith(MEMORY_LIMIT_TITLE)
    ]
    if limit:
        categories.add("memory_limit")
    if any(f.category == "memcpy" and f.title.startswith(COPY_BOUND_PREFIX) for f in findings):
        categories.add("copy_bound")
    memory = [f"{e.label} {e.value}" for f in limit[:1] for e in f.evidence]
    evidence = [
        f"step {short_time(step)} (average of {ctx.steps})",
        "data loading: none among the printed rows"
        if Phase.DATA_LOADING.value in ctx.unknown
        else f"data loading {data:.0f}% of the step",
    ]
    busy_pct = ctx.device_busy_pct
    startup = ctx.phase(Phase.STARTUP)
    held = ctx.device_idle_pct.get("held", 0.0)
    if startup:
        evidence.append(f"one-time start-up {startup:.0f}% of the profiled window")
    if held:
        evidence.append(f"launched work held back {held:.0f}% of the step")
    if busy_pct is not None:
        left_out = [n for n, v in (("start-up", startup), ("held work", held)) if v]
        after = f" outside {' and '.join(left_out)}" if left_out else ""
        evidence.append(f"device {ctx.busy_basis} {busy_pct:.0f}% of the step{after}")
    evidence += ctx.compute
    if ctx.unrecorded:
        return _verdict(
            "unrecorded",
            NOT_JUDGED,
            ctx,
            None,
            data,
            [*evidence, *ctx.unrecorded],
            (RANGE_PROFILED_VERDICT if ctx.measured_kernels else NO_DEVICE_VERDICT).format(
                evidence="; ".join(ctx.unrecorded)
            ),
        )
    if ctx.captured:
        return _verdict("host", NOT_JUDGED, ctx, busy_pct, data, evidence, CAPTURE_VERDICT)
    profiled = step * ctx.steps
    if 0 < profiled < advice.TOO_LITTLE_WORK_US:
        return _verdict(
            "host" if busy_pct is None else "unrecorded",
            NOT_JUDGED,
            ctx,
            busy_pct,
            data,
            [*evidence, f"profiled: {short_time(profiled)} in {ctx.steps} step(s)"],
            advice.TOO_LITTLE_WORK_VERDICT.format(profiled=short_time(profiled)),
        )
    if held >= HELD_DOMINANT_PCT:
        # the text says to profile again before judging: the box says not judged
        return _verdict(
            "unrecorded",
            NOT_JUDGED,
            ctx,
            busy_pct,
            data,
            evidence,
            HELD_VERDICT.format(held=held)
            + (REST_BUSY.format(busy=busy_pct) if busy_pct is not None else "."),
        )
    if dominates(startup):
        return _verdict(
            "host",
            NOT_JUDGED,
            ctx,
            busy_pct,
            data,
            evidence,
            advice.STARTUP_VERDICT.format(startup=startup)
            + (REST_BUSY.format(busy=busy_pct) if busy_pct is not None else "."),
        )
    if dominates(ctx.stall_pct):
        return _verdict(
            "host",
            NOT_JUDGED,
            ctx,
            busy_pct,
            data,
            [*evidence, f"host time outside every recorded op {ctx.stall_pct:.0f}% of the window"],
            advice.STALL_VERDICT.format(stall=ctx.stall_pct) + ".",
        )
    actionable = ranked([f for f in findings if f.severity is not Severity.INFO])
    top = actionable[0].category if actionable else None
    if data >= INPUT_BOUND_PCT and top in (None, "data_loading"):
        return _verdict(
            "input",
            "starved_by_data",
            ctx,
            busy_pct,
            data,
            evidence,
            advice.STARVED_VERDICT.format(data=data),
        )
    if top in ("communication", "straggler"):
        exposed = actionable[0].at_stake_pct
        return _verdict(
            "communication",
            "balanced",
            ctx,
            busy_pct,
            data,
            [*evidence, f"waiting for collectives {exposed:.0f}% of the step"],
            advice.COMMUNICATION_BOUND_VERDICT.format(exposed=exposed),
        )
    if busy_pct is not None:
        return _device_verdict(ctx, categories, busy_pct, data, [*evidence, *memory], top)
    return _cpu_verdict(ctx, findings, data, evidence)


def _device_verdict(
    ctx: StepFacts,
    categories: set[str],
    busy: float,
    data: float,
    evidence: list[str],
    top: str | None = None,
) -> Verdict:
    """`top`: the first actionable finding's category (its bound, when it names the GPU's
    idle time, is the host's)."""
    # one function: one ordered ladder of checks on a device run, the first that holds decides
    idle = ctx.device_idle_pct
    if "memory_limit" in categories:
        figures = "; ".join(e for e in evidence if e.startswith("peak "))
        return _verdict(
            "memory",
            "too_heavy_for_hardware",
            ctx,
            busy,
            data,
            evidence,
            advice.MEMORY_VERDICT.format(figures=figures),
        )
    if "copy_bound" in categories and busy >= SATURATED_PCT:
        # saturated by copies between host and device: the link bounds it, not the model
        return _verdict(
            "memory",
            "balanced",
            ctx,
            busy,
            data,
            evidence,
            advice.COPY_BOUND_VERDICT.format(busy=busy),
        )
    if busy >= SATURATED_PCT and ctx.mfu_pct is not None and ctx.mfu_pct < EFFICIENT_MFU_PCT:
        # busy, but its math runs far below the device's peak: the kernels are the limit
        return _verdict(
            "compute",
            "balanced",
            ctx,
            busy,
            data,
            evidence,
            advice.KERNEL_BOUND_VERDICT.format(busy=busy, mfu=ctx.mfu_pct),
        )
    if busy >= SATURATED_PCT:
        return _verdict(
            "compute",
            "too_heavy_for_hardware",
            ctx,
            busy,
            data,
            evidence,
            advice.SATURATED_VERDICT.format(busy=busy),
        )
    if busy < STARVED_PCT and idle.get("sync", 0.0) > idle.get("host", 0.0):
        return _verdict(
            "sync",
            "too_small_for_hardware",
            ctx,
            busy,
            data,
            evidence,
            advice.SYNC_VERDICT.format(busy=busy),
        )
    if busy < STARVED_PCT:
        return _verdict(
            "host",
            "too_small_for_hardware",
            ctx,
            busy,
            data,
            evidence,
            advice.HOST_BOUND_VERDICT.format(busy=busy),
        )
    idle_first = top in advice.IDLE_CAUSE_CATEGORIES
    if "communication" in categories and not idle_first:
        return _verdict(
            "communication",
            "balanced",
            ctx,
            busy,
            data,
            evidence,
            advice.COMMUNICATION_VERDICT,
        )
    if ctx.queue_full_pct >= advice.QUEUE_FULL_PCT:
        text = advice.BALANCED_QUEUE_FULL_VERDICT.format(busy=busy, queue=ctx.queue_full_pct)
    elif categories & advice.IDLE_CAUSE_CATEGORIES:
        text = advice.BALANCED_GPU_VERDICT.format(busy=busy)
    else:
        text = advice.BALANCED_UNEXPLAINED_VERDICT.format(busy=busy)
    return _verdict(
        "host" if idle_first else "compute", "balanced", ctx, busy, data, evidence, text
    )


#: Findings about work around the model: when one dominates, it bounds the step, not the model.
_AROUND_THE_MODEL = {"metrics", "callbacks_logging", "validation", "optimizer", "module_overhead"}


def _cpu_verdict(
    ctx: StepFacts, findings: list[Finding], data: float, evidence: list[str]
) -> Verdict:
    # one function: one ordered ladder of checks on a host-only run, the first that holds
    # decides
    fixed = sum(ctx.phase(p) for p in (Phase.FRAMEWORK, Phase.OTHER, Phase.CALLBACKS_LOGGING))
    # a module's glue (its Python, tiny ops) sits in forward but is not the model's math
    glue = max((f.at_stake_pct for f in findings if f.category == "module_overhead"), default=0)
    compute = max(
        sum(
            ctx.phase(p) for p in (Phase.FORWARD, Phase.BACKWARD, Phase.OPTIMIZER, Phase.VALIDATION)
        )
        - glue,
        0.0,
    )
    evidence.append(
        f"model work (forward, backward, optimizer) {compute:.0f}% of the step"
        + (f", after {glue:.0f}% of module overhead" if glue else "")
    )
    evidence.append(f"fixed per-step cost {fixed:.0f}% of the step")
    actionable = ranked([f for f in findings if f.severity is not Severity.INFO])
    top = actionable[0] if actionable else None
    per_step = next((f for f in actionable if f.category == "per_step_overhead"), None)
    if top is not None and top.category in _AROUND_THE_MODEL and top.at_stake_pct >= DOMINANT_PCT:
        return _verdict(
            "host",
            "balanced",
            ctx,
            None,
            data,
            evidence,
            advice.AROUND_MODEL_VERDICT.format(
                run=ctx.run,
                label=CATEGORY_LABELS.get(top.category, top.category),
                share=top.at_stake_pct,
            ),
        )
    if per_step is not None:
        # the per-step rule fired: a short step whose fixed cost passes its threshold
        return _verdict(
            "host",
            "too_small_for_hardware",
            ctx,
            None,
            data,
            evidence,
            advice.FIXED_COST_VERDICT.format(run=ctx.run, share=per_step.at_stake_pct),
        )
    if compute >= CPU_COMPUTE_PCT and ctx.step_us < SHORT_STEP_US:
        # the model's work dominates a short step: the hardware keeps up with it
        return _verdict(
            "compute",
            "balanced",
            ctx,
            None,
            data,
            evidence,
            advice.SHORT_COMPUTE_VERDICT.format(
                run=ctx.run, step=short_time(ctx.step_us), compute=compute
            ),
        )
    if compute >= CPU_COMPUTE_PCT:
        return _verdict(
            "compute",
            "too_heavy_for_hardware",
            ctx,
            None,
            data,
            evidence,
            (advice.CPU_HEAVY_VERDICT if ctx.cpu_only else advice.HOST_HEAVY_VERDICT).format(
                run=ctx.run, compute=compute
            ),
        )
    if ctx.step_us < SHORT_STEP_US and fixed >= compute:
        return _verdict(
            "host",
            "too_small_for_hardware",
            ctx,
            None,
            data,
            evidence,
            advice.SMALL_FOR_OVERHEAD_VERDICT.format(run=ctx.run, fixed=fixed),
        )
    return _verdict(
        "host",
        "balanced",
        ctx,
        None,
        data,
        evidence,
        advice.UNDOMINATED_VERDICT.format(
            run=ctx.run, step=short_time(ctx.step_us), compute=compute
        ),
    )


def _compute_evidence(ctx: Context, timed: bool = True) -> tuple[list[str], float | None]:
    """FLOPs per step and per sample, achieved FLOP/s, and utilisation of the device's peak
    (not `timed`: a GPU run whose device work was not recorded, whose step time is the
    host's alone: the FLOPs, no rate)."""
    total = ctx.flops.total
    measured = measured_flops(ctx.profile)
    if measured is not None:  # counters, no run times: no rate
        return [measured_line(measured, total if ctx.flops.complete else None)], None
    if not ctx.flops.complete or total <= 0 or not ctx.step_us:
        return [flops_unknown(ctx, ctx.flops.uncounted)], None
    per_step = total / ctx.steps
    if not timed:
        return [f"{short_flops(per_step)} per step (no rate: the device's time is unknown)"], None
    achieved = per_step / (ctx.step_us * 1e-6)
    lines = [f"{short_flops(per_step)} per step, {short_flops(achieved, True)} achieved"]
    batch, per_input = _batch(ctx)
    if batch:
        lines.append(
            f"{short_flops(per_step / batch)} per sample (batch {batch}"
            + (f", {per_input:,} input values per sample" if per_input else "")
            + ")"
        )
    device = ctx.device
    if device is None or not ctx.has_device:
        return lines, None
    peak = device.peak(_precision(ctx))
    if peak is None:
        return lines, None
    mfu = achieved / (peak.tflops * 1e12) * 100
    lines.append(f"{mfu:.1f}% of the {device.name}'s {peak.label}")
    return lines, mfu


def _batch(ctx: Context) -> tuple[int | None, int | None]:
    """Batch size and input values per sample, from the first convolution (images)."""
    ev = ctx.profile.events
    conv = [i for i in ctx.flops.events.tolist() if ev.strings[ev.name[i]] == "aten::convolution"]
    if not conv:
        return None, None
    first = min(conv, key=lambda i: int(ev.start[i]))
    x = json_text.loads(ev.strings[ev.shapes[first]])[0]
    per_input = 1
    for d in x[1:]:
        per_input *= d
    return int(x[0]), per_input


def _precision(ctx: Context) -> str:
    """The precision the matrix math ran in (`knowledge.kernels.matrix_precision`), FP32
    where no matrix kernel's name says it."""
    rows = ctx.rows(RowKind.KERNEL)
    return matrix_precision((r.name, r.self_device_us) for r in rows) or "fp32"


def _verdict(
    bound: str,
    judgement: str,
    ctx: StepFacts,
    busy: float | None,
    data: float,
    evidence: list[str],
    summary: str,
) -> Verdict:
    return Verdict(bound, judgement, summary, busy, data, ctx.step_us, None, tuple(evidence))
