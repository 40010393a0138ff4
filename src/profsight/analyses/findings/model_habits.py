"""Model-level findings: conv bias before BatchNorm, and how the model's size fits the
hardware (the verdict's judgement as a finding, with its numbers)."""

from __future__ import annotations

import numpy as np

from profsight import json_text
from profsight.analyses.context import Context
from profsight.knowledge import advice
from profsight.knowledge.catalogue import condition
from profsight.knowledge.phases import Phase
from profsight.knowledge.trace_schema import EventKind
from profsight.model.findings import Evidence, Finding, Severity
from profsight.stats import unique

CONV = "aten::convolution"
BATCH_NORM = (
    "aten::batch_norm",
    "aten::_batch_norm_impl_index",
    "aten::native_batch_norm",
    "aten::cudnn_batch_norm",
)


def run(ctx: Context) -> list[Finding]:
    return [
        *_conv_bias_before_norm(ctx),
        *optimizer_implementation(ctx),
    ]


def _conv_bias_before_norm(ctx: Context) -> list[Finding]:
    """A biased convolution whose next op (same parent) is a batch norm: the bias is wasted,
    BatchNorm subtracts the mean right after."""
    ev = ctx.profile.events
    at = ctx.profile.attribution
    ids = {s: i for i, s in enumerate(ev.strings)}
    if CONV not in ids:
        return []
    ops = np.flatnonzero(at.is_row & (at.parent >= 0))
    order = ops[np.lexsort((ev.start[ops], at.parent[ops]))]
    parent = at.parent[order]
    same = parent[1:] == parent[:-1]
    # the conv chain is conv2d -> convolution; compare the outer call's next sibling
    convs = np.flatnonzero(ev.name == ids[CONV])
    outer = np.where(at.parent[convs] >= 0, at.parent[convs], convs)
    position = np.full(len(ev), -1, np.int64)  # each row's place in `order`
    position[order] = np.arange(len(order))
    k = position[outer]
    followed = (k >= 0) & (k + 1 < len(order))
    followed[followed] &= same[k[followed]]
    norms = [ids[n] for n in BATCH_NORM if n in ids]
    by_norm = convs[followed][np.isin(ev.name[order[k[followed] + 1]], norms)]
    wasted = sum(_has_bias(ev.strings, int(s)) for s in ev.shapes[by_norm].tolist())
    if not wasted:
        return []
    return [
        Finding(
            category="compute_conv",
            severity=Severity.LOW,
            title=advice.CONV_BIAS_TITLE.format(per_step=wasted // ctx.steps),
            evidence=(Evidence("biased conv followed by batch_norm", f"{wasted} calls", (CONV,)),),
            explanation=advice.CONV_BIAS_EXPLANATION,
            recommendation=advice.CONV_BIAS_ADVICE,
            # the bias add's own time is inside the convolution's kernels: not measured
            at_stake_pct=0.0,
            trigger=condition("compute_conv", "conv_bias"),
        )
    ]


def _has_bias(strings: list[str], shapes_id: int) -> bool:
    if shapes_id < 0:
        return False
    try:
        dims = json_text.loads(strings[shapes_id])
    except ValueError:
        return False
    return len(dims) > 2 and isinstance(dims[2], list) and len(dims[2]) > 0


def complexity(judgement: str, summary: str, evidence: tuple[str, ...]) -> list[Finding]:
    """The verdict on the model's size as a finding, so every renderer lists it."""
    if judgement not in ("too_small_for_hardware", "too_heavy_for_hardware"):
        return []
    small = judgement == "too_small_for_hardware"
    return [
        Finding(
            category="model_complexity",
            severity=Severity.INFO,
            title=advice.SMALL_MODEL_TITLE if small else advice.HEAVY_MODEL_TITLE,
            evidence=tuple(Evidence("measured", e) for e in evidence),
            explanation=summary,
            recommendation=advice.SMALL_MODEL_ADVICE if small else advice.HEAVY_MODEL_ADVICE,
            at_stake_pct=0.0,
            trigger=condition("model_complexity", "verdict"),
        )
    ]


def optimizer_implementation(ctx: Context) -> list[Finding]:
    """Adam/SGD run as a Python loop over parameters (no ``_foreach_``/``_fused_`` ops)."""
    bd = ctx.breakdown
    ev = ctx.profile.events
    rows = bd.row_events
    in_optimizer = bd.rows_in(Phase.OPTIMIZER)
    ops = rows[in_optimizer & (ev.kind[rows] == EventKind.CPU_OP)].tolist()
    if not ops:
        return []
    names = [ev.strings[n] for n in unique(ev.name[ops]).tolist()]
    if any("_foreach_" in n or "_fused_" in n for n in names):
        return []
    per_step = len(ops) / ctx.steps
    share = ctx.phase_share("optimizer")
    if per_step < advice.FOR_LOOP_OPS_PER_STEP or share < advice.FOR_LOOP_MIN_PCT:
        return []
    return [
        Finding(
            category="optimizer",
            severity=Severity.MEDIUM if share >= advice.FOR_LOOP_MEDIUM_PCT else Severity.LOW,
            title=advice.FOR_LOOP_OPTIMIZER_TITLE.format(per_step=per_step),
            evidence=(
                Evidence(
                    "optimizer ops per step",
                    f"{per_step:.0f}, none of them _foreach_ or _fused_",
                    tuple(sorted(set(names))[:5]),
                ),
            ),
            explanation=advice.FOR_LOOP_OPTIMIZER_EXPLANATION,
            recommendation=advice.optimizer_advice(_optimizer_class(ctx), ctx.has_device),
            at_stake_pct=share,
            trigger=condition("optimizer", "for_loop"),
        )
    ]


def _optimizer_class(ctx: Context) -> str:
    """``Adam`` of an ``Optimizer.step#Adam.step`` row, else a generic placeholder."""
    for row in ctx.table.rows:
        if row.name.startswith("Optimizer.step#"):
            return row.name.split("#", 1)[1].split(".", 1)[0]
    return advice.OPTIMIZER_PLACEHOLDER
