"""Where a printed torch table is in a text, and how its lines split into cells.

A table is found by its header line (torch's column titles, ``Name`` first) and the dashed
rule below it. The rule gives the column positions; the text in front of it (``> ``,
indentation, a diff ``+``, test-runner text glued on) is the table's prefix, stripped from
each of its lines. Cells are runs of text separated by two or more spaces: torch always
writes two spaces after a cell, also after one that overflows its column, and the cells
themselves (names with spaces, ``-1.70 MB``, input shapes) hold single spaces only. When a
row has fewer runs than columns (an empty ``Overload Name`` or ``Source Location`` cell),
each run goes to the column it overlaps.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import msgspec

from profsight.lazy import regex
from profsight.loaders.table_columns import CPU_TITLES, NAME_TITLE, is_device_title
from profsight.model.diagnostics import Diagnostic

#: A cell: text runs separated by two or more spaces (one space stays inside a cell).
_TOKEN = regex(r"\S+(?: \S+)*")
#: torch's dashed rule (``----  ----``), after whatever prefix the table carries; docs that
#: quote a table in reStructuredText turn it into ``====  ====``. torch writes two spaces
#: between columns; a table whose columns were cut by hand may keep more (HFAiLab's
#: alphafold-optimized profile kept three where the CPU columns were deleted).
_RULE = regex(r"^(?P<prefix>.*?)(?P<rule>(?P<c>[-=])(?P=c)*(?: {2,}(?P=c)+)+) *$")
_SEGMENT = regex(r"-+|=+")
#: The table's own rule, once the prefix is stripped.
_BARE_RULE = regex(r"^(?:-+(?: {2,}-+)+|=+(?: {2,}=+)+) *$")
#: A rule of any kind: torch's dashes, ``=`` banners, bottleneck's dash lines.
_PLAIN_RULE = regex(r"^[-=]{3,}(?:\s+[-=]+)*$")
#: ``--- Profiling Eager ---``, ``===== [REF] =====``.
_BANNER = regex(r"^[-=]{3,}\s*\S.*?\s*[-=]{3,}$")
#: Lightning's ``PyTorchProfiler`` report: ``Profile stats for: records``.
_LIGHTNING_STATS = regex(r"^Profile stats for: ")
#: torch's line under the header when ``top_level_events_only=True``: not a title.
TOP_LEVEL_NOTE: Final = "This report only display top-level ops statistics"
#: How many text lines above a table are searched for its title.
_TITLE_LOOKBACK: Final = 6


class Header(msgspec.Struct, frozen=True):
    prefix: str
    """What every line of the table starts with (``> ``, indentation); often ""."""
    titles: tuple[str, ...]
    segments: tuple[tuple[int, int], ...]
    """Each column's ``[start, end)`` in a line once the prefix is stripped."""
    bold: bool = False
    """The titles carry Markdown bold marks: so may the rows' cells."""


def header_at(lines: Sequence[str], i: int) -> Header | None:
    """The table header at line `i` (its dashed rule on the next line), if it is one."""
    line = lines[i]
    if NAME_TITLE not in line or i + 1 >= len(lines):
        return None
    rule = _RULE.match(lines[i + 1])
    if rule is None:
        return None
    prefix = rule["prefix"]
    body = line[len(prefix) :] if line.startswith(prefix) else line
    tokens = _TOKEN.findall(body)
    if NAME_TITLE not in tokens:
        return None
    # torch <= 1.6: "Self CPU total %" overflows its column, so titles are read as runs
    titles = tuple(unbold(t) for t in tokens[tokens.index(NAME_TITLE) :])
    segments = tuple((m.start(), m.end()) for m in _SEGMENT.finditer(rule["rule"]))
    if len(titles) != len(segments):
        return None
    # a CPU column, or only device columns (a table cut to its CUDA columns by its author)
    if not CPU_TITLES.intersection(titles) and not any(map(is_device_title, titles)):
        return None
    return Header(prefix, titles, segments, bold="**" in body)


#: Markdown bold around a cell or part of one (``**2400**``, ``** 59.577ms**``,
#: ``void **gemv2T_kernel_val**<int, ...``): a table pasted into a Markdown file with its
#: figures highlighted by hand. A pair of marks: a kernel's ``float**`` stays.
_BOLD = regex(r"\*\*\s*([^*]*?)\s*\*\*")


def unbold(cell: str) -> str:
    """`cell` without Markdown bold marks (the cell itself when it has none)."""
    return _BOLD.sub(r"\1", cell).strip() if "**" in cell else cell


#: HTML emphasis and preformatting around a table pasted into an HTML page or an issue
#: (``<pre>``, ``<b>cudnn_convolution_backward ... 28</b>``, kaldi-asr/kaldi#3999).
_HTML_MARKS = regex(r"</?(?:b|i|em|strong|pre|code|tt)>", re.IGNORECASE)


def unmark(line: str) -> str:
    """`line` with HTML emphasis tags blanked out, each by as many spaces: the columns of a
    fixed-width table stay where they were."""
    if "<" not in line:
        return line
    return _HTML_MARKS.sub(lambda m: " " * len(m.group(0)), line)


def strip_prefix(line: str, prefix: str) -> str | None:
    """`line` without the table's prefix ("" when blank); None if not part of the table."""
    if line.startswith(prefix):
        return line[len(prefix) :]
    if not line.strip() or line.rstrip() == prefix.rstrip():
        return ""
    return None


def is_rule(body: str) -> bool:
    """Whether a line (prefix stripped) is one of the table's dashed rules."""
    return bool(_BARE_RULE.match(body))


def find_title(lines: Sequence[str], header: int, stop: int, prefix: str) -> str:
    """The nearest title-like line above the header at `header`, not above line `stop`."""
    seen = 0
    for k in range(header - 1, stop - 1, -1):
        text = _plain(lines[k], prefix)
        if not text or _PLAIN_RULE.match(text) or text == TOP_LEVEL_NOTE:
            continue
        if _LIGHTNING_STATS.match(text) or _BANNER.match(text):
            return text
        # a line between two rules: bottleneck's banner, torch's ``header=`` line
        if k > stop and _PLAIN_RULE.match(_plain(lines[k - 1], prefix)):
            below = _plain(lines[k + 1], prefix)
            if _PLAIN_RULE.match(below) or below == TOP_LEVEL_NOTE:
                return text
        seen += 1
        if seen >= _TITLE_LOOKBACK:
            break
    return ""


def _plain(line: str, prefix: str) -> str:
    stripped = strip_prefix(line, prefix)
    return (line if stripped is None else stripped).strip()


def split_cells(body: str, segments: Sequence[tuple[int, int]]) -> list[str]:
    """The cells of one row line (prefix stripped), one per column, "" for an empty one."""
    tokens = list(_TOKEN.finditer(body))
    if len(tokens) == len(segments):
        return [t.group() for t in tokens]
    spans: list[tuple[int, int] | None] = [None] * len(segments)
    shift = 0  # how far cells that overflowed their column pushed the rest right
    column = 0
    for token in tokens:
        start, end = token.start() - shift, token.end() - shift

        def fit(c: int, start: int = start, end: int = end) -> tuple[int, int]:
            lo, hi = segments[c]
            return min(end, hi) - max(start, lo), -max(lo - end, start - hi, 0)

        column = max(range(column, len(segments)), key=fit)
        span = spans[column]
        spans[column] = (token.start() if span is None else span[0], token.end())
        shift += max(0, end - segments[column][1])
    return ["" if s is None else body[s[0] : s[1]] for s in spans]


#: What a terminal pager writes into the text it shows: ``less``'s ``[21/77]`` position,
#: ``(END)``, ``--More--(42%)``, ``lines 1-40/77 52%``.
_PAGER_MARK = regex(
    r"^(?:\[\d+/\d+\]|\(END\)|--More--(?:\(\d+%\))?|lines \d+-\d+/\d+(?: \d+%)?|:)$"
)


def glued_rows(body: str, columns: int) -> list[list[str]]:
    """The rows of a line that holds one or more rows glued to other text: its cells
    without a pager's markers, cut into runs of `columns` cells; [] when they do not
    divide into whole rows."""
    cells = [t for t in _TOKEN.findall(body) if not _PAGER_MARK.match(t)]
    if not cells or len(cells) % columns:
        return []
    return [cells[i : i + columns] for i in range(0, len(cells), columns)]


def unreadable_rows(lines: Sequence[str]) -> Diagnostic:
    """The warning for lines inside a printed table that are not rows (they were skipped)."""
    return Diagnostic(
        "unreadable_row",
        f"{len(lines)} lines inside the table could not be read as rows and were skipped "
        f"(first: {lines[0][:60]!r})",
        count=len(lines),
    )
