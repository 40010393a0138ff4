"""The launches-and-copies section: short kernels, launch delays and copy bandwidth over the
whole trace (`analyses.device_work` defines each figure)."""

from __future__ import annotations

from typing import Any

from profsight.analyses.device_work import DeviceWork, device_work
from profsight.analyses.pipeline import Diagnosis
from profsight.model.profile import Profile
from profsight.names import cut_words
from profsight.report.sections.section import Section
from profsight.units import short_bytes, short_rate, short_time


def _compute(profile: Profile, _: Diagnosis) -> DeviceWork | None:
    return device_work(profile)


def device_work_dict(work: DeviceWork | None) -> dict[str, Any] | None:
    """Short kernels, launch delays and copy bandwidth over the whole trace (JSON
    ``device_work``; `analyses.device_work` defines each figure)."""
    if work is None:
        return None
    short = work.short
    delays = work.delays
    return {
        "short_kernels": None
        if short is None
        else {
            "count": short.count,
            "kernels": short.kernels,
            "device_us": short.device_us,
            "kernel_us": short.kernel_us,
            "share_pct": short.share_pct,
            "launch_us": short.launch_us,
            "launchers": [
                {"op": x.op, "kernels": x.kernels, "device_us": x.device_us}
                for x in short.launchers
            ],
        },
        "launch_delay": None
        if delays is None
        else {
            "items": delays.items,
            "median_us": delays.median_us,
            "p90_us": delays.p90_us,
            "max_us": delays.max_us,
            "behind_earlier_work_median_us": delays.behind_median_us,
            "launch_latency_median_us": delays.latency_median_us,
            "launch_latency_p90_us": delays.latency_p90_us,
        },
        "copies": [
            {
                "direction": c.direction,
                "copies": c.copies,
                "bytes": c.nbytes,
                "busy_us": c.busy_us,
                "gbps": c.gbps,
                "median_gbps": c.median_gbps,
                "series_ms_gbps": [list(point) for point in c.series],
            }
            for c in work.copies
        ],
    }


def device_work_lines(data: Any) -> list[str]:
    """Short kernels, launch delays and copy bandwidth, a line each (and the launchers)."""
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


SECTION = Section(
    name="device_work",
    title="Launches and copies",
    compute=_compute,
    document=device_work_dict,
    lines=device_work_lines,
    page=lambda document: document,
)

__all__ = ["SECTION", "device_work_dict", "device_work_lines"]
