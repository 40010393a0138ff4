"""The memory-at-the-peak section: each memory's peak and the ops whose blocks it held
(`analyses.memory_peak` defines each figure)."""

from __future__ import annotations

from typing import Any

import msgspec

from profsight.analyses.memory_peak import MemoryPeak, memory_peaks
from profsight.analyses.pipeline import Diagnosis
from profsight.knowledge.memory_blocks import (
    BEFORE_WINDOW,
    HOLDERS_LINE,
    MEMORY_PAGE_TEXTS,
    MEMORY_PEAK_TITLE,
    NO_BLOCKS,
    TORCH_CATEGORIES,
)
from profsight.model.profile import Profile
from profsight.names import cut_words
from profsight.report.sections.section import Number, Section
from profsight.units import short_bytes, short_time


def _compute(profile: Profile, diagnosis: Diagnosis) -> tuple[MemoryPeak, ...]:
    return memory_peaks(profile, diagnosis.breakdown)


class HeldByDoc(msgspec.Struct):
    op: str
    bytes: int
    blocks: int


class MemoryPeakDoc(msgspec.Struct):
    """One memory's peak as the JSON report writes it (`analyses.memory_peak.MemoryPeak`)."""

    memory: str
    peak_bytes: int
    at_us: Number
    held_bytes: int
    before_window_bytes: int
    blocks_known: bool
    held_by: list[HeldByDoc]
    categories: dict[str, int] | None = msgspec.field(name="torch_categories")
    holders: dict[str, int] | None


def memory_peaks_list(peaks: tuple[MemoryPeak, ...]) -> list[dict[str, Any]]:
    """Each memory's peak: when, how much, and the ops whose blocks it held (JSON
    ``memory_peaks``; `analyses.memory_peak` defines each figure)."""
    docs = msgspec.convert(peaks, list[MemoryPeakDoc], from_attributes=True)
    built: list[dict[str, Any]] = msgspec.to_builtins(docs)
    return built


def memory_peak_lines(data: Any) -> list[str]:
    """Each memory's peak, and the ops whose allocations it held then."""
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


SECTION = Section(
    name="memory_peaks",
    title="Memory at the peak",
    compute=_compute,
    document=lambda peaks: memory_peaks_list(peaks or ()),
    lines=memory_peak_lines,
    page=lambda document: {"peaks": document, **MEMORY_PAGE_TEXTS},
)

__all__ = ["SECTION", "memory_peak_lines", "memory_peaks_list"]
