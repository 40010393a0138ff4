"""Rows of a torch table pasted without their header: the columns inferred from the cells.

A fragment copied from the middle of a table has no title line and no rule, but torch's
layouts are few and each cell says its kind (``12.34%``, ``1.875ms``, ``-385.69 KB``, a
count). The first layout of `LAYOUTS` whose column kinds every row's cells read as is the
table's; a warning says the columns were inferred and which layout was taken.
"""

from __future__ import annotations

from typing import Final

from profsight.errors import InputError
from profsight.lazy import regex
from profsight.loaders.table_columns import CellError, read_cell, resolve_column
from profsight.loaders.table_text import parse_tables
from profsight.model.diagnostics import Diagnostic
from profsight.model.printed import ParsedTable

#: A cell: text runs separated by two or more spaces (as `table_layout` splits rows).
_TOKEN = regex(r"\S+(?: \S+)*")
#: A printed FLOPs column whose title (and so unit) is not there: kept as text.
UNTITLED_FLOPS: Final = "FLOPs (title not pasted)"
_CPU: Final = ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg")
_CUDA: Final = ("Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg")
_CPU_MEM: Final = ("CPU Mem", "Self CPU Mem")
_CUDA_MEM: Final = ("CUDA Mem", "Self CUDA Mem")
_CALLS: Final = ("# of Calls",)
_LEGACY: Final = (
    "Name",
    "Self CPU total %",
    "Self CPU total",
    "CPU total %",
    "CPU total",
    "CPU time avg",
    "CUDA total %",
    "CUDA total",
    "CUDA time avg",
    "Number of Calls",
)
#: torch's layouts (1.4 to 2.x), richest first, each also with a trailing FLOPs column.
LAYOUTS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = tuple(
    (label + (" + FLOPs" if flops else ""), titles + ((UNTITLED_FLOPS,) if flops else ()))
    for label, titles in (
        ("modern, CPU and CUDA with memory", _CPU + _CUDA + _CPU_MEM + _CUDA_MEM + _CALLS),
        ("modern, CPU and CUDA", _CPU + _CUDA + _CALLS),
        ("modern, CPU with memory", _CPU + _CPU_MEM + _CALLS),
        ("modern, CPU", _CPU + _CALLS),
        ("legacy (torch <= 1.6)", _LEGACY),
    )
    for flops in (False, True)
)
#: Rows needed before a text is taken for a header-less table.
MIN_ROWS: Final = 2


def looks_like_rows(text: str) -> bool:
    """Whether `text` holds at least `MIN_ROWS` lines that read as rows of one layout."""
    return _layout(text) is not None


def parse_rows(text: str, source: str) -> list[ParsedTable]:
    """The header-less rows of `text` as a table of the inferred layout."""
    found = _layout(text)
    if found is None:
        raise InputError(source, "holds no rows of a printed profiler table")
    label, titles, rows = found
    widths = [max(len(t), 12) for t in titles]
    header = "  ".join(t.rjust(w) for t, w in zip(titles, widths, strict=True))
    rule = "  ".join("-" * w for w in widths)
    tables = parse_tables("\n".join([rule, header, rule, *rows, rule]), source)
    note = Diagnostic(
        "no_header",
        f"the rows were pasted without torch's header line: columns inferred from the cells "
        f"({label} layout); percentages are of the whole table, most of which is not here",
        remedy="paste the table from its dashed rule down to its footer",
    )
    return [
        ParsedTable(
            table=t.table,
            title=t.title,
            layout=t.layout,
            columns=t.columns,
            footer={},
            truncated_names=t.truncated_names,
            diagnostics=(*(d for d in t.diagnostics if d.code != "no_footer"), note),
            flops=t.flops,
            extra_cells=t.extra_cells,
        )
        for t in tables
    ]


#: What quoting adds in front of a pasted line: ``> `` (any depth), a diff's ``+``.
_QUOTE = regex(r"^\s*(?:[>+]\s?)+")


def _layout(text: str) -> tuple[str, tuple[str, ...], list[str]] | None:
    lines = [_QUOTE.sub("", line).strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    for label, titles in LAYOUTS:
        rows = [line for line in lines if _fits(line, titles)]
        if len(rows) >= MIN_ROWS and len(rows) * 2 >= len(lines):
            return label, titles, rows
    return None


def _fits(line: str, titles: tuple[str, ...]) -> bool:
    cells = _TOKEN.findall(line)
    if len(cells) != len(titles):
        return False
    for title, cell in zip(titles[1:], cells[1:], strict=True):
        column = resolve_column(title)
        if title == UNTITLED_FLOPS:
            continue
        try:
            read_cell(column, cell)
        except CellError:
            return False
    return True
