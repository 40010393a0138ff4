"""A trace recorded with CUPTI's range profiler (``profiler_metrics``): its kernels' hardware
counters, no kernel run times.

The trace is HTA's ``cupti_profiler`` test trace (tests/data/shared/MANIFEST.md): an AlexNet
forward on an A100 recorded with ``_ExperimentalConfig(profiler_metrics=[...],
profiler_measure_per_kernel=True)``, 77 ``cuda_profiler_range`` records and no kernels. The
expected figures are added up here from the JSON itself, independently of the loader.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

import profsight
from profsight.analyses.measured_flops import measured_flops
from profsight.api import Report
from profsight.knowledge.advice import (
    NO_DEVICE_ACTIVITY_ADVICE,
    NO_DEVICE_ACTIVITY_TITLE,
    RANGE_PROFILED_TITLE,
)

TRACE = (
    Path(__file__).parent
    / "data/shared/traces/hta/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz"
)
_COUNTER = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
_PREFIX = {"half": "h", "single": "f", "double": "d"}


def _ranges() -> list[dict[str, Any]]:
    with gzip.open(TRACE, "rt") as f:
        events = json.load(f)["traceEvents"]
    return [e for e in events if e.get("cat") == "cuda_profiler_range"]


def _flops(args: dict[str, Any], precision: str) -> float:
    """add + mul + 2 x fma, as Nsight Compute counts an fma."""
    p = _PREFIX[precision]
    get = lambda op: float(args.get(_COUNTER.format(p + op), 0))  # noqa: E731
    return get("add") + get("mul") + 2 * get("fma")


@pytest.fixture(scope="module")
def report() -> Report:
    result = profsight.explain(str(TRACE))
    assert isinstance(result, Report)
    return result


def test_measured_flops_per_precision_are_the_counters_sums() -> None:
    ranges = _ranges()
    expected = {p: sum(_flops(e["args"], p) for e in ranges) for p in _PREFIX}
    measured = measured_flops(profsight.load(str(TRACE)))
    assert measured is not None
    assert measured.kernels == len(ranges) == 77
    assert measured.by_precision == pytest.approx(expected, rel=1e-12)
    # the file's figures, so that a loader that drops a precision cannot match by accident
    assert expected["single"] == 79_679_454_712 and expected["half"] == 551_583_744
    assert expected["double"] == 0


def test_measured_flops_per_kernel_name() -> None:
    by_name: dict[str, float] = defaultdict(float)
    for e in _ranges():
        by_name[e["name"]] += sum(_flops(e["args"], p) for p in _PREFIX)
    top_name, top_flops = max(by_name.items(), key=lambda kv: kv[1])
    measured = measured_flops(profsight.load(str(TRACE)))
    assert measured is not None
    name, flops, count = measured.by_kernel[0]
    assert (name, count) == (top_name, 6) and flops == pytest.approx(top_flops)
    assert sum(f for _, f, _ in measured.by_kernel) == pytest.approx(measured.total)


def test_the_verdict_gives_the_measured_flops_not_unknown(report: Report) -> None:
    verdict = report.verdict
    assert verdict is not None and verdict.judgement == "not_judged"
    assert verdict.mfu_pct is None and verdict.device_busy_pct is None
    lines = [e for e in verdict.evidence if e.startswith("measured FLOPs from hardware counters")]
    assert lines and "79.7 GFLOP single, 552 MFLOP half" in lines[0]
    assert not any("FLOPs unknown" in e for e in verdict.evidence)
    assert "profiler_metrics" in verdict.summary and "device activity" not in verdict.summary


def test_the_advice_is_a_second_profile_not_more_device_activity(report: Report) -> None:
    titles = [f.title for f in report.findings]
    assert RANGE_PROFILED_TITLE in titles and NO_DEVICE_ACTIVITY_TITLE not in titles
    found = report.findings[titles.index(RANGE_PROFILED_TITLE)]
    assert found.blocks and found.recommendation != NO_DEVICE_ACTIVITY_ADVICE
    assert "without experimental_config's profiler_metrics" in found.recommendation
    assert any(e.value == "79.7 GFLOP single, 552 MFLOP half" for e in found.evidence)
    assert any(e.label == "ampere_sgemm_32x32_sliced1x4_tn" for e in found.evidence)
