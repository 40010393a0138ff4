"""``tune``: baseline, plan, trials, combination, costs."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from msgspec.structs import replace

from profsight.api import explain_profile
from profsight.errors import UsageError
from profsight.knowledge.tuning import CANDIDATES, LOSS_TOLERANCE, Setting
from profsight.tune.costs import cost_of, diff_lines
from profsight.tune.loop import LightningTraining, build
from profsight.tune.measure import compare, loss_change, step_of
from profsight.tune.plan import Planned, plan, usable_cores
from profsight.tune.result import Outcome
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
    folder = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="profsight-tune-"))
    trace = str(folder / "baseline.pt.trace.json")
    say("baseline: timing and profiling")
    baseline = run_isolated(target, (), steps, budget_s or BASELINE_TIMEOUT_S, trace)
    if baseline.failed and budget_s is not None and baseline.failed.startswith("it ran past"):
        raise UsageError(f"{target}: a budget of {budget_s:g} s is too small for one trial")
    if baseline.failed:
        raise UsageError(f"{target}: the baseline run failed: {baseline.failed}")
    device = baseline.device
    base_step = step_of(baseline)
    if base_step is None:
        raise UsageError(f"{target}: the baseline timed no step (a fast_dev_run, no batch?)")
    one_trial = time.perf_counter() - start
    report = explain_profile(trace)
    planned, advice = plan(report.findings, device.startswith("cuda"), usable_cores(), lightning)
    planned = [
        Planned(p.candidate, p.category, p.predicted_pct, p.basis, "skipped as asked")
        if p.candidate.name in skip or p.category in skip
        else p
        for p in planned
    ]
    counted.total = 3 + sum(not p.skipped for p in planned)  # + baseline, again, combined
    outcomes: list[Outcome] = []
    for i, item in enumerate(planned, 1):
        if not item.skipped and not _fits(one_trial, budget_s, start):
            item = Planned(item.candidate, item.category, item.predicted_pct, item.basis, "budget")
        if not item.skipped:
            say(f"trial {i}/{len(planned)}: {item.candidate.name}")
        outcomes.append(_trial(target, item, steps, baseline, _timeout(one_trial, budget_s, start)))
    drift = _drift(target, steps, baseline, one_trial, budget_s, start, say)
    if drift is not None:
        outcomes = [_with_drift(o, drift) for o in outcomes]
    combined = _combined(target, outcomes, steps, baseline, one_trial, budget_s, start, say)
    after = combined.step if combined is not None and combined.helped else None
    return Tuned(
        target=target,
        device=device,
        steps=steps,
        baseline=base_step,
        baseline_loss=baseline.loss,
        findings=tuple(f"{f.category}: {f.title}" for f in report.findings[:FINDINGS_LISTED]),
        outcomes=tuple(outcomes),
        combined=combined,
        advice=tuple(advice),
        diff=diff_lines(combined.settings if after is not None and combined else ()),
        cost_before=cost_of(base_step, baseline.steps_per_epoch, price),
        cost_after=cost_of(after, baseline.steps_per_epoch, price) if after else None,
        price=price,
        drift_pct=drift,
        seconds=time.perf_counter() - start,
        budget_s=budget_s,
        trace=trace,
    )


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
    return _measured(common, baseline, result)


def _measured(common: dict[str, object], baseline: TrialResult, result: TrialResult) -> Outcome:
    if result.failed:
        return Outcome(**common, failed=result.failed)  # type: ignore[arg-type]
    base_step, step = step_of(baseline), step_of(result)
    if base_step is None or step is None:
        return Outcome(**common, failed="it timed no step")  # type: ignore[arg-type]
    change = loss_change(baseline, result)
    return Outcome(
        **common,  # type: ignore[arg-type]
        step=step,
        comparison=compare(base_step, step),
        loss=result.loss,
        loss_change=change,
        numerics_ok=None if change is None else change <= LOSS_TOLERANCE,
    )


def _combined(
    target: str,
    outcomes: list[Outcome],
    steps: Steps,
    baseline: TrialResult,
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
    return _measured(common, baseline, result)


def _drift(
    target: str,
    steps: Steps,
    baseline: TrialResult,
    one_trial: float,
    budget_s: float | None,
    start: float,
    say: Callable[[str], None],
) -> float | None:
    """The baseline run again after the trials: how far the machine's speed moved meanwhile,
    in % of the first baseline's step (None: no time left to measure it)."""
    if not _fits(one_trial, budget_s, start):
        return None
    say("baseline again: how far the machine drifted")
    again = run_isolated(target, (), steps, _timeout(one_trial, budget_s, start))
    first, second = step_of(baseline), step_of(again)
    if first is None or second is None:
        return None
    return 100.0 * abs(second.mean_s - first.mean_s) / first.mean_s


def _with_drift(outcome: Outcome, drift: float) -> Outcome:
    """A saving within the machine's drift is not one the runs resolve."""
    c = outcome.comparison
    if c is None or not c.beyond_noise or abs(c.saving_pct) > drift:
        return outcome
    return replace(outcome, comparison=replace(c, beyond_noise=False, slower=False))


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
