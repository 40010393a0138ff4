"""Order statistics numpy computes through `numpy.ma` (~7 ms of imports at first use)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def median(values: Any) -> float:
    """`numpy.median` of a 1-d array or sequence, to the bit: the middle value, or the mean of
    the two middle ones (each read as a float first, as numpy's mean does), NaN where any value
    is NaN or there is none. numpy's own checks NaNs with `numpy.ma`, whose import this
    spares every run."""
    a = np.asarray(values).ravel()
    n = a.size
    if n == 0:
        return math.nan
    if a.dtype.kind in "fc" and bool(np.isnan(a).any()):
        return math.nan
    lo, hi = (n - 1) // 2, n // 2
    part = np.partition(a, (lo, hi))
    low, high = float(part[lo]), float(part[hi])
    return low if lo == hi else (low + high) / 2


__all__ = ["median"]
