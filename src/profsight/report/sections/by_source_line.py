"""The time-by-source-line section: the user's own functions, library frames folded in
(`analyses.source_lines` defines each figure)."""

from __future__ import annotations

from typing import Any

import msgspec

from profsight.analyses.pipeline import Diagnosis
from profsight.analyses.source_lines import SourceLines, source_lines
from profsight.knowledge.source_frames import (
    NO_USER_FRAME,
    SOURCE_LINE_TEXT_ROWS,
    SOURCE_LINES_TITLE,
    SOURCE_PAGE_TEXTS,
)
from profsight.model.profile import Profile
from profsight.names import cut_words
from profsight.report.sections.section import Number, Section, with_texts
from profsight.units import short_time


def _compute(profile: Profile, _: Diagnosis) -> SourceLines | None:
    return source_lines(profile)


class SourceLineDoc(msgspec.Struct):
    frame: str
    calls: int
    self_cpu_us: Number
    total_cpu_us: Number
    self_device_us: Number
    total_device_us: Number
    backward_cpu_us: Number
    backward_device_us: Number


class SourceLinesDoc(msgspec.Struct):
    """The section as the JSON report writes it (`analyses.source_lines.SourceLines`)."""

    functions: int
    by: str
    cpu_us: Number
    device_us: Number
    outside_cpu_us: Number
    outside_device_us: Number
    rows: list[SourceLineDoc] = msgspec.field(name="lines")


def source_lines_dict(lines: SourceLines | None) -> dict[str, Any] | None:
    """Time by the user's own functions, library frames folded in (JSON ``source_lines``;
    `analyses.source_lines` defines each figure)."""
    if lines is None:
        return None
    built: dict[str, Any] = msgspec.to_builtins(
        msgspec.convert(lines, SourceLinesDoc, from_attributes=True)
    )
    return built


def source_lines_lines(data: Any) -> list[str]:
    """The functions with the most time: total and self, CPU and (on a GPU run) device."""
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


SECTION = Section(
    name="source_lines",
    title="Time by source line",
    compute=_compute,
    document=source_lines_dict,
    lines=source_lines_lines,
    page=with_texts(SOURCE_PAGE_TEXTS),
)

__all__ = ["SECTION", "source_lines_dict", "source_lines_lines"]
