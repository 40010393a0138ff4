"""Where the compute goes: convolutions, matrix multiplies, or everything else.

On a GPU run this is the device time of the ops (their kernels); on a CPU run, the CPU time
of the ops themselves. These findings are informational: they say what the model spends
its time on when nothing else dominates, and what makes that work cheaper.
"""

from __future__ import annotations

from profsight.analyses.context import Context
from profsight.findings import Evidence, Finding, Severity
from profsight.knowledge.advice import COMPUTE_PCT
from profsight.knowledge.ops import lookup_op
from profsight.knowledge.rows import RowKind
from profsight.model.table import Row
from profsight.units import short_time

#: Op glossary categories -> compute finding category.
COMPUTE_CATEGORIES = {
    "convolution": "compute_conv",
    "matmul": "compute_matmul",
    "attention": "compute_matmul",
}

ADVICE = {
    "compute_conv": (
        "Convolutions do the work, as they should in a conv net",
        "On a GPU: channels_last memory format (model.to(memory_format=torch.channels_last)), "
        "torch.backends.cudnn.benchmark = True for fixed input sizes, bf16/fp16 autocast "
        "(Trainer(precision='bf16-mixed')); drop conv bias before BatchNorm (bias=False). On a "
        "CPU: channels_last and torch.compile help oneDNN; a GPU is the real fix.",
    ),
    "compute_matmul": (
        "Matrix multiplies do the work, as they should in a transformer or MLP",
        "Use tensor cores: torch.autocast / Trainer(precision='bf16-mixed'), or "
        "torch.backends.cuda.matmul.allow_tf32 = True for FP32; fused attention "
        "(F.scaled_dot_product_attention); dimensions that are multiples of 8 (16 for FP8).",
    ),
    "compute_other": (
        "Elementwise, normalisation and memory-bound ops take most of the compute",
        "Fuse them: torch.compile(model) merges elementwise chains into few kernels; use fused "
        "implementations (fused LayerNorm/Adam); check for needless copies (.contiguous(), "
        ".to()).",
    ),
}


def run(ctx: Context) -> list[Finding]:
    device = ctx.has_device
    rows = ctx.rows(RowKind.ATEN)
    by_category: dict[str, list[Row]] = {}
    for row in rows:
        op = lookup_op(row.name)
        category = COMPUTE_CATEGORIES.get(op.category, "compute_other") if op else "compute_other"
        if op is not None and op.category in ("view", "allocation", "sync", "profiler"):
            continue
        by_category.setdefault(category, []).append(row)

    def cost(row: Row) -> float:
        return row.self_device_us if device else row.self_cpu_us

    totals = {c: sum(cost(r) for r in rs) for c, rs in by_category.items()}
    if not totals:
        return []
    top = max(totals, key=lambda c: totals[c])
    share = ctx.share(totals[top])
    if share < COMPUTE_PCT:
        return []
    title, advice = ADVICE[top]
    leaders = sorted(by_category[top], key=cost, reverse=True)[:4]
    where = "device" if device else "CPU"
    return [
        Finding(
            category=top,
            severity=Severity.INFO,
            title=f"{title}: {share:.0f}% of the step",
            evidence=tuple(
                Evidence(r.name, f"{short_time(cost(r))} {where} time, {r.calls} calls", (r.name,))
                for r in leaders
            ),
            explanation=f"These ops' own {where} time is the largest share of the step: the "
            "model's arithmetic, not overhead around it.",
            recommendation=advice,
            at_stake_pct=share,
            trigger=f"one compute category >= {COMPUTE_PCT:g}% of the step (informational)",
        )
    ]
