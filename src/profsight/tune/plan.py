"""The candidate fixes for a baseline's findings: each from its category's rule
(`knowledge.tuning.CANDIDATES`), in the findings' rank order, each once."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import msgspec

from profsight.knowledge.tuning import (
    ADVICE_FROM,
    CANDIDATES,
    CORES_LEFT,
    CORES_NOT_LIMITING,
    CPU_FALLBACK,
    KEPT_BASIS,
    MAX_SPREAD_PCT,
    MIN_RESOLVED_PCT,
    NOT_ON_GPU_RUN,
    NOT_PRICED,
    OWN_CORES_BASIS,
    PHASE_TIMED_BASIS,
    PREDICTED_SLOWER,
    PREDICTED_WITHIN_NOISE,
    SEEN_BASIS,
    SLOWER_BELOW_PCT,
    THREADS,
    THREADS_NOT_FEWER,
    TRAINER,
    WORKERS,
    WORKERS_BASIS,
    WORKERS_NOT_MEASURED,
    Candidate,
)
from profsight.model.findings import Finding
from profsight.tune.handover import HandOver, pipelined_step
from profsight.units import short_time


class Planned(msgspec.Struct, frozen=True):
    candidate: Candidate
    category: str
    predicted_pct: float | None
    basis: str
    skipped: str = ""
    """Why it will not be tried ("needs a GPU"); "" when it will."""


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover (macOS, Windows)
        return os.cpu_count() or 1


class Measured(msgspec.Struct, frozen=True):
    """What the baseline measured beside its trace."""

    step_s: float
    handover: HandOver | None = None
    cpu_s: float | None = None
    """The process's CPU time per step, all its threads."""
    threads: int | None = None
    """torch's intra-op threads the baseline ran on."""
    profiled_s: float | None = None
    """The profiled steps' mean (the trace's step windows)."""
    noise_pct: float = 0.0
    """The baseline's own spread (`measure.Step.noise_pct`)."""
    timed_phases: dict[str, float] = msgspec.field(default_factory=dict)
    """Phase id -> seconds a step, timed without the profiler (`tune.phase_clock`)."""
    profiled_phases: dict[str, float] = msgspec.field(default_factory=dict)
    """Phase id -> seconds a profiled step, from the trace's breakdown."""

    @property
    def seen(self) -> float:
        """The share of the timed step the profiled one holds, at most 1. Profiling makes
        no step shorter, so a shorter profiled step missed part of the step (validation
        that Lightning's profiler recorded in a window of its own), and a fix saves its
        share of what the profile saw only."""
        if not self.profiled_s or not self.step_s:
            return 1.0
        return min(1.0, self.profiled_s / self.step_s)


def plan(
    findings: Sequence[Finding],
    gpu: bool,
    cores: int,
    lightning: bool = False,
    measured: Measured | None = None,
    called_from: Mapping[str, str] | None = None,
) -> tuple[list[Planned], list[str]]:
    """(the candidates to try, the advice for findings no setting fixes, each with the
    user's function its evidence's rows were called from where `called_from`, per row name,
    knows one). A `Trainer` setting is tried on a Lightning setup only; a fix predicted to
    slow the step is not tried."""
    planned: list[Planned] = []
    advice: list[str] = []
    seen: set[str] = set()
    for finding in findings:
        candidates = CANDIDATES.get(finding.category, ())
        if not candidates:
            advice.append(_advice(finding, called_from or {}))
            continue
        in_step = _in_timed_step(finding, measured)
        for candidate in candidates:
            if candidate.name in seen:
                continue
            seen.add(candidate.name)
            skipped = "needs a GPU" if candidate.needs_gpu and not gpu else ""
            if not lightning and any(s.target == TRAINER for s in candidate.settings):
                skipped = "needs a Lightning Trainer"
            resolved = _resolved(candidate, cores, measured)
            timed = None if gpu else _at_phase_length(candidate, finding, measured)
            predicted, basis, why_not = _predicted(resolved, timed or in_step, cores, gpu, measured)
            skipped = skipped or why_not
            if not skipped and predicted is not None:
                skipped = _not_worth_a_trial(predicted, measured)
            planned.append(Planned(resolved, finding.category, predicted, basis, skipped))
    return planned, advice


def _not_worth_a_trial(predicted: float, measured: Measured | None) -> str:
    """Why a fix predicted to save `predicted` % is not tried, or "": predicted slower, or
    a saving smaller than the baseline's own spread (a trial could not tell it from
    none, and its time is the user's budget)."""
    if predicted < SLOWER_BELOW_PCT:
        return PREDICTED_SLOWER.format(pct=predicted)
    spread = min(measured.noise_pct, MAX_SPREAD_PCT) if measured is not None else 0.0
    noise = max(MIN_RESOLVED_PCT, spread)
    if predicted < noise:
        return PREDICTED_WITHIN_NOISE.format(pct=predicted, noise=noise)
    return ""


def _in_timed_step(finding: Finding, measured: Measured | None) -> Finding:
    """The finding with its saving a share of the timed step (`Measured.seen`)."""
    seen = measured.seen if measured is not None else 1.0
    if finding.gain_pct is None or seen >= 1.0:
        return finding
    basis = SEEN_BASIS.format(basis=finding.basis, seen=100.0 * seen)
    return msgspec.structs.replace(finding, gain_pct=finding.gain_pct * seen, basis=basis)


def _at_phase_length(
    candidate: Candidate, finding: Finding, measured: Measured | None
) -> Finding | None:
    """The finding with its saving the same share of the phase the fix changes
    (`Candidate.saves_in`) as in the profile, at that phase's unprofiled length, as a
    share of the timed step; None where the phase was not timed. The profiler's cost per
    op stretches a phase of many small ops more, or less, than the step (issue 40: an
    MLP's optimizer was 32% of its timed step and 22% of its profiled one)."""
    phase = candidate.saves_in
    if not phase or measured is None or finding.gain_pct is None:
        return None
    timed = measured.timed_phases.get(phase)
    profiled = measured.profiled_phases.get(phase)
    if not timed or not profiled or not measured.profiled_s or not measured.step_s:
        return None
    saved = finding.gain_pct / 100.0 * measured.profiled_s / profiled
    basis = PHASE_TIMED_BASIS.format(
        basis=finding.basis,
        saved=100.0 * saved,
        phase=phase,
        timed=short_time(timed * 1e6),
        profiled=short_time(profiled * 1e6),
    )
    gain = 100.0 * saved * timed / measured.step_s
    return msgspec.structs.replace(finding, gain_pct=gain, basis=basis)


def _advice(finding: Finding, called_from: Mapping[str, str]) -> str:
    """The finding's advice, and the user's function its first evidence row with one was
    called from."""
    line = f"{finding.title}: {finding.recommendation}"
    rows = (row for e in finding.evidence for row in e.rows)
    frame = next((called_from[r] for r in rows if r in called_from), None)
    return ADVICE_FROM.format(advice=line, frame=frame) if frame else line


def _predicted(
    candidate: Candidate, finding: Finding, cores: int, gpu: bool, measured: Measured | None
) -> tuple[float | None, str, str]:
    """(the finding's saving as the fix can reach it, its basis, why the fix is not tried
    or ""). Loader workers pipeline the loading behind the step: the step becomes the rest
    of it plus receiving a batch from a worker, or the workers' pace where that is longer,
    or what the cores supply to both (`handover`, measured beside the baseline; without it,
    loading / N). The replay's saving is the loading gone whole."""
    if candidate.cpu_fallback_for and not gpu:
        return None, CPU_FALLBACK, ""
    if candidate.frees_cores and gpu:
        return None, "", NOT_ON_GPU_RUN
    if finding.category not in candidate.priced_by:
        return None, NOT_PRICED, ""
    workers = any(s.key == "num_workers" for s in candidate.settings)
    if finding.gain_pct is None or not workers:
        if finding.gain_pct is not None and candidate.keeps:
            kept = KEPT_BASIS.format(kept=100.0 * candidate.keeps)
            return finding.gain_pct * (1.0 - candidate.keeps), f"{finding.basis}, {kept}", ""
        return finding.gain_pct, finding.basis, ""
    load = finding.gain_pct / 100.0
    handover = measured.handover if measured is not None else None
    if measured is None or handover is None:
        if candidate.frees_cores:
            return None, "", WORKERS_NOT_MEASURED
        step = max(1.0 - load, load / workers_for(cores))
        basis = f"{finding.basis}, loading / {workers_for(cores)} workers"
        return 100.0 * (1.0 - step), basis, ""
    step_s = measured.step_s
    # on a GPU run the step's CPU time holds its wait for the device (a synchronise spins)
    cpu_s = None if gpu else measured.cpu_s
    on_cores = pipelined_step(step_s, load, handover, cores, cpu_s)
    basis = WORKERS_BASIS.format(
        workers=handover.workers,
        interval=short_time(handover.interval_s * 1e6),
        take=short_time(handover.take_s * 1e6),
    )
    if not candidate.frees_cores:
        return 100.0 * (1.0 - on_cores / step_s), f"{finding.basis}, {basis}", ""
    if not any(s.target == THREADS for s in candidate.settings):
        return None, "", THREADS_NOT_FEWER
    # fewer training threads stop their pool spinning on the workers' cores: the training
    # takes the rest of the step's CPU and no more (one thread)
    rest_s = step_s * max(1.0 - load, 0.0)
    training_cpu = rest_s + (handover.cpu_s or 0.0)
    one_thread = pipelined_step(step_s, load, handover, cores, training_cpu)
    saving = 100.0 * (1.0 - one_thread / step_s)
    limiting = on_cores > one_thread and saving > 0
    return (
        saving,
        f"{finding.basis}, {basis}, {OWN_CORES_BASIS}",
        "" if limiting else CORES_NOT_LIMITING,
    )


def workers_for(cores: int) -> int:
    """The loader workers the workers' fix sets."""
    return max(1, min(4, cores))


def _resolved(candidate: Candidate, cores: int, measured: Measured | None) -> Candidate:
    """The candidate with `WORKERS` replaced by the loader workers the cores allow, and
    `CORES_LEFT` by the cores they leave (at least one, and fewer than the baseline's
    threads: a thread setting that would not lower them is dropped)."""
    workers = workers_for(cores)
    left = max(1, cores - workers)
    threads = measured.threads if measured is not None else None
    values = {WORKERS: workers, CORES_LEFT: left}
    settings = tuple(
        msgspec.structs.replace(s, value=values[s.value])
        if isinstance(s.value, str) and s.value in values
        else s
        for s in candidate.settings
        if not (s.value == CORES_LEFT and threads is not None and left >= threads)
    )
    return msgspec.structs.replace(candidate, settings=settings)
