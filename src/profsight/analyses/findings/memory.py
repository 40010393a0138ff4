"""Copies that allocate a large new tensor on every call: a tensor grown by ``torch.cat``,
``.clone()`` or ``.contiguous()`` of large tensors inside the step.

The evidence is the row's own allocations (``Self CPU Mem`` / ``Self CUDA Mem``, recorded with
``profile_memory=True``) per call, next to its own time: a trace's table and a printed table
both have them, so both read this the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from profsight.knowledge import advice
from profsight.knowledge.ops import lookup_op
from profsight.model.findings import Evidence, Finding, severity_for
from profsight.model.table import Row
from profsight.units import short_time

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
                trigger=f"a copy op allocating >= {advice.LARGE_COPY_BYTES // 2**20} MiB per call "
                f"with >= {advice.COPY_CHURN_PCT:g}% of the step ({advice.MEASURED})",
            )
        )
    return findings
