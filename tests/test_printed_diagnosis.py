"""Diagnosis from printed tables and Lightning reports: the same bottleneck as the trace.

The runs of tests/scenarios.py are recorded in the session with their printed tables (torch's
``key_averages().table()`` in the forms users print, Lightning's ``fit-*.txt``, Simple and
Advanced profiler reports); the real GPU tables of tests/data/gpu_tables carry the
expectations written in their README before profsight was run on them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lightning as L
import pytest
import torch

import profsight
from agreement import REPORTS, RUNS, markdown, pairs, top
from profsight.analyses.step import table_step
from profsight.analyses.step.table_step import printed_step
from profsight.knowledge.advice import PHASE_RULES_BY_PHASE
from profsight.knowledge.phases import Phase
from profsight.model.text_profile import TextProfile
from scenarios import (
    SCENARIOS,
    LitClassifier,
    SmallResNet,
    _conv_loader,
    _sgd,
    record_lightning,
    table_path,
)

from conftest import DATA, KnownMiss, known_miss

GPU_TABLES = DATA / "gpu_tables"
#: A printed table names the trace's bottleneck in at least this share of the (run, printed
#: form) pairs of one session's recordings. The issue's bar is 90%, which a quiet machine
#: meets (107 of 107, docs/measurements.md); on a loaded 2-core machine one recording of
#: every run gave 95 of 107 (a `make test` beside other work), 90 and 89 of 107 (beside two
#: busy loops and another recording): mostly a trace that read the load (a long first step,
#: a stretched data wait) while its 3-6 tables kept the planted finding. 80% is under the
#: lowest seen (83%).
AGREEMENT = 0.8


def test_printed_tables_name_the_traces_bottleneck(
    scenario_traces: dict[tuple[str, str], Path], scenario_reports: dict[tuple[str, str], Path]
) -> None:
    """Table against trace over one session's recordings (`AGREEMENT`: its spread)."""
    found = pairs(scenario_traces, scenario_reports)
    assert len(found) == len(RUNS) * 3 + len(RUNS) // 2 + len(REPORTS)
    agreed = sum(p.agrees for p in found)
    assert agreed >= AGREEMENT * len(found), markdown(found)


RECORDED = DATA / "recorded"
#: Every planted run's full printed table and Lightning report is read from one committed
#: recording (`scripts/record_test_data.py tables`, tests/data/recorded/README.md): live, a
#: loaded 2-core machine moved the top finding of several (tiny_batch's full tables in 4-5
#: of 8 recordings beside busy loops; expensive_skip's, plain and Lightning, in three `make
#: test` runs; tiny_batch's SimpleProfiler report to optimizer in 2 of 4 loaded sessions;
#: python_collate's AdvancedProfiler report in 1 of 7; seed_resnet18's Lightning table to
#: optimizer in 2 of 8). Each was recorded once on a quiet machine and read its planted
#: finding first, tiny_batch plain aside (its known miss). The session's own recordings
#: still meet `AGREEMENT` above.


def _committed_table(name: str, how: str) -> Path:
    return RECORDED / f"{name}.{how}.full.txt"


def _committed_report(name: str, kind: str) -> Path:
    return RECORDED / f"{name}.{kind}.txt"


def _table_runs() -> list[object]:
    miss = pytest.mark.xfail(
        strict=True,
        raises=KnownMiss,
        reason="the committed tiny_batch plain recording's table reads data_loading, as its "
        "trace does (test_diagnose.TINY_PLAIN_MISS)",
    )
    return [
        pytest.param(n, h, id=f"{n}-{h}", marks=[miss] if (n, h) == ("tiny_batch", "plain") else [])
        for n, h in RUNS
    ]


@pytest.mark.parametrize(("name", "how"), _table_runs())
def test_the_full_table_names_the_planted_bottleneck(name: str, how: str) -> None:
    """The full printed table (`key_averages().table()`, every row) of the run's committed
    recording names the planted bottleneck first."""
    ranked = [f.category for f in profsight.explain(str(_committed_table(name, how))).findings]
    expected = SCENARIOS[name].expected
    if (name, how) == ("tiny_batch", "plain"):
        known_miss(name, ranked[0] if ranked else None, {expected}, "data_loading")
    assert ranked[:1] == [expected], ranked


@pytest.mark.parametrize(("name", "kind"), REPORTS, ids=[f"{n}-{k}" for n, k in REPORTS])
def test_lightning_reports_name_the_planted_bottleneck(name: str, kind: str) -> None:
    """The committed Simple or Advanced profiler report of the run names it first."""
    ranked = [f.category for f in profsight.explain(str(_committed_report(name, kind))).findings]
    assert ranked[:1] == [SCENARIOS[name].expected], ranked


def _step(path: Path):  # type: ignore[no-untyped-def]
    profile = profsight.load(path)
    assert isinstance(profile, TextProfile)
    run = profile.run()
    return printed_step(run.table, exclusive=run.exclusive)


def test_lightning_closure_is_not_the_optimizer(
    scenario_traces: dict[tuple[str, str], Path],
) -> None:
    """Lightning runs training_step and backward inside Optimizer.step#: its self time is
    theirs. From the table, the optimizer's own update of a healthy conv net is small (the
    trace measures ~1%), forward and backward hold the step."""
    trace = scenario_traces[("healthy_conv", "lightning")]
    # half the optimizer finding's threshold: the estimate carries backward's per-call
    # noise (5.04% once in a loaded fresh clone's run); the closure itself would read ~90%
    small = PHASE_RULES_BY_PHASE[Phase.OPTIMIZER].threshold_pct / 2
    for form in ("full", "cpu_total_top20", "lightning_report"):
        step = _step(table_path(trace, form))
        assert step is not None and step.lightning
        assert step.phase_share(Phase.OPTIMIZER) < small, form
        assert step.phase_share(Phase.FORWARD) + step.phase_share(Phase.BACKWARD) > 80.0, form
    report = profsight.explain(str(table_path(trace, "full")))
    optimizer = next(e for e in report.rows if e.row.name.startswith("Optimizer.step#"))
    assert "Lightning steps the profiler inside optimizer_step" in optimizer.explanation.reading


class _Slow(L.Callback):
    """Sleeps in the second recorded step's backward: what a loaded machine does to one call.
    Its name is short enough that torch does not cut its hook rows' names (52 characters):
    a cut ``on_before...`` names no action, and its time would count in backward too. The
    sleep is at least 150 ms and twice the step before it, so that it stays large beside a
    step a loaded machine slows down (on a 2-core machine beside two busy loops the steps
    took three times as long, and a fixed 150 ms fell under the premise's bar)."""

    def __init__(self) -> None:
        self.started = 0.0
        self.step_s = 0.0

    def on_train_batch_start(self, trainer: L.Trainer, *args: Any) -> None:
        self.started = time.perf_counter()

    def on_train_batch_end(self, trainer: L.Trainer, *args: Any) -> None:
        self.step_s = time.perf_counter() - self.started

    def on_before_backward(
        self, trainer: L.Trainer, pl_module: L.LightningModule, loss: Any
    ) -> None:
        if trainer.global_step == 2:  # the schedule's second active step
            time.sleep(max(0.15, 2.0 * self.step_s))


def test_one_slow_backward_is_not_the_optimizer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The closure estimate subtracts the backward that ran before the window's first
    optimizer range by the average backward, so one backward 150 ms slower in a complete
    range reads as 50 ms more closure over two updates: ~12% of the step for an update of
    ~0.3%. The step less every other phase, made of totals only, bounds it."""
    torch.manual_seed(0)
    trace = record_lightning(
        tmp_path,
        LitClassifier(SmallResNet(), _sgd),
        _conv_loader(),
        callbacks=[_Slow()],
    )
    small = PHASE_RULES_BY_PHASE[Phase.OPTIMIZER].threshold_pct / 2
    for form in ("full", "cpu_total_top20", "lightning_report"):
        step = _step(table_path(trace, form))
        assert step is not None and step.lightning
        assert step.phase_share(Phase.OPTIMIZER) < small, form
        assert sum(p.us for p in step.parts) == pytest.approx(step.step_us, rel=1e-6), form
    # the premise: without the cap, the same table reads the slow backward as the optimizer
    monkeypatch.setattr(table_step, "printed_capped_update", lambda update, others, step_us: update)
    uncapped = _step(table_path(trace, "full"))
    assert uncapped is not None and uncapped.phase_share(Phase.OPTIMIZER) > small


def test_the_huge_optimizer_is_the_update_not_the_closure(
    scenario_traces: dict[tuple[str, str], Path],
) -> None:
    """The other side: 300 parameters with per-parameter Adam is most of the step."""
    step = _step(table_path(scenario_traces[("huge_optimizer", "lightning")], "full"))
    assert step is not None
    assert step.phase_share(Phase.OPTIMIZER) > 40.0


def test_advanced_profiler_names_the_hot_python_function(
    scenario_reports: dict[tuple[str, str], Path],
) -> None:
    """The data-loading finding names the collate's own function (its rank against the
    optimizer's, which a loaded machine stretches, is the test above's)."""
    report = profsight.explain(str(scenario_reports[("python_collate", "advanced")]))
    data = next(f for f in report.findings if f.category == "data_loading")
    where = next(e for e in data.evidence if e.label == "where its Python time goes")
    assert where.value.startswith("scenarios.py:") and "(python_collate)" in where.value


def test_simple_profiler_step_is_the_epoch_per_batch(
    scenario_reports: dict[tuple[str, str], Path],
) -> None:
    """A SimpleProfiler report's step is run_training_epoch per training batch (everything a
    batch costs), and its data loading the fetch action's total per batch."""
    profile = profsight.load(scenario_reports[("slow_dataset", "simple")])
    assert isinstance(profile, TextProfile) and profile.lightning is not None
    actions = {a.action: a for a in profile.lightning.actions}
    batch = actions["run_training_batch"]
    assert batch.calls
    epoch = actions["run_training_epoch"].total_s * 1e6 / batch.calls
    fetch = actions["[_TrainingEpochLoop].train_dataloader_next"].total_s * 1e6 / batch.calls
    step = _step(scenario_reports[("slow_dataset", "simple")])
    assert step is not None and step.steps == batch.calls
    assert step.step_us == pytest.approx(epoch, rel=1e-6)
    assert step.phases[Phase.DATA_LOADING.value] == pytest.approx(fetch, rel=0.05)


def _edited(path: Path, tmp_path: Path, keep: Callable[[str], bool]) -> Path:
    out = tmp_path / path.name
    out.write_text("".join(line for line in path.read_text().splitlines(True) if keep(line)))
    return out


def test_lightning_is_known_by_its_module_rows(
    scenario_traces: dict[tuple[str, str], Path], tmp_path: Path
) -> None:
    """A table cut to the rows of most self time may keep no [pl][profile] row: its
    [pl][module] rows still say Lightning, so Optimizer.step#'s total (which holds forward
    and backward) is not read as the update."""
    table = table_path(scenario_traces[("healthy_conv", "lightning")], "self_cpu_top20")
    edited = _edited(table, tmp_path, lambda line: "[pl][profile]" not in line)
    step = _step(edited)
    assert step is not None and step.lightning
    assert step.phase_share(Phase.OPTIMIZER) < 15.0
    # not the optimizer (the closure's ~90% read as the update would lead); the healthy
    # model's compute_conv leads on a quiet machine, but a loaded one (make test beside two
    # busy loops and other work, 2026-12-05) led this session's cut table with
    # module_overhead: the step's own Python stretched, not the reading of Lightning
    assert top(edited) != "optimizer"


def _metric_in_both_steps(tmp_path: Path, repeat: int) -> Path:
    """A metric updated in training_step and in validation_step, on `repeat` times the
    held-out samples there: a Lightning run with validation inside the window."""
    import warnings

    from torch.utils.data import DataLoader

    import scenarios as s

    class BothMetric(s.LitWithMetric):
        def validation_step(self, batch: s.Batch, batch_idx: int) -> None:
            self.auroc(self.eval_preds.repeat(repeat, 1), self.eval_target.repeat(repeat))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return s.record_lightning(
            tmp_path,
            BothMetric(s._mlp(32, 64), s._sgd),
            s._metric_loader(),
            val=DataLoader(s.PreBatched(2, 64, (32,)), batch_size=None),
            limit_train_batches=5,
            limit_val_batches=2,
            val_check_interval=3,
        )


def test_a_metric_counts_once_wherever_it_ran(tmp_path: Path) -> None:
    """A metric updated in validation_step and in training_step: its time comes out of the
    step that ran it, so phases do not count it twice (they add up to the step)."""
    trace = _metric_in_both_steps(tmp_path, repeat=1)
    step = _step(table_path(trace, "full"))
    assert step is not None
    assert not any("add up to" in note for note in step.limits)
    assert step.phase_share(Phase.METRICS) > 50.0
    assert top(table_path(trace, "full")) == "metrics"


def test_a_metric_slower_in_validation_is_not_counted_twice(tmp_path: Path) -> None:
    """The metric's calls are shared among the steps that ran them by their average, so a
    validation call four times as long as a training one put more in training_step than it
    held (its forward read 0) and left it in validation_step too: the phases added up to
    1.58x the step. What a step cannot hold ran in the other."""
    step = _step(table_path(_metric_in_both_steps(tmp_path, repeat=4), "full"))
    assert step is not None
    assert not any("add up to" in note for note in step.limits), step.limits
    assert step.phase_share(Phase.METRICS) > 50.0


def test_gradient_accumulation_updates_once_per_optimizer_step(tmp_path: Path) -> None:
    """With accumulate_grad_batches=3 one batch in three runs optimizer.step: the table's
    per-step update is the update per call times the calls per step, as the trace says."""
    import warnings

    import scenarios as s
    from profsight.analyses.pipeline import diagnose

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = s.record_lightning(
            tmp_path,
            s.LitClassifier(s.ManyParams(), s._adam_single_tensor),
            s._optimizer_loader(),
            accumulate_grad_batches=3,
        )
    step = _step(table_path(trace, "full"))
    assert step is not None
    traced = diagnose(profsight.load(trace)).breakdown.average()
    traced_share = traced.host_us.get("optimizer", 0.0) * 100 / traced.wall_us
    assert step.phase_share(Phase.OPTIMIZER) == pytest.approx(traced_share, abs=15.0)


def test_too_little_to_judge(scenario_traces: dict[tuple[str, str], Path], tmp_path: Path) -> None:
    """A CPU table cut to its ProfilerStep* row (a few % of the self time, no phase row), and
    a SimpleProfiler report pasted down to its Total row: no verdict, and the notes say so.
    (A GPU table's step row with its footer still tells how busy the device was.)"""
    step_only = _edited(
        table_path(scenario_traces[("healthy_conv", "plain")], "cpu_total_top20"),
        tmp_path,
        lambda line: (
            "ProfilerStep*" in line or "---" in line or "Name" in line or "time total" in line
        ),
    )
    report = profsight.explain(str(step_only))
    # issue 36: an honest "not judged", with what to paste, is the one finding
    assert report.verdict is None
    assert [(f.category, f.blocks) for f in report.findings] == [("profiler_setup", True)]
    assert report.findings[0].title.startswith("Not judged: the table is a fragment")
    assert any(n.startswith("Too little to judge") for n in report.notes)
    lines = (DATA / "tables" / "lightning-ai-chess-bot-1.txt").read_text().splitlines(True)
    total_only = tmp_path / "total_only.txt"
    total_only.write_text("".join(lines[:7]))
    assert profsight.explain(str(total_only)).verdict is None


def test_a_fragment_without_footer_is_judged_by_its_shares() -> None:
    """ClinicalDG issue 2: the header and three rows, cut before the footer. The DataLoader
    row's 88.64% Self CPU says it held 89% of the window (78.6 s of 88.7 s); the thread found
    the dataloader. Before the total was read from the shares this was "too little to
    judge"."""
    report = profsight.explain(str(DATA / "tables" / "issue-clinicaldg-2-1.txt"))
    top = report.findings[0]
    assert top.category == "data_loading"
    assert top.at_stake_pct == pytest.approx(88.6, abs=1.0)
    assert report.verdict is not None and report.verdict.judgement == "starved_by_data"


def test_validation_batches_do_not_count_the_steps() -> None:
    """lag-llama issue 51: a SimpleProfiler report cut before its batch action. Training
    fetched 16 batches (and stepped the optimizer 16 times); validation fetched 19. The
    steps are the 16 training ones, and the thread's cause, the training loader at 5.29 s a
    batch, leads."""
    report = profsight.explain(str(DATA / "tables" / "issue-laglama-51-1.txt"))
    assert report.breakdown.described.startswith("16 step(s)")
    top = report.findings[0]
    assert top.category == "data_loading" and top.at_stake_pct > 90
    assert report.verdict is not None and report.verdict.judgement == "starved_by_data"


def test_a_report_without_a_step_action_sums_every_phase() -> None:
    """The same report: with no step action, the step is the sum of its phases' totals per
    training batch, the optimizer step's 1.717 s included (84.689 + 4.674 + 1.717 s over 16),
    so the optimizer keeps its share instead of the fetches filling the step."""
    profile = profsight.load(DATA / "tables" / "issue-laglama-51-1.txt")
    assert isinstance(profile, TextProfile)
    step = _step(DATA / "tables" / "issue-laglama-51-1.txt")
    assert step is not None and step.steps == 16
    assert step.step_us == pytest.approx((84.689 + 4.674 + 1.717) * 1e6 / 16)
    assert step.phase_share(Phase.OPTIMIZER) == pytest.approx(1.717 / 16 * 1e6 / step.step_us * 100)


# --- real GPU tables by others: the expectations in tests/data/gpu_tables/README.md ------

#: file -> (top findings accepted, verdict judgements accepted, present somewhere, absent)
GPU_EXPECTED = {
    "JonathanHourany__pytorch-sandbox__1.txt": (
        {"launch_overhead", "gpu_idle"},
        {"too_small_for_hardware"},
        {"data_loading"},
        set(),
    ),
    "JonathanHourany__pytorch-sandbox__3.txt": (
        {"low_precision"},
        {"too_heavy_for_hardware"},
        set(),
        {"host_device_sync"},
    ),
    "JonathanHourany__pytorch-sandbox__4.txt": (
        {"compute_matmul", "optimizer"},
        {"too_heavy_for_hardware"},
        set(),
        {"host_device_sync", "low_precision"},
    ),
    "incredere__gpu-profiling-pytorch-lab__1.txt": (
        {"gpu_idle", "launch_overhead"},
        {"too_small_for_hardware"},
        {"low_precision"},
        set(),
    ),
    # a known miss until issue 22: the FP32 upper bound ranked first; an upper bound now
    # ranks after the estimated savings (`findings.ranked`)
    "stprnvsh__nanoTabPFN__2.txt": (
        {"compute_matmul"},
        {"too_heavy_for_hardware", "balanced"},
        set(),
        {"launch_overhead"},
    ),
}
#: Expectations profsight misses: table -> (top findings accepted, the top finding it gives
#: instead, the reason). Strict on that wrong reading (`conftest.known_miss`): another wrong
#: top fails, and so does a fix, until the table moves to GPU_EXPECTED.
GPU_MISSES = {
    "stprnvsh__nanoTabPFN__1.txt": (
        {"host_device_sync", "memcpy"},
        "low_precision",
        "read as expected until issue 36: the table bounds the GPU's idle time during the "
        "blocking copies at 0-13% of the step and FP32 math's saving at up to 27%, and a "
        "table's bounded sync now ranks with the other upper bounds, after it; the blog's 1.5x "
        "from the data fixes alone is more than the table's bound allows (its device total "
        "may count work twice, which a table cannot show). The expectation is kept as written",
    ),
    "JonathanHourany__pytorch-sandbox__2.txt": (
        {"memcpy"},
        "gpu_idle",
        "expected the pageable copies (30% of the step) first; profsight ranks the GPU's "
        "idle time (59%) and per-step overhead (50%) above them: 2.9 ms of each 5.2 ms step "
        "is host time in no recorded op, which the table cannot attribute (the trace of the "
        "same run ranks the idle GPU first for the same reason)",
    ),
}


@pytest.mark.parametrize("name", sorted(GPU_EXPECTED))
def test_real_gpu_tables_read_as_their_authors_say(name: str) -> None:
    tops, judgements, present, absent = GPU_EXPECTED[name]
    report = profsight.explain(str(GPU_TABLES / name))
    categories = {f.category for f in report.findings}
    assert report.findings[0].category in tops
    assert report.verdict is not None and report.verdict.judgement in judgements
    assert present <= categories
    assert not absent & categories


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, raises=KnownMiss, reason=reason))
        for name, (_, _, reason) in sorted(GPU_MISSES.items())
    ],
)
def test_real_gpu_tables_known_misses(name: str) -> None:
    tops, wrong, _ = GPU_MISSES[name]
    report = profsight.explain(str(GPU_TABLES / name))
    known_miss(name, report.findings[0].category, tops, wrong)


def test_gpu_table_device_side_is_bounded() -> None:
    """Self CUDA time total over the steps bounds how busy the device was: 566 µs of kernels
    in 3 steps of 1.48 ms (13%); device-side spans of labels (ProfilerStep* at 160% of Self
    CUDA) are not device work."""
    report = profsight.explain(str(GPU_TABLES / "JonathanHourany__pytorch-sandbox__1.txt"))
    assert report.verdict is not None and report.verdict.device_busy_pct is not None
    assert report.verdict.device_busy_pct == pytest.approx(565.954 / 3 / 1477.0 * 100, rel=0.01)
    assert any("busy at most" in e for e in report.verdict.evidence)
    assert all(f.confidence for f in report.findings if f.category != "model_complexity")
