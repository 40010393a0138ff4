"""The verdict, the step-time breakdown and the findings, as text lines and as data."""

from __future__ import annotations

from typing import Any

from profsight.analyses.breakdown import Breakdown, StepBreakdown
from profsight.findings import Finding
from profsight.knowledge.phases import PHASE_LABELS, Phase
from profsight.report import Report
from profsight.units import short_time

_IDLE_LABELS = {
    "host": "waiting for the host",
    "sync": "in a host-device sync",
    "copy": "during a blocking copy call",
    "input": "while the host loads data",
}


def verdict_lines(report: Report) -> list[str]:
    v = report.verdict
    if v is None:
        return []
    return [f"Verdict: {v.summary}", f"  (bound: {v.bound}; {'; '.join(v.evidence)})"]


def breakdown_lines(breakdown: Breakdown | None, device_name: str = "GPU") -> list[str]:
    if breakdown is None or not breakdown.steps:
        return []
    avg = breakdown.average()
    where = f", on {breakdown.thread}" if breakdown.thread else ""
    lines = [
        f"Where a step's time goes ({len(breakdown.steps)} {breakdown.windows}, average "
        f"{short_time(avg.wall_us)}{where}):"
    ]
    for phase, us in sorted(avg.host_us.items(), key=lambda kv: -kv[1]):
        pct = us * 100 / avg.wall_us if avg.wall_us else 0.0
        if pct < 0.5:
            continue
        bar = "█" * round(pct / 4)
        lines.append(f"  {pct:5.1f}%  {short_time(us):>9}  {bar:<25} {PHASE_LABELS[Phase(phase)]}")
    if avg.device_busy_us is not None:
        busy = avg.device_busy_us * 100 / avg.wall_us if avg.wall_us else 0.0
        lines.append(f"  device: busy {busy:.0f}% ({short_time(avg.device_busy_us)})")
        for cause, us in avg.device_idle_us.items():
            if us > 0:
                lines.append(f"          idle {short_time(us)} {_IDLE_LABELS.get(cause, cause)}")
    if len(breakdown.steps) > 1:
        walls = ", ".join(f"{s.name} {short_time(s.wall_us)}" for s in breakdown.steps)
        lines.append(f"  per step: {walls}")
    return lines


def finding_lines(findings: tuple[Finding, ...]) -> list[str]:
    lines: list[str] = []
    for i, f in enumerate(findings, 1):
        gain = f", could save ~{f.gain_pct:.0f}% of the step" if f.gain_pct else ""
        lines.append(f"{i}. [{f.severity.name.lower()}] {f.title}  ({f.category}{gain})")
        for e in f.evidence:
            lines.append(f"     - {e.label}: {e.value}")
        lines.append(f"     why: {f.explanation}")
        lines.append(f"     fix: {f.recommendation}")
    return lines


def step_dict(step: StepBreakdown) -> dict[str, Any]:
    return {
        "name": step.name,
        "wall_us": step.wall_us,
        "host_us": step.host_us,
        "device_busy_us": step.device_busy_us,
        "device_idle_us": step.device_idle_us,
    }


def breakdown_dict(breakdown: Breakdown | None) -> dict[str, Any] | None:
    if breakdown is None or not breakdown.steps:
        return None
    return {
        "windows": breakdown.windows,
        "thread": breakdown.thread,
        "average": step_dict(breakdown.average()),
        "steps": [step_dict(s) for s in breakdown.steps],
    }
