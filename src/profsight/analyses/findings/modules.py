"""Module overhead: time a module spends outside its child modules (its Python, its glue
ops such as a skip connection), and many tiny ops in the forward pass."""

from __future__ import annotations

import numpy as np

from profsight.analyses.step.context import Context
from profsight.knowledge import advice
from profsight.knowledge.advice import (
    DDP_FORWARD_NOTE,
    MEASURED,
    MODULE_ADVICE,
    MODULE_OWN_FRACTION,
    MODULE_OWN_PCT,
    TINY_OP_US,
    TINY_OPS_PER_STEP,
)
from profsight.knowledge.lightning_names import TORCH_LAYERS
from profsight.knowledge.phases import Phase
from profsight.knowledge.rows import RowKind
from profsight.knowledge.trace_schema import EventKind
from profsight.model.findings import Evidence, Finding, severity_for
from profsight.model.module_table import OUTSIDE_MODULES
from profsight.model.table import Row
from profsight.units import short_time


def run(ctx: Context) -> list[Finding]:
    return _own_time(ctx) + _tiny_ops(ctx)


def _candidates(ctx: Context) -> list[Row]:
    """Modules by the module ranges (``with_modules``, Lightning's ``[pl][module]``), plus
    module rows of the plain table that no such range covers: the ``.forward`` ranges torch
    records itself (``DistributedDataParallel.forward``, in which Lightning runs
    ``training_step``)."""
    rows = list(ctx.profile.table(group_by="module").rows)
    seen = {r.name for r in rows}
    rows += [
        r for r in ctx.rows(RowKind.MODULE) if r.name not in seen and r.name.endswith(".forward")
    ]
    return rows


def _own_time(ctx: Context) -> list[Finding]:
    findings = []
    for row in _candidates(ctx):
        if (
            row.name == OUTSIDE_MODULES
            or row.event_kind == "metric"
            or not row.cpu_total_us
            or _is_layer(row.name)
        ):
            continue
        share = ctx.host_at_stake(ctx.share(row.self_cpu_us))
        fraction = row.self_cpu_us / row.cpu_total_us
        if share < MODULE_OWN_PCT or fraction < MODULE_OWN_FRACTION:
            continue
        findings.append(
            Finding(
                category="module_overhead",
                severity=severity_for(share),
                title=f"{row.name} spends {fraction:.0%} of its time outside its layers",
                evidence=(
                    Evidence(
                        "own time (outside child modules)",
                        f"{short_time(row.self_cpu_us / ctx.steps)} per step, "
                        f"{share:.1f}% of the step",
                        (row.name,),
                    ),
                    Evidence("total time", f"{short_time(row.cpu_total_us / ctx.steps)} per step"),
                ),
                explanation=advice.MODULE_OWN_EXPLANATION
                + (DDP_FORWARD_NOTE if row.name.startswith("DistributedDataParallel") else ""),
                recommendation=MODULE_ADVICE,
                at_stake_pct=share,
                trigger=f"own time >= {MODULE_OWN_PCT:g}% of the step and >= "
                f"{MODULE_OWN_FRACTION:.0%} of the module's total ({MEASURED})",
            )
        )
    return findings


def _is_layer(label: str) -> bool:
    """A torch.nn layer (``conv1 (Conv2d)``): its own time is its computation."""
    cls = label.rsplit("(", 1)[-1].rstrip(")") if label.endswith(")") else label
    return cls in TORCH_LAYERS


def _tiny_ops(ctx: Context) -> list[Finding]:
    """Many ops of a few microseconds each in the forward pass: a Python loop over tensors."""
    bd = ctx.breakdown
    if not len(bd.row_events):
        return []
    ev = ctx.profile.events
    at = ctx.profile.attribution
    events = bd.row_events
    forward = bd.rows_in(Phase.FORWARD)
    ops = events[forward & (ev.kind[events] == EventKind.CPU_OP)]
    leaves = ops[at.cpu_total_of(ops) < TINY_OP_US]
    per_step = len(leaves) / ctx.steps
    if per_step < TINY_OPS_PER_STEP:
        return []
    share = ctx.host_at_stake(ctx.share(float(at.cpu_total_of(leaves).sum())))
    if share < MODULE_OWN_PCT:
        return []
    names, counts = np.unique(ev.name[leaves], return_counts=True)
    top = [ev.strings[int(n)] for n in names[np.argsort(-counts)][:4]]
    return [
        Finding(
            category="module_overhead",
            severity=severity_for(share),
            title=f"{per_step:.0f} tiny ops per step in the forward pass",
            evidence=(
                Evidence(
                    "ops under " + short_time(TINY_OP_US),
                    f"{per_step:.0f} per step, {share:.1f}% of the step",
                    tuple(top),
                ),
            ),
            explanation=advice.TINY_OPS_EXPLANATION,
            recommendation=MODULE_ADVICE,
            at_stake_pct=share,
            trigger=f">= {TINY_OPS_PER_STEP} ops under {short_time(TINY_OP_US)} per step in "
            f"forward, >= {MODULE_OWN_PCT:g}% of the step ({MEASURED})",
        )
    ]
