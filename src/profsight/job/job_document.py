"""A job's report as a document (JSON ``profsight-job/1``): what the JSON renderer writes and
the MCP server returns, built from the job's data."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from profsight.units import clean_floats as _clean

if TYPE_CHECKING:
    from profsight.job.views import JobData

JOB_SCHEMA = "profsight-job/1"
#: Rows of each rank the per-rank view lists.
RANK_ROWS = 5


def job_document(report: JobData) -> dict[str, Any]:
    return dict(_clean(_document(report)))


def _document(report: JobData) -> dict[str, Any]:
    s = report.straggler
    return {
        "schema": JOB_SCHEMA,
        "world_size": report.world_size,
        "steps": list(report.steps),
        "backend": report.backend,
        "timed_on": report.timed_on,
        "summary": report.summary,
        "step_us": report.step_us,
        "ranks": [
            {
                "rank": v.rank,
                "path": v.path,
                "host": v.host,
                "device": v.device,
                "steps": v.steps,
                "step_us": v.step_us,
                "wait_us": v.wait_us,
                "busy_us": v.busy_us,
                "phases_us": v.phases_us,
                "device_busy_us": v.device_busy_us,
                "comm_busy_us": v.comm_busy_us,
                "comm_exposed_us": v.comm_exposed_us,
                "comm_overlapped_us": max(v.comm_busy_us - v.comm_exposed_us, 0.0),
                "last_at": v.last_arrivals,
                "role": v.role,
                "holds": v.held or "the whole rank",
                "clock_offset_us": v.offset_us,
                "bound": v.bound,
                "top_finding": v.top_finding,
                "top_rows": [
                    {"name": r.name, "kind": r.kind, "self_us": r.self_us, "on_device": r.on_device}
                    for r in v.rows[:RANK_ROWS]
                ],
                "seconds": round(v.seconds, 3),
            }
            for v in report.ranks
        ],
        "straggler": None
        if s is None
        else {
            "rank": s.rank,
            "last_at": s.last_at,
            "collectives": s.collectives,
            "others_wait_us": s.others_wait_us,
            "saving_us": s.saving_us,
            "share_pct": round(s.share_pct, 2),
            "cause": s.cause,
            "cause_detail": s.cause_detail,
            "own_wait_us": s.own_wait_us,
            "cause_evidence": [{"label": e.label, "value": e.value} for e in s.cause_evidence],
        },
        "operations": [
            {
                "operation": o.operation,
                "backend": o.backend,
                "calls_per_step": o.calls_per_step,
                "bytes": o.nbytes if o.nbytes > 0 else None,
                "transfer_us": o.transfer_us,
                "bus_gbps": o.bus_gbps,
            }
            for o in report.operations
        ],
        "findings": [f.to_dict() for f in report.findings],
        "diagnostics": list(report.diagnostics),
        "run": report.run,
    }


__all__ = ["JOB_SCHEMA", "RANK_ROWS", "job_document"]
