"""Two memory snapshots compared: each device's peak before and after, by holder and by
site, the sites that changed most first."""

from __future__ import annotations

from typing import Any

import msgspec

from profsight.analyses.snapshot_peak import DevicePeak
from profsight.knowledge.snapshot_sites import HOLDERS
from profsight.report.snapshot import SnapshotReport


class SiteChange(msgspec.Struct, frozen=True):
    site: str
    before: int
    after: int

    @property
    def change(self) -> int:
        return self.after - self.before


class DeviceChange(msgspec.Struct, frozen=True):
    device: int
    peak_before: int
    peak_after: int
    phase_before: str
    phase_after: str
    holders: dict[str, tuple[int, int]]
    """Every holder's bytes at the peak, before and after."""
    sites: tuple[SiteChange, ...]
    """Sites by the size of their change, largest first (unchanged ones left out)."""


class SnapshotDiff(msgspec.Struct, frozen=True):
    before: str
    after: str
    devices: tuple[DeviceChange, ...]
    only_before: tuple[int, ...]
    only_after: tuple[int, ...]


def compare_snapshots(before: SnapshotReport, after: SnapshotReport) -> SnapshotDiff:
    old = {p.device: p for p in before.peaks}
    new = {p.device: p for p in after.peaks}
    return SnapshotDiff(
        before=before.source,
        after=after.source,
        devices=tuple(_device(old[d], new[d]) for d in sorted(old.keys() & new.keys())),
        only_before=tuple(sorted(old.keys() - new.keys())),
        only_after=tuple(sorted(new.keys() - old.keys())),
    )


def _device(a: DevicePeak, b: DevicePeak) -> DeviceChange:
    sites_a, sites_b = _by_label(a), _by_label(b)
    changes = [
        SiteChange(label, sites_a.get(label, 0), sites_b.get(label, 0))
        for label in sites_a.keys() | sites_b.keys()
    ]
    return DeviceChange(
        device=a.device,
        peak_before=a.peak_bytes,
        peak_after=b.peak_bytes,
        phase_before=a.peak_phase,
        phase_after=b.peak_phase,
        holders={h: (a.holders[h], b.holders[h]) for h in HOLDERS},
        sites=tuple(
            sorted((c for c in changes if c.change), key=lambda c: (-abs(c.change), c.site))
        ),
    )


def _by_label(peak: DevicePeak) -> dict[str, int]:
    """Bytes at the peak per site label (one label can name sites of several files)."""
    out: dict[str, int] = {}
    for s in peak.sites:
        out[s.label] = out.get(s.label, 0) + s.bytes
    return out


SNAPSHOT_DIFF_SCHEMA = "profsight-snapshot-diff/1"


def snapshot_diff_document(diff: SnapshotDiff) -> dict[str, Any]:
    return {
        "schema": SNAPSHOT_DIFF_SCHEMA,
        "before": diff.before,
        "after": diff.after,
        "devices": [
            {
                "device": d.device,
                "peak_bytes": {"before": d.peak_before, "after": d.peak_after},
                "peak_phase": {"before": d.phase_before, "after": d.phase_after},
                "holders": {h: {"before": a, "after": b} for h, (a, b) in d.holders.items()},
                "sites": [{"site": s.site, "before": s.before, "after": s.after} for s in d.sites],
            }
            for d in diff.devices
        ],
        "only_before": list(diff.only_before),
        "only_after": list(diff.only_after),
    }
