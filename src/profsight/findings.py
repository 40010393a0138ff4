"""`Finding`: one thing worth changing, with the numbers that show it and what to do.

Analyses produce findings as plain data; renderers format them. Findings are ranked by
what fixing them would save (a trace's what-if replay), else the share of step time at stake.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any, Final


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
    """Estimated share of step time saved by the recommendation, where it can be estimated."""
    trigger: str = ""
    """The rule that fired, with its threshold and where the threshold comes from."""
    confidence: str = ""
    """What the input could not show about this finding ("" for a trace's timeline): from a
    printed table, e.g. whether the host's wait overlapped device work."""
    blocks: bool = False
    """The profile cannot be read right until this is fixed (its device work was not
    recorded): it ranks before everything."""

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
            "trigger": self.trigger,
            "confidence": self.confidence,
        }


def severity_for(share_pct: float, high: float = 30.0, medium: float = 10.0) -> Severity:
    """Severity from the share of step time at stake."""
    if share_pct >= high:
        return Severity.HIGH
    if share_pct >= medium:
        return Severity.MEDIUM
    return Severity.LOW


#: Things to change with less than this share of the step at stake rank after the
#: informational findings (where the compute goes): they are not what bounds the step.
MINOR_PCT = 5.0


def saving(f: Finding) -> float:
    """What fixing `f` would save (% of the step): its replayed gain, else what is at stake."""
    return f.gain_pct if f.gain_pct is not None else f.at_stake_pct


def ranked(findings: list[Finding]) -> list[Finding]:
    """Most important first: things to change by what fixing them would save, then the
    informational ones (where the compute goes), then minor things to change."""

    def tier(f: Finding) -> int:
        if f.blocks:
            return -1
        if f.severity is Severity.INFO:
            return 1
        return 0 if saving(f) >= MINOR_PCT else 2

    return sorted(findings, key=lambda f: (tier(f), -saving(f), -int(f.severity)))
