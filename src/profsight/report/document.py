"""The report as data (output contract ``profsight/1``): what the JSON renderer writes and
what comparisons (`compare`) read, from a fresh report and a saved one alike."""

from __future__ import annotations

from typing import Any

from profsight.knowledge.collectives import OPERATION_MEANING
from profsight.model.collectives_seen import Communication
from profsight.model.step_windows import Breakdown, StepBreakdown
from profsight.report.build import ReportData
from profsight.report.sections import SECTIONS

SCHEMA = "profsight/1"


def report_document(report: ReportData) -> dict[str, Any]:
    table = []
    for e in report.rows:
        record = e.row.to_dict()
        record["kind"] = e.explanation.kind.value
        record["layer"] = e.explanation.layer
        record["meaning"] = e.explanation.meaning
        record["reading"] = e.explanation.reading
        record["called_from"] = e.called_from
        table.append(record)
    return {
        "schema": SCHEMA,
        "source": report.facts,
        "summary": list(report.summary),
        "table": table,
        "top": [e.row.name for e in report.top],
        "breakdown": breakdown_dict(report.breakdown),
        "communication": communication_dict(report.communication),
        **{s.name: s.document(report.views.get(s.name)) for s in SECTIONS},
        "findings": [f.to_dict() for f in report.findings],
        "verdict": report.verdict.to_dict() if report.verdict is not None else None,
        "notes": list(report.notes),
        "walkthrough": list(report.walkthrough),
        "tree": report.tree.root.to_dict() if report.tree is not None else None,
        "diagnostics": [
            {
                "code": d.code,
                "level": d.level.value,
                "message": d.message,
                "count": d.count,
                "remedy": d.remedy,
            }
            for d in report.diagnostics
        ],
        **report.sections,
    }


def step_dict(step: StepBreakdown) -> dict[str, Any]:
    return {
        "name": step.name,
        "wall_us": step.wall_us,
        "host_us": step.host_us,
        "device_busy_us": step.device_busy_us,
        "device_idle_us": step.device_idle_us,
        "host_wall_us": step.host_range_us,
        "device_lag_us": step.lag_us if step.device_end_us is not None else None,
        "host_waited_us": step.waited_us,
        "host_blocked_on_queue_us": step.blocked_us,
    }


def breakdown_dict(breakdown: Breakdown | None) -> dict[str, Any] | None:
    if breakdown is None or not breakdown.steps:
        return None
    return {
        "windows": breakdown.windows,
        "scope": breakdown.described,
        "thread": breakdown.thread,
        "average": step_dict(breakdown.average()),
        "steps": [step_dict(s) for s in breakdown.steps],
        "clock": breakdown.bound,
        "launch_queue": None
        if breakdown.queue is None
        else {
            "limit": breakdown.queue.limit,
            "limit_measured": breakdown.queue.measured,
            "max_depth": breakdown.queue.max_depth,
        },
    }


def communication_dict(comms: Communication | None) -> dict[str, Any] | None:
    """The collectives of one trace, per operation and per step (JSON ``communication``)."""
    if comms is None:
        return None
    steps = comms.step_count
    average = comms.average()
    return {
        "timed_on": comms.timed_on,
        "backend": comms.backend,
        "busy_us": average.busy_us if comms.timed else None,
        "exposed_us": average.exposed_us if comms.timed else None,
        "overlapped_us": average.overlapped_us if comms.timed else None,
        "operations": [
            {
                "operation": o.operation,
                "backend": o.backend,
                "calls_per_step": o.calls / steps,
                "bytes": o.nbytes / o.calls if o.nbytes > 0 else None,
                "transfer_us": o.total_us / o.calls if comms.timed and o.calls else None,
                "bus_gbps": o.bus_gbps,
                "meaning": OPERATION_MEANING.get(o.operation, ""),
            }
            for o in comms.operations()
        ],
    }
