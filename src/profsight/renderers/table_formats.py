"""The profiler table as JSON, CSV or Markdown (the formats' registry is
`renderers.explained.VIEWS`)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

import msgspec

from profsight.knowledge.roofline_ops import roof_share
from profsight.model.row_kind import row_kind
from profsight.model.table import ProfilerTable, Row
from profsight.names import markdown_name
from profsight.renderers.escape import markdown_cell
from profsight.renderers.explained import view_renderer
from profsight.report.view_documents import (
    RooflineFields,
    table_document,
    table_records,
)
from profsight.units import short_flops, short_rate, short_time

#: Between a row's frames in one CSV cell.
STACK_SEPARATOR = "; "


def render_json(table: ProfilerTable, roof: RooflineFields | None = None) -> str:
    """The table's document (`report.view_documents.table_document`) as JSON."""
    doc = table_document(table, roof)
    return msgspec.json.format(msgspec.json.encode(doc).decode(), indent=2) + "\n"


def render_csv(table: ProfilerTable, roof: RooflineFields | None = None) -> str:
    buf = io.StringIO()
    records = table_records(table, roof)
    columns = list(records[0]) if records else list(Row.__struct_fields__)
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for record in records:
        if "stack" in record:  # a row's frames, innermost first, as one cell
            record["stack"] = STACK_SEPARATOR.join(record["stack"])
        writer.writerow(record)
    return buf.getvalue()


def render_markdown(table: ProfilerTable, roof: RooflineFields | None = None) -> str:
    dev = table.device_name
    head = ["Name", "Kind", "Calls", "Self CPU", "Self CPU %", "CPU total"]
    if table.has_device:
        head += [f"Self {dev}", f"Self {dev} %", f"{dev} total"]
    if table.group_by == "shape":
        head.insert(1, "Input Shapes")
    if table.stack_n:
        head.insert(1, "Source Location")
    if roof is not None:
        head += ["FLOP/s", "Bytes/s", "Bound", "Of roof"]
    left = {"Name", "Input Shapes", "Source Location", "Kind", "Bound"}
    align = ["---" if h in left else "---:" for h in head]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    for r in table.rows:
        cells = [
            markdown_cell(markdown_name(r.name)),
            row_kind(r, table).value,  # the kind explain gives the row, not the event's
            str(r.calls),
            short_time(r.self_cpu_us),
            f"{r.self_cpu_pct:.1f}%",
            short_time(r.cpu_total_us),
        ]
        if table.has_device:
            cells += [
                short_time(r.self_device_us),
                f"{r.self_device_pct:.1f}%",
                short_time(r.device_total_us),
            ]
        if table.group_by == "shape":
            cells.insert(1, markdown_cell(r.shapes))
        if table.stack_n:
            cells.insert(1, "<br>".join(markdown_cell(f) for f in r.stack))
        if roof is not None:
            cells += _roofline_cells(roof.get((r.name, r.shapes)))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        f"Self CPU time total: {short_time(table.self_cpu_total_us)}"
        + (
            f" · Self {dev} time total: {short_time(table.self_device_total_us)}"
            if table.has_device
            else ""
        )
    )
    return "\n".join(lines) + "\n"


def _roofline_cells(found: Mapping[str, Any] | None) -> list[str]:
    if not found:
        return ["", "", "", ""]
    rate = short_flops(found["tflops"] * 1e12, per_second=True) if found["tflops"] else ""
    return [
        rate,
        short_rate(found["tbps"] * 1e3),
        found["bound"] or "",
        roof_share(found["roof_pct"]).removesuffix(" of roof"),
    ]


def render_table(table: ProfilerTable, fmt: str, roof: RooflineFields | None = None) -> str:
    """The table in `fmt`; `roof`: each op and shape's roofline, added to the rows of the
    JSON, CSV and Markdown (the text table keeps torch's layout)."""
    renderer = view_renderer("table", fmt)
    result: str = renderer(table) if fmt == "text" or roof is None else renderer(table, roof)
    return result
