"""A trial's step against the baseline's: the saving, its noise band, and whether the steps
resolve it at all.

The step time is the median of the measured steps; the noise of a run is half its
interquartile range, relative to its median. A saving counts ("beyond the noise") only where
the two runs' interquartile ranges do not overlap: the trial's slower quarter is faster than
the baseline's faster quarter. A fix that changes the batch is compared per sample.
"""

from __future__ import annotations

import math
import statistics

import msgspec

from profsight.tune.trial import TrialResult


class Step(msgspec.Struct, frozen=True):
    median_s: float
    """The median measured step, in seconds (per sample: divide by `batch_size`)."""
    low_s: float
    """The 25th percentile."""
    high_s: float
    """The 75th percentile."""
    batch_size: int | None = None

    @property
    def noise_pct(self) -> float:
        """Half the interquartile range, in % of the median."""
        return 50.0 * (self.high_s - self.low_s) / self.median_s if self.median_s else 0.0

    def per_sample(self) -> Step:
        size = self.batch_size or 1
        return Step(self.median_s / size, self.low_s / size, self.high_s / size, 1)


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
    if not result.seconds:
        return None
    if len(result.seconds) < 2:
        only = result.seconds[0]
        return Step(only, only, only, result.batch_size)
    q1, _, q3 = statistics.quantiles(result.seconds, n=4, method="inclusive")
    return Step(statistics.median(result.seconds), q1, q3, result.batch_size)


def compare(base: Step, trial: Step) -> Comparison:
    if base.batch_size != trial.batch_size:
        base, trial = base.per_sample(), trial.per_sample()
    saving = 100.0 * (1.0 - trial.median_s / base.median_s)
    band = math.hypot(base.noise_pct, trial.noise_pct)
    return Comparison(saving, band, trial.high_s < base.low_s, trial.low_s > base.high_s)


def loss_change(base: TrialResult, trial: TrialResult) -> float | None:
    """The trial's final loss against the baseline's, relative; None where either has none
    or the batches differ (a different batch trains on different samples)."""
    if base.loss is None or trial.loss is None or base.batch_size != trial.batch_size:
        return None
    if not (math.isfinite(base.loss) and math.isfinite(trial.loss)):
        return math.inf if base.loss != trial.loss else 0.0
    return abs(trial.loss - base.loss) / max(abs(base.loss), 1e-12)
