"""The profiler table laid out exactly as torch prints ``key_averages().table()``.

Same columns, widths, alignment, units and footers, so that a user can put profsight's
table beside torch's and compare them cell by cell.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from profsight.units import torch_memory, torch_percent, torch_time

if TYPE_CHECKING:
    from profsight.model.table import ProfilerTable, Row

_COLUMN = 12
_SPACING = 2
_MAX_NAME = 55
_MAX_SHAPES = 80


def render_torch_table(table: ProfilerTable, header: str | None = None) -> str:
    dev = table.device_name
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if table.has_device:
        headers += [f"Self {dev}", f"Self {dev} %", f"{dev} total", f"{dev} time avg"]
    if table.has_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if table.has_device_memory:
            headers += [f"{dev} Mem", f"Self {dev} Mem"]
    headers.append("# of Calls")
    rows = table.rows
    name_width = min(table.longest_name + 4, _MAX_NAME)
    widths = [name_width] + [_COLUMN] * (len(headers) - 1)
    if table.has_shapes:
        headers.append("Input Shapes")
        widths.append(min(table.longest_shapes + 4, _MAX_SHAPES))
    rule = "".join("-" * w + " " * _SPACING for w in widths)
    line_length = sum(widths) + _SPACING * (len(widths) - 1)
    out: list[str] = []
    if header is not None:
        out += ["=" * line_length, header]
    out += [rule, _format_row(headers, widths), rule]
    cpu_total_ok = table.self_cpu_total_us != 0
    dev_total_ok = table.self_device_total_us != 0
    for row in rows:
        out.append(_format_row(_cells(row, table, name_width, cpu_total_ok, dev_total_ok), widths))
    out.append(rule)
    out.append(f"Self CPU time total: {torch_time(table.self_cpu_total_us)}")
    if table.has_device:
        out.append(f"Self {dev} time total: {torch_time(table.self_device_total_us)}")
    return "\n".join(out) + "\n"


def _cells(
    row: Row, table: ProfilerTable, name_width: int, cpu_ok: bool, dev_ok: bool
) -> list[str]:
    name = row.name
    if len(name) >= _MAX_NAME - 3:
        name = name[: _MAX_NAME - 3] + "..."
    cells = [
        name,
        torch_percent(row.self_cpu_pct, cpu_ok or row.self_cpu_us != 0),
        torch_time(row.self_cpu_us),
        torch_percent(row.cpu_total_pct, cpu_ok or row.cpu_total_us != 0),
        torch_time(row.cpu_total_us),
        torch_time(row.cpu_avg_us),
    ]
    if table.has_device:
        cells += [
            torch_time(row.self_device_us),
            torch_percent(row.self_device_pct, dev_ok or row.self_device_us != 0),
            torch_time(row.device_total_us),
            torch_time(row.device_avg_us),
        ]
    if table.has_memory:
        cells += [torch_memory(row.cpu_mem), torch_memory(row.self_cpu_mem)]
        if table.has_device_memory:
            cells += [torch_memory(row.device_mem), torch_memory(row.self_device_mem)]
    cells.append(str(row.calls))
    if table.has_shapes:
        cells.append(row.shapes[: min(table.longest_shapes + 4, _MAX_SHAPES)])
    return cells


def _format_row(cells: list[str], widths: list[int]) -> str:
    return "".join(f"{c:>{w}}" + " " * _SPACING for c, w in zip(cells, widths, strict=True))
