"""torch's printed table vocabulary: column titles, units and footers, and reading one cell.

Every column torch (1.4 to 2.x) has printed is listed here with the `Row` field it fills.
Device columns are written once with a ``{dev}`` placeholder (``Self CUDA``, ``Self XPU``,
``Self PRIVATEUSEONE``, ...); ROCm prints ``CUDA``. A column not listed is kept as text
(``extra`` below), so that a new torch column never makes a table unreadable.
"""

from __future__ import annotations

import enum
import math
import re
from typing import Final

import msgspec

from profsight.lazy import regex


class CellKind(enum.Enum):
    TEXT = "text"
    TIME = "time"
    """``123.456us``, ``1.234ms``, ``1.234s``: read in microseconds."""
    PERCENT = "percent"
    """``12.34%``, ``NaN`` (torch's share of a zero total)."""
    MEMORY = "memory"
    """``0 B``, ``-1.70 MB``, ``756.50 Kb`` (torch 1.7): read in bytes, 1024-based."""
    COUNT = "count"
    FLOPS = "flops"
    """``113246208.000`` in the unit of the column title, ``--`` for none."""


#: A column that fills no `Row` field: kept per row in `ParsedTable.extra_cells`.
EXTRA: Final = ""
#: A printed average (``CPU time avg``): `Row` derives it from total / calls.
DERIVED: Final = "derived"


class ColumnSpec(msgspec.Struct, frozen=True):
    field: str
    """The `Row` field the column fills, `EXTRA` or `DERIVED`."""
    kind: CellKind
    device: bool = False


NAME_TITLE: Final = "Name"
SHAPES_TITLE: Final = "Input Shapes"
CPU_MEM_TITLE: Final = "CPU Mem"

#: Titles of columns that are not device columns, as printed, in every layout.
FIXED_COLUMNS: Final[dict[str, ColumnSpec]] = {
    NAME_TITLE: ColumnSpec("name", CellKind.TEXT),
    "Overload Name": ColumnSpec(EXTRA, CellKind.TEXT),
    "Self CPU %": ColumnSpec("self_cpu_pct", CellKind.PERCENT),
    "Self CPU": ColumnSpec("self_cpu_us", CellKind.TIME),
    "CPU total %": ColumnSpec("cpu_total_pct", CellKind.PERCENT),
    "CPU total": ColumnSpec("cpu_total_us", CellKind.TIME),
    "CPU time avg": ColumnSpec(DERIVED, CellKind.TIME),
    CPU_MEM_TITLE: ColumnSpec("cpu_mem", CellKind.MEMORY),
    "Self CPU Mem": ColumnSpec("self_cpu_mem", CellKind.MEMORY),
    "# of Calls": ColumnSpec("calls", CellKind.COUNT),
    "Node ID": ColumnSpec(EXTRA, CellKind.TEXT),
    SHAPES_TITLE: ColumnSpec("shapes", CellKind.TEXT),
    "Source Location": ColumnSpec(EXTRA, CellKind.TEXT),
    # torch <= 1.6
    "Self CPU total %": ColumnSpec("self_cpu_pct", CellKind.PERCENT),
    "Self CPU total": ColumnSpec("self_cpu_us", CellKind.TIME),
    "Number of Calls": ColumnSpec("calls", CellKind.COUNT),
}

#: Titles only torch <= 1.6 printed.
LEGACY_TITLES: Final = frozenset({"Self CPU total %", "Self CPU total", "Number of Calls"})

#: Titles that identify a header line (one of them must be present).
CPU_TITLES: Final = frozenset({"Self CPU %", "Self CPU total %", "CPU total"})

#: Device columns; ``{dev}`` is the backend's label.
DEVICE_TEMPLATES: Final[dict[str, ColumnSpec]] = {
    "Self {dev}": ColumnSpec("self_device_us", CellKind.TIME, device=True),
    "Self {dev} %": ColumnSpec("self_device_pct", CellKind.PERCENT, device=True),
    "{dev} total": ColumnSpec("device_total_us", CellKind.TIME, device=True),
    "{dev} time avg": ColumnSpec(DERIVED, CellKind.TIME, device=True),
    "{dev} Mem": ColumnSpec("device_mem", CellKind.MEMORY, device=True),
    "Self {dev} Mem": ColumnSpec("self_device_mem", CellKind.MEMORY, device=True),
    # torch <= 1.6: share of the summed (inclusive) CUDA totals
    "{dev} total %": ColumnSpec("device_total_pct", CellKind.PERCENT, device=True),
}

_DEV = r"(?P<dev>[A-Za-z][A-Za-z0-9_]*)"
_DEVICE_PATTERNS: Final = tuple(
    (regex("^" + re.escape(t).replace(re.escape("{dev}"), _DEV) + "$"), spec)
    for t, spec in DEVICE_TEMPLATES.items()
)


def is_device_title(title: str) -> bool:
    """Whether `title` is a device's column (``Self CUDA``, ``XPU total``), not the CPU's."""
    return any(
        (m := pattern.match(title)) is not None and m["dev"] != "CPU"
        for pattern, _ in _DEVICE_PATTERNS
    )


#: ``Total FLOPs``, ``Total KFLOPs``, ... ``Total PFLOPs``.
FLOPS_TITLE = regex(r"^Total (?P<prefix>[KMGTP]?)FLOPs$")
FLOPS_SCALE: Final[dict[str, float]] = {
    "": 1.0,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
}
NO_FLOPS: Final = "--"


class Column(msgspec.Struct, frozen=True):
    title: str
    spec: ColumnSpec
    device_name: str = ""
    scale: float = 1.0
    """For FLOPs columns: FLOPs per printed unit."""


def resolve_column(title: str) -> Column:
    """What a printed column title means; unknown titles become text columns."""
    fixed = FIXED_COLUMNS.get(title)
    if fixed is not None:
        return Column(title, fixed)
    flops = FLOPS_TITLE.match(title)
    if flops:
        return Column(title, ColumnSpec(EXTRA, CellKind.FLOPS), scale=FLOPS_SCALE[flops["prefix"]])
    for pattern, spec in _DEVICE_PATTERNS:
        match = pattern.match(title)
        if match and match["dev"] != "CPU":
            return Column(title, spec, device_name=match["dev"])
    return Column(title, ColumnSpec(EXTRA, CellKind.TEXT))


# ---- footers ---------------------------------------------------------------------------

SELF_CPU_FOOTER: Final = "Self CPU time total"
#: ``Self CPU time total: 8.188ms``, ``Self CUDA time total: 4.431ms``, torch <= 1.7's
#: ``CUDA time total: 1.831ms``; anything glued after the value is ignored.
FOOTER = regex(
    r"^(?P<label>(?:Self )?[A-Za-z][A-Za-z0-9_]* time total):\s*"
    r"(?P<value>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|(?i:nan))\s*(?P<unit>ns|us|µs|ms|s)?"
)


def footer_device(label: str) -> str:
    """``CUDA`` of ``Self CUDA time total`` / ``CUDA time total``; "" for the CPU footer."""
    dev = label.removeprefix("Self ").removesuffix(" time total")
    return "" if dev == "CPU" else dev


# ---- cells -----------------------------------------------------------------------------

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_NAN = r"(?i:nan)"
TIME_UNITS: Final[dict[str, float]] = {"ns": 1e-3, "us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6}
MEMORY_UNITS: Final[dict[str, int]] = {
    "b": 1,
    "kb": 1024,
    "mb": 1024**2,
    "gb": 1024**3,
    "tb": 1024**4,
}
_TIME = regex(rf"^(?P<num>{_NUMBER}|{_NAN})\s*(?P<unit>ns|us|µs|ms|s)?$")
_PERCENT = regex(rf"^(?P<num>{_NUMBER}|{_NAN})\s*%?$")
_MEMORY = regex(rf"^(?P<num>{_NUMBER})\s*(?P<unit>(?i:[kmgt]?b))$")
_COUNT = regex(r"^\d+$")


class CellError(ValueError):
    """A cell that does not read as its column's kind."""


def parse_time(cell: str) -> float:
    """Microseconds of ``1.234ms``; a bare number (or ``NaN``) is read as microseconds."""
    match = _TIME.match(cell)
    if not match or (match["unit"] is None and not re.fullmatch(_NAN, match["num"])):
        raise CellError(cell)
    # rounded to the picosecond: ``1.037s`` reads as 1037000.0, not 1036999.9999999999
    return round(float(match["num"]) * TIME_UNITS[match["unit"] or "us"], 6)


def parse_percent(cell: str) -> float:
    match = _PERCENT.match(cell)
    if not match:
        raise CellError(cell)
    return float(match["num"])


def parse_memory(cell: str) -> int:
    match = _MEMORY.match(cell)
    if not match:
        raise CellError(cell)
    return round(float(match["num"]) * MEMORY_UNITS[match["unit"].lower()])


def parse_count(cell: str) -> int:
    if not _COUNT.match(cell):
        raise CellError(cell)
    return int(cell)


def parse_flops(cell: str, scale: float) -> float | None:
    if cell == NO_FLOPS:
        return None
    try:
        value = float(cell)
    except ValueError:
        raise CellError(cell) from None
    if math.isnan(value):
        raise CellError(cell)
    return value * scale


def read_cell(column: Column, cell: str) -> float | int | None:
    """A numeric cell of `column` (raises `CellError` if it does not read as one)."""
    kind = column.spec.kind
    if kind is CellKind.TIME:
        return parse_time(cell)
    if kind is CellKind.PERCENT:
        return parse_percent(cell)
    if kind is CellKind.MEMORY:
        return parse_memory(cell)
    if kind is CellKind.COUNT:
        return parse_count(cell)
    if kind is CellKind.FLOPS:
        return parse_flops(cell, column.scale)
    raise CellError(cell)


def parse_footer(line: str) -> tuple[str, float] | None:
    """``("Self CPU time total", 8188.0)`` of ``Self CPU time total: 8.188ms``."""
    match = FOOTER.match(line)
    if not match:
        return None
    try:
        return match["label"], parse_time(match["value"] + (match["unit"] or ""))
    except CellError:
        return None
