"""Where the compute goes: convolutions, matrix multiplies, or everything else.

On a GPU run this is the device time of the ops (their kernels); on a CPU run, the CPU time
of the ops themselves. These findings are informational: they say what the model spends
its time on when nothing else dominates, and what makes that work cheaper.
"""

from __future__ import annotations

import numpy as np

from profsight.analyses.step import intervals
from profsight.analyses.step.clocks import step_of
from profsight.analyses.step.context import Context
from profsight.analyses.step.startup import startup_intervals
from profsight.knowledge.advice import COMPUTE_PCT, compute_advice, compute_explanation
from profsight.knowledge.ops import lookup_op
from profsight.knowledge.phases import Phase
from profsight.knowledge.trace_schema import EventKind
from profsight.model.findings import Evidence, Finding, Severity
from profsight.units import short_time

#: Op glossary categories -> compute finding category.
COMPUTE_CATEGORIES = {
    "convolution": "compute_conv",
    "matmul": "compute_matmul",
    "attention": "compute_matmul",
}


#: Phases whose ops are not the model's forward/backward math (they have their own findings).
NOT_MODEL_PHASES = (
    Phase.OPTIMIZER,
    Phase.ZERO_GRAD,
    Phase.METRICS,
    Phase.VALIDATION,
    Phase.DATA_LOADING,
    Phase.CALLBACKS_LOGGING,
)
SKIPPED_OP_CATEGORIES = frozenset({"view", "allocation", "sync", "profiler"})


def run(ctx: Context) -> list[Finding]:
    if ctx.unrecorded:
        return []  # a GPU run's compute is its kernels, and none was recorded
    device = ctx.has_device
    ev = ctx.profile.events
    at = ctx.profile.attribution
    bd = ctx.breakdown
    ops = np.flatnonzero(at.is_row & (ev.kind == EventKind.CPU_OP))
    # the steps' ops (their host ranges): the window's other ops are no step's compute
    if bd.steps:
        ops = ops[step_of(*bd.host_ranges_ns, ev.start[ops]) >= 0]
    # ops run once while starting up (torch.compile tracing the model) are not its compute
    startup = startup_intervals(ctx.profile)
    ops = ops[~intervals.overlaps(ev.start[ops], ev.start[ops] + 1, startup)]
    not_model = bd.row_events[bd.rows_in(*NOT_MODEL_PHASES)]
    ops = ops[~np.isin(ops, not_model)]
    cost = (_kernel_self(ctx) if device else at.cpu_self)[ops]
    ids, inverse = np.unique(ev.name[ops], return_inverse=True)
    sums = np.bincount(inverse.reshape(-1), weights=cost, minlength=len(ids))
    counts = np.bincount(inverse.reshape(-1), minlength=len(ids))
    by_name = dict(zip(ids.tolist(), sums.tolist(), strict=True))
    calls = dict(zip(ids.tolist(), counts.tolist(), strict=True))
    by_category: dict[str, list[tuple[str, float, int]]] = {}
    for name, c in by_name.items():
        text = ev.strings[name]
        op = lookup_op(text)
        if op is not None and op.category in SKIPPED_OP_CATEGORIES:
            continue
        category = COMPUTE_CATEGORIES.get(op.category, "compute_other") if op else "compute_other"
        by_category.setdefault(category, []).append((text, c, calls[name]))
    totals = {k: sum(c for _, c, _ in v) for k, v in by_category.items()}
    if not totals:
        return []
    top = max(totals, key=lambda k: totals[k])
    share = ctx.share(totals[top])
    if share < COMPUTE_PCT:
        return []
    leaders = [x for x in sorted(by_category[top], key=lambda x: -x[1]) if x[1] > 0][:4]
    where = "device" if device else "CPU"
    evidence = tuple(
        Evidence(name, f"{short_time(c)} {where} time, {n} calls", (name,))
        for name, c, n in leaders
    )
    return [
        compute_finding(
            top,
            share,
            evidence,
            f"{where} time in the forward and backward passes",
            arch=ctx.arch if device else None,
        )
    ]


def _kernel_self(ctx: Context) -> np.ndarray:
    """Per event: the device self time of its kernels alone. Copies (host-device, device to
    device, peer to peer over NVLink or PCIe) and memsets move data, they do not compute: an
    ``aten::copy_`` that moves a tensor to another GPU is the copies' cost, not the model's."""
    ev = ctx.profile.events
    at = ctx.profile.attribution
    moves = np.flatnonzero(
        ((ev.kind == EventKind.MEMCPY) | (ev.kind == EventKind.MEMSET)) & (at.owner >= 0)
    )
    moved = np.bincount(at.owner[moves], weights=ev.dur[moves] / 1000.0, minlength=len(ev))
    kernel_self: np.ndarray = np.maximum(at.device_self - moved, 0.0)
    return kernel_self


def compute_finding(
    category: str,
    share: float,
    evidence: tuple[Evidence, ...],
    where: str,
    confidence: str = "",
    arch: str | None = None,
) -> Finding:
    """The informational finding of where the compute goes: `category` takes `share` of the
    step, counted as the ops' own `where`; the advice names `arch`'s precisions."""
    title, advice = compute_advice(category, arch)
    return Finding(
        category=category,
        severity=Severity.INFO,
        title=f"{title}: {share:.0f}% of the step",
        evidence=evidence,
        explanation=compute_explanation(where),
        recommendation=advice,
        at_stake_pct=share,
        trigger=f"one compute category >= {COMPUTE_PCT:g}% of the step (informational)",
        confidence=confidence,
    )
