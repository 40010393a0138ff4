"""Reading torch's printed ``key_averages().table()`` back into `ProfilerTable` objects.

`table_layout` finds each table and splits its lines into cells; `table_columns` says what
each column means and reads its cells. Every layout torch has printed is read: ``legacy``
(torch <= 1.6: ``Self CPU total %``, ``Number of Calls``, left- or right-aligned),
``transitional`` (1.7: modern columns, footer ``CUDA time total``) and ``modern``. What is
odd but readable (a fragment cut mid-row, unreadable rows, negative times) becomes a
`Diagnostic` of the table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from msgspec.structs import replace

from profsight.errors import InputError
from profsight.lazy import regex
from profsight.loaders.table_columns import (
    CPU_MEM_TITLE,
    DERIVED,
    EXTRA,
    LEGACY_TITLES,
    SELF_CPU_FOOTER,
    SHAPES_TITLE,
    CellError,
    CellKind,
    Column,
    footer_device,
    parse_footer,
    read_cell,
    resolve_column,
)
from profsight.loaders.table_layout import (
    Header,
    find_title,
    glued_rows,
    header_at,
    is_rule,
    split_cells,
    strip_prefix,
    unbold,
    unmark,
    unreadable_rows,
)
from profsight.model.diagnostics import Diagnostic, Level
from profsight.model.printed import ParsedTable
from profsight.model.table import ProfilerTable, Row

__all__ = ["ParsedTable", "looks_like_table", "parse_tables"]

LEGACY: Final = "legacy"
TRANSITIONAL: Final = "transitional"
MODERN: Final = "modern"
UNKNOWN_KIND: Final = "unknown"
"""`Row.event_kind` of a printed row: a later step classifies rows by name."""
TRUNCATION_MARK: Final = "..."
DEFAULT_DEVICE: Final = "CUDA"
_CONTINUATION: Final = "continuation"
#: The header's start: ``Name`` then a CPU column. A pasted table may lack any one column
#: (``Self CPU %`` deleted), so the first CPU title after ``Name`` is any of them; a table
#: cut to its device columns starts with ``Self CUDA`` (or another device's).
_SNIFF_HEADER = regex(
    r"\bName {2,}(?:Overload Name {2,})?\**(?:Self CPU|CPU total|Self [A-Za-z][A-Za-z0-9_]*\b)"
)
_SNIFF_RULE = regex(r"-{4,} {2,}-{4,}|={4,} {2,}={4,}")
#: A footer-less table's Self CPU time total is read from the row with the largest Self CPU
#: % (torch prints self time / total to two decimals): from a share of at least 1% the total
#: is off by at most 0.5% (`_SHARE_ERROR`); within that of the rows' own sum, the rows are
#: the whole table and their sum is exact.
_MIN_SHARE_PCT: Final = 1.0
_SHARE_ERROR: Final = 0.005
#: `Row` fields a printed table may lack (CPU-only tables have no device cells).
_ROW_DEFAULTS: Final[dict[str, Any]] = {
    "self_cpu_us": 0.0,
    "cpu_total_us": 0.0,
    "self_device_us": 0.0,
    "device_total_us": 0.0,
    "self_cpu_pct": 0.0,
    "cpu_total_pct": 0.0,
    "self_device_pct": 0.0,
}


def looks_like_table(text: str) -> bool:
    """Whether `text` holds a torch table header (a cheap sniff for format detection)."""
    return bool(_SNIFF_HEADER.search(text)) and bool(_SNIFF_RULE.search(text))


def parse_tables(text: str, source: str) -> list[ParsedTable]:
    """Every torch table in `text`, in order. Raises `InputError` if there is none."""
    if not text.strip():
        raise InputError(source, "is empty")
    lines = [unmark(line) for line in text.splitlines()]
    tables: list[ParsedTable] = []
    empty_headers = 0
    previous_end = 0
    i = 0
    while i < len(lines):
        header = header_at(lines, i)
        if header is None:
            i += 1
            continue
        reader = _TableReader(lines, i, header)
        parsed, end = reader.read(title=find_title(lines, i, previous_end, header.prefix))
        if parsed is None:
            empty_headers += 1
        else:
            tables.append(parsed)
        previous_end = i = max(end, i + 1)
    if not tables:
        if empty_headers:
            raise InputError(source, "has a profiler table header but no readable rows under it")
        raise InputError(
            source,
            "holds no printed profiler table (no line of torch's column titles "
            "'Name  Self CPU %  ...' above a dashed rule)",
        )
    return tables


class _TableReader:
    """Reads the rows and footer of the table whose header is at line `start`."""

    def __init__(self, lines: Sequence[str], start: int, header: Header) -> None:
        self.lines = lines
        self.start = start
        self.header = header
        self.columns = [resolve_column(t) for t in header.titles]
        self.rows: list[Row] = []
        self.flops: list[float | None] = []
        self.extras: list[dict[str, str]] = []
        self.unreadable: list[str] = []
        self.repaired = 0
        """Lines read after removing a pager's marker or splitting glued rows."""
        fields = {c.spec.field for c in self.columns}
        self.has_calls = "calls" in fields
        self.missing = [f for f, (p, _) in _PAIRED.items() if f not in fields and p in fields]
        """`Row` fields the header lacks (a column deleted from a paste) that another column
        gives: a time from its share, a share from its time (`_filled`)."""

    def read(self, title: str) -> tuple[ParsedTable | None, int]:
        """The table (None if it has no rows) and the index of the first line after it."""
        lines, prefix = self.lines, self.header.prefix
        j = self.start + 2
        closed = False
        cut: str | None = None
        after_blank = False
        while j < len(lines):
            body = strip_prefix(lines[j], prefix)
            if body is None:
                break
            if not body.strip():
                after_blank = True
                j += 1
                continue
            if is_rule(body):
                closed = True
                j += 1
                break
            if self._add(body):
                after_blank = False
            else:
                following = self._next_line(j)
                if following is not None and self._continues(following):
                    self.unreadable.append(body.strip())
                else:
                    # the last line, right under a row: a row cut short
                    last = all(not line.strip() for line in lines[j + 1 :])
                    cut = body.strip() if last and not after_blank else None
                    break
            j += 1
        footer: dict[str, float] = {}
        while closed and j < len(lines):
            body = strip_prefix(lines[j], prefix)
            entry = parse_footer(body.strip()) if body is not None else None
            if entry is None:
                break
            footer[entry[0]] = entry[1]
            j += 1
        if not self.rows:
            return None, j
        return self._result(title, footer, closed, cut), j

    def _next_line(self, j: int) -> str | None:
        for line in self.lines[j + 1 :]:
            body = strip_prefix(line, self.header.prefix)
            if body is None:
                return None
            if body.strip():
                return body
        return None

    def _continues(self, body: str) -> bool:
        return is_rule(body) or self._read(body) is not None

    def _add(self, body: str) -> bool:
        read = self._read(body)
        if read is None:
            return self._add_repaired(body)
        if isinstance(read, str):
            # a Source Location stack line under the row it belongs to
            cells = split_cells(body, self.header.segments)
            for column, cell in zip(self.columns, cells, strict=True):
                if cell and self.extras:
                    previous = self.extras[-1].get(column.title, "")
                    self.extras[-1][column.title] = f"{previous}\n{cell}" if previous else cell
            return True
        row, flops, extras = read
        self.rows.append(row)
        self.flops.append(flops)
        self.extras.append(extras)
        return True

    def _add_repaired(self, body: str) -> bool:
        """A line that is not one row as printed, repaired when it is rows glued to other
        text: a pager's marker between cells (``[21/77]``), or two rows on one line."""
        read = [
            r for cells in glued_rows(body, len(self.columns)) if (r := self._read_cells(cells))
        ]
        rows = [r for r in read if not isinstance(r, str)]
        if not rows or len(rows) != len(read):
            return False
        for row, flops, extras in rows:
            self.rows.append(row)
            self.flops.append(flops)
            self.extras.append(extras)
        self.repaired += 1
        return True

    def _read(self, body: str) -> tuple[Row, float | None, dict[str, str]] | str | None:
        return self._read_cells(split_cells(body, self.header.segments))

    def _read_cells(
        self, cells: Sequence[str]
    ) -> tuple[Row, float | None, dict[str, str]] | str | None:
        """A row read by the header's titles; a column the paste lacks is left to
        `_ROW_DEFAULTS`, its calls to `_calls_from_averages` (filled in by `_filled`)."""
        if not cells[0] and not any(
            cell
            for column, cell in zip(self.columns, cells, strict=True)
            if column.spec.kind is not CellKind.TEXT
        ):
            return _CONTINUATION if any(cells) else None
        if self.header.bold:
            cells = [unbold(cell) for cell in cells]
        values: dict[str, Any] = {}
        extras: dict[str, str] = {}
        flops: float | None = None
        averages: dict[bool, float] = {}
        """Printed averages (``CPU time avg``, ``CUDA time avg``), by device."""
        for column, cell in zip(self.columns, cells, strict=True):
            spec = column.spec
            if spec.kind is CellKind.TEXT:
                if spec.field not in (EXTRA, DERIVED):
                    values[spec.field] = cell
                elif cell:
                    extras[column.title] = cell
                continue
            if not cell:
                if spec.device or spec.kind in (CellKind.MEMORY, CellKind.FLOPS):
                    continue  # left blank: an op that launched nothing (torch <= 1.3)
                return None
            try:
                value = read_cell(column, cell)
            except CellError:
                return None
            if spec.kind is CellKind.FLOPS:
                flops = value
            elif spec.field == EXTRA:
                extras[column.title] = cell
            elif spec.field == DERIVED:
                averages[spec.device] = float(value or 0.0)
            else:
                values[spec.field] = value
        if "calls" not in values and not self.has_calls:
            values["calls"] = _calls_from_averages(values, averages)
        if not values.get("name") or "calls" not in values:
            return None
        return Row(event_kind=UNKNOWN_KIND, **{**_ROW_DEFAULTS, **values}), flops, extras

    def _result(
        self, title: str, footer: dict[str, float], closed: bool, cut: str | None
    ) -> ParsedTable:
        rows = tuple(self.rows)
        titles = self.header.titles
        device_columns = [c for c in self.columns if c.spec.device]
        device = next((c.device_name for c in device_columns), "")
        device = device or next(filter(None, map(footer_device, footer)), DEFAULT_DEVICE)
        shown = sum(r.self_cpu_us for r in rows)
        from_shares = None
        if SELF_CPU_FOOTER not in footer and "self_cpu_us" not in self.missing:
            from_shares = _total_from_shares(rows, shown)
        cpu_total = footer.get(SELF_CPU_FOOTER, from_shares or shown)
        shown_device = sum(r.self_device_us for r in rows)
        device_from_shares = None
        if f"Self {device} time total" not in footer and device_columns:
            # a device label's span (Self CUDA % above 100) is no share of the device's work
            device_from_shares = _total_from_shares(
                rows, shown_device, lambda r: r.self_device_us, lambda r: r.self_device_pct
            )
        if f"{device} time total" not in footer and LEGACY_TITLES.intersection(titles):
            # torch <= 1.6: its footer's inclusive sum, from a row's CUDA total %
            device_from_shares = _total_from_shares(
                rows,
                sum(r.device_total_us for r in rows),
                lambda r: r.device_total_us,
                lambda r: r.device_total_pct,
            )
        device_total = footer.get(
            f"Self {device} time total",
            footer.get(f"{device} time total", device_from_shares or shown_device),
        )
        if self.missing:
            rows = _filled(rows, self.missing, cpu_total, device_total)
            self.rows = list(rows)
        table = ProfilerTable(
            rows=rows,
            group_by="shape" if SHAPES_TITLE in titles else "name",
            self_cpu_total_us=cpu_total,
            self_device_total_us=device_total,
            has_device=bool(device_columns),
            has_memory=CPU_MEM_TITLE in titles or any(_is_memory(c) for c in device_columns),
            has_device_memory=any(_is_memory(c) for c in device_columns),
            has_shapes=SHAPES_TITLE in titles,
            device_name=device,
            total_rows=len(rows),
            longest_name=max(len(r.name) for r in rows),
            longest_shapes=max(len(r.shapes) for r in rows),
        )
        return ParsedTable(
            table=table,
            title=title,
            layout=_layout(titles, footer),
            columns=titles,
            footer=footer,
            truncated_names=sum(r.name.endswith(TRUNCATION_MARK) for r in rows),
            diagnostics=self._diagnostics(
                footer, closed, cut, from_shares, None if shown else device_from_shares
            ),
            flops=tuple(self.flops)
            if any(c.spec.kind is CellKind.FLOPS for c in self.columns)
            else (),
            extra_cells=tuple(self.extras),
            total_from_shares=from_shares is not None
            or (not shown and device_from_shares is not None),
        )

    def _device_name(self) -> str:
        return next((c.device_name for c in self.columns if c.spec.device), DEFAULT_DEVICE)

    def _diagnostics(
        self,
        footer: dict[str, float],
        closed: bool,
        cut: str | None,
        from_shares: float | None,
        device_from_shares: float | None = None,
    ) -> tuple[Diagnostic, ...]:
        # one function: the checks of one parsed table, in the order their diagnostics print
        found: list[Diagnostic] = []
        n = len(self.rows)
        if not closed:
            how = f"ends mid-row ({cut!r})" if cut else "ends without its closing rule"
            found.append(
                Diagnostic(
                    "fragment",
                    f"the table {how}: kept the {n} complete rows above it",
                    remedy="paste the whole table, down to its footer",
                )
            )
        if from_shares is not None:
            found.append(
                Diagnostic(
                    "total_from_shares",
                    "the table has no 'Self CPU time total' footer: taken as "
                    f"{from_shares / 1e6:.3f} s (each row's Self CPU % is its share of it)",
                    level=Level.INFO,
                )
            )
        elif device_from_shares is not None:
            found.append(
                Diagnostic(
                    "total_from_shares",
                    "the table has no device time total footer: taken as "
                    f"{device_from_shares / 1e6:.3f} s (each row's Self "
                    f"{self._device_name()} % is its share of it)",
                    level=Level.INFO,
                )
            )
        elif closed and not footer:
            found.append(
                Diagnostic(
                    "no_footer",
                    "the table has no 'Self CPU time total' footer: totals are summed from the "
                    "rows shown",
                    level=Level.INFO,
                )
            )
        if not self.has_calls:
            found.append(
                Diagnostic(
                    "no_calls_column",
                    "the table has no '# of Calls' column: each row's calls are its total "
                    "divided by its printed average (0 where neither is printed)",
                    level=Level.INFO,
                )
            )
        if self.missing:
            found.append(
                Diagnostic(
                    "missing_columns",
                    "the table lacks columns torch prints ("
                    + ", ".join(self.missing)
                    + "): each is read from its partner (a time from its share of the "
                    "footer's total, a share from its time)",
                    level=Level.INFO,
                )
            )
        if self.unreadable:
            found.append(unreadable_rows(self.unreadable))
        if self.repaired:
            found.append(
                Diagnostic(
                    "repaired_rows",
                    f"{self.repaired} lines held rows glued to other text (a pager's marker "
                    "between cells, or two rows on one line): read after separating them",
                    count=self.repaired,
                )
            )
        negative = sum(_has_negative_time(r) for r in self.rows)
        negative_footer = [k for k, v in footer.items() if v < 0]
        if negative or negative_footer:
            where = f"{negative} rows" + (" and the footer" if negative_footer else "")
            found.append(
                Diagnostic(
                    "negative_time",
                    f"{where} show negative times (a profiler clock fault): kept as printed",
                    count=negative + len(negative_footer),
                    remedy="profile again; times from this table are not reliable",
                )
            )
        return tuple(found)


#: Fields read from a partner column when the header lacks them: time <-> share of a total
#: (torch prints Self CPU % and CPU total % of the Self CPU time total, Self CUDA % of the
#: Self CUDA time total).
_PAIRED: Final[dict[str, tuple[str, bool]]] = {
    "self_cpu_us": ("self_cpu_pct", False),
    "self_cpu_pct": ("self_cpu_us", False),
    "cpu_total_us": ("cpu_total_pct", False),
    "cpu_total_pct": ("cpu_total_us", False),
    "self_device_us": ("self_device_pct", True),
    "self_device_pct": ("self_device_us", True),
}


def _filled(
    rows: Sequence[Row], missing: Sequence[str], cpu: float, device: float
) -> tuple[Row, ...]:
    """`rows` with each field of `missing` (whose partner the table prints) read from its
    partner (`_PAIRED`): a time from its share of the table's total, a share from its time."""
    out = []
    for r in rows:
        changes: dict[str, Any] = {}
        for name in missing:
            partner, on_device = _PAIRED[name]
            total = device if on_device else cpu
            value = getattr(r, partner)
            if name.endswith("_pct"):
                changes[name] = value * 100.0 / total if total else 0.0
            else:
                changes[name] = round(value * total / 100.0, 3)
        out.append(replace(r, **changes))
    return tuple(out)


def _calls_from_averages(values: dict[str, Any], averages: dict[bool, float]) -> int:
    """A row's calls when the table has no ``# of Calls`` column: its total over its
    printed average (torch prints ``CPU time avg`` = CPU total / calls), on the CPU, else
    the device; 0 when neither is printed."""
    for device, total in ((False, "cpu_total_us"), (True, "device_total_us")):
        avg = averages.get(device, 0.0)
        if avg > 0 and values.get(total, 0.0) > 0:
            return max(round(float(values[total]) / avg), 1)
    return 0


def _is_memory(column: Column) -> bool:
    return column.spec.kind is CellKind.MEMORY


def _has_negative_time(row: Row) -> bool:
    times = (row.self_cpu_us, row.cpu_total_us, row.self_device_us, row.device_total_us)
    return any(t < 0 for t in times)


def _layout(titles: Sequence[str], footer: dict[str, float]) -> str:
    if LEGACY_TITLES.intersection(titles):
        return LEGACY
    if any(footer_device(k) and not k.startswith("Self ") for k in footer):
        return TRANSITIONAL
    return MODERN


def _total_from_shares(
    rows: Sequence[Row],
    shown: float,
    time: Callable[[Row], float] = lambda r: r.self_cpu_us,
    share: Callable[[Row], float] = lambda r: r.self_cpu_pct,
) -> float | None:
    """The Self CPU (or, with `time` and `share`, Self CUDA) time total a footer would have
    said, from the row with the largest share (`_MIN_SHARE_PCT`, and at most 100: torch
    prints a device label's span as a share of the device total it is not part of), or the
    rows' exact sum `shown` when that is within the share's rounding of it; None when no row
    shows a share that large."""
    shares = [r for r in rows if share(r) <= 100.0]
    best = max(shares, key=share, default=None)
    if best is None or share(best) < _MIN_SHARE_PCT or time(best) <= 0:
        return None
    implied = time(best) * 100.0 / share(best)
    # rows that sum to more than the total count it twice: device rows list each op and the
    # kernels it launched (torch's device total counts the kernels once)
    return shown if abs(implied - shown) <= shown * _SHARE_ERROR else implied
