"""The report as data (output contract ``profsight/1``): what the JSON renderer writes and
what comparisons (`compare`) read, from a fresh report and a saved one alike."""

from __future__ import annotations

from typing import Any

from profsight.analyses.device_work import DeviceWork
from profsight.analyses.memory_peak import MemoryPeak
from profsight.analyses.roofline import Roofline
from profsight.analyses.source_lines import SourceLines
from profsight.analyses.step.breakdown import Breakdown, StepBreakdown
from profsight.analyses.step.comms import Communication
from profsight.knowledge.collectives import OPERATION_MEANING
from profsight.knowledge.roofline_ops import ABOVE_ROOF, BOUND_MEANING
from profsight.report.build import ReportData

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
        "device_work": device_work_dict(report.device_work),
        "roofline": roofline_dict(report.roofline),
        "source_lines": source_lines_dict(report.source_lines),
        "memory_peaks": memory_peaks_list(report.memory_peaks),
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


def device_work_dict(work: DeviceWork | None) -> dict[str, Any] | None:
    """Short kernels, launch delays and copy bandwidth over the whole trace (JSON
    ``device_work``; `analyses.device_work` defines each figure)."""
    if work is None:
        return None
    short = work.short
    delays = work.delays
    return {
        "short_kernels": None
        if short is None
        else {
            "count": short.count,
            "kernels": short.kernels,
            "device_us": short.device_us,
            "kernel_us": short.kernel_us,
            "share_pct": short.share_pct,
            "launch_us": short.launch_us,
            "launchers": [
                {"op": x.op, "kernels": x.kernels, "device_us": x.device_us}
                for x in short.launchers
            ],
        },
        "launch_delay": None
        if delays is None
        else {
            "items": delays.items,
            "median_us": delays.median_us,
            "p90_us": delays.p90_us,
            "max_us": delays.max_us,
            "behind_earlier_work_median_us": delays.behind_median_us,
            "launch_latency_median_us": delays.latency_median_us,
            "launch_latency_p90_us": delays.latency_p90_us,
        },
        "copies": [
            {
                "direction": c.direction,
                "copies": c.copies,
                "bytes": c.nbytes,
                "busy_us": c.busy_us,
                "gbps": c.gbps,
                "median_gbps": c.median_gbps,
                "series_ms_gbps": [list(point) for point in c.series],
            }
            for c in work.copies
        ],
    }


def roofline_dict(roof: Roofline | None) -> dict[str, Any] | None:
    """Each op and shape against the device's ceilings (JSON ``roofline``;
    `analyses.roofline` defines each figure)."""
    if roof is None:
        return None
    return {
        "device": roof.device,
        "bandwidth_gbs": roof.bandwidth_gbs,
        "peak_tflops": roof.ceilings,
        "coverage_pct": roof.coverage_pct,
        "covered_us": roof.covered_us,
        "device_us": roof.device_us,
        "groups": roof.groups,
        "device_us_by_bound": roof.by_bound,
        "bound_meaning": {b: BOUND_MEANING[b] for b in roof.by_bound},
        "above_roof": ABOVE_ROOF,
        "device_us_by_family": roof.by_family,
        "ops": [
            {
                "op": r.op,
                "family": r.family,
                "input_dims": r.shapes,
                "input_types": list(r.dtypes),
                "calls": r.calls,
                "device_us": r.device_us,
                "flops": r.flops,
                "bytes": r.bytes,
                "tflops": r.tflops,
                "tbps": r.tbps,
                "intensity": r.intensity,
                "precision": r.precision,
                "peak_tflops": r.peak_tflops,
                "ridge": r.ridge,
                "bound": r.bound,
                "roof_pct": r.roof_pct,
                "cached": r.cached,
            }
            for r in roof.rows
        ],
    }


def source_lines_dict(lines: SourceLines | None) -> dict[str, Any] | None:
    """Time by the user's own functions, library frames folded in (JSON ``source_lines``;
    `analyses.source_lines` defines each figure)."""
    if lines is None:
        return None
    return {
        "functions": lines.functions,
        "by": "device" if lines.by_device else "cpu",
        "cpu_us": lines.cpu_us,
        "device_us": lines.device_us,
        "outside_cpu_us": lines.outside_cpu_us,
        "outside_device_us": lines.outside_device_us,
        "lines": [
            {
                "frame": r.frame,
                "calls": r.calls,
                "self_cpu_us": r.self_cpu_us,
                "total_cpu_us": r.total_cpu_us,
                "self_device_us": r.self_device_us,
                "total_device_us": r.total_device_us,
                "backward_cpu_us": r.backward_cpu_us,
                "backward_device_us": r.backward_device_us,
            }
            for r in lines.rows
        ],
    }


def memory_peaks_list(peaks: tuple[MemoryPeak, ...]) -> list[dict[str, Any]]:
    """Each memory's peak: when, how much, and the ops whose blocks it held (JSON
    ``memory_peaks``; `analyses.memory_peak` defines each figure)."""
    return [
        {
            "memory": p.memory,
            "peak_bytes": p.peak_bytes,
            "at_us": p.at_us,
            "held_bytes": p.held_bytes,
            "before_window_bytes": p.before_window_bytes,
            "blocks_known": p.blocks_known,
            "held_by": [{"op": h.op, "bytes": h.bytes, "blocks": h.blocks} for h in p.held_by],
            "torch_categories": p.categories,
            "holders": p.holders,
        }
        for p in peaks
    ]
