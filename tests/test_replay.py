"""The what-if replay: it reproduces every real trace unchanged, each fix moves only what
depends on it, and its predicted savings match runs recorded with the fix made."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import profsight
import scenarios
from profsight.analyses.context import context
from profsight.analyses.pipeline import diagnose
from profsight.analyses.replay import engine
from profsight.analyses.replay.engine import Edit, replay, replay_steps, step_graph
from profsight.analyses.replay.savings import graph_of
from profsight.analyses.replay.whatif import edit_for
from profsight.analyses.step.breakdown import phase_intervals
from profsight.knowledge.advice import BATCH_SCALE
from profsight.knowledge.phases import Phase
from profsight.model.findings import Finding

from conftest import KnownMiss

DATA = Path(__file__).parent / "data"
REAL = sorted(
    p.relative_to(DATA).as_posix()
    for p in [
        *DATA.glob("gpu_traces/*/*.json.gz"),
        *DATA.glob("gpu_lagging/*/*.json.gz"),
        *DATA.glob("real/*.json*"),
        *(DATA / "shared/traces").rglob("*.json*"),
    ]
    if "rank-70" not in p.name  # a 238-byte stub with no events
    and p.name not in ("benchmark_simple_add_et.json.gz",)  # an execution trace
)


@pytest.mark.parametrize("name", REAL)
def test_replay_without_change_reproduces_the_trace(name: str) -> None:
    """Every latency, gap, wait tail and wait between streams is measured on its own item,
    so the graph replayed unchanged gives the step the breakdown measured from the trace's
    events (the issue asks 1%; it is exact by construction), lagging GPUs included."""
    ctx = context(profsight.load(DATA / name))
    graph = graph_of(ctx)
    if graph is None:
        pytest.skip("no step window")
    assert replay(graph) == pytest.approx(ctx.step_us, rel=0.01)
    assert replay(graph) == pytest.approx(ctx.step_us, abs=1e-3)


def _finding(name: str, category: str) -> Finding:
    diagnosis = diagnose(profsight.load(DATA / name))
    return next(f for f in diagnosis.findings if f.category == category)


def test_the_batch_edit_scales_each_stretch_by_what_grows_with_the_batch() -> None:
    """k times the batch: loading data is paid per sample, so its stretches take k times as
    long; a forward or backward op's between 1 (all fixed cost) and k (all work). The
    stretches come in order and disjoint, as the replay reads them. A GPU run that loads its
    data in the training process (0 workers)."""
    profile = profsight.load(
        DATA
        / "gpu_traces/JonathanHourany__pytorch-sandbox/trace-num-workers-0-batch-size-16.json.gz"
    )
    ctx = context(profile)
    graph = graph_of(ctx)
    assert graph is not None
    finding = next(f for f in diagnose(profile).findings if f.category == "per_step_overhead")
    edit = edit_for(ctx, graph, finding)
    assert edit is not None and edit.per == BATCH_SCALE
    ((start, end, factor),) = edit.host
    assert np.all(end > start) and np.all(start[1:] >= end[:-1])
    data_s, data_e = phase_intervals(ctx.breakdown, Phase.DATA_LOADING)
    assert len(data_s) > 0
    in_data = np.isin(start, data_s)
    assert in_data.sum() == len(data_s) and np.array_equal(end[in_data], data_e)
    assert np.all(factor[in_data] == BATCH_SCALE)
    passes = factor[~in_data]
    assert len(passes) > 100 and np.all((passes >= 1.0) & (passes <= BATCH_SCALE))
    # ops with FLOPs grow by their work's share; dispatch and ops without FLOPs stay
    assert np.any((passes > 1.0) & (passes < BATCH_SCALE)) and np.any(passes == 1.0)


def test_a_copy_from_pageable_memory_holds_its_call_until_staged() -> None:
    """A 16.9 MB copy from pageable memory: its cudaMemcpyAsync stages the buffer while the
    copy runs and returns 37 µs before the copy ends (CUDA's documented behaviour), so the
    call is a wait for its own copy. Pinned, asynchronous copies free the host from it: the
    step shortens by about the time the calls blocked (30% of it), not the 1% the waits at
    the copies' very end would give."""
    name = "gpu_traces/JonathanHourany__pytorch-sandbox/trace-num-workers-8-batch-size-2056.json.gz"
    profile = profsight.load(DATA / name)
    graph = graph_of(context(profile))
    assert graph is not None
    ev = profile.events
    calls = [w for w in graph.waits.tolist() if ev.strings[ev.name[w]] == "cudaMemcpyAsync"]
    targets = graph.items[graph.wait_target[np.isin(graph.waits, calls)]]
    assert len(calls) == 3 and all(ev.nbytes[t] == 16908544 for t in targets.tolist())
    assert all(ev.end_of(c) < ev.end_of(t) for c, t in zip(calls, targets.tolist(), strict=True))
    steps = len(graph.step_lo)
    blocked = sum(int(ev.dur[c]) for c in calls) / 1000.0 * 100.0 / (graph.measured_us * steps)
    f = _finding(name, "memcpy")
    assert f.gain_pct is not None and blocked > 25
    assert f.gain_pct == pytest.approx(blocked, abs=5.0)


def test_removing_startup_moves_the_kernels_it_delayed() -> None:
    """A 630 ms first launch (lazy loading) delays every kernel after it: without it, the
    window loses the start-up's whole share (62%), not just the host's. The replay says what
    it costs the window; no steady step holds it, so it is no saving (issue 36)."""
    f = _finding(
        "gpu_traces/harryjmoss__particle_transformer/single_epoch_forward_pass_batch_size_512.json.gz",
        "profiler_setup",
    )
    assert f.gain_pct is None
    (line,) = [e.value for e in f.evidence if e.label == "what-if replay"]
    scale = {"s": 1e6, "ms": 1e3, "µs": 1.0}
    before, after = (
        float(x.split()[0]) * scale[x.split()[1]]
        for x in line.split(": ", 1)[1].split(" per step")[0].split(" → ")
    )
    assert before > 900_000 and 55 < (before - after) * 100 / before < 70  # µs


def test_freeing_syncs_saves_more_than_the_idle_they_cause() -> None:
    """A PDE solver's step waits in syncs while its GPU idles (25% of the step; another 30%
    its launched work waited with the GPU free, `test_held.py`): without them the host also
    queues the next work early, so the saving is at least that idle."""
    f = _finding("gpu_traces/eikehmueller__NeuralPDE/trace.json.gz", "host_device_sync")
    assert f.gain_pct is not None and f.gain_pct >= f.at_stake_pct > 20


def test_a_wait_for_something_not_in_the_trace_stays() -> None:
    """sglang's 463 ms read-back: its copy ran 463 ms after the call, with nothing on its
    stream before it and the device idle. What held it is not in the trace, so freeing the
    host from the wait does not move the copy: no saving. Only releasing the held item
    (`test_held.py`) shortens the window."""
    graph = graph_of(context(profsight.load(DATA / "real/sglang_Qwen3-8B_decode.json.gz")))
    assert graph is not None and graph.held.sum() == 1
    measured = replay(graph)
    assert replay(graph, Edit("no waits", free_waits=graph.waits)) > 0.99 * measured
    assert replay(graph, Edit("released", release_held=True)) < 0.05 * measured


def test_faster_kernels_save_little_while_the_host_bounds_the_step() -> None:
    """The T4 FP32 run's GPU is busy 17% of the profiled window and the host sets each step's
    end: FP32 matrix math holds 12% of the step (`at_stake_pct`), but kernels at the
    tensor-core peak shorten only device time the host waits for, and the replay finds
    almost none (0.0% when this was written). This checks the replay against this recorded
    timeline only: nothing measured supports the small figure. The author's README reports
    the opposite direction for the whole run (AMP: 1.37x wall time, a 27% saving); that is
    not what this window shows (the AMP recording's own steps are longer, 54 vs 32 ms), and
    the test does not say which of the two is right for the run."""
    f = _finding(
        "gpu_traces/incredere__gpu-profiling-pytorch-lab/fp32.pt.trace.json.gz", "low_precision"
    )
    assert f.at_stake_pct == pytest.approx(12.3, abs=1.0)
    assert f.gain_pct is not None and f.gain_pct < 2.0


def test_a_device_bound_step_gains_from_faster_kernels(tmp_path: Path) -> None:
    """A step whose kernels run back to back: halving them halves the window; removing host
    time between launches that the device hides changes nothing."""
    from tracebuilder import TraceBuilder

    tb = TraceBuilder()
    tb.gpu()
    tb.step(1, 0.0, 1002.0)
    for k in range(10):
        tb.kernel("ampere_sgemm_64x64_nn", 10.0 + k * 5.0, 20.0 + k * 98.0, 98.0)
    tb.kernel(
        "Memcpy DtoH (Device -> Pageable)",
        60.0,
        1000.0,
        1.0,
        cat="gpu_memcpy",
        launch="cudaMemcpyAsync",
        launch_dur=942.0,
    )  # loss.item(): waits for the rest
    profile = profsight.load(tb.write(tmp_path / "bound.json"))
    graph = step_graph(profile, 0, 1_002_000)
    assert replay(graph) == pytest.approx(graph.measured_us)
    kernels = graph.items[:-1]
    halved = Edit("half", device=(kernels, np.full(len(kernels), 0.5)))
    assert replay(graph, halved) == pytest.approx(1002.0 - 490.0, abs=1.0)
    launches = profile.events.start[profile.events.kind == 3]  # host time the device hides
    removed = (launches[1:10], launches[1:10] + 2000, np.zeros(9))  # all but the first
    assert replay(graph, Edit("free launches", host=(removed,))) == pytest.approx(1002.0, abs=1.0)


# ------------------------------------------------------------------ predicted vs measured

#: Predicted savings must be within this fraction of the measured ones (issue 13).
TOLERANCE = 0.25
#: Every twin pair is read from committed recordings, planted and fixed, each recorded once
#: on a quiet machine (`scripts/record_test_data.py`, tests/data/recorded/README.md), the
#: saving measured from the pair. A live pair cannot measure a saving on a loaded 2-core
#: machine: the difference of two recordings fell to -50% (huge_optimizer) and -41%
#: (python_collate) beside busy loops, and one live prediction of allocation_churn fell to
#: 42% against 89% in a fresh clone's run beside one. How live recordings spread is
#: docs/measurements.md's "Accuracy over several recordings" (`scripts/accuracy_spread.py`).
#: The plain tiny_batch pair, as it came, is a known miss: a slow first batch makes it read
#: data_loading, and the replay predicts nothing for per_step_overhead
#: (`test_diagnose.TINY_PLAIN_MISS`).
RECORDED = DATA / "recorded"
TWINS = sorted(n for n, s in scenarios.SCENARIOS.items() if s.fixed is not None)
FORMS = ("plain", "lightning")


def _saving(name: str, planted: Path, fixed: Path) -> tuple[float, float]:
    """The replayed saving of `name`'s planted finding in the `planted` trace, and the
    measured saving of the `fixed` trace over it (% of the step, per sample)."""
    scenario = scenarios.SCENARIOS[name]
    profile = profsight.load(planted)
    finding = next((f for f in diagnose(profile).findings if f.category == scenario.expected), None)
    predicted = finding.gain_pct if finding is not None and finding.gain_pct is not None else 0.0
    slow = per_training_step(profile)
    fast = per_training_step(profsight.load(fixed)) / scenario.per_sample
    return predicted, (slow - fast) * 100.0 / slow


def predicted_and_measured(name: str, out: Path, form: str = "plain") -> tuple[float, float]:
    """The replayed saving of the planted finding, and the step-time saving of the twin run
    with the fix made (per sample when the fix changes the batch), both in % of the step;
    recorded with plain torch.profiler or Lightning's PyTorchProfiler (`form`)."""
    scenario = scenarios.SCENARIOS[name]
    record, twin = (
        (scenario.plain, scenario.fixed)
        if form == "plain"
        else (scenario.lightning, scenario.fixed_lightning)
    )
    assert twin is not None
    return _saving(name, record(out / "planted"), twin(out / "fixed"))


def per_training_step(profile: profsight.Profile) -> float:
    """The profiled windows' time per training step (µs). Lightning makes each validation
    batch a window of its own: its training steps are its ``training_step`` ranges."""
    steps = context(profile).breakdown.steps
    lo = steps[0].start_us * 1000
    hi = (steps[-1].start_us + steps[-1].wall_us) * 1000
    ev = profile.events
    ids = [i for i, s in enumerate(ev.strings) if s.endswith("Strategy.training_step")]
    inside = np.isin(ev.name, ids) & (ev.start >= lo) & (ev.start < hi)
    training = int(inside.sum()) or len(steps)
    return sum(s.wall_us for s in steps) / training


def _twin_params() -> list[object]:
    miss = pytest.mark.xfail(
        strict=True,
        raises=KnownMiss,
        reason="the committed tiny_batch plain recording has no per_step_overhead saving",
    )
    return [
        pytest.param(n, f, id=f"{n}-{f}", marks=[miss] if (n, f) == ("tiny_batch", "plain") else [])
        for n in TWINS
        for f in FORMS
    ]


@pytest.mark.parametrize(("name", "form"), _twin_params())
def test_predicted_saving_matches_the_fixed_twin(name: str, form: str) -> None:
    """The replay's prediction from the committed recording of the planted run is within 25%
    of the saving its committed fixed twin measured. Recorded once each (2026-12-02): every
    pair but the known miss came within 25% (huge_optimizer plain at +25%, the others from
    -22% to +11%). With the CPU's fused optimizer priced by dispatch and one pass
    (`whatif._fused_on_host`), huge_optimizer reads +20% plain (66.7% against 55.5%) and -4%
    under Lightning (51.4% against 53.7%)."""
    predicted, measured = _saving(
        name,
        RECORDED / f"{name}.{form}.pt.trace.json.gz",
        RECORDED / f"{name}_fixed.{form}.pt.trace.json.gz",
    )
    if (name, form) == ("tiny_batch", "plain") and predicted == 0.0:
        raise KnownMiss(f"{name}: predicts no saving, as known")
    assert measured > 0
    assert abs(predicted - measured) <= TOLERANCE * measured, (predicted, measured)


def test_group_medians_equal_numpys_per_group() -> None:
    """The loop edit's medians by name, by one sort (the per-name pass was O(names x ops):
    17 s for 2 M ops of 400 names): equal to numpy's median of each group, odd and even."""
    from profsight.analyses.replay.op_runs import group_medians

    rng = np.random.default_rng(0)
    group = rng.integers(0, 37, 10_001)
    values = rng.random(10_001)
    expected = [np.median(values[group == k]) for k in range(37)]
    assert np.allclose(group_medians(group, values, 37), expected)


@pytest.mark.parametrize(
    "name",
    [
        # its NCCL and compute streams wait on each other ~4,000 times per replayed span,
        # one edge resolvable at a time among thousands ahead
        "shared/traces/hta/df_index_resolver/df_index_resolver.json.gz",
        # 236 waits for another stream, found ready dozens in a row (the doubling chunks)
        "shared/traces/kineto_tb_plugin/2021-01/resnet50_autograd_api_num_workers_0/"
        "worker0.pt.trace.json.gz",
    ],
    ids=["hta-nccl", "resnet50-2021"],
)
def test_waits_between_streams_replay_the_same_item_by_item(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The waits between streams are looked at one by one for the first few, then in
    doubling chunks, so that a call costs what it resolves; with every stretch and every
    wait taken one by one instead (the scalar path alone), the steps replay to the same
    floats, with no change and with each fix's edit."""
    profile = profsight.load(DATA / name)
    ctx = context(profile)
    graph = graph_of(ctx)
    assert graph is not None and int((graph.dep >= 0).sum()) > 200
    edits = [edit_for(ctx, graph, f) for f in diagnose(profile).findings]
    runs = [None, *(e for e in edits if e is not None)]
    assert len(runs) > 1
    fast = [replay_steps(graph, edit) for edit in runs]
    monkeypatch.setattr(engine, "_SHORT", 10**9)
    slow = [replay_steps(graph, edit) for edit in runs]
    for (a, steps_a), (b, steps_b) in zip(fast, slow, strict=True):
        assert a == b
        assert np.array_equal(steps_a, steps_b)


@pytest.mark.parametrize("form", FORMS)
def test_an_optimizer_already_fused_is_not_priced_as_fused_again(form: str) -> None:
    """The fixed twin of huge_optimizer runs ``Adam(fused=True)`` on the CPU: one
    ``_fused_adam_`` and one ``_foreach_add_`` per step, nothing repeated within a step.
    Fusing it again saves nothing, and the Python between those few ops is not the
    per-tensor loop the fused form removes; the planted run's per-tensor ops are."""
    fixed = diagnose(profsight.load(RECORDED / f"huge_optimizer_fixed.{form}.pt.trace.json.gz"))
    fused_again = [
        e.value for f in fixed.findings for e in f.evidence if "a fused optimizer" in e.value
    ]
    assert fused_again == []
    planted = diagnose(profsight.load(RECORDED / f"huge_optimizer.{form}.pt.trace.json.gz"))
    optimizer = next(f for f in planted.findings if f.category == "optimizer")
    assert any("a fused optimizer" in e.value for e in optimizer.evidence)
    assert optimizer.gain_pct is not None and optimizer.gain_pct > 40
