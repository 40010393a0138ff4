"""A CUDA-graph capture is not a step (issue 36, "Not a step").

GIVEN real traces by others whose window records a CUDA (HIP) graph capture: SGLang's decode
capture at batch 32 and vLLM's FULL capture at batch 32 on an MI300X (TraceLens's inference test
traces), where the host runs the model once while the stream records its kernels, and a
puzzle (GPUPuzzlers' cudagraph_mwe) whose 1 ms capture sits in a 3.6 s window of start-up,
WHEN profsight explains them,
THEN a capture that fills the window is said first for what it is (profiler_setup, "not
judged: profile the replays"), the verdict is not judged, and no FLOP/s, utilisation or
roofline is read from it; a small capture is no finding, and its recorded ops' FLOPs are not
counted as work that ran.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import profsight
from profsight.analyses.step.capture_phase import captures
from profsight.analyses.step.flops import op_flops
from profsight.loaders import load

from conftest import DATA, SHARED_REAL

CAPTURES = DATA / "graph_capture"
SGLANG = SHARED_REAL / "traces/tracelens/inference/sglang_decode/capture_traces/bs_32_rank0.json.gz"
VLLM = CAPTURES / "vllm_decode_full_graph_capture_rank_0.pt.trace.json.gz"
SMALL = CAPTURES / "cudagraph_mwe.json.gz"


@pytest.mark.parametrize("path", [SGLANG, VLLM], ids=lambda p: p.parent.parent.name)
def test_a_capture_that_fills_the_window_is_said_first_and_not_judged(path: Path) -> None:
    report = profsight.explain(str(path))
    first = report.findings[0]
    assert first.category == "profiler_setup"
    assert "CUDA-graph capture" in first.title and "not judged" in first.title
    assert first.recommendation.startswith("Not judged: profile the replays")
    assert report.verdict is not None and report.verdict.judgement == "not_judged"
    # no rate is read from a window in which no step ran
    assert report.verdict.mfu_pct is None
    assert not any("achieved" in line for line in report.verdict.evidence)
    assert report.roofline is None


def test_the_capture_is_measured_from_its_runtime_calls() -> None:
    found = captures(load(str(VLLM)))
    assert found is not None
    # one hipStreamBeginCapture..hipStreamEndCapture: 421 launches recorded, none ran
    assert (found.graphs, found.instantiated, found.launches, found.ran) == (1, 1, 421, 0)
    assert 54.9 < found.recording_ms < 55.1
    # vLLM's capture_32_FULL range holds the rest of the 59.2 ms window
    assert found.share_pct > 98.0 and found.dominant


def test_sglangs_capture_was_read_as_a_host_bound_step_before() -> None:
    """The trap this rule closes: 33.7 ms of capture read as a device too small for its work,
    at 14.4 TFLOP/s from ops whose kernels never ran, with CUDA graphs as the fix."""
    report = profsight.explain(str(SGLANG))
    assert report.verdict is not None
    assert report.verdict.judgement != "too_small_for_hardware"
    assert op_flops(load(str(SGLANG))).captured > 0
    assert op_flops(load(str(SGLANG))).total == 0.0


def test_a_small_capture_is_no_finding_and_its_ops_ran_no_flops() -> None:
    profile = load(str(SMALL))
    found = captures(profile)
    assert found is not None and not found.dominant and found.share_pct < 0.1
    flops = op_flops(profile)
    # 11 aten::mm were recorded into the graph: only the 11 run eagerly before it count
    assert flops.captured == 11
    assert len(flops.events) == 11
    report = profsight.explain(str(SMALL))
    assert not any("CUDA-graph capture" in f.title for f in report.findings)
    # the window is start-up: that reading stands
    assert report.findings[0].category == "profiler_setup"
    assert report.verdict is not None and report.verdict.judgement == "not_judged"
