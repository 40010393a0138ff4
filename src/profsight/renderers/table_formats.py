"""The profiler table as JSON, CSV or Markdown, and the registry of table formats."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable

import msgspec

from profsight.errors import UsageError
from profsight.model.row_kind import row_kind
from profsight.model.table import ProfilerTable, Row, render_torch_table
from profsight.renderers.escape import markdown_cell
from profsight.renderers.names import markdown_name
from profsight.units import short_time

TABLE_SCHEMA = "profsight/table/1"


def render_json(table: ProfilerTable) -> str:
    """``{"schema", "group_by", "totals", "rows": [{"name", "calls", "self_cpu_us", ...}]}``."""
    doc = {
        "schema": TABLE_SCHEMA,
        "group_by": table.group_by,
        "device_name": table.device_name,
        "self_cpu_total_us": table.self_cpu_total_us,
        "self_device_total_us": table.self_device_total_us,
        "total_rows": table.total_rows,
        "rows": table.to_records(),
    }
    return msgspec.json.format(msgspec.json.encode(doc).decode(), indent=2) + "\n"


def render_csv(table: ProfilerTable) -> str:
    buf = io.StringIO()
    records = table.to_records()
    columns = list(records[0]) if records else list(Row.__dataclass_fields__)
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow(record)
    return buf.getvalue()


def render_markdown(table: ProfilerTable) -> str:
    dev = table.device_name
    head = ["Name", "Kind", "Calls", "Self CPU", "Self CPU %", "CPU total"]
    if table.has_device:
        head += [f"Self {dev}", f"Self {dev} %", f"{dev} total"]
    align = ["---", "---"] + ["---:"] * (len(head) - 2)
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


TABLE_FORMATS: dict[str, Callable[[ProfilerTable], str]] = {
    "text": render_torch_table,
    "json": render_json,
    "csv": render_csv,
    "markdown": render_markdown,
}

#: Output file suffix -> format, for ``-o table.csv`` without ``--format``.
TABLE_SUFFIXES: dict[str, str] = {".txt": "text", ".json": "json", ".csv": "csv", ".md": "markdown"}


def render_table(table: ProfilerTable, fmt: str) -> str:
    try:
        renderer = TABLE_FORMATS[fmt]
    except KeyError:
        raise UsageError(
            f"unknown format {fmt!r}; use one of: {', '.join(TABLE_FORMATS)}"
        ) from None
    return renderer(table)
