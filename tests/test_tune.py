"""``profsight tune`` on training loops with one planted cause each (`tune_targets`): the
trials run the user's loop for real, each in a process of its own, and the tests assert what
they measure."""

from __future__ import annotations

import json
import math
import time
import zlib
from pathlib import Path

import msgspec
import pytest

import tune_targets
from profsight.api import explain_profile
from profsight.cli.exit_codes import EXIT_USAGE
from profsight.cli.main import main
from profsight.knowledge.tuning import (
    ADVICE_FROM,
    CANDIDATES,
    CORES_NOT_LIMITING,
    CPU_FALLBACK,
    CPU_FALLBACK_SKIPPED,
    EARLY_LOSS_TOLERANCE,
    LOSS_TOLERANCE,
    MAX_SPREAD_PCT,
    MIN_RESOLVED_PCT,
    NOT_ON_GPU_RUN,
    NOT_PRICED,
    OPTIMIZER,
    PREDICTED_SLOWER,
    PREDICTED_WITHIN_NOISE,
    THREADS_NOT_FEWER,
    WORKERS_NOT_MEASURED,
    Setting,
)
from profsight.model.findings import REPLAYED, Evidence, Finding, Severity
from profsight.tune import Tuned, tune
from profsight.tune.costs import diff_lines
from profsight.tune.handover import HandOver, probe
from profsight.tune.measure import numerics
from profsight.tune.plan import Measured, plan, usable_cores
from profsight.tune.render import render_tune
from profsight.tune.result import Outcome, TuneReport
from profsight.tune.session import _called_from, _reference
from profsight.tune.trial import Steps, TrialResult, failure_line, run_isolated
from profsight.units import short_time
from tune_targets import BATCH, SAMPLES, SLEEP_S, CompressedDataset

#: 30 steps timed: on a loaded machine a few steps in ten are stretched by the scheduler,
#: and the quartiles of ten move with them.
STEPS = Steps(warmup=3, measured=30)
#: Fixes the planted loops do not ask for and that take long on a CPU.
SLOW = ("torch.compile", "a 4x larger batch")


def _outcome(report: TuneReport, name: str) -> Outcome:
    return next(o for o in report.outcomes if o.name == name)


@pytest.fixture(scope="module")
def starved(tmp_path_factory: pytest.TempPathFactory) -> TuneReport:
    folder = tmp_path_factory.mktemp("starved")
    return tune("tune_targets:starved", steps=STEPS, skip=SLOW, workdir=folder)


@pytest.fixture(scope="module")
def unfused(tmp_path_factory: pytest.TempPathFactory) -> TuneReport:
    folder = tmp_path_factory.mktemp("unfused")
    return tune("tune_targets:unfused", steps=STEPS, skip=SLOW, workdir=folder)


def test_a_starved_loop_gets_loader_workers_measured_beyond_the_noise(
    starved: TuneReport,
) -> None:
    """3 ms per sample in the main process: the profile finds the wait on data, and the
    workers' trial measures the step shorter, beyond both runs' noise, with the same loss
    (the workers load the same batches in the same order)."""
    assert starved.findings[0].startswith("data_loading")
    workers = _outcome(starved, "background loader workers")
    assert workers.comparison is not None and workers.comparison.beyond_noise
    assert workers.comparison.saving_pct > 25
    assert workers.numerics_ok is True and workers.loss_change == 0.0
    assert _outcome(starved, "pinned host memory").skipped == "needs a GPU"
    # the replay's saving is the wait gone whole; the workers measured beside the baseline
    # give a batch every 24 ms / N at best (each sleeps 3 ms per sample), and receiving one
    # costs the main process something: the prediction is below the wait gone whole
    replayed = explain_profile(starved.trace).findings[0].gain_pct
    assert replayed is not None and workers.predicted_pct is not None
    # pinned memory is a fix of the copy, not of the loading: the wait's replay is not its
    assert _outcome(starved, "pinned host memory").basis == NOT_PRICED
    cores = max(1, min(4, usable_cores()))
    handover = starved.handover
    assert handover is not None and handover.workers == cores
    assert handover.interval_s >= 0.9 * SLEEP_S * BATCH / cores
    assert 0 < handover.take_s < handover.interval_s
    assert workers.predicted_pct < replayed
    assert f"loading / {cores} workers, a batch every" in workers.basis
    document = json.loads(render_tune(starved, "json"))
    assert document["handover"]["interval_s"] == handover.interval_s
    # the profiled steps (3 ms per sample slept, in both) are about the timed ones
    assert starved.profiled_step_s is not None
    assert 0.5 < starved.profiled_step_s / starved.baseline.mean_s < 2.0
    assert f"a batch every {short_time(handover.interval_s * 1e6)}" in render_tune(starved, "text")
    assert starved.combined is not None and starved.combined.name == workers.name
    assert starved.diff == (
        f"+ DataLoader(..., num_workers={cores}, persistent_workers=True, prefetch_factor=2)",
    )
    assert starved.drift_pct is not None and starved.drift_pct < workers.comparison.saving_pct
    assert starved.cost_after is not None
    assert starved.cost_after.hours_per_1000_steps < starved.cost_before.hours_per_1000_steps
    assert starved.cost_before.hours_per_epoch == pytest.approx(
        starved.baseline.mean_s * (SAMPLES // BATCH) / 3600
    )


def test_an_unfused_optimizer_gets_the_fused_one_measured(unfused: TuneReport) -> None:
    """Adam one parameter at a time over 1000 parameters: the fused form measures beyond
    the noise, with the loss within the tolerance, and goes into the change; on a CPU the
    multi-tensor form (the same per-tensor kernels in a loop) is then not tried."""
    assert unfused.findings[0].startswith("optimizer")
    fused = _outcome(unfused, "fused optimizer")
    assert fused.comparison is not None and fused.comparison.beyond_noise, fused
    # one op over all parameters, not ~10 per row: 51-67% in the benchmark's runs, 28% in a
    # fresh clone's (the reference pools the baseline before and after the trials, and the
    # machine drifts between them); a fused form that saved nothing could not reach 15%
    assert fused.comparison.saving_pct > 15
    assert fused.numerics_ok is True and fused.loss_change is not None
    assert fused.loss_change <= 0.01
    foreach = _outcome(unfused, "multi-tensor optimizer")
    assert foreach.skipped == CPU_FALLBACK_SKIPPED.format(fix=fused.name)
    assert foreach.predicted_pct is None and foreach.basis == CPU_FALLBACK
    assert unfused.combined is not None and unfused.combined.name == fused.name
    assert unfused.diff == ("+ torch.optim.<your optimizer>(..., fused=True, foreach=False)",)


def test_workers_predicted_to_slow_a_loop_are_not_tried(tmp_path: Path) -> None:
    """Batches of 4 rows from memory: loading one costs ~30 µs in the main process, and
    receiving one from a worker costs more (shared memory handed over, unpickled), measured
    on the loop's own loader: the workers' prediction is a slower step, and no trial runs."""
    skip = (*SLOW, "optimizer")
    report = tune("tune_targets:tiny_batch", steps=STEPS, skip=skip, workdir=tmp_path)
    workers = _outcome(report, "background loader workers")
    handover = report.handover
    assert handover is not None and handover.take_s > 0
    assert workers.predicted_pct is not None and workers.predicted_pct < 0, workers
    assert workers.skipped == PREDICTED_SLOWER.format(pct=workers.predicted_pct)
    assert workers.step is None and report.combined is None


def test_a_lightning_setup_is_tuned_through_its_trainer(tmp_path: Path) -> None:
    """The starved loop under Lightning's Trainer: its profile (Lightning's PyTorchProfiler)
    finds the wait on data, and the workers' trial, timed batch end to batch end inside
    ``Trainer.fit``, measures it shorter beyond the noise, with the same loss."""
    report = tune("tune_targets:starved_lightning", steps=STEPS, skip=SLOW, workdir=tmp_path)
    assert report.findings[0].startswith("data_loading"), report.findings
    workers = _outcome(report, "background loader workers")
    assert workers.comparison is not None and workers.comparison.beyond_noise, workers
    assert workers.comparison.saving_pct > 25
    assert workers.numerics_ok is True
    assert report.diff[0].startswith("+ DataLoader(..., num_workers=")
    assert report.cost_before.hours_per_epoch == pytest.approx(
        report.baseline.mean_s * (SAMPLES // BATCH) / 3600
    )


def test_a_failing_trial_does_not_stop_the_others(tmp_path: Path) -> None:
    """The fused form fails, the multi-tensor one runs; only a trial that timed its steps
    is followed by the baseline again, to judge it against the runs either side."""
    said: list[str] = []
    report = tune(
        "tune_targets:unfused_no_fused",
        steps=STEPS,
        skip=SLOW,
        workdir=tmp_path,
        progress=lambda line, done, total: said.append(line),
    )
    assert [line.split(":")[0] for line in said[:4]] == [
        "baseline",
        "trial 1/2",
        "trial 2/2",
        "baseline again",
    ], said
    fused = _outcome(report, "fused optimizer")
    assert fused.failed == "RuntimeError: this optimizer has no fused form"
    assert fused.step is None and not fused.helped
    foreach = _outcome(report, "multi-tensor optimizer")
    assert foreach.failed == "" and foreach.step is not None and foreach.comparison is not None
    assert report.drift_pct is not None  # the baseline ran again after both


def test_every_format_says_what_was_measured(unfused: TuneReport) -> None:
    fused = _outcome(unfused, "fused optimizer")
    assert fused.comparison is not None
    text = render_tune(unfused, "text")
    assert f"{fused.comparison.saving_pct:+.0f}% ± {fused.comparison.band_pct:.0f}%" in text
    assert "Combined, and the change to make" in text
    # ~36,000 ops a step under the profiler, each recorded at a cost of its own: the profiled
    # step is longer than the timed one (1.6x in bench_tune.py's idle run; 1.16x with the cores
    # shared by five busy processes, which slow the timed steps too), and the report says
    # what that does to the shares
    assert unfused.profiled_step_s is not None
    stretch = unfused.profiled_step_s / unfused.baseline.mean_s
    assert stretch > 1.05
    assert f"the profiled steps took {stretch:.1f}x the timed ones" in text
    markdown = render_tune(unfused, "markdown")
    assert markdown.startswith("# profsight tune") and "```diff\n+ torch.optim." in markdown
    document = json.loads(render_tune(unfused, "json"))
    assert document["schema"] == "profsight/tune/1"
    names = [o["name"] for o in document["outcomes"]]
    assert names[:2] == ["fused optimizer", "multi-tensor optimizer"]
    assert document["handover"] == msgspec.to_builtins(unfused.handover)
    assert document["baseline"]["mean_s"] == unfused.baseline.mean_s
    page = render_tune(unfused, "html")
    assert page.startswith("<!doctype html>") and "<h2>Fixes tried, one at a time</h2>" in page
    assert "<pre>+ torch.optim.&lt;your optimizer&gt;(..., " in page
    assert isinstance(unfused, Tuned)  # what tune returns renders itself, in a notebook too
    assert unfused.markdown() == markdown and str(unfused) == text
    assert unfused._repr_html_() in page


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tune", "no_such_module_here:f"], "no_such_module_here does not import"),
        (["tune", "tune_targets:missing"], "tune_targets has no function 'missing'"),
        (["tune", "tune_targets"], "name the factory as MODULE:FUNCTION"),
        (
            ["tune", "tune_targets:not_a_training"],
            "the factory returned int, not profsight.tune.Training",
        ),
        (["tune", "tune_targets:unfused", "--budget", "0.5s"], "is too small for one trial"),
        (["tune"], "name a target (MODULE:FUNCTION) or --demo"),
        (
            ["tune", "tune_targets:factory_raises"],
            "the factory raised FileNotFoundError: data/train.csv",
        ),
        (["tune", "tune_targets:unfused", "--skip", "fusedd"], "--skip fusedd: no such fix"),
    ],
)
def test_bad_input_gets_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code = main([*argv, "--no-progress"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_the_demo_tunes_the_seed_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``profsight tune --demo``: the seed's ResNet-18 in a plain loop, every trial measured
    or said why not, the report written only where asked."""
    out = tmp_path / "tune.json"
    argv = ["tune", "--demo", "--warmup", "1", "--steps", "4", "--skip", "torch.compile"]
    assert main([*argv, "-o", str(out), "--no-progress"]) == 0
    document = json.loads(out.read_text())
    assert document["target"] == "profsight.demo.tune_target:lightning"
    assert document["baseline"]["mean_s"] > 0
    assert document["findings"], document
    for outcome in document["outcomes"]:
        assert outcome["step"] or outcome["skipped"] or outcome["failed"], outcome


def test_the_probe_counts_what_the_workers_spend_on_the_cpu() -> None:
    """Loader workers that decode (zlib) spend the decoding's CPU per batch; workers that
    wait (a sleep, as a disk read would) spend little: the workers' prediction shares the
    cores by these figures, read from ``/proc`` over a window after the workers started."""
    blob = CompressedDataset().blob
    start = time.process_time()
    for _ in range(BATCH):
        zlib.decompress(blob)
    decode = time.process_time() - start
    decoding = probe(tune_targets.decoding().loader, 2)
    assert decoding is not None and decoding.cpu_s is not None
    assert decoding.cpu_s >= 0.5 * decode, (decoding, decode)
    waiting = probe(tune_targets.starved().loader, 2)
    assert waiting is not None and waiting.cpu_s is not None
    assert waiting.cpu_s < 0.25 * SLEEP_S * BATCH, waiting
    assert waiting.interval_s >= 0.9 * SLEEP_S * BATCH / 2


def test_a_deep_net_rounded_apart_keeps_its_arithmetic() -> None:
    """ResNet-18 under Adam, one tensor at a time against the fused form, twelve steps from
    one seed: the losses agree to ~1e-7 through the warm-up and part exponentially after
    (1% and more by the twelfth step). Reordered float sums, not new arithmetic: the
    numerics are the same. An update that changes (gradient ascent) parts them at once."""
    target, steps = "profsight.demo.tune_target:training", Steps(warmup=3, measured=9, min_s=0.0)
    base = run_isolated(target, (), steps, 600)
    fused = run_isolated(target, (Setting("fused", True, OPTIMIZER),), steps, 600)
    ascent = run_isolated(target, (Setting("maximize", True, OPTIMIZER),), steps, 600)
    change, early, same = numerics(base, fused)
    assert early is not None and early <= EARLY_LOSS_TOLERANCE, (change, early)
    assert same is True
    change, early, same = numerics(base, ascent)
    assert early is not None and early > EARLY_LOSS_TOLERANCE
    assert change is not None and change > LOSS_TOLERANCE and same is False


def _loading(gain_pct: float, category: str = "data_loading") -> Finding:
    return Finding(
        category,
        Severity.HIGH,
        "The training loop waits for data",
        (),
        "",
        "",
        at_stake_pct=gain_pct,
        gain_pct=gain_pct,
        basis=REPLAYED,
    )


def test_the_workers_get_cores_of_their_own_where_the_cores_cut_them() -> None:
    """A 10 ms step that waits 9 ms on decoding: two workers decode a batch every 5 ms on
    10 ms of CPU each, and the training took 18 ms of CPU per step (torch's pool spinning on
    both cores). Sharing two cores, the workers' fix saves ~5%; with the training on one
    thread they keep their pace, and that form is tried, priced at most 50%. Where the
    workers wait rather than compute (0.5 ms of CPU a batch), only the plain form is, and
    a GPU run has its own threads' cores to spare."""
    decoding = HandOver(workers=2, take_s=0.001, interval_s=0.005, cpu_s=0.010)
    measured = Measured(0.010, decoding, 0.018, threads=2)
    planned, _ = plan([_loading(90.0)], False, 2, measured=measured)
    plain, own = planned[0], planned[1]
    assert plain.candidate.name == "background loader workers" and not plain.skipped
    assert plain.predicted_pct == pytest.approx(5.0)  # 9.5 ms: (8 + 1 + 10 ms) / 2 cores
    assert own.candidate.name == "background loader workers, fewer training threads"
    # on one thread the training takes the rest of the step's CPU: (1 + 1 + 10 ms) / 2
    assert not own.skipped and own.predicted_pct == pytest.approx(40.0)
    assert diff_lines(own.candidate.settings)[-1] == "+ torch.set_num_threads(1)"
    waiting = HandOver(workers=2, take_s=0.001, interval_s=0.005, cpu_s=0.0005)
    planned, _ = plan([_loading(90.0)], False, 2, measured=Measured(0.010, waiting, 0.002, 2))
    assert planned[1].skipped == CORES_NOT_LIMITING
    planned, _ = plan([_loading(90.0)], True, 2, measured=measured)
    assert planned[1].skipped == NOT_ON_GPU_RUN
    one = Measured(0.010, decoding, 0.018, threads=1)  # torch on one thread already
    planned, _ = plan([_loading(90.0)], False, 2, measured=one)
    assert planned[1].skipped == THREADS_NOT_FEWER
    planned, _ = plan([_loading(90.0)], False, 2, measured=Measured(0.010, None, 0.018, 2))
    assert planned[1].skipped == WORKERS_NOT_MEASURED


def test_a_loss_that_blew_up_is_not_rounding() -> None:
    """Warm-up losses that agree say the arithmetic is the same only while the final loss
    is still a loss: ten times the baseline's, or NaN, is a run that diverged."""
    base = TrialResult(seconds=(0.1,), loss=2.0, early=(2.3, 2.2, 2.1), batch_size=8)
    for final in (2.3, 20.0, math.nan):
        trial = TrialResult(seconds=(0.1,), loss=final, early=base.early, batch_size=8)
        _, early, same = numerics(base, trial)
        assert early == 0.0
        assert same is (final == 2.3), final


def test_a_trial_is_judged_against_the_baseline_runs_either_side_of_it() -> None:
    """Each trial runs between two baseline runs and is judged against both pooled: the
    reference is their steps together, and the drift how far the later run's mean moved
    from the earlier's."""
    before = TrialResult(seconds=(0.010,) * 20)
    after = TrialResult(seconds=(0.012,) * 20)
    reference, drift = _reference([before, after])
    assert reference.mean_s == pytest.approx(0.011)
    assert drift == pytest.approx(20.0)
    alone, none = _reference([before])
    assert alone.mean_s == pytest.approx(0.010) and none is None


def test_a_fix_is_priced_by_the_replay_of_its_own_finding_only() -> None:
    """A step of fixed cost asks for a larger batch and ``torch.compile``; the replay prices
    the larger batch (per sample), not what compilation fuses: compile is tried unpriced.
    FP32 matrix kernels ask for TF32 and bf16 (a Trainer's precision: Lightning only), both
    priced by the precision replay; launch overhead for CUDA graphs, priced by the graphs'
    replay, before compile.
    Fewer validation batches keep a quarter of the validation: three quarters of the
    replay's saving."""
    overhead = _loading(60.0, "per_step_overhead")
    planned, _ = plan([overhead], False, 2, measured=Measured(0.010))
    by_name = {p.candidate.name: p for p in planned}
    assert by_name["a 4x larger batch"].predicted_pct == pytest.approx(60.0)
    compiled = by_name["torch.compile"]
    assert compiled.predicted_pct is None and compiled.basis == NOT_PRICED
    assert not compiled.skipped
    planned, _ = plan([_loading(30.0, "compute_conv")], False, 2, measured=Measured(0.010))
    layout, autotuner = planned
    assert layout.candidate.name == "channels-last memory format" and not layout.skipped
    assert layout.predicted_pct is None and layout.basis == NOT_PRICED
    assert diff_lines(layout.candidate.settings) == (
        "+ model = model.to(memory_format=torch.channels_last)",
    )
    assert autotuner.skipped == "needs a GPU"
    planned, _ = plan([_loading(25.0, "low_precision")], True, 8, True, Measured(0.010))
    assert [(p.candidate.name, p.predicted_pct) for p in planned] == [
        ("TF32 matmuls", 25.0),
        ("bf16 mixed precision", 25.0),
    ]
    assert all(p.candidate.changes_numerics and not p.skipped for p in planned)
    planned, _ = plan([_loading(25.0, "low_precision")], True, 8, False, Measured(0.010))
    assert planned[1].skipped == "needs a Lightning Trainer"
    planned, _ = plan([_loading(35.0, "launch_overhead")], True, 8, measured=Measured(0.010))
    graphs, compiled = planned
    assert graphs.predicted_pct == 35.0 and compiled.predicted_pct is None
    assert diff_lines(graphs.candidate.settings) == (
        '+ model = torch.compile(model, mode="reduce-overhead")',
    )
    planned, _ = plan([_loading(40.0, "validation")], False, 2, True, Measured(0.010))
    assert planned[0].candidate.name == "fewer validation batches"
    assert planned[0].predicted_pct == pytest.approx(30.0) and not planned[0].skipped


def test_a_saving_counts_only_what_the_profile_saw_of_the_step() -> None:
    """Profiling makes no step shorter: a profiled step of 4 ms against a timed one of
    10 ms missed 6 ms (Lightning records a validation in a window of its own), and a fix
    that removes 50% of the profiled step saves 20% of the timed one. A profiled step
    longer than the timed one (the profiler's own cost) leaves the share as it is."""
    overhead = _loading(50.0, "per_step_overhead")
    short = Measured(0.010, profiled_s=0.004)
    planned, _ = plan([overhead], False, 2, measured=short)
    assert planned[0].predicted_pct == pytest.approx(20.0)
    assert "40% of the timed step" in planned[0].basis
    planned, _ = plan([overhead], False, 2, measured=Measured(0.010, profiled_s=0.025))
    assert planned[0].predicted_pct == pytest.approx(50.0)


def test_a_fused_optimizer_is_priced_at_its_phases_unprofiled_length() -> None:
    """The profiler stretches a phase of many small ops more, or less, than the step: an
    MLP's optimizer took 0.25 ms of a 1.1 ms profiled step and 0.16 ms of a 0.49 ms timed
    one. The replay's 14% of the profiled step is 62% of its optimizer phase, and 62% of
    the phase at its timed length is 20% of the timed step. On a GPU run the host's phase
    is not the device's work: the replay's share stands."""
    optimizer = _loading(14.0, "optimizer")
    timed = Measured(
        0.00049,
        profiled_s=0.0011,
        timed_phases={"optimizer": 0.00016},
        profiled_phases={"optimizer": 0.00025},
    )
    fused = plan([optimizer], False, 2, measured=timed)[0][0]
    assert fused.candidate.name == "fused optimizer"
    assert fused.predicted_pct == pytest.approx(14.0 * 1.1 / 0.25 * 0.16 / 0.49)
    assert "62% of the optimizer phase, which took 160 µs a step unprofiled" in fused.basis
    on_gpu = plan([optimizer], True, 2, measured=timed)[0][0]
    assert on_gpu.predicted_pct == pytest.approx(14.0)
    untimed = plan([optimizer], False, 2, measured=Measured(0.00049, profiled_s=0.0011))[0][0]
    assert untimed.predicted_pct == pytest.approx(14.0)


def test_the_optimizer_is_timed_without_its_lightning_closure() -> None:
    """The optimizer's step is timed unprofiled: in a plain loop, the fused form's is the
    shorter; under Lightning ``optimizer.step`` runs the forward and backward first (its
    closure), which a forward sleeping 20 ms shows: the optimizer's time leaves it out."""
    steps = Steps(2, 10, min_s=0.0)
    base = run_isolated("tune_targets:tiny_batch", (), steps, 600)
    fused = run_isolated("tune_targets:tiny_batch", CANDIDATES["optimizer"][0].settings, steps, 600)
    assert base.optimizer_s is not None and fused.optimizer_s is not None
    assert 0 < fused.optimizer_s < base.optimizer_s < sum(base.seconds) / len(base.seconds)
    slow = run_isolated("tune_targets:slow_forward_lightning", (), steps, 600)
    assert slow.optimizer_s is not None and sum(slow.seconds) / len(slow.seconds) > 0.02
    assert 0 < slow.optimizer_s < 0.005


def test_a_fix_predicted_within_the_baselines_spread_is_not_tried() -> None:
    """A trial cannot tell a 3% saving from none on a baseline spread ± 4%: it is not
    tried; on a steadier baseline (± 1%, the floor `MIN_RESOLVED_PCT`) it is; and a
    saving beyond `MAX_SPREAD_PCT` on any baseline."""
    fused = CANDIDATES["optimizer"][0]
    noisy, _ = plan([_loading(3.0, "optimizer")], False, 2, measured=Measured(0.01, noise_pct=4))
    assert noisy[0].candidate == fused
    assert noisy[0].skipped == PREDICTED_WITHIN_NOISE.format(pct=3.0, noise=4.0)
    steady, _ = plan([_loading(3.0, "optimizer")], False, 2, measured=Measured(0.01, noise_pct=1))
    assert MIN_RESOLVED_PCT < 3.0 and steady[0].skipped == ""
    # a saving larger than `MAX_SPREAD_PCT` is tried on any baseline
    wide, _ = plan([_loading(8.0, "optimizer")], False, 2, measured=Measured(0.01, noise_pct=16))
    assert MAX_SPREAD_PCT < 8.0 and wide[0].skipped == ""


@pytest.fixture(scope="module")
def python_loop(tmp_path_factory: pytest.TempPathFactory) -> TuneReport:
    """The per-column loop tuned with ``torch.compile`` among its fixes."""
    folder = tmp_path_factory.mktemp("python_loop")
    return tune("tune_targets:python_loop", steps=STEPS, skip=SLOW[1:], workdir=folder)


def test_torch_compile_is_measured_and_not_priced(python_loop: TuneReport) -> None:
    """``torch.compile`` on a CPU (it compiles with the machine's C compiler) fuses the
    per-column loop's tiny ops: a third of the step or more, beyond its noise band (2.36 ms
    against 0.92 ms when it was written; 72% ± 25% beside two busy loops), with the same
    loss. No replay models what
    it fuses, so it has no prediction."""
    assert SLOW[0] == "torch.compile"
    compiled = _outcome(python_loop, "torch.compile")
    assert compiled.failed == "" and compiled.comparison is not None, compiled
    # (beside two busy loops the blocks' ranges can overlap: 72% ± 25%, not "beyond")
    assert compiled.comparison.saving_pct > max(30.0, compiled.comparison.band_pct)
    assert compiled.predicted_pct is None and compiled.basis == NOT_PRICED
    assert compiled.numerics_ok is True
    assert "+ model = torch.compile(model)" in python_loop.diff


def test_advice_names_the_users_function(python_loop: TuneReport) -> None:
    """A per-column Python loop in ``forward`` has no setting that fixes it: the advice
    names the function its rows ran in (the loop's list comprehension, as Python names
    it), read from the baseline's second profiled pass, recorded with the Python stack.
    Which findings a loaded machine's profile gives varies; ``aten::tanh`` is called by
    the loop alone."""
    loop = Finding(
        "module_overhead",
        Severity.MEDIUM,
        "tiny ops per step in the forward pass",
        (Evidence("tiny ops", "64 a step", ("aten::tanh",)),),
        "",
        "Vectorise the Python in forward()",
        at_stake_pct=40.0,
    )
    called = _called_from(python_loop.trace, [loop])
    frame = called["aten::tanh"]
    # the loop's own line (its list comprehension) or its forward's, not a library's
    source = Path(tune_targets.__file__).read_text().splitlines()
    loop_line = 1 + next(i for i, text in enumerate(source) if "torch.tanh(column" in text)
    in_the_loop = (
        f"tune_targets.py({loop_line}): <listcomp>",
        f"tune_targets.py({loop_line - 1}): forward",
    )
    assert frame in in_the_loop, frame
    assert "def forward" in source[loop_line - 2]
    _, advice = plan([loop], False, 2, called_from=called)
    assert advice == [
        ADVICE_FROM.format(advice=f"{loop.title}: {loop.recommendation}", frame=frame)
    ]
    # the run's own advice, where its profile found the loop
    for line_of_advice in python_loop.advice:
        if "tiny ops per step in the forward pass" in line_of_advice:
            assert line_of_advice.endswith(tuple(f"(in your code: {f})" for f in in_the_loop))


def test_what_a_fit_raises_after_its_steps_were_timed_keeps_its_figures() -> None:
    """A Lightning fit that raises as it ends (here its module's ``on_train_end``; in a real
    run, a loader's workers shutting down) has timed its steps: the trial keeps their figures
    and says what was raised; the same error during the steps fails the trial."""
    result = run_isolated("tune_targets:ends_raising_lightning", (), Steps(2, 5, min_s=0.0), 600)
    assert not result.failed, result.failed
    assert len(result.seconds) == 5 and result.loss is not None
    assert result.ended_with.startswith("RuntimeError: the fit's end failed"), result.ended_with


def test_a_failure_names_the_error_it_was_raised_while_handling() -> None:
    """Lightning's teardown, after a loader's error, raises an error of its own: the trial's
    line names the first error, then the one that hid it."""
    try:
        try:
            raise OSError("a worker died")
        except OSError:
            raise RuntimeError("Please call `iter(combined_loader)` first.")  # noqa: B904
    except RuntimeError as exc:
        line = failure_line(exc)
    assert line == (
        "OSError: a worker died (then RuntimeError: Please call `iter(combined_loader)` first.)"
    )
    assert failure_line(ValueError("a\nb")) == "ValueError: a"
