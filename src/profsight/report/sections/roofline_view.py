"""The roofline section: each op and shape against the device's ceilings (`analyses.roofline`
defines each figure)."""

from __future__ import annotations

from typing import Any

import msgspec

from profsight.analyses.pipeline import Diagnosis
from profsight.analyses.roofline import Roofline
from profsight.knowledge.roofline_ops import (
    ABOVE_ROOF,
    BOUND_MEANING,
    ROOFLINE_NO_DEVICE,
    ROOFLINE_PAGE_TEXTS,
    ROOFLINE_TEXT_ROWS,
    ROOFLINE_TITLE,
    roof_share,
)
from profsight.model.profile import Profile
from profsight.names import cut_words, tensor_dims
from profsight.report.sections.section import Number, Section, with_texts
from profsight.units import short_flops, short_rate, short_time


def _compute(_: Profile, diagnosis: Diagnosis) -> Roofline | None:
    return diagnosis.roofline


class RooflineRowDoc(msgspec.Struct):
    op: str
    family: str
    shapes: str = msgspec.field(name="input_dims")
    dtypes: list[str] = msgspec.field(name="input_types")
    calls: int
    device_us: Number
    flops: Number
    bytes: Number
    tflops: Number
    tbps: Number
    intensity: Number
    precision: str | None
    peak_tflops: Number | None
    ridge: Number | None
    bound: str | None
    roof_pct: Number | None
    cached: bool


class RooflineDoc(msgspec.Struct, kw_only=True):
    """The section as the JSON report writes it (`analyses.roofline.Roofline`), with what
    each bound means."""

    device: str | None
    bandwidth_gbs: Number | None
    ceilings: dict[str, Number] = msgspec.field(name="peak_tflops")
    coverage_pct: Number
    covered_us: Number
    device_us: Number
    groups: int
    by_bound: dict[str, Number] = msgspec.field(name="device_us_by_bound")
    bound_meaning: dict[str, str] = msgspec.field(default_factory=dict)
    above_roof: str = ABOVE_ROOF
    by_family: dict[str, Number] = msgspec.field(name="device_us_by_family")
    rows: list[RooflineRowDoc] = msgspec.field(name="ops")


def roofline_dict(roof: Roofline | None) -> dict[str, Any] | None:
    """Each op and shape against the device's ceilings (JSON ``roofline``;
    `analyses.roofline` defines each figure)."""
    if roof is None:
        return None
    doc = msgspec.convert(roof, RooflineDoc, from_attributes=True)
    doc.bound_meaning = {b: BOUND_MEANING[b] for b in roof.by_bound}
    built: dict[str, Any] = msgspec.to_builtins(doc)
    return built


def roofline_lines(data: Any) -> list[str]:
    """The roofline: the ceilings, the coverage, the device time by bound, the top ops."""
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


SECTION = Section(
    name="roofline",
    title="Roofline",
    compute=_compute,
    document=roofline_dict,
    lines=roofline_lines,
    page=with_texts(ROOFLINE_PAGE_TEXTS),
)

__all__ = ["SECTION", "roofline_dict", "roofline_lines"]
