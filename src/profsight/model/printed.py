"""What a printed table or a Lightning report holds once parsed: the model's types of printed
input (the loaders in `profsight.loaders` fill them; `TextProfile` reads them)."""

from __future__ import annotations

import msgspec

from profsight.model.cprofile import ActionProfile
from profsight.model.diagnostics import Diagnostic
from profsight.model.table import ProfilerTable


class ParsedTable(msgspec.Struct, frozen=True):
    """One printed table: its rows as `ProfilerTable` and what the printout said around them."""

    table: ProfilerTable
    """Rows as shown: times in microseconds, memory in bytes, percentages as numbers."""
    title: str
    """The line naming the table (``Profile stats for: records``, ``--- Profiling Eager
    ---``, torch's ``header=``), "" if none."""
    layout: str
    """``legacy`` (torch <= 1.6), ``transitional`` (1.7) or ``modern``."""
    columns: tuple[str, ...]
    """The column titles as printed."""
    footer: dict[str, float]
    """``{"Self CPU time total": 8188.0, ...}`` in microseconds."""
    truncated_names: int
    """Names torch cut to fit its name column (they end with ``...``)."""
    diagnostics: tuple[Diagnostic, ...]
    flops: tuple[float | None, ...] = ()
    """Per row, the ``Total FLOPs`` cell in FLOPs (``--`` is None); empty without it."""
    extra_cells: tuple[dict[str, str], ...] = msgspec.field(default=())
    """Per row, the cells of columns no `Row` field holds (``Overload Name``, ``Node ID``,
    ``Source Location`` with its continuation lines)."""
    total_from_shares: bool = False
    """No footer was printed, and the ``Self CPU time total`` was read from a row's Self
    CPU and its Self CPU % (torch's share of that total): the table still tells the whole
    window's time."""


class ActionRow(msgspec.Struct, frozen=True):
    """One ``SimpleProfiler`` row: an action's mean, calls, total and share of the run."""

    action: str
    mean_s: float | None
    calls: int | None
    """None in PL 1.0/1.1 reports (no ``Num calls`` column)."""
    total_s: float
    percent: float | None


class LightningReport(msgspec.Struct, frozen=True):
    kind: str
    """``simple`` or ``advanced``."""
    stage: str
    """``fit``, ``validate``, ``test``, ``predict``, or "" (PL 1.0 names none)."""
    actions: tuple[ActionRow, ...]
    """``SimpleProfiler`` rows as printed, without the ``Total`` row."""
    total_s: float | None
    """The ``Total`` row's time: the whole run (None when not printed)."""
    advanced: dict[str, str]
    """``AdvancedProfiler``: action name -> its cProfile listing."""
    diagnostics: tuple[Diagnostic, ...]
    profiles: tuple[ActionProfile, ...] = ()
    """``AdvancedProfiler``: the listings parsed, in the report's order."""


__all__ = ["ActionRow", "LightningReport", "ParsedTable"]
