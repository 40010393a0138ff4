"""What numpy computes through `numpy.ma` (~7 ms of imports at its first use), without it:
a median, a percentile, and the distinct values of an array (with the set operations built
on them)."""

from __future__ import annotations

import importlib
import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt


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


def percentile(values: Any, q: float) -> float:
    """`numpy.percentile(values, q)` (its linear method) of a 1-d array, to the bit: the
    values at either side of the virtual index ``(n - 1) * q / 100``, interpolated from the
    nearer one as numpy's `_lerp` does; NaN where any value is NaN or there is none."""
    a = np.asarray(values).ravel()
    n = a.size
    if n == 0 or (a.dtype.kind in "fc" and bool(np.isnan(a).any())):
        return math.nan
    virtual = (n - 1) * (q / 100)
    below = math.floor(virtual)
    gamma = virtual - below
    lo, hi = min(max(below, 0), n - 1), min(max(below + 1, 0), n - 1)
    part = np.partition(a, (lo, hi))
    low, high = float(part[lo]), float(part[hi])
    diff = high - low
    return high - diff * (1 - gamma) if gamma >= 0.5 else low + diff * gamma


#: Below this many values, `unique` takes np.unique's sorting path (the one that counts),
#: which skips its masked-array check. Above it, the hash table np.unique itself uses for
#: plain distinct values (numpy >= 2.3), called as np.unique calls it, minus that check: a
#: plain array is never masked, and the check imports `numpy.ma`.
SMALL = 4096

try:
    _unique_hash: Any = importlib.import_module("numpy._core._multiarray_umath")._unique_hash
except (ImportError, AttributeError):  # numpy < 2.3: the sorting path for every size
    _unique_hash = None


def unique(values: npt.ArrayLike) -> npt.NDArray[Any]:
    """`numpy.unique(values)`: the sorted distinct values, the same array either way."""
    a = np.asarray(values)
    if a.size >= SMALL and _unique_hash is not None and type(a) is np.ndarray:
        found = _unique_hash(a.ravel(), equal_nan=True)
        if found is not NotImplemented:  # (a dtype the table does not take: sorted below)
            found.sort()
            out: npt.NDArray[Any] = found
            return out
    return np.unique(a, return_counts=True)[0]


def setdiff(a: npt.ArrayLike, b: npt.ArrayLike) -> npt.NDArray[Any]:
    """`numpy.setdiff1d(a, b)`: the sorted distinct values of `a` not in `b`."""
    left, right = unique(a), unique(b)
    return left[np.isin(left, right, assume_unique=True, invert=True)]


def union(a: npt.ArrayLike, b: npt.ArrayLike) -> npt.NDArray[Any]:
    """`numpy.union1d(a, b)`: the sorted distinct values of both."""
    return unique(np.concatenate((a, b), axis=None))


__all__ = ["SMALL", "median", "percentile", "setdiff", "union", "unique"]
