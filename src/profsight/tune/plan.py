"""The candidate fixes for a baseline's findings: each from its category's rule
(`knowledge.tuning.CANDIDATES`), in the findings' rank order, each once."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

import msgspec

from profsight.knowledge.tuning import CANDIDATES, WORKERS, Candidate
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


def plan(findings: Sequence[Finding], gpu: bool, cores: int) -> tuple[list[Planned], list[str]]:
    """(the candidates to try, the advice for findings no setting fixes)."""
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
            planned.append(
                Planned(
                    _resolved(candidate, cores),
                    finding.category,
                    finding.gain_pct,
                    finding.basis,
                    skipped,
                )
            )
    return planned, advice


def _resolved(candidate: Candidate, cores: int) -> Candidate:
    """The candidate with `WORKERS` replaced by the loader workers the cores allow."""
    workers = max(1, min(4, cores))
    settings = tuple(
        dataclasses.replace(s, value=workers) if s.value == WORKERS else s
        for s in candidate.settings
    )
    return dataclasses.replace(candidate, settings=settings)
