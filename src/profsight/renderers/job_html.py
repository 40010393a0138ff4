"""A job report as a self-contained HTML page: the report page's template and script, with
its per-rank view (`#ps-ranks`) and collectives table filled and the single-trace views
(tree, table) left out."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any

from profsight.job.job_document import job_document
from profsight.knowledge.collectives import OPERATION_MEANING
from profsight.knowledge.phases import PHASE_LABELS, Phase
from profsight.model.collectives_seen import ENQUEUE_ONLY
from profsight.renderers.html import SCHEMA, collective_gaps, findings_data, in_frame, page
from profsight.renderers.job_text import _facts

if TYPE_CHECKING:
    from profsight.job.views import JobData


def job_page_data(report: JobData) -> dict[str, Any]:
    doc = job_document(report)
    straggler = report.straggler.rank if report.straggler else None
    data_wait = [
        v.phases_us.get(Phase.DATA_LOADING.value, 0.0) * 100 / v.step_us
        for v in report.ranks
        if v.step_us
    ]
    top = report.findings[0].category if report.findings else None
    untimed = ""
    if report.timed_on in (None, ENQUEUE_ONLY):
        untimed = "the traces hold only the calls that enqueue the collectives"
    return {
        "schema": SCHEMA,
        "source": ", ".join(report.sources),
        "summary": _facts(report),
        "diagnostics": list(report.diagnostics),
        "notes": [],
        "device": "device",
        "has_device": any(v.device_busy_us is not None for v in report.ranks),
        "verdict": {
            "bound": top or "balanced",
            "judgement": f"held up by rank {straggler}" if straggler is not None else "job",
            "summary": report.summary,
            "device_busy_pct": None,
            "data_wait_pct": statistics.median(data_wait) if data_wait else 0.0,
            "step_us": report.step_us,
            "mfu_pct": None,
            "evidence": [],
        },
        "findings": findings_data(doc["findings"]),
        "ranks": {
            "ranks": doc["ranks"],
            "steps": len(report.steps),
            "straggler": straggler,
            "phases": [{"id": p.value, "label": label} for p, label in PHASE_LABELS.items()],
        },
        "collectives": [
            {
                **o,
                "meaning": OPERATION_MEANING.get(o["operation"], ""),
                # a job's operation has no bus bandwidth beside a size and a time only when
                # no call states its group's size
                "why": collective_gaps(o, untimed, ranks_known=False),
            }
            for o in doc["operations"]
        ],
        "collectives_note": "Per operation, over the matched collectives; time per call is "
        "timed on the last rank to arrive (it waits for nobody).",
    }


def render_job_html(report: JobData) -> str:
    return page(
        f"profsight job: {len(report.ranks)} ranks", "profsight job report", job_page_data(report)
    )


def notebook_job_html(report: JobData, height_px: int = 900) -> str:
    return in_frame(render_job_html(report), height_px)
