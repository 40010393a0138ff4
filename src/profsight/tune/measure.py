"""A trial's step against the baseline's: the saving, its noise band, and whether the steps
resolve it at all.

The step is the mean of the measured steps: what a run of them takes, each step over. A
loader with workers hands out batches in bursts (some steps find one ready, some wait), so
the median step says little and single steps are noisy; the measured steps are cut into
`BLOCKS` blocks of consecutive steps, and a run's spread is the interquartile range of the
blocks' means. A saving counts ("beyond the noise") only where the two runs' ranges do not
overlap: the trial's slower quarter of blocks is faster than the baseline's faster quarter.
A fix that changes the batch is compared per sample.
"""

from __future__ import annotations

import math
import statistics

import msgspec

from profsight.knowledge.tuning import EARLY_LOSS_TOLERANCE, LOSS_TOLERANCE, ROUNDED_APART_MAX
from profsight.tune.trial import TrialResult

#: Blocks of consecutive steps a run's spread is read from.
BLOCKS = 5


class Step(msgspec.Struct, frozen=True):
    mean_s: float
    """The mean measured step, in seconds (per sample: divide by `batch_size`)."""
    low_s: float
    """The 25th percentile of the blocks' mean steps."""
    high_s: float
    """Their 75th percentile."""
    batch_size: int | None = None

    @property
    def noise_pct(self) -> float:
        """Half the blocks' interquartile range, in % of the mean."""
        return 50.0 * (self.high_s - self.low_s) / self.mean_s if self.mean_s else 0.0

    def per_sample(self) -> Step:
        size = self.batch_size or 1
        return Step(self.mean_s / size, self.low_s / size, self.high_s / size, 1)


class Comparison(msgspec.Struct, frozen=True):
    saving_pct: float
    """What the trial saves, in % of the baseline's step (per sample where batches differ)."""
    band_pct: float
    """The saving's noise band: both runs' noise, added in quadrature."""
    beyond_noise: bool
    """The runs' interquartile ranges do not overlap, the trial's below."""
    slower: bool
    """They do not overlap, the trial's above."""


def step_of(result: TrialResult) -> Step | None:
    seconds = result.seconds
    if not seconds:
        return None
    mean = statistics.fmean(seconds)
    size = len(seconds) // BLOCKS
    if size < 1:
        return Step(mean, min(seconds), max(seconds), result.batch_size)
    tail = seconds[len(seconds) - size * BLOCKS :]  # the earliest steps left over
    blocks = [statistics.fmean(tail[i : i + size]) for i in range(0, len(tail), size)]
    q1, _, q3 = statistics.quantiles(blocks, n=4, method="inclusive")
    return Step(mean, q1, q3, result.batch_size)


def compare(base: Step, trial: Step) -> Comparison:
    if base.batch_size != trial.batch_size:
        base, trial = base.per_sample(), trial.per_sample()
    saving = 100.0 * (1.0 - trial.mean_s / base.mean_s)
    band = math.hypot(base.noise_pct, trial.noise_pct)
    # the blocks' ranges and the means agree, or the runs do not resolve it (one stalled
    # step can lengthen a run's mean while most of its blocks are faster)
    faster = trial.high_s < base.low_s and saving > 0
    return Comparison(saving, band, faster, trial.low_s > base.high_s and saving < 0)


def numerics(
    base: TrialResult, trial: TrialResult
) -> tuple[float | None, float | None, bool | None]:
    """(the final loss's relative change, the warm-up losses' largest, whether the trial
    kept the arithmetic): the final loss within `LOSS_TOLERANCE`, or off by more with the
    warm-up losses within `EARLY_LOSS_TOLERANCE` and the final one finite and within
    `ROUNDED_APART_MAX`, which is rounding grown apart over the steps, not new arithmetic.
    None: not compared."""
    change, early = loss_change(base, trial), early_loss_change(base, trial)
    same = None if change is None else change <= LOSS_TOLERANCE
    rounded = change is not None and math.isfinite(change) and change <= ROUNDED_APART_MAX
    if same is False and rounded and early is not None and early <= EARLY_LOSS_TOLERANCE:
        same = True
    return change, early, same


def early_loss_change(base: TrialResult, trial: TrialResult) -> float | None:
    """The largest relative difference of the warm-up steps' losses (None where either has
    fewer than two, or the batches differ)."""
    pairs = list(zip(base.early, trial.early, strict=False))
    if len(pairs) < 2 or base.batch_size != trial.batch_size:
        return None
    if not all(math.isfinite(a) and math.isfinite(b) for a, b in pairs):
        return math.inf
    return max(abs(b - a) / max(abs(a), 1e-12) for a, b in pairs)


def loss_change(base: TrialResult, trial: TrialResult) -> float | None:
    """The trial's final loss against the baseline's, relative; None where either has none
    or the batches differ (a different batch trains on different samples; the session drops
    the loss of a trial whose loader reorders after an epoch it crossed)."""
    if base.loss is None or trial.loss is None or base.batch_size != trial.batch_size:
        return None
    if not (math.isfinite(base.loss) and math.isfinite(trial.loss)):
        return math.inf if base.loss != trial.loss else 0.0
    return abs(trial.loss - base.loss) / max(abs(base.loss), 1e-12)
