"""Real GPU traces by others (tests/data/gpu_traces): the readings written in its README
before profsight was run on them, and one-time start-up inside the profiled window."""

from __future__ import annotations

from pathlib import Path

import pytest

import profsight
from profsight.analyses import diagnose
from profsight.analyses.startup import startup_events
from profsight.knowledge.phases import Phase

from conftest import DATA

TRACES = DATA / "gpu_traces"
JH = "JonathanHourany__pytorch-sandbox"
HARRY = "harryjmoss__particle_transformer"
INCREDERE = "incredere__gpu-profiling-pytorch-lab"
#: file -> (top findings accepted, verdict judgements accepted, present, absent)
EXPECTED = {
    f"{JH}/trace-num-workers-0-batch-size-16.json.gz": (
        {"launch_overhead", "gpu_idle"},
        {"too_small_for_hardware"},
        {"data_loading"},
        set(),
    ),
    f"{JH}/trace-num-workers-8-batch-size-16.json.gz": (
        {"launch_overhead", "gpu_idle"},
        {"too_small_for_hardware"},
        set(),
        set(),
    ),
    f"{HARRY}/single_epoch_forward_pass_batch_size_2.json.gz": (
        {"launch_overhead", "gpu_idle"},
        {"too_small_for_hardware"},
        set(),
        set(),
    ),
    f"{HARRY}/single_epoch_forward_pass_batch_size_512.json.gz": (
        {"profiler_setup"},
        {"balanced"},
        set(),
        set(),
    ),
    f"{INCREDERE}/fp32.pt.trace.json.gz": (
        {"gpu_idle", "launch_overhead"},
        {"too_small_for_hardware"},
        {"low_precision"},
        set(),
    ),
    f"{INCREDERE}/amp.pt.trace.json.gz": (
        {"gpu_idle", "launch_overhead"},
        {"too_small_for_hardware"},
        set(),
        {"low_precision"},
    ),
}
#: Expectations profsight misses, with the reason (strict: a fix must show).
MISSES = {
    f"{JH}/trace-num-workers-8-batch-size-2056.json.gz": (
        {"memcpy"},
        "expected the pageable copies (30% of the step) first; 56% of each 5.2 ms step is "
        "host time in no recorded op, read as launch overhead and per-step overhead",
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_gpu_traces_read_as_their_authors_say(name: str) -> None:
    tops, judgements, present, absent = EXPECTED[name]
    diagnosis = diagnose(profsight.load(TRACES / name))
    categories = {f.category for f in diagnosis.findings}
    assert diagnosis.findings[0].category in tops
    assert diagnosis.verdict is not None and diagnosis.verdict.judgement in judgements
    assert present <= categories
    assert not absent & categories


@pytest.mark.parametrize("name", sorted(MISSES))
def test_real_gpu_traces_known_misses(name: str) -> None:
    tops, reason = MISSES[name]
    diagnosis = diagnose(profsight.load(TRACES / name))
    if diagnosis.findings[0].category not in tops:
        pytest.xfail(reason)
    pytest.fail(f"{name} now reads as expected: move it to EXPECTED")


def test_one_time_startup_is_named_and_set_apart() -> None:
    """A 630 ms first cudaLaunchKernel (lazy loading of a cuDNN kernel) inside a 1 s window:
    the start-up is its own phase and finding, and the GPU is judged on the rest."""
    profile = profsight.load(TRACES / HARRY / "single_epoch_forward_pass_batch_size_512.json.gz")
    ev = profile.events
    names = {ev.strings[ev.name[e]] for e in startup_events(profile).tolist()}
    assert "cudaLaunchKernel" in names
    diagnosis = diagnose(profile)
    average = diagnosis.breakdown.average()
    share = average.host_us[Phase.STARTUP.value] * 100 / average.wall_us
    assert 55 < share < 70
    top = diagnosis.findings[0]
    assert top.title.startswith("One-time start-up takes")
    assert top.at_stake_pct == pytest.approx(share, abs=1.0)
    assert diagnosis.verdict is not None
    assert "one-time start-up" in diagnosis.verdict.summary
    # the device is judged on the steady state: 92 ms busy of the 389 ms after start-up
    assert diagnosis.verdict.device_busy_pct == pytest.approx(23.5, abs=2.0)


def test_long_waits_are_not_startup() -> None:
    """A host call that waits for the device (a sync, a long copy) is not start-up, however
    long: an A100 trace's 90 ms cudaDeviceSynchronize (and its 20 cudaStreamSynchronize
    calls, 387 ms in all) stay waits."""
    profile = profsight.load(
        TRACES
        / "CodingPlatelets__SwitchTransformers"
        / "trace_100Kpar_4exp_8batch_128seq_1024.json.gz"
    )
    ev = profile.events
    names = {ev.strings[ev.name[e]] for e in startup_events(profile).tolist()}
    assert not names & {"cudaDeviceSynchronize", "cudaStreamSynchronize", "aten::copy_"}


@pytest.mark.parametrize(
    "path", sorted(TRACES.rglob("*.json.gz")), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_every_gpu_trace_is_explained(path: Path) -> None:
    report = profsight.explain(str(path))
    assert report.summary and report.table.rows
    if path.parent.name == "HazyResearch__zoology":
        titles = [f.title for f in report.findings]
        assert "Kernels were launched but no GPU activity was recorded" in titles
