"""Traces recorded without CPU activity (tests/data/no_cpu_activity): the window runs from the
first event to the last, the device's too; no host lead-in is claimed where the host's work was
never recorded; and the report says what to record."""

from __future__ import annotations

import pytest

import profsight

from conftest import DATA

STEP = DATA / "no_cpu_activity" / "aphelack_vit_step.json.gz"
AVERAGE = DATA / "no_cpu_activity" / "aphelack_vit_avg_batch.json.gz"


def test_device_work_running_at_the_start_opens_the_window() -> None:
    """21.7 ms of earlier work ran when the profiler started; then the device idled 3.78 s
    while the host recorded nothing. From the runtime's first call (the window before), the
    step was 84 ms and the pageable copy came first; the idle GPU comes first now."""
    report = profsight.explain(str(STEP))
    assert report.breakdown is not None
    assert report.breakdown.average().wall_us == pytest.approx(3.885e6, rel=1e-3)
    categories = [f.category for f in report.findings]
    assert categories[0] == "gpu_idle"
    assert "host_lead_in" not in categories  # the host's 3.8 s were never recorded
    assert any(f.title.startswith("The host's work was not recorded") for f in report.findings)


def test_nothing_recorded_before_the_first_event_stays_out() -> None:
    """The profiler's own span is 3.23 s, but its first 3.1 s hold no event of either side:
    the window is the 116.5 ms of recorded work, whose pageable input copy leads."""
    report = profsight.explain(str(AVERAGE))
    assert report.breakdown is not None
    assert report.breakdown.average().wall_us == pytest.approx(116.5e3, rel=0.01)
    assert report.findings[0].category == "memcpy"
