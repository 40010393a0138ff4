"""What ``tune`` found: each fix tried, measured against the baseline, the fixes combined,
the change to make and what it saves in device-hours."""

from __future__ import annotations

import msgspec

from profsight.knowledge.tuning import Setting
from profsight.tune.handover import HandOver
from profsight.tune.measure import Comparison, Step
from profsight.tune.trial import Steps

SCHEMA = "profsight/tune/1"


class Outcome(msgspec.Struct, frozen=True):
    name: str
    """The fix (`knowledge.tuning.Candidate.name`), or "combined"."""
    category: str
    """The finding category that asked for it ("" for the combination)."""
    settings: tuple[Setting, ...]
    predicted_pct: float | None = None
    """The replay's saving for the finding, in % of the step; None: not priced."""
    basis: str = ""
    """How the prediction was priced (`Finding.basis`)."""
    step: Step | None = None
    comparison: Comparison | None = None
    loss: float | None = None
    loss_change: float | None = None
    """Final loss against the baseline's, relative (None: not comparable)."""
    early_loss_change: float | None = None
    """The warm-up steps' losses against the baseline's, the largest relative difference."""
    numerics_ok: bool | None = None
    """The final loss within `knowledge.tuning.LOSS_TOLERANCE`, or the warm-up steps'
    losses within `EARLY_LOSS_TOLERANCE` (the same arithmetic, rounded apart over the
    steps); None: not compared."""
    changes_numerics: bool = False
    failed: str = ""
    """Why the trial has no figures; "" when it ran."""
    skipped: str = ""
    """Why it was not tried (the budget, no GPU); "" when it ran."""
    note: str = ""

    @property
    def helped(self) -> bool:
        """Measured beyond the noise, with the numerics unchanged."""
        return (
            self.comparison is not None
            and self.comparison.beyond_noise
            and not self.changes_numerics
            and self.numerics_ok is not False
        )


class Cost(msgspec.Struct, frozen=True):
    hours_per_1000_steps: float
    """Device-hours per 1,000 steps (one device)."""
    hours_per_epoch: float | None = None
    """Device-hours per epoch, where the loader has a length."""
    money_per_1000_steps: float | None = None
    money_per_epoch: float | None = None


class TuneReport(msgspec.Struct, frozen=True):
    target: str
    device: str
    steps: Steps
    """The warm-up steps, and the steps the baseline timed (`Steps.min_s` of them at least)."""
    baseline: Step
    """The baseline's runs pooled (the first, and one after each trial that timed its steps;
    the first alone where no other ran): what the combined fixes are judged against and the
    costs are read from. Each trial is judged against the runs either side of it."""
    baseline_loss: float | None
    findings: tuple[str, ...]
    """The baseline's findings, ranked: "category: title"."""
    outcomes: tuple[Outcome, ...]
    combined: Outcome | None
    """The fixes that helped, measured together (the one alone when only one helped)."""
    advice: tuple[str, ...]
    """Fixes that need the user's code: the finding and its recommendation."""
    diff: tuple[str, ...]
    """The change to make, as lines of a diff of the constructors' arguments."""
    cost_before: Cost
    cost_after: Cost | None
    price: float | None
    """The price of one device-hour, as given (``--price``)."""
    drift_pct: float | None
    """The baseline's step measured again after the trials, against the first, in %: how far
    the machine moved meanwhile (a saving within it is not counted). None: not measured."""
    seconds: float
    """How long tuning took."""
    budget_s: float | None
    trace: str
    """The baseline's profiled trace."""
    handover: HandOver | None = None
    """The loader with background workers, measured after the baseline (None: not
    measured, or too few batches)."""
    profiled_step_s: float | None = None
    """The baseline's profiled steps, their mean: beside `baseline`, what the profiler's own
    cost per op added (the trace's shares lean toward the phases dense in ops by as much)."""
    schema: str = SCHEMA
