"""The verdict, the step-time breakdown, the collectives and the findings, as text lines and
as data."""

from __future__ import annotations

from typing import TYPE_CHECKING

from profsight.knowledge.advice import (
    CLOCK_LAG,
    CLOCK_NAMES,
    CLOCK_NO_LAG,
    CLOCKS_LINE,
    QUEUE_LIMIT_DEFAULT,
    QUEUE_LIMIT_MEASURED,
    QUEUE_LINE,
    saving_phrase,
)
from profsight.knowledge.phases import PHASE_LABELS, Phase
from profsight.model.collectives_seen import Communication
from profsight.model.findings import Finding, Severity
from profsight.model.step_windows import Breakdown
from profsight.names import cut_words, evidence_label
from profsight.report.document import (
    communication_dict,
)
from profsight.units import short_bytes, short_rate, short_time

if TYPE_CHECKING:
    from profsight.report.build import ReportData

_IDLE_LABELS = {
    "host": "waiting for the host",
    "ahead": "running work queued before the steps",
    "startup": "during one-time start-up",
    "held": "while launched work was held back",
    "sync": "in a host-device sync",
    "copy": "during a blocking copy call",
    "input": "while the host loads data",
}


def verdict_lines(report: ReportData) -> list[str]:
    v = report.verdict
    if v is None:
        return []
    return [f"Verdict: {v.summary}", f"  (bound: {v.bound}; {'; '.join(v.evidence)})"]


def clock_lines(breakdown: Breakdown) -> list[str]:
    """The two clocks of a GPU run's steps: the host's range, how long after it the device's
    work ended, which clock bounds the steps, and the launch queue when it was full."""
    avg = breakdown.average()
    if avg.device_busy_us is None or avg.device_end_us is None:
        return []
    lines = [
        CLOCKS_LINE.format(
            host=short_time(avg.host_range_us),
            lag=CLOCK_LAG.format(lag=short_time(avg.lag_us)) if avg.lag_us >= 1 else CLOCK_NO_LAG,
            step=short_time(avg.wall_us),
            clock=CLOCK_NAMES[breakdown.bound],
        )
    ]
    queue = breakdown.queue
    if queue is not None and avg.blocked_us > 0:
        limit = (
            QUEUE_LIMIT_MEASURED
            if queue.measured
            else QUEUE_LIMIT_DEFAULT.format(limit=queue.limit)
        )
        lines.append(
            QUEUE_LINE.format(
                depth=queue.max_depth, limit=limit, blocked=short_time(avg.blocked_us)
            )
        )
    return lines


def breakdown_lines(breakdown: Breakdown | None, device_name: str = "GPU") -> list[str]:
    if breakdown is None or not breakdown.steps:
        return []
    avg = breakdown.average()
    where = f", on {breakdown.thread}" if breakdown.thread else ""
    lines = [
        f"Where a step's time goes ({breakdown.described}, average "
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
    lines += [f"  {line}" for line in clock_lines(breakdown)]
    if len(breakdown.steps) > 1:
        walls = ", ".join(f"{s.name} {short_time(s.wall_us)}" for s in breakdown.steps)
        lines.append(f"  per step: {walls}")
    return lines


def finding_lines(findings: tuple[Finding, ...], width: int = 120) -> list[str]:
    """The findings as lines for a `width`-column text: an evidence label that names a row
    is cut to fit its line, and no word is longer than a line."""
    lines: list[str] = []
    room = width - 5
    for i, f in enumerate(findings, 1):
        phrase = saving_phrase(f.priced, f.gain_pct, f.at_stake_pct, f.gain_spread_pct)
        gain = f", {phrase}" if phrase and f.severity is not Severity.INFO else ""
        title = cut_words(f.title, width)
        lines.append(f"{i}. [{f.severity.name.lower()}] {title}  ({f.category}{gain})")
        for e in f.evidence:
            lines.append(f"     - {evidence_label(e.label, e.value, e.rows, room)}: {e.value}")
        lines.append(f"     why: {cut_words(f.explanation, room)}")
        lines.append(f"     fix: {cut_words(f.recommendation, room)}")
        if f.confidence:
            lines.append(f"     note: {cut_words(f.confidence, room)}")
    return lines


def communication_lines(comms: Communication | None) -> list[str]:
    data = communication_dict(comms)
    if data is None:
        return []
    head = f"Collectives ({data['backend']}, timed by {data['timed_on']})"
    if data["busy_us"] is not None:
        head += (
            f": {short_time(data['busy_us'])} per step, {short_time(data['exposed_us'])} exposed "
            f"(nothing computes), {short_time(data['overlapped_us'])} hidden by compute"
        )
    lines = [head]
    for o in data["operations"]:
        parts = [f"{o['calls_per_step']:.3g} per step"]
        if o["bytes"]:
            parts.append(short_bytes(o["bytes"]))
        if o["transfer_us"] is not None:
            parts.append(f"{short_time(o['transfer_us'])} per call")
        if o["bus_gbps"] is not None:
            parts.append(f"bus bandwidth {short_rate(o['bus_gbps'])}")
        lines.append(f"  {o['operation']:<15} " + ", ".join(parts))
    return lines
