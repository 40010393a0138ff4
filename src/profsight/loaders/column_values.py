"""Column helpers of the trace decoder (`loaders.kineto_columns`): picking and converting event
fields into NumPy columns, stream and event ids, plausible timestamps.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from profsight.knowledge.trace_schema import (
    DEVICE_ROW_KINDS,
    LAUNCH_KINDS,
    EventKind,
)
from profsight.malloc_trim import release_free_memory
from profsight.stats import median

T = TypeVar("T")

LINKED_LUT = np.zeros(len(EventKind), bool)
for _kind in (*LAUNCH_KINDS, *DEVICE_ROW_KINDS, EventKind.SYNC):
    LINKED_LUT[int(_kind)] = True


#: Kinds whose ranges can be left open when the profiler stops (``"finished": false``).
UNFINISHABLE_LUT = np.zeros(len(EventKind), bool)
for _kind in (EventKind.CPU_OP, EventKind.ANNOTATION, EventKind.PYTHON):
    UNFINISHABLE_LUT[int(_kind)] = True


def pick(items: list[T], where: np.ndarray[Any, Any]) -> list[T]:
    """The items at `where` (a C-level pass, no Python frame per item)."""
    return list(map(items.__getitem__, where.tolist()))


def values(args: list[Any], where: np.ndarray[Any, Any], get: Any) -> np.ndarray[Any, Any]:
    """One args field (an int) of the events at `where`."""
    items = pick(args, where)
    try:
        return int64(list(map(get, items)))
    except (TypeError, ValueError):  # ROCm runtime calls write "stream": "0x0"
        return int64(list(map(_StreamIds().__getitem__, map(get, items))))


#: Times this far (in µs, 31 years) from the chunk's median timestamp, and durations this
#: long, are corrupt: such events are skipped, so that every start and end, in nanoseconds
#: from the earliest event, fits in int64 (epoch-based µs timestamps are ~1.8e15).
_MAX_SPAN_US = 1e15


def center(ts: np.ndarray[Any, Any]) -> float:
    finite = ts[np.isfinite(ts)]
    return float(median(finite)) if len(finite) else 0.0


def plausible(values: np.ndarray[Any, Any], center: float) -> np.ndarray[Any, Any]:
    """Within ±`_MAX_SPAN_US` of `center` (NaN, a missing value, is not)."""
    plausible: np.ndarray[Any, Any] = np.abs(values - center) <= _MAX_SPAN_US
    return plausible


def int64(values: list[int]) -> np.ndarray[Any, Any]:
    """An int64 column; a value beyond int64 (a corrupt id: uint64 up to 2**64 decodes as int)
    becomes -1, "none", rather than an overflow."""
    try:
        return np.fromiter(values, np.int64, len(values))
    except OverflowError:
        return np.array([v if -(2**63) <= v < 2**63 else -1 for v in values], np.int64)


def subset(
    args: list[Any], where: np.ndarray[Any, Any], get: Any, n: int, default: int
) -> np.ndarray[Any, Any]:
    """Column of one args field, read only at `where` (`default` elsewhere)."""
    out = np.full(n, default, np.int64)
    if len(where):
        out[where] = values(args, where, get)
    return out


def ids(values: list[int | str]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Flow ids as int64, and which were numbers (an int, or a string of one)."""
    try:
        return int64(values), np.ones(len(values), bool)  # type: ignore[arg-type]
    except (ValueError, TypeError):  # a string that is no decimal number: one by one
        parsed = [_as_int(v) for v in values]
        numeric = np.array([v is not None for v in parsed], bool)
        return int64([v if v is not None else -1 for v in parsed]), numeric


class _StreamIds(dict[int | str, int]):
    """``ids[value]``: an int field that some events write as a string, as an int (each
    distinct value worked out once)."""

    def __missing__(self, key: int | str) -> int:
        value = self[key] = _stream(key)
        return value


def _stream(value: int | str) -> int:
    if isinstance(value, int):
        return value
    return _as_int(value) or 0


def _as_int(value: int | str) -> int | None:
    if isinstance(value, int):
        return value
    try:
        return int(value, 0)
    except ValueError:
        return None


def norm_id(value: int | str) -> int | str:
    """pid/tid as int where the trace wrote a number as a string (torch 1.8: ``"tid": "25738"``)."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.lstrip("-").isdigit():
            return int(stripped)
    return value


def concat(parts: list[np.ndarray[Any, Any]] | None, dtype: Any) -> np.ndarray[Any, Any]:
    """The parts joined; they are freed and their pages returned to the system at once, so
    that joining every column holds one column twice at most (the parts of a chunk are
    small and live in the heap, where the freed ones stay resident until trimmed)."""
    if not parts:
        return np.zeros(0, dtype)
    joined = np.concatenate(parts).astype(dtype, copy=False)
    parts.clear()
    release_free_memory()
    return joined


#: An id column's narrowest type: ids are counters, so int8/int16 would rarely hold them.
ID_TYPES = (np.int32,)


def blocks(addr: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Each ``[memory]`` record's block (its ``Addr``) as a small id, -1 for none: a free
    meets its allocation by it."""
    if not len(addr) or not (addr >= 0).any():
        return uniform(np.full(len(addr), -1, np.int32))
    out = np.full(len(addr), -1, np.int64)
    known = addr >= 0
    out[known] = np.unique(addr[known], return_inverse=True)[1].reshape(-1)
    return uniform(narrow(out, (np.int16, np.int32)))


def with_frames(
    kind: np.ndarray[Any, Any], stack: np.ndarray[Any, Any], parts: Any, *types: Any
) -> np.ndarray[Any, Any]:
    """A column only a trace with Python frames or call stacks (``with_stack``) needs: the
    autograd link from the backward to the frames of the forward (`model.backward_link`);
    empty in any other trace (a column less of memory for its events)."""
    if not (kind == EventKind.PYTHON).any() and not (stack >= 0).any():
        return np.zeros(0, np.int32)
    return uniform(narrow(concat(parts, np.int64), (*types, np.int64)))


def uniform(column: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """`column`, or its one value broadcast when every event has the same (a field no event
    carries: device fields in a CPU trace, memory fields without ``profile_memory``). Such a
    column takes no memory per event; like every column, it is read-only."""
    if len(column) < 2 or not (column == column[0]).all():
        return column
    return np.broadcast_to(column[:1].copy(), column.shape)


#: String ids of the columns only some ops fill (``Concrete Inputs``, ``Input type``,
#: ``Call stack``): int16 while the trace has fewer than 32,768 distinct strings.
STRING_IDS = (np.int16, np.int32)


def narrow(column: np.ndarray[Any, Any], types: tuple[Any, ...] = (np.int8, np.int16)) -> Any:
    """A column of indices or ids in the first of `types` that holds every value, else as it
    is: tracks and categories (a few hundred values) in int8/int16; ids (only ever compared,
    never added) in int32. A 10 GB trace saves 26 MB per byte per event."""
    if not len(column):
        return column
    low, high = int(column.min()), int(column.max())
    for dtype in types:
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            return column.astype(dtype)
    return column


def nanoseconds(us: np.ndarray[Any, Any], origin: float) -> np.ndarray[Any, Any]:
    """Microseconds after `origin` as integer nanoseconds, computed in place in `us`."""
    np.subtract(us, origin, out=us)
    np.multiply(us, 1000.0, out=us)
    np.rint(us, out=us)
    return us.astype(np.int64)
