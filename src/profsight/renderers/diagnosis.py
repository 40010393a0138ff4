"""The verdict, the step-time breakdown, the collectives and the findings, as text lines and
as data."""

from __future__ import annotations

from typing import TYPE_CHECKING

from profsight.analyses.device_work import DeviceWork
from profsight.analyses.memory_peak import MemoryPeak
from profsight.analyses.roofline import Roofline
from profsight.analyses.source_lines import SourceLines
from profsight.analyses.step.breakdown import Breakdown
from profsight.analyses.step.comms import Communication
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
from profsight.knowledge.memory_blocks import (
    BEFORE_WINDOW,
    HOLDERS_LINE,
    MEMORY_PEAK_TITLE,
    NO_BLOCKS,
    TORCH_CATEGORIES,
)
from profsight.knowledge.phases import PHASE_LABELS, Phase
from profsight.knowledge.roofline_ops import (
    ROOFLINE_NO_DEVICE,
    ROOFLINE_TEXT_ROWS,
    ROOFLINE_TITLE,
    roof_share,
)
from profsight.knowledge.source_frames import (
    NO_USER_FRAME,
    SOURCE_LINE_TEXT_ROWS,
    SOURCE_LINES_TITLE,
)
from profsight.model.findings import Finding, Severity
from profsight.renderers.names import cut_words, evidence_label, tensor_dims
from profsight.report.document import (
    communication_dict,
    device_work_dict,
    memory_peaks_list,
    roofline_dict,
    source_lines_dict,
)
from profsight.units import short_bytes, short_flops, short_rate, short_time

if TYPE_CHECKING:
    from profsight.report.build import ReportData

_IDLE_LABELS = {
    "host": "waiting for the host",
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
        phrase = saving_phrase(f.priced, f.gain_pct, f.at_stake_pct)
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


def device_work_lines(work: DeviceWork | None) -> list[str]:
    """Short kernels, launch delays and copy bandwidth, a line each (and the launchers)."""
    data = device_work_dict(work)
    if data is None:
        return []
    lines = ["Launches and copies (the whole trace)"]
    short = data["short_kernels"]
    if short is not None:
        lines.append(
            f"  short kernels (shorter than their launch call): {short['count']:,} of "
            f"{short['kernels']:,}, {short['share_pct']:.1f}% of the kernel time"
        )
        if short["count"]:
            lines.append(
                f"    {short_time(short['device_us'])} on the device, launched in "
                f"{short_time(short['launch_us'])} of host time; most from:"
            )
            for x in short["launchers"]:
                device = short_time(x["device_us"])
                lines.append(f"    {x['kernels']:>6,} {cut_words(x['op'], 80)} ({device})")
    delay = data["launch_delay"]
    if delay is not None:
        lines.append(
            f"  launch delay (start less its launch call's end), {delay['items']:,} items: "
            f"median {short_time(delay['median_us'])}, p90 {short_time(delay['p90_us'])}, "
            f"max {short_time(delay['max_us'])}"
        )
        lines.append(
            f"    behind earlier work on its stream: median "
            f"{short_time(delay['behind_earlier_work_median_us'])}; the rest, its stream free: "
            f"median {short_time(delay['launch_latency_median_us'])}, p90 "
            f"{short_time(delay['launch_latency_p90_us'])}"
        )
    for c in data["copies"]:
        lines.append(
            f"  copies {c['direction']:<14} {c['copies']:>6,} copies, {short_bytes(c['bytes'])}, "
            f"{short_rate(c['gbps'])} while copying (median copy {short_rate(c['median_gbps'])})"
        )
    return lines


def roofline_lines(roof: Roofline | None) -> list[str]:
    """The roofline: the ceilings, the coverage, the device time by bound, the top ops."""
    data = roofline_dict(roof)
    if data is None:
        return []
    lines = [ROOFLINE_TITLE]
    if data["device"] is None:
        lines.append(f"  {ROOFLINE_NO_DEVICE}")
    else:
        peaks = ", ".join(
            f"{p.upper()} {short_flops(t * 1e12, per_second=True)}"
            for p, t in data["peak_tflops"].items()
        )
        lines.append(f"  {data['device']}: {peaks}; memory {short_rate(data['bandwidth_gbs'])}")
    lines.append(
        f"  ops with a formula: {data['coverage_pct']:.1f}% of the device time "
        f"({short_time(data['covered_us'])} of {short_time(data['device_us'])})"
    )
    covered = data["covered_us"] or 1.0
    bounds = sorted(data["device_us_by_bound"].items(), key=lambda kv: -kv[1])
    if bounds:
        lines.append(
            "  by bound: " + ", ".join(f"{b} {100 * us / covered:.0f}%" for b, us in bounds)
        )
    for r in data["ops"][:ROOFLINE_TEXT_ROWS]:
        rate = short_rate(r["tbps"] * 1e3)
        if r["flops"]:
            rate = f"{short_flops(r['tflops'] * 1e12, per_second=True)}, {rate}"
        where = (
            f", {r['bound']}" + (f", {roof_share(r['roof_pct'])}" if r["roof_pct"] else "")
            if r["bound"]
            else ""
        )
        lines.append(
            f"  {short_time(r['device_us']):>9} {r['calls']:>5,}x {cut_words(r['op'], 40)} "
            f"{cut_words(tensor_dims(r['input_dims']), 48)}: {rate}, "
            f"{r['intensity']:.3g} FLOP/B{where}"
        )
    return lines


def source_lines_lines(lines: SourceLines | None) -> list[str]:
    """The functions with the most time: total and self, CPU and (on a GPU run) device."""
    data = source_lines_dict(lines)
    if data is None:
        return []
    device = data["by"] == "device"
    head = f"  {'CPU total':>9} {'self':>9}"
    if device:
        head += f" {'device':>9} {'self':>9}"
    out = [SOURCE_LINES_TITLE, head + f" {'calls':>6}"]
    for r in data["lines"][:SOURCE_LINE_TEXT_ROWS]:
        cells = f"  {short_time(r['total_cpu_us']):>9} {short_time(r['self_cpu_us']):>9}"
        if device:
            cells += f" {short_time(r['total_device_us']):>9} {short_time(r['self_device_us']):>9}"
        out.append(f"{cells} {r['calls']:>6,}  {cut_words(r['frame'], 90)}")
    blank = f"  {'':>9}"
    cells = f"{blank} {short_time(data['outside_cpu_us']):>9}"
    if device:
        cells += f"{blank} {short_time(data['outside_device_us']):>9}"
    if data["outside_cpu_us"] > 0 or data["outside_device_us"] > 0:
        out.append(f"{cells} {'':>6}  {NO_USER_FRAME}")
    return out


def memory_peak_lines(peaks: tuple[MemoryPeak, ...]) -> list[str]:
    """Each memory's peak, and the ops whose allocations it held then."""
    data = memory_peaks_list(peaks)
    if not data:
        return []
    out = [MEMORY_PEAK_TITLE]
    for p in data:
        out.append(
            f"  {p['memory']}: {short_bytes(p['peak_bytes'])} at {short_time(p['at_us'])} "
            f"into the trace"
        )
        if not p["blocks_known"]:
            out.append(f"    {NO_BLOCKS}")
            continue
        for h in p["held_by"]:
            out.append(
                f"    {short_bytes(h['bytes']):>9} {h['blocks']:>5,} blocks  "
                f"{cut_words(h['op'], 80) or '(no op around it)'}"
            )
        out.append(f"    {short_bytes(p['before_window_bytes']):>9} {'':>12}  {BEFORE_WINDOW}")
        if p["holders"]:
            named = ", ".join(f"{h} {short_bytes(b)}" for h, b in p["holders"].items() if b)
            out.append(f"    {HOLDERS_LINE}: {named}")
        if p["torch_categories"]:
            parts = sorted(p["torch_categories"].items(), key=lambda kv: -kv[1])
            named = ", ".join(f"{c.replace('_', ' ')} {short_bytes(b)}" for c, b in parts)
            out.append(f"    {TORCH_CATEGORIES}: {named}")
    return out
