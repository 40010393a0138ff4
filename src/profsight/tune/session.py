"""``tune``: baseline, plan, trials, combination, costs."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from msgspec.structs import replace

from profsight.analyses.source_lines import source_lines
from profsight.api import explain_profile
from profsight.errors import InputError, UsageError
from profsight.knowledge.phases import Phase
from profsight.knowledge.tuning import CANDIDATES, CPU_FALLBACK_SKIPPED, ENDED_WITH, Setting
from profsight.loaders import load
from profsight.model.findings import Finding
from profsight.model.profile import Profile
from profsight.model.step_windows import Breakdown
from profsight.tune.costs import cost_of, diff_lines
from profsight.tune.loop import LightningTraining, build
from profsight.tune.measure import Step, compare, numerics, step_of
from profsight.tune.plan import Measured, Planned, plan, usable_cores, workers_for
from profsight.tune.result import Outcome
from profsight.tune.stack_pass import stack_trace
from profsight.tune.trial import Steps, TrialResult, run_isolated
from profsight.tune.view import Tuned

#: A trial may take this many times the baseline's own time before it is stopped (a fix
#: that compiles takes longer to start).
TRIAL_TIMEOUT_FACTOR = 10.0
#: What ``skip`` may name: a fix, or a finding category that has fixes.
SKIPPABLE = frozenset({c.name for group in CANDIDATES.values() for c in group} | set(CANDIDATES))
SKIP_HINT = "for example torch.compile, 'fused optimizer', optimizer"
#: The baseline's limit without a budget.
BASELINE_TIMEOUT_S = 3600.0
#: The findings a report lists, at most.
FINDINGS_LISTED = 5


def tune(
    target: str,
    *,
    steps: Steps | None = None,
    budget_s: float | None = None,
    price: float | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    workdir: str | Path | None = None,
    skip: tuple[str, ...] = (),
) -> Tuned:
    """Profile `target`'s training (``module:function`` returning a `Training`), try the
    fixes its findings ask for, each in its own process, and measure them. `skip` names
    fixes (``torch.compile``) or finding categories not to try."""
    unknown = [name for name in skip if name not in SKIPPABLE]
    if unknown:
        raise UsageError(f"--skip {unknown[0]}: no such fix or finding category ({SKIP_HINT})")
    counted = Progress(progress)
    say = counted.say
    steps = steps or Steps()
    start = time.perf_counter()
    # a module that does not import, a factory of the wrong shape: one line, before any
    # process starts (the factory only names the user's factories: nothing is built)
    lightning = isinstance(build(target), LightningTraining)
    trace = _trace_path(workdir)
    say("baseline: timing and profiling")
    cores = usable_cores()
    baseline, base_step = _baseline(target, steps, budget_s, trace, cores)
    device = baseline.device
    one_trial = time.perf_counter() - start
    report = explain_profile(trace)
    gpu = device.startswith("cuda")
    profiled_s = _profiled_step(report.breakdown)
    measured = _measured_of(baseline, base_step, profiled_s, report.breakdown)
    called = _called_from(trace, report.findings)
    planned, advice = _plan(report.findings, measured, (gpu, cores, lightning), skip, called)
    # + the baseline, the baseline again after each trial, the combined fixes
    counted.total = 2 + 2 * sum(not p.skipped for p in planned)
    timing = (one_trial, budget_s, start)
    outcomes, runs = _trials(target, planned, (steps, baseline, gpu), timing, say)
    if len(runs) == 1:  # (no trial ran: the baseline once more, for the machine's drift)
        runs += _again(target, steps, one_trial, budget_s, start, say)
    reference, drift = _reference(runs)
    judged = (baseline, reference)
    combined = _combined(target, outcomes, steps, judged, one_trial, budget_s, start, say)
    if combined is not None:
        combined = _against(combined, reference, drift)
    after = combined.step if combined is not None and combined.helped else None
    return Tuned(
        target=target,
        device=device,
        steps=replace(steps, measured=len(baseline.seconds)),  # (as many as it timed)
        baseline=reference,
        baseline_loss=baseline.loss,
        findings=tuple(f"{f.category}: {f.title}" for f in report.findings[:FINDINGS_LISTED]),
        outcomes=tuple(outcomes),
        combined=combined,
        advice=tuple(advice),
        diff=diff_lines(combined.settings if after is not None and combined else ()),
        cost_before=cost_of(reference, baseline.steps_per_epoch, price),
        cost_after=cost_of(after, baseline.steps_per_epoch, price) if after else None,
        price=price,
        drift_pct=drift,
        seconds=time.perf_counter() - start,
        budget_s=budget_s,
        trace=trace,
        handover=baseline.handover,
        profiled_step_s=profiled_s,
    )


def _trials(
    target: str,
    planned: list[Planned],
    run: tuple[Steps, TrialResult, bool],
    timing: tuple[float, float | None, float],
    say: Callable[[str], None],
) -> tuple[list[Outcome], list[TrialResult]]:
    """Each planned fix's trial, in order (`run`: the steps, the baseline, on a GPU;
    `timing`: one trial's time, the budget, the session's start), each followed by the
    baseline again and judged against the baseline runs on either side of it, pooled
    (`_reference`); and the baseline's runs. One past the budget is skipped, and a CPU
    fallback whose fix helped is not run."""
    steps, baseline, gpu = run
    one_trial, budget_s, start = timing
    outcomes: list[Outcome] = []
    runs = [baseline]
    for i, item in enumerate(planned, 1):
        if not item.skipped and not _fits(one_trial, budget_s, start):
            item = replace(item, skipped="budget")
        if not item.skipped and not gpu and _helped(outcomes, item.candidate.cpu_fallback_for):
            fix = item.candidate.cpu_fallback_for
            item = replace(item, skipped=CPU_FALLBACK_SKIPPED.format(fix=fix))
        if not item.skipped:
            say(f"trial {i}/{len(planned)}: {item.candidate.name}")
        outcome = _trial(target, item, steps, baseline, _timeout(one_trial, budget_s, start))
        if outcome.step is not None:
            before = runs[-1]
            runs += _again(target, steps, one_trial, budget_s, start, say)
            outcome = _against(outcome, *_reference([before, runs[-1]]))
        outcomes.append(outcome)
    return outcomes, runs


def _trace_path(workdir: str | Path | None) -> str:
    """Where the baseline's trace is written: in `workdir` (made where missing), else in
    a new temporary folder."""
    folder = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="profsight-tune-"))
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / "baseline.pt.trace.json")


def _baseline(
    target: str, steps: Steps, budget_s: float | None, trace: str, cores: int
) -> tuple[TrialResult, Step]:
    """The baseline's run, its trace written to `trace` and the loader's workers measured
    beside it; one line for a baseline that failed or timed no step."""
    baseline = run_isolated(
        target, (), steps, budget_s or BASELINE_TIMEOUT_S, trace, probe_workers=workers_for(cores)
    )
    if baseline.failed and budget_s is not None and baseline.failed.startswith("it ran past"):
        raise UsageError(f"{target}: a budget of {budget_s:g} s is too small for one trial")
    if baseline.failed:
        raise UsageError(f"{target}: the baseline run failed: {baseline.failed}")
    base_step = step_of(baseline)
    if base_step is None:
        raise UsageError(f"{target}: the baseline timed no step (a fast_dev_run, no batch?)")
    return baseline, base_step


def _measured_of(
    baseline: TrialResult, base_step: Step, profiled_s: float | None, breakdown: Breakdown | None
) -> Measured:
    """What the baseline measured, for the plan's predictions: its phases timed without the
    profiler beside the same phases profiled."""
    per_step = baseline.cpu_s / len(baseline.seconds) if baseline.cpu_s is not None else None
    timed = {Phase.OPTIMIZER.value: baseline.optimizer_s} if baseline.optimizer_s else {}
    profiled = {}
    if breakdown is not None and breakdown.steps:
        host = breakdown.average().host_us
        profiled = {p: host[p] / 1e6 for p in timed if host.get(p)}
    return Measured(
        base_step.mean_s,
        baseline.handover,
        per_step,
        baseline.threads,
        profiled_s,
        base_step.noise_pct,
        timed,
        profiled,
    )


def _plan(
    findings: Sequence[Finding],
    measured: Measured,
    run: tuple[bool, int, bool],
    skip: tuple[str, ...],
    called_from: dict[str, str],
) -> tuple[list[Planned], list[str]]:
    """`plan` with what the baseline measured (`run`: on a GPU, the cores, under
    Lightning), the fixes `skip` names marked so."""
    gpu, cores, lightning = run
    planned, advice = plan(findings, gpu, cores, lightning, measured, called_from)
    planned = [
        replace(p, skipped="skipped as asked") if _asked_to_skip(p, skip) else p for p in planned
    ]
    return planned, advice


def _called_from(trace: str, findings: Sequence[Finding]) -> dict[str, str]:
    """Per table row, the user's function it was called from (`source_lines`), read from
    the baseline's pass with the Python stack, and only where a finding is advice (no
    setting fixes it): the pass is loaded, not explained."""
    if all(CANDIDATES.get(f.category) for f in findings):
        return {}
    try:
        profile = load(stack_trace(trace))
    except (InputError, OSError):  # (a baseline without the pass: advice without lines)
        return {}
    lines = source_lines(profile) if isinstance(profile, Profile) else None
    return lines.called_from if lines is not None else {}


def _asked_to_skip(planned: Planned, skip: tuple[str, ...]) -> bool:
    """`skip` names the fix, a fix it is a form of ("background loader workers, fewer
    training threads" of the workers), or its finding category."""
    name = planned.candidate.name
    return planned.category in skip or any(name == n or name.startswith(n + ",") for n in skip)


def _profiled_step(breakdown: Breakdown | None) -> float | None:
    """The profiled steps' mean, in seconds (None: the trace has no step)."""
    if breakdown is None or not breakdown.steps:
        return None
    return breakdown.average().wall_us / 1e6


def _helped(outcomes: list[Outcome], name: str) -> bool:
    """Whether the fix `name` was measured and helped."""
    return bool(name) and any(o.name == name and o.helped for o in outcomes)


def _trial(
    target: str, item: Planned, steps: Steps, baseline: TrialResult, timeout_s: float
) -> Outcome:
    candidate = item.candidate
    common: dict[str, object] = dict(
        name=candidate.name,
        category=item.category,
        settings=candidate.settings,
        predicted_pct=item.predicted_pct,
        basis=item.basis,
        changes_numerics=candidate.changes_numerics,
        note=candidate.note,
    )
    if item.skipped:
        return Outcome(**common, skipped=item.skipped)  # type: ignore[arg-type]
    result = run_isolated(target, candidate.settings, steps, timeout_s)
    epoch = baseline.steps_per_epoch
    if candidate.reorders_after_first_epoch and epoch and steps.warmup + steps.measured > epoch:
        result = replace(result, loss=None)  # (its last batches are other samples)
    base_step = step_of(baseline)
    assert base_step is not None  # (the session refuses a baseline without one)
    return _measured(common, (baseline, base_step), result)


def _measured(
    common: dict[str, object], judged: tuple[TrialResult, Step], result: TrialResult
) -> Outcome:
    """The trial against `judged`: the baseline's run (its loss) and the step to compare
    with."""
    if result.failed:
        return Outcome(**common, failed=result.failed)  # type: ignore[arg-type]
    baseline, base_step = judged
    step = step_of(result)
    if step is None:
        return Outcome(**common, failed="it timed no step")  # type: ignore[arg-type]
    change, early, same = numerics(baseline, result)
    if result.ended_with:
        ended = ENDED_WITH.format(error=result.ended_with)
        common = {**common, "note": "; ".join(n for n in (str(common["note"]), ended) if n)}
    return Outcome(
        **common,  # type: ignore[arg-type]
        step=step,
        comparison=compare(base_step, step),
        loss=result.loss,
        loss_change=change,
        early_loss_change=early,
        numerics_ok=same,
    )


def _combined(
    target: str,
    outcomes: list[Outcome],
    steps: Steps,
    judged: tuple[TrialResult, Step],
    one_trial: float,
    budget_s: float | None,
    start: float,
    say: Callable[[str], None],
) -> Outcome | None:
    """The fixes that helped, one per finding category (the best measured), together."""
    best: dict[str, Outcome] = {}
    for outcome in outcomes:
        if outcome.helped and outcome.comparison is not None:
            held = best.get(outcome.category)
            if held is None or (
                held.comparison is not None
                and outcome.comparison.saving_pct > held.comparison.saving_pct
            ):
                best[outcome.category] = outcome
    if not best:
        return None
    chosen = list(best.values())
    if len(chosen) == 1:
        return chosen[0]
    settings: tuple[Setting, ...] = tuple(s for o in chosen for s in o.settings)
    common: dict[str, object] = dict(
        name="combined: " + " + ".join(o.name for o in chosen), category="", settings=settings
    )
    if not _fits(one_trial, budget_s, start):
        return Outcome(**common, skipped="budget")  # type: ignore[arg-type]
    say("trial: the fixes combined")
    result = run_isolated(target, settings, steps, _timeout(one_trial, budget_s, start))
    return _measured(common, judged, result)


def _again(
    target: str,
    steps: Steps,
    one_trial: float,
    budget_s: float | None,
    start: float,
    say: Callable[[str], None],
) -> list[TrialResult]:
    """The baseline run again, where it fits the budget and times its steps ([]: not)."""
    if not _fits(one_trial, budget_s, start):
        return []
    say("baseline again: where the machine stands now")
    again = run_isolated(target, (), steps, _timeout(one_trial, budget_s, start))
    return [again] if not again.failed and step_of(again) is not None else []


def _reference(runs: list[TrialResult]) -> tuple[Step, float | None]:
    """The step to judge against, and the drift: the baseline's `runs` pooled, and how far
    the last run's mean moved from the first's, in % (None: one run). Each trial runs
    between two baseline runs and is judged against both pooled: a machine that sped up or
    slowed down meanwhile moves the reference half-way, and the pooled blocks' spread holds
    the drift. Two runs of one loop in two processes differ by more than one run's steps
    do (issue 38: 15% sd between recordings), and the machine moves over minutes (issue 40:
    a baseline 32% apart from itself over one tune of a Lightning loop)."""
    first, last = step_of(runs[0]), step_of(runs[-1])
    assert first is not None and last is not None  # (runs without steps are not kept)
    if len(runs) == 1:
        return first, None
    pooled = step_of(replace(runs[0], seconds=tuple(t for r in runs for t in r.seconds)))
    assert pooled is not None
    return pooled, 100.0 * abs(last.mean_s - first.mean_s) / first.mean_s


def _against(outcome: Outcome, reference: Step, drift: float | None) -> Outcome:
    """The trial judged against `reference`; a change within the machine's drift is not
    one the runs resolve."""
    if outcome.step is None or outcome.comparison is None:
        return outcome
    c = compare(reference, outcome.step)
    if drift is not None and abs(c.saving_pct) <= drift:
        c = replace(c, beyond_noise=False, slower=False)
    return replace(outcome, comparison=c)


class Progress:
    """Counts the runs for a caller's progress callback: (what runs now, its number, of)."""

    def __init__(self, callback: Callable[[str, int, int], None] | None) -> None:
        self.callback = callback
        self.done = 0
        self.total = 1

    def say(self, line: str) -> None:
        if self.callback is not None:
            self.callback(line, self.done, max(self.total, self.done + 1))
        self.done += 1


def _timeout(one_trial: float, budget_s: float | None, start: float) -> float:
    """A trial's limit: ten baselines and a minute (a fix that compiles starts slowly), and
    never past the budget."""
    limit = one_trial * TRIAL_TIMEOUT_FACTOR + 60.0
    if budget_s is None:
        return limit
    return max(1.0, min(limit, budget_s - (time.perf_counter() - start)))


def _fits(one_trial: float, budget_s: float | None, start: float) -> bool:
    """Whether one more trial of the baseline's length fits in what is left of the budget."""
    return budget_s is None or budget_s - (time.perf_counter() - start) >= one_trial
