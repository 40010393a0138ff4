"""The launches-and-copies section: short kernels, launch delays and copy bandwidth over the
whole trace (`analyses.device_work` defines each figure)."""

from __future__ import annotations

from typing import Any

import msgspec

from profsight.analyses.device_work import DeviceWork, device_work
from profsight.analyses.pipeline import Diagnosis
from profsight.model.profile import Profile
from profsight.names import cut_words
from profsight.report.sections.section import Number, Section
from profsight.units import short_bytes, short_rate, short_time


def _compute(profile: Profile, _: Diagnosis) -> DeviceWork | None:
    return device_work(profile)


class LauncherDoc(msgspec.Struct):
    op: str
    kernels: int
    device_us: Number


class ShortKernelsDoc(msgspec.Struct):
    count: int
    kernels: int
    device_us: Number
    kernel_us: Number
    share_pct: Number
    launch_us: Number
    launchers: list[LauncherDoc]


class LaunchDelayDoc(msgspec.Struct):
    items: int
    median_us: Number
    p90_us: Number
    max_us: Number
    behind_median_us: Number = msgspec.field(name="behind_earlier_work_median_us")
    latency_median_us: Number = msgspec.field(name="launch_latency_median_us")
    latency_p90_us: Number = msgspec.field(name="launch_latency_p90_us")


class CopyRateDoc(msgspec.Struct):
    direction: str
    copies: int
    nbytes: int = msgspec.field(name="bytes")
    busy_us: Number
    gbps: Number
    median_gbps: Number
    series: list[list[float]] = msgspec.field(name="series_ms_gbps")


class DeviceWorkDoc(msgspec.Struct):
    """The section as the JSON report writes it (`analyses.device_work.DeviceWork`)."""

    short: ShortKernelsDoc | None = msgspec.field(name="short_kernels")
    delays: LaunchDelayDoc | None = msgspec.field(name="launch_delay")
    copies: list[CopyRateDoc]


def device_work_dict(work: DeviceWork | None) -> dict[str, Any] | None:
    """Short kernels, launch delays and copy bandwidth over the whole trace (JSON
    ``device_work``; `analyses.device_work` defines each figure)."""
    if work is None:
        return None
    built: dict[str, Any] = msgspec.to_builtins(
        msgspec.convert(work, DeviceWorkDoc, from_attributes=True)
    )
    return built


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
