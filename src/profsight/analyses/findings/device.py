"""The device family: a GPU that idles, between many tiny kernels or waiting on the host.

One rule (`idle_findings`) reads one record (`DeviceIdle`), which a trace fills from its
steady step (`idle_from_trace`) and a printed table from its totals (`idle_from_table`). Syncs and
copies are `sync_copies`; FP32 math on tensor cores is `compute`; device memory is `memory`.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import numpy as np

from profsight.analyses.context import Context
from profsight.analyses.findings.filling import TABLE, TRACE, Filling
from profsight.analyses.step import intervals
from profsight.analyses.step.printed_parts import PrintedStep
from profsight.analyses.step.table_device import QUEUE_FULL, PrintedDevice
from profsight.knowledge import advice
from profsight.knowledge.catalogue import condition
from profsight.knowledge.kernels import decode_kernel
from profsight.knowledge.op_families import COPIES, kernel_family
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS, EventKind
from profsight.model.findings import Evidence, Finding, severity_for
from profsight.stats import median as median_of
from profsight.stats import unique
from profsight.units import short_time


class DeviceIdle(msgspec.Struct, frozen=True):
    """The device's share of the step, and what kept it idle."""

    busy_pct: float
    """Device busy, % of the steady step (a table: its device time total, an upper bound)."""
    idle_pct: float
    """Device idle, % of the step."""
    explained_pct: float
    """Idle time a more specific finding names (syncs, the input), % of the step."""
    kernel_us: float | None
    """A typical kernel's device time (None: no kernel launch is known)."""
    kernel_stat: str
    """What `kernel_us` is: ``median kernel``, ``device work per launch``."""
    host_idles_it: bool
    """The host's own work (not a sync, not the input) is the idle's main cause."""
    queue_full: bool
    """The launch queue was full: the host is ahead of the device, not behind it."""
    evidence: tuple[Evidence, ...]
    filling: Filling = TRACE
    largest_busy_pct: float = 0.0
    """The largest family of device work (matrix math, copies, ...), % of the step."""
    steps: bool = True
    """The figures are per training step (a trace's ProfilerStep windows, a table's step
    row); False: the whole window is one step, start and stop included."""
    outrun: float | None = None
    """Of the kernels, the fraction the host's launches outrun (`_outrun`): the device
    finishes each before the next arrives (a trace; None: `kernel_us` is judged instead)."""


def idle_findings(d: DeviceIdle) -> list[Finding]:
    """`gpu_idle` below GPU_IDLE_PCT busy, or whenever the idle time no other finding names is
    the step's largest share; and `launch_overhead` beside it when the kernels are tiny and
    the host idles the device (the cause of that symptom)."""
    idle = float(d.idle_pct)
    rest = max(idle - float(d.explained_pct), 0.0)
    largest = d.steps and rest >= advice.IDLE_LARGEST_MIN_PCT and rest > d.largest_busy_pct
    if d.queue_full or (d.busy_pct >= advice.GPU_IDLE_PCT and not largest):
        return []
    evidence = d.evidence
    if rest < idle:
        evidence += (Evidence("idle not explained by another finding", f"{rest:.0f}% of the step"),)
    short = (
        d.outrun >= advice.LAUNCH_BOUND_FRACTION
        if d.outrun is not None
        else d.kernel_us is not None and d.kernel_us < advice.SHORT_KERNEL_US
    )
    launch_bound = short and d.host_idles_it
    if d.busy_pct >= advice.GPU_IDLE_PCT:  # fired by idle as the step's largest share
        evidence += (
            Evidence(
                "the step's largest share",
                f"idle {rest:.0f}%, the largest family of device work {d.largest_busy_pct:.0f}%",
            ),
        )
    common = {
        "severity": severity_for(rest),
        "evidence": evidence,
        "at_stake_pct": rest,
        "gain_pct": d.filling.gain(rest),
        "confidence": d.filling.note,
    }
    idle_finding = Finding(
        category="gpu_idle",
        title=f"The GPU is idle {idle:.0f}% of the step",
        explanation=advice.GPU_IDLE_EXPLANATION,
        recommendation=advice.GPU_IDLE_ADVICE,
        trigger=condition("gpu_idle", "idle"),
        **common,  # type: ignore[arg-type]
    )
    if not launch_bound:
        return [idle_finding]
    launch_evidence = evidence
    if d.outrun is not None:
        launch_evidence += (
            Evidence(
                "kernels the host's launches outrun",
                f"{d.outrun:.0%} (each shorter than the time to the next launch)",
            ),
        )
    # the cause beside its symptom: the idle device is what every host-side cause shares,
    # and the ranking puts the cause first when it explains most of it (`explains`)
    return [
        Finding(
            category="launch_overhead",
            title=f"The GPU idles {idle:.0f}% of the step between many tiny kernels",
            explanation=advice.LAUNCH_EXPLANATION,
            recommendation=advice.LAUNCH_ADVICE,
            trigger=condition("launch_overhead", "outrun" if d.outrun is not None else "short"),
            **{**common, "evidence": launch_evidence},  # type: ignore[arg-type]
        ),
        idle_finding,
    ]


def idle_from_trace(ctx: Context) -> DeviceIdle:
    """Judged on the steady state: one-time start-up has its own finding. Idle time in syncs
    is the sync finding's when that fires (its share is that idle time, to the µs)."""
    busy = ctx.steady_busy_us or 0.0
    busy_pct = busy * 100 / ctx.steady_us if ctx.steady_us else 0.0
    causes = ctx.average.device_idle_us
    synced = ctx.share(causes.get("sync", 0.0) * ctx.steps)
    # the idle while the input loads is the data-loading finding's, when that one fires
    loading = ctx.share(causes.get("input", 0.0) * ctx.steps) if ctx.input_named else 0.0
    ev = ctx.profile.events
    kernels = ev.dur[ev.kind == EventKind.KERNEL] / 1000.0
    median = float(median_of(kernels)) if len(kernels) else None
    host = causes.get("host", 0.0)
    evidence = (
        Evidence(
            "device busy", f"{busy_pct:.0f}% of the step ({short_time(busy)})" + ctx.steady_note
        ),
        Evidence("idle, waiting on the host", f"{short_time(host)} per step"),
        Evidence("idle, in a sync", f"{short_time(causes.get('sync', 0.0))} per step"),
        Evidence("idle, while loading data", f"{short_time(causes.get('input', 0.0))} per step"),
        Evidence(
            "kernels",
            f"{len(kernels) / ctx.steps:.0f} per step, median {short_time(median or 0.0)}",
        ),
    )
    return DeviceIdle(
        busy_pct=busy_pct,
        idle_pct=ctx.share(max(ctx.steady_us - busy, 0.0) * ctx.steps),
        explained_pct=(synced if synced >= advice.SYNC_PCT else 0.0) + loading,
        kernel_us=median,
        kernel_stat="median kernel",
        host_idles_it=host >= max(causes.get("sync", 0.0), causes.get("input", 0.0)),
        queue_full=False,  # a trace's queue waits are the host's: the replay prices them
        evidence=evidence,
        largest_busy_pct=busy_pct * _largest_family_fraction(ctx),
        steps=ctx.breakdown.windows == "profiler steps",
        outrun=_outrun(ctx),
    )


def _outrun(ctx: Context) -> float | None:
    """The fraction of launched kernels that the host's launches outrun: each is shorter than
    the time until the host's next launch on its thread, and the host spent that time mostly
    inside ops (dispatch and the launch: at least `LAUNCH_DISPATCH_FRACTION` of it), not in
    Python between them, CPU work outside any op or a sleep. The device then finishes each
    kernel before the next arrives. None without kernels launched in the trace."""
    ev = ctx.profile.events
    at = ctx.profile.attribution
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS) & (at.launcher >= 0))
    if len(work) < 2:
        return None
    calls = at.launcher[work].astype(np.int64)
    order = np.lexsort((ev.start[calls], ev.track[calls]))
    work, calls = work[order], calls[order]
    thread = ev.track[calls]
    starts = ev.start[calls]
    interval = np.full(len(work), np.inf)
    same = thread[1:] == thread[:-1]
    interval[:-1] = np.where(same, (starts[1:] - starts[:-1]) / 1000.0, np.inf)
    dispatched = np.zeros(len(work))
    ops = np.flatnonzero((ev.kind == EventKind.CPU_OP) & at.is_row)
    for t in unique(thread).tolist():
        mine = np.flatnonzero(thread == t)[:-1]
        if not len(mine):
            continue
        on = ops[ev.track[ops] == t]
        if not len(on):
            continue  # no op recorded on the launching thread: nothing shows it dispatching
        lo, hi = intervals.union(ev.start[on], ev.end_of(on))
        covered = _covered_before(lo, hi)
        dispatched[mine] = (covered(starts[mine + 1]) - covered(starts[mine])) / 1000.0
    kernel = (ev.kind[work] == EventKind.KERNEL) & np.isfinite(interval)
    if not kernel.any():
        return None
    dur = ev.dur[work[kernel]] / 1000.0
    gap, busy = interval[kernel], dispatched[kernel]
    return float(np.mean((dur < gap) & (busy >= advice.LAUNCH_DISPATCH_FRACTION * gap)))


def _covered_before(lo: np.ndarray, hi: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """For sorted disjoint intervals [lo, hi): the length of them before each time."""
    before = np.concatenate([[0], np.cumsum(hi - lo)])

    def covered(t: np.ndarray) -> np.ndarray:
        k = np.searchsorted(lo, t, side="right")
        inside = np.where(
            k > 0, np.minimum(t, hi[np.maximum(k - 1, 0)]) - lo[np.maximum(k - 1, 0)], 0
        )
        return before[np.maximum(k - 1, 0)] * (k > 0) + np.maximum(inside, 0)

    return covered


def _largest_family_fraction(ctx: Context) -> float:
    """The largest family's fraction of the device's work (kernels by decoded operation,
    copies and memsets as one family)."""
    ev = ctx.profile.events
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    if not len(work):
        return 0.0
    ids, inverse = np.unique(ev.name[work], return_inverse=True)
    sums = np.bincount(inverse.reshape(-1), weights=ev.dur[work], minlength=len(ids))
    first = np.zeros(len(ids), dtype=np.int64)
    first[inverse.reshape(-1)[::-1]] = work[::-1]
    families: dict[str, float] = {}
    for name, kind, total in zip(ids.tolist(), ev.kind[first].tolist(), sums.tolist(), strict=True):
        family = (
            kernel_family(decode_kernel(ev.strings[name]).operation)
            if kind == EventKind.KERNEL
            else COPIES
        )
        families[family] = families.get(family, 0.0) + total
    whole = sum(families.values())
    return max(families.values()) / whole if whole else 0.0


def idle_from_table(step: PrintedStep, device: PrintedDevice, explained_pct: float) -> DeviceIdle:
    """From the table's totals: busy is the device time total, an upper bound (kernels on
    several streams may overlap); which host work idled the device is not shown, so the
    host is taken as its cause."""
    mean = device.mean_kernel_us
    evidence = [
        Evidence(
            "device work",
            f"{short_time(device.work_us)} per step: busy at most {device.busy_pct:.0f}% of the "
            f"step ({short_time(step.step_us)})",
        )
    ]
    if mean is not None:
        evidence.append(
            Evidence(
                "kernel launches",
                f"{device.launches:.0f} per step, {short_time(mean)} of device work each",
                tuple(r.name for r in device.launch_rows),
            )
        )
    return DeviceIdle(
        busy_pct=device.busy_pct,
        idle_pct=device.idle_pct,
        explained_pct=explained_pct,
        kernel_us=mean,
        kernel_stat="device work per launch",
        host_idles_it=True,
        queue_full=step.share(device.waits.get(QUEUE_FULL, 0.0)) >= advice.QUEUE_FULL_PCT,
        evidence=tuple(evidence),
        largest_busy_pct=step.share(max(device.family_us.values(), default=0.0)),
        steps=step.steps > 1,
        filling=TABLE.noted("busy is an upper bound (kernels on several streams may overlap)"),
    )


def run(ctx: Context) -> list[Finding]:
    """The family on a trace with device work."""
    if not ctx.has_device or not ctx.breakdown.has_device:
        return []
    return idle_findings(idle_from_trace(ctx))


def from_table(step: PrintedStep, device: PrintedDevice, explained_pct: float) -> list[Finding]:
    """The family on a printed table with device columns; `explained_pct`: the idle time the
    table's other findings name."""
    return idle_findings(idle_from_table(step, device, explained_pct))
