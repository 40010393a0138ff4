"""`ProfilerTable`: torch's ``key_averages()`` rebuilt from a trace.

Rows are aggregated exactly as torch does (``EventList.key_averages``): by the event's
table name (``ProfilerStep#N`` -> ``ProfilerStep*``), whether it is a host or a device
event, and whether it is a ``record_function`` annotation; optionally also by input shapes.
Rows come in the order of their first occurrence, as in torch; percentages are shares of
the summed self time of all rows (device annotations left out of the device sum).

``group_by="module"`` is profsight's own view: one row per ``nn.Module`` (Lightning's
``[pl][module]`` ranges), its self time being the time of everything inside it that is
not inside a nested module.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import msgspec
from msgspec.structs import asdict, replace

from profsight.errors import UsageError
from profsight.knowledge.trace_schema import (
    EventKind,
)
from profsight.units import torch_memory, torch_percent, torch_time

GroupBy = Literal["name", "shape", "module"]
GROUP_BYS: tuple[GroupBy, ...] = ("name", "shape", "module")


class Row(msgspec.Struct, frozen=True):
    """One row of the profiler table. Times in microseconds, memory in bytes."""

    name: str
    event_kind: str
    """What the row's events are: ``cpu_op``, ``annotation``, ``kernel``, ``runtime``, ..."""
    calls: int
    self_cpu_us: float
    cpu_total_us: float
    self_device_us: float
    device_total_us: float
    self_cpu_pct: float
    cpu_total_pct: float
    self_device_pct: float
    cpu_mem: int = 0
    self_cpu_mem: int = 0
    device_mem: int = 0
    self_device_mem: int = 0
    shapes: str = ""
    """The input shapes, when grouped by shape."""
    stack: tuple[str, ...] = ()
    """The first frames of the row's call stack (innermost first), when grouped by stack."""
    is_device: bool = False
    """A device-side row (kernel, memcpy, memset, device annotation): no CPU time."""
    is_async: bool = False
    """torch's async flag (of the row's first event): a range left open when the profiler
    stopped. torch gives it no self time and prints its CPU total % as 0."""
    device_total_pct: float = 0.0
    """torch <= 1.6's printed ``CUDA total %``: the row's inclusive device time as a share of
    the summed inclusive device times of every row (0 where not printed)."""

    @property
    def cpu_avg_us(self) -> float:
        return self.cpu_total_us / self.calls if self.calls else 0.0

    @property
    def device_avg_us(self) -> float:
        return self.device_total_us / self.calls if self.calls else 0.0

    def to_dict_fields(self) -> dict[str, Any]:
        """The struct fields only (``Row(**row.to_dict_fields())`` copies a row)."""
        return asdict(self)

    def to_dict(self) -> dict[str, Any]:
        data = self.to_dict_fields()
        data["cpu_avg_us"] = self.cpu_avg_us
        data["device_avg_us"] = self.device_avg_us
        return data


#: Sort keys: profsight's column names, and torch's ``sort_by`` names for the same columns.
SORT_KEYS: dict[str, str] = {
    "name": "name",
    "calls": "calls",
    "count": "calls",
    "self_cpu_us": "self_cpu_us",
    "self_cpu": "self_cpu_us",
    "self_cpu_time_total": "self_cpu_us",
    "cpu_total_us": "cpu_total_us",
    "cpu_total": "cpu_total_us",
    "cpu_time_total": "cpu_total_us",
    "cpu_avg_us": "cpu_avg_us",
    "cpu_time": "cpu_avg_us",
    "self_device_us": "self_device_us",
    "self_device": "self_device_us",
    "self_cuda": "self_device_us",
    "self_cuda_time_total": "self_device_us",
    "self_device_time_total": "self_device_us",
    "self_xpu_time_total": "self_device_us",
    "device_total_us": "device_total_us",
    "device_total": "device_total_us",
    "cuda_total": "device_total_us",
    "cuda_time_total": "device_total_us",
    "device_time_total": "device_total_us",
    "xpu_time_total": "device_total_us",
    "device_avg_us": "device_avg_us",
    "cuda_time": "device_avg_us",
    "device_time": "device_avg_us",
    "xpu_time": "device_avg_us",
    "cpu_mem": "cpu_mem",
    "cpu_memory_usage": "cpu_mem",
    "self_cpu_mem": "self_cpu_mem",
    "self_cpu_memory_usage": "self_cpu_mem",
    "device_mem": "device_mem",
    "cuda_memory_usage": "device_mem",
    "device_memory_usage": "device_mem",
    "xpu_memory_usage": "device_mem",
    "self_device_mem": "self_device_mem",
    "self_cuda_memory_usage": "self_device_mem",
    "self_device_memory_usage": "self_device_mem",
    "self_xpu_memory_usage": "self_device_mem",
}


class ProfilerTable(msgspec.Struct, frozen=True):
    rows: tuple[Row, ...]
    group_by: GroupBy
    self_cpu_total_us: float
    """Sum of self CPU time over all rows: torch's "Self CPU time total"."""
    self_device_total_us: float
    """Sum of self device time over device rows: torch's "Self CUDA time total"."""
    has_device: bool
    has_memory: bool
    has_device_memory: bool
    has_shapes: bool
    device_name: str = "CUDA"
    """How torch labels device columns for this run (CUDA also for ROCm; XPU; ...)."""
    total_rows: int = 0
    """Rows before a row limit was applied."""
    longest_name: int = 0
    """Longest row name before a limit (torch sizes its name column on all rows)."""
    longest_shapes: int = 0
    stack_n: int = 0
    """Frames of the call stack the rows are grouped by too (torch's ``group_by_stack_n``)."""
    longest_frame: int = 0
    """Longest stack frame of any row before a limit (0: no row has a stack)."""

    def __str__(self) -> str:
        """The table as torch prints it (``print(profile.table())``)."""
        return render_torch_table(self)

    def __repr__(self) -> str:
        return (
            f"<ProfilerTable: {len(self.rows)} rows grouped by {self.group_by}, "
            f"self CPU {self.self_cpu_total_us:.3f} us; print() it for torch's layout>"
        )

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def row(self, name: str) -> Row:
        """The first row named `name` (KeyError if none)."""
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(name)

    def sorted(self, key: str) -> ProfilerTable:
        """Rows by `key`, largest first (``name``: alphabetical); stable, as torch sorts."""
        column = SORT_KEYS.get(key.lower().replace("-", "_"))
        if column is None:
            known = ", ".join(sorted({k for k in SORT_KEYS if "_time" not in k}))
            raise UsageError(f"unknown sort key {key!r}; use one of: {known}")
        if column == "name":
            rows = sorted(self.rows, key=lambda r: r.name)
        else:
            rows = sorted(self.rows, key=lambda r: getattr(r, column), reverse=True)
        return replace(self, rows=tuple(rows))

    def head(self, limit: int | None) -> ProfilerTable:
        if limit is None or limit < 0:
            return self
        return replace(self, rows=self.rows[:limit])

    def to_records(self) -> list[dict[str, Any]]:
        """Each row as a dict (``stack`` only in a table grouped by stack)."""
        records = [r.to_dict() for r in self.rows]
        if not self.stack_n:
            for record in records:
                del record["stack"]
        return records

    def to_pandas(self) -> Any:
        """The table as a ``pandas.DataFrame`` (needs pandas: ``pip install profsight[pandas]``)."""
        try:
            import pandas as pd
        except ImportError:
            raise UsageError("to_pandas() needs pandas: pip install 'profsight[pandas]'") from None
        return pd.DataFrame.from_records(self.to_records())


_KIND_LABELS = {
    EventKind.CPU_OP: "cpu_op",
    EventKind.ANNOTATION: "annotation",
    EventKind.PYTHON: "python",
    EventKind.RUNTIME: "runtime",
    EventKind.DRIVER: "driver",
    EventKind.OVERHEAD: "overhead",
    EventKind.KERNEL: "kernel",
    EventKind.MEMCPY: "memcpy",
    EventKind.MEMSET: "memset",
    EventKind.GPU_ANNOTATION: "device_annotation",
    EventKind.SYNC: "sync",
    EventKind.MEMORY: "memory",
    EventKind.OTHER: "other",
    EventKind.COUNTERS: "counters",
}


def kind_label(kind: int) -> str:
    return _KIND_LABELS[EventKind(kind)]


# ----------------------------------------------------- torch's layout of the table

_COLUMN = 12
_SPACING = 2
_MAX_NAME = 55
_MAX_SHAPES = 80
#: torch's ``max_src_column_width``.
_MAX_FRAME = 75


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
    frame_width = min(table.longest_frame + 4, _MAX_FRAME) if table.longest_frame else 0
    if frame_width:
        headers.append("Source Location")
        widths.append(frame_width)
    rule = "".join("-" * w + " " * _SPACING for w in widths)
    line_length = sum(widths) + _SPACING * (len(widths) - 1)
    out: list[str] = []
    if header is not None:
        out += ["=" * line_length, header]
    out += [rule, _format_row(headers, widths, frame_width), rule]
    cpu_total_ok = table.self_cpu_total_us != 0
    dev_total_ok = table.self_device_total_us != 0
    for row in rows:
        cells = _cells(row, table, name_width, cpu_total_ok, dev_total_ok)
        if not frame_width:
            out.append(_format_row(cells, widths))
            continue
        # torch: the innermost frame on the row's line, each next one on a line of its own
        # under it, then a blank line
        blank = [""] * (len(widths) - 1)
        frames = [_trim_frame(f, frame_width) for f in row.stack]
        out.append(_format_row([*cells, frames[0] if frames else ""], widths, frame_width))
        out += [_format_row([*blank, f], widths, frame_width) for f in frames[1:]]
        out.append(_format_row([*blank, ""], widths, frame_width))
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


def _format_row(cells: list[str], widths: list[int], left_last: int = 0) -> str:
    """The cells right-aligned in their widths, the last left-aligned when `left_last`
    (torch's Source Location column)."""
    aligned = [f"{c:>{w}}" for c, w in zip(cells, widths, strict=True)]
    if left_last:
        aligned[-1] = f"{cells[-1]:<{widths[-1]}}"
    return "".join(a + " " * _SPACING for a in aligned)


def _trim_frame(frame: str, width: int) -> str:
    """A frame too long for its column keeps its end, its first three characters made
    ``...`` (torch's ``trim_path``)."""
    if len(frame) > width:
        frame = frame[len(frame) - width :]
        if len(frame) > 3:
            frame = "..." + frame[3:]
    return frame
