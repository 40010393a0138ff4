"""`Finding`: one thing worth changing, with the numbers that show it and what to do.

Analyses produce findings as plain data; renderers format them. Findings are ranked by
what fixing them would save (a trace's what-if replay), else the share of step time at stake.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any, Final

from profsight.knowledge.advice import HIGH_SEVERITY_PCT, MEDIUM_SEVERITY_PCT, MINOR_PCT


class Severity(enum.IntEnum):
    INFO = 0
    """Worth knowing; nothing to fix."""
    LOW = 1
    MEDIUM = 2
    HIGH = 3


#: Stable category ids (DESIGN.md).
CATEGORIES: Final = (
    "data_loading",
    "compute_conv",
    "compute_matmul",
    "compute_other",
    "module_overhead",
    "launch_overhead",
    "per_step_overhead",
    "host_lead_in",
    "callbacks_logging",
    "optimizer",
    "metrics",
    "validation",
    "memory",
    "host_device_sync",
    "memcpy",
    "low_precision",
    "model_complexity",
    "communication",
    "straggler",
    "gpu_idle",
    "gpu_held",
    "profiler_setup",
)


#: How a sentence names a category.
CATEGORY_LABELS: Final[dict[str, str]] = {c: c.replace("_", " ") for c in CATEGORIES} | {
    "callbacks_logging": "callbacks and logging",
    "compute_conv": "convolutions",
    "compute_matmul": "matrix multiplies",
    "compute_other": "elementwise compute",
    "host_device_sync": "host-device syncs",
    "memcpy": "copies",
    "gpu_idle": "GPU idle time",
    "gpu_held": "launched work the GPU held back",
    "profiler_setup": "the profiler's setup",
}


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


@dataclass(frozen=True)
class Evidence:
    """One number behind a finding, and the rows or nodes it comes from."""

    label: str
    value: str
    rows: tuple[str, ...] = ()


@dataclass(frozen=True)
class Finding:
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
    recorded): it ranks before everything."""

    def __post_init__(self) -> None:
        # figures are plain floats whatever computed them (a NumPy scalar is no JSON number)
        object.__setattr__(self, "at_stake_pct", float(self.at_stake_pct))
        if self.gain_pct is not None:
            object.__setattr__(self, "gain_pct", float(self.gain_pct))

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


def ranked(findings: list[Finding]) -> list[Finding]:
    """Most important first, by one rule:

    1. a finding that says the profile cannot be read as it is (`Finding.blocks`);
    2. things to change whose fix saves at least `MINOR_PCT`, by that saving: replayed or
       estimated figures, then upper bounds (a bound says at most, so a measured saving
       goes first);
    3. the informational findings (where the compute goes);
    4. things to change that save less;
    5. things to change whose saving was not estimated, by the share they concern.
    """

    def tier(f: Finding) -> int:
        if f.blocks:
            return 0
        if f.severity is Severity.INFO:
            return 3
        if f.gain_pct is None:
            return 5
        if f.gain_pct < MINOR_PCT:
            return 4
        return 2 if f.basis == UPPER_BOUND else 1

    return sorted(findings, key=lambda f: (tier(f), -saving(f), -f.at_stake_pct, -int(f.severity)))
