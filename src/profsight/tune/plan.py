"""The candidate fixes for a baseline's findings: each from its category's rule
(`knowledge.tuning.CANDIDATES`), in the findings' rank order, each once."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

import msgspec

from profsight.knowledge.tuning import CANDIDATES, TRAINER, WORKERS, Candidate
from profsight.model.findings import Finding


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


def plan(
    findings: Sequence[Finding], gpu: bool, cores: int, lightning: bool = False
) -> tuple[list[Planned], list[str]]:
    """(the candidates to try, the advice for findings no setting fixes). A `Trainer`
    setting is tried on a Lightning setup only."""
    planned: list[Planned] = []
    advice: list[str] = []
    seen: set[str] = set()
    for finding in findings:
        candidates = CANDIDATES.get(finding.category, ())
        if not candidates:
            advice.append(f"{finding.title}: {finding.recommendation}")
            continue
        for candidate in candidates:
            if candidate.name in seen:
                continue
            seen.add(candidate.name)
            skipped = "needs a GPU" if candidate.needs_gpu and not gpu else ""
            if not lightning and any(s.target == TRAINER for s in candidate.settings):
                skipped = "needs a Lightning Trainer"
            resolved = _resolved(candidate, cores)
            predicted, basis = _predicted(resolved, finding, cores)
            planned.append(Planned(resolved, finding.category, predicted, basis, skipped))
    return planned, advice


def _predicted(candidate: Candidate, finding: Finding, cores: int) -> tuple[float | None, str]:
    """The finding's saving, as the fix can reach it. Loader workers pipeline the loading
    behind the step: with N of them a batch is ready every load/N, so the step becomes the
    longer of the rest of the step and load/N (the replay's saving is the wait gone whole)."""
    workers = any(s.key == "num_workers" for s in candidate.settings)
    if finding.gain_pct is None or not workers:
        return finding.gain_pct, finding.basis
    load = finding.gain_pct / 100.0
    step = max(1.0 - load, load / _workers(cores))
    return 100.0 * (1.0 - step), f"{finding.basis}, loading / {_workers(cores)} workers"


def _workers(cores: int) -> int:
    return max(1, min(4, cores))


def _resolved(candidate: Candidate, cores: int) -> Candidate:
    """The candidate with `WORKERS` replaced by the loader workers the cores allow."""
    workers = _workers(cores)
    settings = tuple(
        dataclasses.replace(s, value=workers) if s.value == WORKERS else s
        for s in candidate.settings
    )
    return dataclasses.replace(candidate, settings=settings)
