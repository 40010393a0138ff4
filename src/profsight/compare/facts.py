"""`RunFacts`: what comparisons and budgets read from a report, per profiled step.

Both work on the report's JSON document (output contract ``profsight/1``): a live `ReportData`
goes through `report_document` first, so a saved report and a fresh one share one code path
and compare equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from profsight.compare.saved_report import checked_document
from profsight.knowledge.lightning_names import action_of
from profsight.knowledge.trace_schema import PROFILER_STEP_ROW
from profsight.lazy import regex
from profsight.model.findings import Severity
from profsight.report.document import report_document

if TYPE_CHECKING:
    from profsight.report.build import ReportData

#: Breakdown windows that are one profiled step each (`Breakdown.windows`).
_STEP_WINDOWS = "profiler steps"
#: Lightning's action that runs once per training batch (the step marker of its reports).
_LIGHTNING_STEP_ACTION = "run_training_batch"
_NUMBER = regex(r"\d+(?:[.,]\d+)*")
#: A row that is a range's span on the device's timeline (`ProfilerTable`'s event kinds).
_DEVICE_SPAN = "device_annotation"


def as_document(source: ReportData | Mapping[str, Any], label: str = "<report>") -> dict[str, Any]:
    """The ``profsight/1`` document of a report (a `ReportData`, or its document already)."""
    if isinstance(source, Mapping):
        return checked_document(dict(source), label)
    return report_document(source)


class RowTimes(msgspec.Struct, frozen=True):
    """One table row, per profiled step. Times in microseconds."""

    name: str
    event_kind: str
    is_device: bool
    calls: float
    self_cpu_us: float
    cpu_total_us: float
    self_device_us: float
    device_total_us: float


class FindingFacts(msgspec.Struct, frozen=True):
    category: str
    title: str
    severity: str
    """``info``, ``low``, ``medium`` or ``high``."""
    at_stake_pct: float

    @property
    def level(self) -> Severity:
        return Severity.__members__.get(self.severity.upper(), Severity.INFO)

    @property
    def key(self) -> tuple[str, str]:
        """Category and title with the numbers blanked: the same finding in another run."""
        return self.category, _NUMBER.sub("#", self.title)


class RunFacts(msgspec.Struct, frozen=True):
    source: str
    format: str
    steps: int
    """Profiled steps the table's totals are divided by (1 when the run marks none)."""
    step_us: float | None
    """Average step time; None when the input has no step breakdown."""
    phases_us: dict[str, float]
    """Phase id -> µs per step (empty without a breakdown)."""
    device_busy_us: float | None
    rows: dict[tuple[str, bool], RowTimes]
    """By name and host/device side, step marker rows left out."""
    findings: tuple[FindingFacts, ...]
    bound: str | None = None
    judgement: str | None = None
    memory_peaks: dict[str, float] = msgspec.field(default_factory=dict)
    """Memory (``cpu``, ``device``) -> its peak, bytes (traces with ``profile_memory``)."""
    step_walls: tuple[float, ...] = ()
    """Each profiled step's time (µs), where the report breaks the run into steps."""
    flops_per_step: float | None = None
    """The model's FLOPs per step, where the report counts them (traces with shapes)."""

    @property
    def step_spread_us(self) -> float | None:
        """The steps' sample standard deviation (µs); None with fewer than two steps."""
        walls = self.step_walls
        if len(walls) < 2:
            return None
        mean = sum(walls) / len(walls)
        return float((sum((w - mean) ** 2 for w in walls) / (len(walls) - 1)) ** 0.5)

    @classmethod
    def of(cls, source: ReportData | Mapping[str, Any], label: str = "<report>") -> RunFacts:
        doc = as_document(source, label)
        facts = doc.get("source") or {}
        average = (doc.get("breakdown") or {}).get("average") or {}
        steps = _steps(doc)
        verdict = doc.get("verdict") or {}
        return cls(
            source=str(facts.get("path", label)),
            format=str(facts.get("format", "")),
            steps=steps,
            step_us=_number(average.get("wall_us")),
            phases_us={str(k): float(v) for k, v in (average.get("host_us") or {}).items()},
            device_busy_us=_number(average.get("device_busy_us")),
            rows=_rows(doc.get("table") or [], steps),
            findings=tuple(
                FindingFacts(
                    str(f.get("category", "")),
                    str(f.get("title", "")),
                    str(f.get("severity", "info")),
                    float(f.get("at_stake_pct") or 0.0),
                )
                for f in doc.get("findings") or []
            ),
            bound=verdict.get("bound"),
            judgement=verdict.get("judgement"),
            memory_peaks={
                str(p["memory"]): float(p["peak_bytes"]) for p in doc.get("memory_peaks") or []
            },
            flops_per_step=_number(facts.get("flops_per_step")),
            step_walls=tuple(
                float(w["wall_us"])
                for w in (doc.get("breakdown") or {}).get("steps") or []
                if w.get("wall_us") is not None
            ),
        )

    def phase_pct(self, phase: str) -> float | None:
        if not self.step_us:
            return None
        return self.phases_us.get(phase, 0.0) * 100.0 / self.step_us

    def device_busy_pct(self) -> float | None:
        if not self.step_us or self.device_busy_us is None:
            return None
        return self.device_busy_us * 100.0 / self.step_us


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _is_step_marker(name: str) -> bool:
    return name == PROFILER_STEP_ROW or action_of(name) == _LIGHTNING_STEP_ACTION


def _steps(doc: Mapping[str, Any]) -> int:
    """Profiler step windows of a trace; else the calls of a table's step marker row."""
    breakdown = doc.get("breakdown") or {}
    if breakdown.get("windows") == _STEP_WINDOWS and breakdown.get("steps"):
        return len(breakdown["steps"])
    for row in doc.get("table") or []:
        if _is_step_marker(str(row.get("name", ""))) and row.get("calls"):
            return int(row["calls"])
    return 1


def _rows(table: list[Mapping[str, Any]], steps: int) -> dict[tuple[str, bool], RowTimes]:
    rows: dict[tuple[str, bool], RowTimes] = {}
    for r in table:
        name = str(r.get("name", ""))
        if _is_step_marker(name) or r.get("event_kind") == _DEVICE_SPAN:
            # the step time is compared on its own; a device annotation is the span of a
            # range on the GPU timeline (torch's table shows Optimizer.step#Adam.step twice:
            # its CPU row and that span), not work of its own
            continue
        key = (name, bool(r.get("is_device")))
        row = RowTimes(
            name=name,
            event_kind=str(r.get("event_kind", "")),
            is_device=key[1],
            calls=float(r.get("calls") or 0) / steps,
            self_cpu_us=float(r.get("self_cpu_us") or 0.0) / steps,
            cpu_total_us=float(r.get("cpu_total_us") or 0.0) / steps,
            self_device_us=float(r.get("self_device_us") or 0.0) / steps,
            device_total_us=float(r.get("device_total_us") or 0.0) / steps,
        )
        if key in rows:  # the same name in two groups (e.g. by input shapes): add them up
            old = rows[key]
            row = RowTimes(
                name,
                old.event_kind,
                key[1],
                old.calls + row.calls,
                old.self_cpu_us + row.self_cpu_us,
                old.cpu_total_us + row.cpu_total_us,
                old.self_device_us + row.self_device_us,
                old.device_total_us + row.device_total_us,
            )
        rows[key] = row
    return rows
