"""A trace audited before it is judged (issue 38, item 4): what its clocks and records say
about themselves, one line each in every format (`profsight.model.trace_audit`).

GIVEN real traces by others with such problems, and clean ones,
WHEN profsight reads them,
THEN each problem is one diagnostic with its count and how much of the window it touches,
and a clean trace (or a CUDA-graph capture, whose launches queue nothing) has none.
"""

from __future__ import annotations

import gzip
import json

import profsight
from profsight.model.trace_audit import audit

from conftest import DATA

#: A B200 trace from a book's examples: its device items start before their launch calls.
SKEWED = DATA / "causes" / "wbing520__deepseek_v3_trace.json.gz"
#: Several ranks' traces merged in one file (tests/data/merged_ranks/README.md).
MERGED = DATA / "merged_ranks" / "merged_all_events.json.gz"
CAPTURE = DATA / "graph_capture" / "vllm_decode_full_graph_capture_rank_0.pt.trace.json.gz"
CLEAN = DATA / "real" / "nccl_data.json.gz"


def _codes(path: object) -> dict[str, str]:
    profile = profsight.load(path)  # type: ignore[arg-type]
    return {d.code: d.message for d in profile.warnings if d.code in AUDIT_CODES}


AUDIT_CODES = {"kernel_before_launch", "lost_device_records"}


def test_device_work_before_its_launch_is_named_with_its_lead() -> None:
    found = _codes(SKEWED)
    message = found["kernel_before_launch"]
    assert message.startswith("113 of 179 device items start before the call that launched")
    assert "by up to 200 µs" in message and "7.8% of the device's span" in message
    report = profsight.explain(SKEWED)
    codes = [d["code"] for d in json.loads(report.json())["diagnostics"]]
    assert "kernel_before_launch" in codes
    assert "start before the call that launched them" in report.markdown()


def test_launches_without_their_device_work_are_counted() -> None:
    message = _codes(MERGED)["lost_device_records"]
    assert message.startswith("56 of 12,436 launch calls made before the last one")


def test_clean_traces_and_graph_captures_have_nothing_to_say() -> None:
    """nccl_data's launches all have their work; a capture's 421 launches inside
    cudaStreamBeginCapture..EndCapture queue nothing, and are no loss."""
    assert _codes(CLEAN) == {}
    assert _codes(CAPTURE) == {}


def test_an_audit_of_no_device_work_is_empty() -> None:
    profile = profsight.load(DATA / "minimal" / "empty_step_cpu.json")
    at = profile.attribution
    device = profile.events.kind < 0  # no event is device work
    assert audit(profile.events, at.launcher, device) == []


def test_the_verdict_says_when_the_audit_touches_the_judged_window() -> None:
    verdict = profsight.explain(SKEWED).verdict
    assert verdict is not None
    caveat = [e for e in verdict.evidence if e.startswith("the trace's audit found")]
    assert caveat == [
        "the trace's audit found kernel before launch (see its diagnostics): the figures that "
        "cross between host and device are uncertain by as much"
    ]
    clean = profsight.explain(CLEAN).verdict
    assert clean is not None and not any("audit" in e for e in clean.evidence)


#: HTA's MTIA inference trace: Kineto logged one error while recording it (its "ERROR" field).
MTIA = DATA / "shared" / "traces" / "hta" / "mtia_inference_trace" / "mtia_inference_rank_0.json.gz"
#: What libkineto's CuptiActivityApi logs when CUPTI dropped records and when the buffers
#: reached their cap (glog's prefix as the traces' INFO lines carry it).
KINETO_LOSS = [
    "WARNING:2024-05-22 17:15:23 2910249:2910250 CuptiActivityApi.cpp:280] "
    "Dropped 2048 activity records",
    "WARNING:2024-05-22 17:15:23 2910249:2910250 CuptiActivityApi.cpp:281] "
    "Dropped 512 activity records",
    "WARNING:2024-05-22 17:15:24 2910249:2910250 CuptiActivityApi.cpp:224] "
    "Exceeded max GPU buffer count (33 >= 33) - terminating tracing",
]


def test_the_profilers_own_errors_are_a_note_without_their_prefix() -> None:
    (note,) = [d for d in profsight.load(MTIA).warnings if d.code == "profiler_log"]
    assert note.level.value == "info"
    assert note.message == (
        'the profiler logged 1 error while recording: "gpuGetDeviceCount failed with code 35"'
    )
    # a note, not a problem: the verdict keeps no audit caveat for it
    assert not any("audit" in e for e in profsight.explain(MTIA).verdict.evidence)


def test_records_the_profiler_says_it_lost_are_a_warning_and_a_caveat(tmp_path: object) -> None:
    """nccl_data (a real trace whose Kineto log holds only INFO lines), written again with
    the WARNING lines Kineto logs when it loses records: their count is summed, the verdict
    says its figures are uncertain, and the user's file is untouched."""
    with gzip.open(CLEAN, "rt") as f:
        doc = json.load(f)
    assert "WARNING" not in doc and doc["INFO"]
    doc["WARNING"] = KINETO_LOSS
    lossy = tmp_path / "nccl_data_lossy.json"  # type: ignore[operator]
    lossy.write_text(json.dumps(doc))
    (lost,) = [d for d in profsight.load(lossy).warnings if d.code == "profiler_lost_records"]
    assert lost.level.value == "warning" and lost.count == 3
    assert "(Dropped 2048 activity records; 2,560 records dropped in all)" in lost.message
    report = profsight.explain(lossy)
    assert any("profiler lost records" in e for e in report.verdict.evidence)
    assert "profiler_lost_records" in [d["code"] for d in json.loads(report.json())["diagnostics"]]
    # the clean original says nothing of its INFO lines
    assert not [d for d in profsight.load(CLEAN).warnings if d.code.startswith("profiler_")]
