"""A diff that knows noise and comparability (issue 38, item 5).

GIVEN committed recordings (one run recorded twice; planted runs and their fixed twins;
different models) and real GPU traces by others,
WHEN `profsight diff` compares two of them,
THEN the step's change is judged against the runs' own step-to-step spread, two runs of
different work are called unlike before anything is compared, each op is one row (a device
annotation's span is no row of its own), the text fits the terminal, and MCP's comparison is
a few KB with the same facts.
"""

from __future__ import annotations

import json

import pytest

import profsight
from profsight.compare.diff import compare, concise
from profsight.renderers.diff_render import render_diff_text

from conftest import DATA

RECORDED = DATA / "recorded"


def _report(name: str) -> profsight.Report:
    report = profsight.explain(RECORDED / f"{name}.pt.trace.json.gz")
    assert isinstance(report, profsight.Report)
    return report


def test_a_fix_that_halves_the_step_is_beyond_the_noise() -> None:
    diff = compare(_report("slow_dataset.plain"), _report("slow_dataset_fixed.plain"))
    assert diff.alike and diff.step_noise == "beyond"
    assert diff.noise_us is not None and abs(diff.step.delta or 0) > diff.noise_us
    text = render_diff_text(diff)
    assert "; beyond the noise (±" in text and "Unlike runs" not in text


def test_two_models_are_unlike_before_anything_is_compared() -> None:
    """python_collate's MLP counts 4.32 MFLOP a step, heavy_metric's 193 kFLOP."""
    diff = compare(_report("python_collate.plain"), _report("heavy_metric.plain"))
    assert not diff.alike
    text = render_diff_text(diff)
    head = text.split("\n\n")[1]
    assert head.startswith("Unlike runs: the model's FLOPs per step went 4.32 MFLOP → 193 kFLOP")
    doc = diff.to_dict()
    assert doc["alike"]["alike"] is False
    assert doc["alike"]["flops_per_step"]["before"] == pytest.approx(4_317_184.0)


def test_a_fix_around_the_model_keeps_the_runs_alike() -> None:
    """Removing a metric takes most of the step's ops away, but the model counts the same
    FLOPs: the same workload, fixed."""
    diff = compare(_report("heavy_metric.plain"), _report("heavy_metric_fixed.plain"))
    assert diff.shared_pct < 50.0 and diff.alike


def test_each_op_is_one_row_and_the_text_fits_the_terminal() -> None:
    """A GPU trace by others and its AMP twin: Optimizer.step#Adam.step was listed twice (its
    CPU row and its span on the GPU timeline)."""
    lab = DATA / "gpu_traces" / "incredere__gpu-profiling-pytorch-lab"
    diff = compare(
        profsight.explain(lab / "fp32.pt.trace.json.gz"),
        profsight.explain(lab / "amp.pt.trace.json.gz"),
    )
    names = [r.name for r in diff.rows]
    assert len(names) == len(set(names))
    assert not any(r.event_kind == "device_annotation" for r in diff.rows)
    for width in (80, 120):
        text = render_diff_text(diff, width=width)
        assert max(len(line) for line in text.splitlines()) <= width, width


def test_mcp_gets_the_same_facts_in_a_few_kb() -> None:
    """Two real traces' full comparison is over 100 KB; the concise one keeps the step, its
    noise, the likeness, the verdict and each status's largest rows."""
    rank = DATA / "real" / "rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz"
    diff = compare(profsight.explain(DATA / "real" / "nccl_data.json.gz"), profsight.explain(rank))
    full, short = json.dumps(diff.to_dict()), json.dumps(concise(diff))
    assert len(full) > 100_000 and len(short) <= 10_240
    doc = concise(diff)
    assert doc["step_us"] == diff.step.to_dict() and doc["noise"]["step_change"] == diff.step_noise
    assert doc["rows"]["slower"]["count"] == len(diff.slower)
    assert len(doc["rows"]["slower"]["largest"]) == min(5, len(diff.slower))


def test_one_run_recorded_twice_is_alike_and_within_the_machines_noise() -> None:
    """One training loop recorded twice, each in a process of its own
    (`scripts/record_test_data.py same_run`): 2.98 ms and 2.34 ms a step. Each run's own
    steps vary by 5-8%, but two runs of one script on this 2-core machine differ by up to 32%
    (`scripts/run_to_run.py`, five recordings: sd 15.5%), which no run's steps show: by the
    steps' spread alone the change reads as beyond the noise, and with the machine's measured
    run-to-run noise (`--noise 32`) it is within it."""
    a, b = _report("same_run_a"), _report("same_run_b")
    diff = compare(a, b)
    assert diff.alike and diff.flops is not None and diff.flops.pct == 0.0
    assert diff.step_noise == "beyond"  # the steps' own spread does not hold run-to-run noise
    machine = compare(a, b, run_noise_pct=32.0)
    assert machine.step_noise == "within"
    assert not machine.slower and not machine.faster
    assert "within the noise" in render_diff_text(machine)


def test_a_collective_run_every_other_step_is_recounted() -> None:
    """HTA's trace_compare pair (two real recordings of two profiled steps each): the base
    run's ``nccl:all_reduce`` runs once a step, the test run's once in its two steps. Half a
    call per step is less than a whole call, and its 33 µs under the noise floor: the diff
    compares calls per step as a ratio (1 -> 0.5) and lists it, the only row so listed."""
    hta = DATA / "shared/traces/hta/trace_compare"
    diff = compare(
        profsight.explain(hta / "base/base.json.gz"), profsight.explain(hta / "test/test.json.gz")
    )
    recounted = {r.name: r for r in diff.with_status("recounted")}
    assert set(recounted) == {"nccl:all_reduce"}
    calls = recounted["nccl:all_reduce"].calls
    assert (calls.before, calls.after) == (1.0, 0.5)
    assert "nccl:all_reduce" in render_diff_text(diff)


#: A real GPU training loop by others, recorded with with_stack=True with 0 and 8 workers:
#: its `<function main ...>` frame's children outlast it, so torch's self time (its total
#: less its children's) is -39.6 µs over the window (-13 µs per step) in each.
SANDBOX = DATA / "gpu_traces" / "JonathanHourany__pytorch-sandbox"


def test_a_self_time_below_zero_is_compared_by_its_total() -> None:
    before, after = (
        profsight.explain(SANDBOX / f"trace-num-workers-{n}-batch-size-16.json.gz") for n in (0, 8)
    )
    main_before = next(
        r
        for r in profsight.load(SANDBOX / "trace-num-workers-0-batch-size-16.json.gz").table().rows
        if r.name.startswith("<function main")
    )
    assert main_before.self_cpu_us == pytest.approx(-39.58, abs=0.01)  # kept by `table`
    diff = compare(before, after)
    doc = diff.to_dict()
    selfs = [
        r[t][side]
        for rows in doc["rows"].values()
        for r in rows
        for t in ("self_cpu_us", "self_device_us")
        for side in ("before", "after")
    ]
    assert selfs and all(v is None or v >= -0.05 for v in selfs)
    (gone,) = [r for r in doc["rows"]["gone"] if r["name"].startswith("<function main")]
    assert gone["key"] == "cpu_total_us" and gone["self_cpu_us"]["before"] is None
    assert gone["cpu_total_us"]["before"] == pytest.approx(1549.44, abs=0.01)
    # calls per step read as calls: whole, or one decimal
    assert "96.7 → 86.7" in render_diff_text(diff, width=200)
