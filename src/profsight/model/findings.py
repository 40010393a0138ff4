"""`Finding`: one thing worth changing, with the numbers that show it and what to do.

Analyses produce findings as plain data; renderers format them. Findings are ranked by
what fixing them would save (a trace's what-if replay), else the share of step time at stake.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from typing import Any, Final

import msgspec
from msgspec.structs import force_setattr, replace

from profsight.knowledge.advice import HIGH_SEVERITY_PCT, MEDIUM_SEVERITY_PCT, MINOR_PCT
from profsight.knowledge.catalogue import RULES_BY_CATEGORY
from profsight.knowledge.precedence import (
    HOST_CAUSES,
    PROFILE_CATEGORY,
    SAME_TIME_FRACTION,
    VERDICT_CATEGORY,
    precedence,
)


class Severity(enum.IntEnum):
    INFO = 0
    """Worth knowing; nothing to fix."""
    LOW = 1
    MEDIUM = 2
    HIGH = 3


#: Stable category ids (DESIGN.md): one per rule of the finding catalogue, which declares
#: each once (`knowledge.catalogue.RULES`), with how a sentence names it.
CATEGORIES: Final = tuple(RULES_BY_CATEGORY)
CATEGORY_LABELS: Final[dict[str, str]] = {c: r.label for c, r in RULES_BY_CATEGORY.items()}


#: How a finding's "could save" was priced (`Finding.basis`). One currency throughout: the
#: steady-state step time (`analyses.clocks`), or the time per sample for a throughput fix.
REPLAYED = "replayed"
"""Its fix replayed on the trace's step graph: the step time it gives."""
PER_SAMPLE = "per_sample"
"""A throughput fix (a larger batch) replayed: the time per sample it gives, which is the
step time at the same samples per second."""
UPPER_BOUND = "upper_bound"
"""Its fix replayed at a best case (kernels at the device's peak ratio, collectives wholly
hidden): at most this much."""
ESTIMATED = "estimated"
"""No timeline to replay (a printed table, a job's summaries): the share the fix removes."""
NOT_ESTIMATED = "not_estimated"
"""Nothing prices the fix: the finding says so, and ranks after every priced one."""


class Evidence(msgspec.Struct, frozen=True):
    """One number behind a finding, and the rows or nodes it comes from."""

    label: str
    value: str
    rows: tuple[str, ...] = ()


class Finding(msgspec.Struct, frozen=True):
    category: str
    severity: Severity
    title: str
    evidence: tuple[Evidence, ...]
    explanation: str
    recommendation: str
    at_stake_pct: float
    """Share of the step time this finding concerns."""
    gain_pct: float | None = None
    """What the recommendation saves, in % of the steady-state step (of the time per sample
    for `PER_SAMPLE`), as its `basis` prices it; None: not estimated."""
    basis: str = ""
    """`REPLAYED`, `PER_SAMPLE`, `UPPER_BOUND` or `ESTIMATED` (`priced` says
    `NOT_ESTIMATED` when there is no figure)."""
    trigger: str = ""
    """The rule that fired, with its threshold and where the threshold comes from."""
    confidence: str = ""
    """What the input could not show about this finding ("" for a trace's timeline): from a
    printed table, e.g. whether the host's wait overlapped device work."""
    blocks: bool = False
    """The profile cannot be read right until this is fixed (its device work was not
    recorded, start-up fills its window): it ranks before everything."""
    rank_pct: float | None = None
    """What it ranks by when it names the cause of a later finding's time (`explains`):
    that finding's saving; None: its own saving."""
    gain_spread_pct: float | None = None
    """The replay's resolution of `gain_pct` (% of the same step): what the profiled steps
    lengthened by under the edit, per step (`replay.engine.saving_spread`); a saving within
    it is one the steps do not resolve. None: not replayed."""

    def __post_init__(self) -> None:
        # figures are plain floats whatever computed them (a NumPy scalar is no JSON number)
        force_setattr(self, "at_stake_pct", float(self.at_stake_pct))
        if self.gain_pct is not None:
            force_setattr(self, "gain_pct", float(self.gain_pct))
        if self.gain_spread_pct is not None:
            force_setattr(self, "gain_spread_pct", float(self.gain_spread_pct))

    @property
    def priced(self) -> str:
        """How its saving was priced (`NOT_ESTIMATED` when it has no figure)."""
        if self.gain_pct is None:
            return NOT_ESTIMATED
        return self.basis or ESTIMATED

    @property
    def id(self) -> str:
        """``category:words-of-the-title`` without its numbers: stable across runs."""
        words = re.findall(r"[a-z]+", self.title.lower())
        return f"{self.category}:{'-'.join(words[:6])}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "severity": self.severity.name.lower(),
            "title": self.title,
            "evidence": [
                {"label": e.label, "value": e.value, "rows": list(e.rows)} for e in self.evidence
            ],
            "explanation": self.explanation,
            "recommendation": self.recommendation,
            "at_stake_pct": round(self.at_stake_pct, 2),
            "gain_pct": None if self.gain_pct is None else round(self.gain_pct, 2),
            "gain_spread_pct": None
            if self.gain_spread_pct is None
            else round(self.gain_spread_pct, 2),
            "saving_basis": self.priced,
            "trigger": self.trigger,
            "confidence": self.confidence,
        }


def severity_for(
    share_pct: float, high: float = HIGH_SEVERITY_PCT, medium: float = MEDIUM_SEVERITY_PCT
) -> Severity:
    """Severity from the share of step time at stake."""
    if share_pct >= high:
        return Severity.HIGH
    if share_pct >= medium:
        return Severity.MEDIUM
    return Severity.LOW


def saving(f: Finding) -> float:
    """What fixing `f` would save (% of the step), 0 when not estimated."""
    return f.gain_pct if f.gain_pct is not None else 0.0


def rank_key(f: Finding) -> float:
    """What `f` ranks by: the saving of the time it explains (`rank_pct`), else its own."""
    return f.rank_pct if f.rank_pct is not None else saving(f)


def ranked(findings: list[Finding]) -> list[Finding]:
    """Most important first, by one rule (`knowledge.precedence` says why):

    1. a finding that says the profile cannot be read as it is (`Finding.blocks`);
    2. things to change whose fix saves at least `MINOR_PCT`, by that saving (or by the
       saving of the time they explain, `explains`): replayed or estimated figures, then
       upper bounds (a bound says at most, so a measured saving goes first); at equal
       figures the more specific host-side cause first;
    3. the informational findings (where the compute goes);
    4. things to change that save less;
    5. things to change whose saving was not estimated, by the share they concern;
    6. the verdict restated (the model's size for its hardware): a conclusion from the
       causes, never above them;
    7. notes on the profile itself (what it did not record, the profiler's cost).
    """

    def tier(f: Finding) -> int:
        if f.blocks:
            return 0
        if f.category == VERDICT_CATEGORY:
            return 6
        if f.severity is Severity.INFO:
            return 3
        key = f.rank_pct if f.rank_pct is not None else f.gain_pct
        if key is None:
            return 7 if f.category == PROFILE_CATEGORY and not f.at_stake_pct else 5
        if key < MINOR_PCT:
            return 4
        return 2 if f.basis == UPPER_BOUND and f.rank_pct is None else 1

    return sorted(
        findings,
        key=lambda f: (
            tier(f),
            -round(rank_key(f), 6),
            precedence(f.category),
            -f.at_stake_pct,
            -int(f.severity),
        ),
    )


def explains(
    findings: list[Finding], shared: Callable[[Finding, Finding], float | None]
) -> list[Finding]:
    """Causes before symptoms: a host-side finding that names what the device waits on
    ranks by the saving of a less specific one (`knowledge.precedence.HOST_CAUSES`) whose
    time it mostly explains: the saving their fixes share (`shared`, % of the step; None:
    not known) is at least `SAME_TIME_FRACTION` of that one's (or of the time that one
    explains in turn)."""
    priced = [
        f for f in findings if f.gain_pct is not None and f.category in HOST_CAUSES and not f.blocks
    ]
    rank = {id(f): saving(f) for f in priced}
    # the least specific first, so that a cause of a cause ranks by the time both explain
    for b in sorted(priced, key=lambda f: -precedence(f.category)):
        for a in priced:
            if precedence(a.category) >= precedence(b.category) or rank[id(b)] <= rank[id(a)]:
                continue
            if saving(a) < SAME_TIME_FRACTION * rank[id(b)]:
                continue  # what both fixes remove is at most a's saving: too little
            common = shared(a, b)
            # of the time b stands for (its own, or the time it explains in turn)
            if common is not None and common >= SAME_TIME_FRACTION * rank[id(b)]:
                rank[id(a)] = rank[id(b)]
    return [
        replace(f, rank_pct=rank[id(f)]) if rank.get(id(f), saving(f)) > saving(f) else f
        for f in findings
    ]
