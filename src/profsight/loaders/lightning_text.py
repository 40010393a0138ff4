"""Reading Lightning's ``SimpleProfiler`` and ``AdvancedProfiler`` reports.

``SimpleProfiler`` prints one pipe-separated table of actions: 3 columns in PL 1.0/1.1
(``Action | Mean duration (s) | Total time (s)``), 5 from PL 1.3 (``Num calls``,
``Percentage %`` and a ``Total`` row). Cells are padded with TABs before each ``|``; PL 2.x
starts every row with ``|``. ``AdvancedProfiler`` prints one cProfile listing per action
under ``Profile stats for: <action>``. Both start with ``<STAGE> Profiler Report``.
(``PyTorchProfiler`` prints a torch table under ``Profile stats for: records``: that one is
read by `profsight.loaders.table_text.parse_tables`.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from profsight.errors import InputError
from profsight.lazy import regex
from profsight.loaders.cprofile_text import parse_listing
from profsight.loaders.table_layout import unreadable_rows
from profsight.loaders.table_text import looks_like_table
from profsight.model.diagnostics import Diagnostic, Level
from profsight.model.printed import ActionRow, LightningReport

__all__ = [
    "ActionRow",
    "LightningReport",
    "looks_like_lightning_report",
    "parse_lightning_report",
    "parse_lightning_reports",
]

SIMPLE: Final = "simple"
ADVANCED: Final = "advanced"

ACTION_TITLE: Final = "Action"
MEAN_TITLE: Final = "Mean duration (s)"
CALLS_TITLE: Final = "Num calls"
TOTAL_TITLE: Final = "Total time (s)"
PERCENT_TITLE: Final = "Percentage %"
SIMPLE_TITLES: Final = (ACTION_TITLE, MEAN_TITLE, CALLS_TITLE, TOTAL_TITLE, PERCENT_TITLE)
#: The first row of PL >= 1.3's table: the whole run, not an action.
TOTAL_ROW: Final = "Total"
#: What the ``Total`` row prints as its mean (``-`` in PL 2.x, ``_`` in PL 1.x).
NO_VALUE: Final = frozenset({"-", "_"})
PERCENT_SIGN: Final = "%"
CELL_SEPARATOR: Final = "|"

#: ``FIT Profiler Report``; PL 1.0 prints ``Profiler Report`` alone.
_REPORT_TITLE = regex(r"^(?P<prefix>[>+\s]*)(?:(?P<stage>[A-Z][A-Z_]*) )?Profiler Report\s*$")
#: ``Profile stats for: <action>``, `` rank: <n>`` added when Lightning knows the rank.
_STATS_FOR = regex(r"^Profile stats for: (?P<action>.*?)(?: rank: (?P<rank>\d+))?\s*$")
_SIMPLE_HEADER = regex(r"^(?P<prefix>.*?)\|?\s*Action\s*\|\s*Mean duration \(s\)")
_RULE = regex(r"^-{10,}\s*$")
#: What quoting adds in front of a pasted line: ``> `` (any depth), a diff's ``+``.
_QUOTE = regex(r"^[ \t]*(?:[>+][ \t]?)+")
#: cProfile's ``pstats`` listing: ``  123 function calls (120 primitive calls) in 0.01 seconds``.
_CPROFILE = regex(r"function calls .*in [-\d.e]+ seconds|Ordered by:")


def looks_like_lightning_report(text: str) -> bool:
    """A ``SimpleProfiler`` table, or ``AdvancedProfiler`` cProfile listings."""
    lines = text.splitlines()
    if any(_SIMPLE_HEADER.match(line) for line in lines):
        return True
    return any(_stats_for(line) for line in lines) and bool(_CPROFILE.search(text))


def parse_lightning_report(text: str, source: str) -> LightningReport:
    """The first report in `text`. Raises `InputError` if `text` holds none."""
    reports = parse_lightning_reports(text, source)
    first = reports[0]
    if len(reports) == 1:
        return first
    note = Diagnostic(
        "several_reports",
        f"the text holds {len(reports)} Lightning reports; read the first "
        f"({first.stage or 'unnamed'} stage)",
        level=Level.INFO,
        remedy="use parse_lightning_reports() for all of them",
    )
    return LightningReport(
        first.kind,
        first.stage,
        first.actions,
        first.total_s,
        first.advanced,
        (*first.diagnostics, note),
        first.profiles,
    )


def parse_lightning_reports(text: str, source: str) -> list[LightningReport]:
    """Every report in `text` (a log holds one per stage). Raises `InputError` if none."""
    if not text.strip():
        raise InputError(source, "is empty")
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _REPORT_TITLE.match(line)] or [0]
    starts[0] = 0  # lines above the first title belong to it
    bounds = zip(starts, [*starts[1:], len(lines)], strict=True)
    found = [r for a, b in bounds if (r := _parse_section(lines[a:b])) is not None]
    reports = [r for r in found if r.kind != SIMPLE or r.actions or r.total_s is not None]
    if reports:
        return reports
    if found:
        raise InputError(source, "has a SimpleProfiler header but no rows under it")
    if looks_like_table(text):
        raise InputError(
            source,
            "is a Lightning PyTorchProfiler report: its table is torch's (read it with "
            "parse_tables)",
        )
    raise InputError(
        source,
        "is not a Lightning profiler report (no SimpleProfiler 'Action | Mean duration (s)' "
        "table and no AdvancedProfiler 'Profile stats for:' listing)",
    )


def _stats_for(line: str) -> re.Match[str] | None:
    return _STATS_FOR.match(line.lstrip("> +\t"))


def _parse_section(lines: Sequence[str]) -> LightningReport | None:
    title = next((m for line in lines if (m := _REPORT_TITLE.match(line))), None)
    stage = (title["stage"] or "").lower() if title else ""
    prefix = title["prefix"] if title else ""
    header = next((i for i, line in enumerate(lines) if _SIMPLE_HEADER.match(line)), None)
    if header is not None:
        match = _SIMPLE_HEADER.match(lines[header])
        prefix = prefix or (match["prefix"] if match else "")
        return _SimpleReader(lines, header, prefix, stage).read()
    advanced = _advanced(lines)
    if advanced:
        profiles = tuple(p for a, t in advanced.items() if (p := parse_listing(a, t)) is not None)
        return LightningReport(ADVANCED, stage, (), None, advanced, (), profiles)
    return None


def _strip(line: str, prefix: str) -> str:
    if prefix and line.startswith(prefix):
        return line[len(prefix) :]
    if prefix and line.rstrip() == prefix.rstrip():
        return ""
    return line


def _advanced(lines: Sequence[str]) -> dict[str, str]:
    """Each action's listing, whatever prefix the paste gave its lines (``> ``, indentation)."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        match = _stats_for(line)
        if match:
            current = blocks.setdefault(match["action"], [])
        elif current is not None:
            current.append(_QUOTE.sub("", line))
    listings = {action: "\n".join(block).strip("\n") for action, block in blocks.items()}
    if not any(_CPROFILE.search(text) for text in listings.values()):
        return {}  # PyTorchProfiler's "records" table, or prose
    return listings


class _SimpleReader:
    def __init__(self, lines: Sequence[str], header: int, prefix: str, stage: str) -> None:
        self.lines = lines
        self.header = header
        self.prefix = prefix
        self.stage = stage
        self.titles = _cells(_strip(lines[header], prefix))
        self.actions: list[ActionRow] = []
        self.total_s: float | None = None
        self.unreadable: list[str] = []

    def read(self) -> LightningReport:
        closed = False
        cut: str | None = None
        bodies = [_strip(line, self.prefix) for line in self.lines[self.header + 1 :]]
        for k, body in enumerate(bodies):
            text = body.strip()
            if _RULE.match(text) or not text:
                if self.actions:
                    closed = bool(text)
                    break
                continue
            if self._add(body):
                continue
            if any(_RULE.match(b.strip()) or self._parse(b) for b in bodies[k + 1 :]):
                self.unreadable.append(text)
                continue
            cut = text
            break
        return LightningReport(
            SIMPLE,
            self.stage,
            tuple(self.actions),
            self.total_s,
            {},
            self._diagnostics(closed, cut),
        )

    def _add(self, body: str) -> bool:
        row = self._parse(body)
        if row is None:
            return False
        if row.action == TOTAL_ROW and row.mean_s is None:
            self.total_s = row.total_s
        else:
            self.actions.append(row)
        return True

    def _parse(self, body: str) -> ActionRow | None:
        if CELL_SEPARATOR not in body:
            return None
        cells = _cells(body)
        n = len(self.titles)
        if len(cells) < n:
            return None
        # an action name holding "|" (a callback's printed state): keep it whole
        extra = len(cells) - n
        cells = [CELL_SEPARATOR.join(cells[: extra + 1]), *cells[extra + 1 :]]
        values = dict(zip(self.titles, cells, strict=True))
        try:
            return ActionRow(
                action=values[ACTION_TITLE].strip(),
                mean_s=_number(values.get(MEAN_TITLE)),
                calls=_count(values.get(CALLS_TITLE)),
                total_s=float(values[TOTAL_TITLE]),
                percent=_number(values.get(PERCENT_TITLE, "").removesuffix(PERCENT_SIGN)),
            )
        except (KeyError, ValueError):
            return None

    def _diagnostics(self, closed: bool, cut: str | None) -> tuple[Diagnostic, ...]:
        found: list[Diagnostic] = []
        if not closed:
            how = f"ends mid-row ({cut!r})" if cut else "ends without its closing rule"
            found.append(
                Diagnostic(
                    "fragment",
                    f"the SimpleProfiler table {how}: kept the {len(self.actions)} complete "
                    "rows above it",
                    remedy="paste the whole report, down to its closing rule",
                )
            )
        if self.unreadable:
            found.append(unreadable_rows(self.unreadable))
        return tuple(found)


def _cells(body: str) -> list[str]:
    text = body.strip()
    cells = text.split(CELL_SEPARATOR)
    if text.startswith(CELL_SEPARATOR):
        cells = cells[1:]
    if text.endswith(CELL_SEPARATOR):
        cells = cells[:-1]
    return [c.strip() for c in cells]


def _number(cell: str | None) -> float | None:
    if cell is None or cell.strip() in NO_VALUE or not cell.strip():
        return None
    return float(cell)


def _count(cell: str | None) -> int | None:
    if cell is None or cell in NO_VALUE:
        return None
    return int(cell)
