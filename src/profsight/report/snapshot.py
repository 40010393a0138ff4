"""A memory snapshot explained: each device's peak, what holds it, and what to shrink
first, as data the renderers draw (`renderers.snapshot_report`)."""

from __future__ import annotations

import os
from typing import Any

import msgspec

from profsight.analyses.snapshot_peak import DevicePeak, PeakSite, snapshot_peaks
from profsight.knowledge.snapshot_sites import HOLDER_ADVICE, HOLDER_PHRASE, NO_TRACE, PHASE_PHRASE
from profsight.loaders.snapshot_pickle import load_snapshot
from profsight.model.memory_snapshot import MemorySnapshot
from profsight.units import short_bytes, short_time


class SnapshotReport(msgspec.Struct, frozen=True):
    source: str
    peaks: tuple[DevicePeak, ...]
    summary: tuple[str, ...]
    """A line per device: the peak, when, and what holds most of it."""
    advice: tuple[str, ...]
    """A line per device: what to shrink first."""
    diagnostics: tuple[str, ...]


def explain_snapshot(path: str | os.PathLike[str]) -> SnapshotReport:
    return snapshot_report(load_snapshot(path))


def snapshot_report(snapshot: MemorySnapshot) -> SnapshotReport:
    peaks = tuple(snapshot_peaks(snapshot))
    for p in peaks:
        if p.events == 0:
            snapshot.diagnostics.append(f"device {p.device}: {NO_TRACE}")
    return SnapshotReport(
        source=snapshot.source,
        peaks=peaks,
        summary=tuple(_summary(p) for p in peaks),
        advice=_advice(peaks),
        diagnostics=tuple(snapshot.diagnostics),
    )


def _advice(peaks: tuple[DevicePeak, ...]) -> tuple[str, ...]:
    """What to shrink first, per device (once, without the device, when there is one)."""
    shown = [p for p in peaks if p.peak_bytes]
    if len(shown) == 1:
        return (HOLDER_ADVICE[top_holder(shown[0])],)
    return tuple(f"device {p.device}: {HOLDER_ADVICE[top_holder(p)]}" for p in shown)


def blocks(n: int) -> str:
    return f"{n:,} block" + ("" if n == 1 else "s")


def top_holder(peak: DevicePeak) -> str:
    return max(peak.holders.items(), key=lambda kv: kv[1])[0]


def _summary(p: DevicePeak) -> str:
    when = (
        f"allocation {p.peak_allocation:,} of {p.allocations:,}"
        if p.peak_index >= 0
        else "when the history began"
    )
    if p.peak_at_us is not None:
        when += f", {short_time(p.peak_at_us)} in"
    where = f" in {PHASE_PHRASE[p.peak_phase]}" if p.peak_phase != "other" else ""
    top = top_holder(p)
    line = (
        f"device {p.device}: peak {short_bytes(p.peak_bytes)} allocated{where} ({when}); "
        f"{short_bytes(p.holders[top])} of it {HOLDER_PHRASE[top]}"
    )
    if p.sites:
        s = p.sites[0]
        line += f"; the most by one site: {s.label} ({short_bytes(s.bytes)}, {blocks(s.blocks)})"
    return line + f"; {short_bytes(p.reserved_bytes)} reserved at the end"


SNAPSHOT_SCHEMA = "profsight-snapshot/1"


def snapshot_document(report: SnapshotReport) -> dict[str, Any]:
    return {
        "schema": SNAPSHOT_SCHEMA,
        "source": report.source,
        "summary": list(report.summary),
        "advice": list(report.advice),
        "diagnostics": list(report.diagnostics),
        "devices": [device_document(p) for p in report.peaks],
    }


def device_document(p: DevicePeak) -> dict[str, Any]:
    return {
        "device": p.device,
        "events": p.events,
        "peak_bytes": p.peak_bytes,
        "peak_event": p.peak_index,
        "peak_allocation": p.peak_allocation,
        "allocations": p.allocations,
        "peak_at_us": p.peak_at_us,
        "peak_phase": p.peak_phase,
        "start_bytes": p.start_bytes,
        "before_recording_bytes": p.before_bytes,
        "end_bytes": p.end_bytes,
        "reserved_bytes": p.reserved_bytes,
        "reconciled": p.reconciled,
        "holders": dict(p.holders),
        "sites": [_site(s) for s in p.sites],
    }


def _site(s: PeakSite) -> dict[str, Any]:
    return {
        "site": s.label,
        "kind": s.kind,
        "filename": s.filename,
        "line": s.line,
        "function": s.function,
        "bytes": s.bytes,
        "blocks": s.blocks,
        "holder": s.holder,
    }
