"""`TextProfile`: what a printed table or a Lightning report gives: numbers, no events.

A printed table holds torch's aggregated rows and nothing below them: no call tree, no
per-step times, no shapes unless printed. profsight explains what the rows show and says
what cannot be known from them.
"""

from __future__ import annotations

from typing import NoReturn

import msgspec
from msgspec.structs import replace

from profsight.errors import UsageError
from profsight.knowledge.rows import LIGHTNING_ACTION_EVENT as LIGHTNING_ACTION
from profsight.knowledge.rows import STEP_PREFIXES
from profsight.model.cprofile import ActionProfile, exclusive_s, nests, outermost_s
from profsight.model.diagnostics import Diagnostic
from profsight.model.printed import LightningReport, ParsedTable
from profsight.model.table import ProfilerTable, Row


class PrintedRun(msgspec.Struct, frozen=True):
    """The rows of one run as printed, for the diagnosis."""

    table: ProfilerTable
    flops: tuple[float | None, ...] = ()
    """Per row, the ``Total FLOPs`` cell (empty when the table has no such column)."""
    exclusive: bool = False
    """Action times exclude the actions inside them (``AdvancedProfiler`` from Lightning
    2.6), so they add up instead of nesting."""
    profiles: tuple[ActionProfile, ...] = ()
    """``AdvancedProfiler``'s cProfile listing of each action."""
    whole: bool = True
    """The table's totals are printed (its footer): False for a fragment of rows."""
    inclusive_device: bool = False
    """Device times are inclusive only (torch <= 1.6 printed no Self CUDA, and its footer
    sums the inclusive times of nested ops): device work cannot be read from it."""


class TextProfile(msgspec.Struct):
    source: str
    format: str
    """``torch_table``, ``lightning_simple`` or ``lightning_advanced``."""
    tables: list[ParsedTable] = msgspec.field(default_factory=list)
    lightning: LightningReport | None = None
    diagnostics: list[Diagnostic] = msgspec.field(default_factory=list)

    @property
    def warnings(self) -> list[Diagnostic]:
        return list(self.diagnostics)

    def table(
        self,
        group_by: str = "name",
        sort_by: str | None = None,
        limit: int | None = None,
        stack: int = 0,
    ) -> ProfilerTable:
        """The main table: the largest printed one with the rows of the tables printed from
        the same run (a CPU-sorted and a CUDA-sorted top 10 show different rows, and the
        diagnosis reads them all), or the Lightning actions."""
        if group_by != "name" and not (group_by == "shape" and self._main().has_shapes):
            raise UsageError(f"a printed table cannot be regrouped by {group_by}")
        if stack:
            raise UsageError("a printed table cannot be regrouped by call stack")
        table = self.run().table
        if sort_by is not None:
            table = table.sorted(sort_by)
        return table.head(limit)

    def run(self) -> PrintedRun:
        """What the diagnosis reads: the main table with the rows of the other tables printed
        from the same run (the same footer: a CPU-sorted and a CUDA-sorted top 10 together
        show more rows), its ``Total FLOPs`` cells, and a Lightning report's listings."""
        main = self._main()
        parsed = next((t for t in self.tables if t.table is main), None)
        if parsed is None:
            report = self.lightning
            advanced = report is not None and report.kind == "advanced"
            profiles = report.profiles if report is not None else ()
            known = all(p.calls is not None for p in profiles)
            exclusive = advanced and not nests(profiles)
            return PrintedRun(main, exclusive=exclusive, profiles=profiles, whole=known)
        rows = list(main.rows)
        seen = {_row_key(r) for r in rows}
        flops = list(parsed.flops)
        for other in self.tables:
            if other is parsed or not parsed.footer or other.footer != parsed.footer:
                continue
            for i, row in enumerate(other.table.rows):
                if _row_key(row) not in seen:
                    seen.add(_row_key(row))
                    rows.append(row)
                    if flops:
                        flops.append(other.flops[i] if other.flops else None)
        merged = replace(main, rows=tuple(rows), total_rows=len(rows))
        return PrintedRun(
            merged,
            tuple(flops),
            whole=(bool(parsed.footer) or parsed.total_from_shares) and not _step_only(parsed),
            inclusive_device=parsed.layout == "legacy" and main.has_device,
        )

    def tree(self) -> NoReturn:
        raise UsageError(f"{self.source}: a printed table has no call tree (a trace file has)")

    def _main(self) -> ProfilerTable:
        if self.tables:
            return max((t.table for t in self.tables), key=len)
        if self.lightning is not None:
            return lightning_table(self.lightning)
        raise UsageError(f"{self.source}: holds no table")


def _row_key(row: Row) -> tuple[object, ...]:
    return (row.name, row.calls, row.self_cpu_us, row.cpu_total_us, row.self_device_us,
            row.device_total_us, row.shapes)  # fmt: skip


def lightning_table(report: LightningReport) -> ProfilerTable:
    """SimpleProfiler actions (or AdvancedProfiler's, from their listings) as table rows:
    totals and calls only (neither records self time)."""
    if not report.actions and report.profiles:
        return _advanced_table(report.profiles)
    total = report.total_s or sum(a.total_s for a in report.actions)
    rows = tuple(
        Row(
            name=a.action,
            event_kind=LIGHTNING_ACTION,
            calls=a.calls or (round(a.total_s / a.mean_s) if a.mean_s else 0),
            self_cpu_us=0.0,
            cpu_total_us=a.total_s * 1e6,
            self_device_us=0.0,
            device_total_us=0.0,
            self_cpu_pct=0.0,
            cpu_total_pct=a.percent
            if a.percent is not None
            else (a.total_s * 100 / total if total else 0.0),
            self_device_pct=0.0,
        )
        for a in report.actions
    )
    return _action_table(rows, (total or 0.0) * 1e6)


def _action_table(rows: tuple[Row, ...], total_us: float) -> ProfilerTable:
    return ProfilerTable(
        rows=rows,
        group_by="name",
        self_cpu_total_us=total_us,
        self_device_total_us=0.0,
        has_device=False,
        has_memory=False,
        has_device_memory=False,
        has_shapes=False,
        total_rows=len(rows),
        longest_name=max((len(r.name) for r in rows), default=0),
    )


def _advanced_table(profiles: tuple[ActionProfile, ...]) -> ProfilerTable:
    """One row per action. When the actions nest (Lightning <= 2.5) a row's total holds the
    actions inside it, its self time is its own part, and the table's total is the
    outermost actions' time; otherwise (2.6) each time is its own and they add up."""
    if nests(profiles):
        own = exclusive_s(profiles)
        total = outermost_s(profiles)
    else:
        own = {p.action: p.total_s for p in profiles}
        total = sum(p.total_s for p in profiles)
    rows = tuple(
        Row(
            name=p.action,
            event_kind=LIGHTNING_ACTION,
            calls=p.calls or 1,
            self_cpu_us=own[p.action] * 1e6,
            cpu_total_us=p.total_s * 1e6,
            self_device_us=0.0,
            device_total_us=0.0,
            self_cpu_pct=own[p.action] * 100 / total if total else 0.0,
            cpu_total_pct=p.total_s * 100 / total if total else 0.0,
            self_device_pct=0.0,
        )
        for p in profiles
    )
    return _action_table(rows, total * 1e6)


def _step_only(parsed: ParsedTable) -> bool:
    """A table cut before its rows (a fragment) whose complete rows are only its step ranges:
    its totals hold, but no row says where the step's time went."""
    cut = any(d.code == "fragment" for d in parsed.diagnostics)
    return cut and all(r.name.startswith(STEP_PREFIXES) for r in parsed.table.rows)
