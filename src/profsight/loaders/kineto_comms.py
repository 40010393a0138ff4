"""Message size, operation and group size of the collectives in a chunk of trace events.

Only events named like a collective (`knowledge.collectives.COMMUNICATION_NAME`) are read;
every other event gets -1 in the three columns.
"""

from __future__ import annotations

import math
from operator import attrgetter
from typing import Any

import numpy as np

from profsight import json_text
from profsight.knowledge.collectives import dtype_bytes
from profsight.loaders.kineto_schema import Args

#: Sizes at or past this are corrupt (and would not fit the int64 column).
_MAX_BYTES = 2**62


def message_bytes(args: Args) -> int:
    """Bytes of the collective's message, -1 when the event does not say: the larger of the
    input and output (an all-gather's output, a reduce-scatter's input)."""
    if args.msg_dtype and max(args.in_msg_nelems, args.out_msg_nelems) >= 0:
        size = dtype_bytes(args.msg_dtype)
        if size is not None:
            total = max(args.in_msg_nelems, args.out_msg_nelems) * size
            return total if total < _MAX_BYTES else -1
    raw_dims = bytes(args.input_dims or args.input_dims_v1)
    raw_types = bytes(args.input_type)
    if not raw_dims or not raw_types:
        return -1
    try:
        dims, types = json_text.loads(raw_dims), json_text.loads(raw_types)
    except ValueError:
        return -1
    if not isinstance(dims, list) or not isinstance(types, list):
        return -1
    largest = 0  # c10d ops list input and output: the message is the larger tensor
    for shape, dtype in zip(dims, types, strict=False):
        size = dtype_bytes(dtype) if isinstance(dtype, str) else None
        if size is None or not isinstance(shape, list) or not shape:
            continue
        if all(isinstance(d, int) and d >= 0 for d in shape):
            largest = max(largest, math.prod(shape) * size)
    return largest if 0 < largest < _MAX_BYTES else -1


def comm_columns(
    args: list[Args], where: np.ndarray[Any, Any], n: int, intern: Any
) -> tuple[np.ndarray[Any, Any], ...]:
    """``comm_bytes``, ``collective`` (interned ``Collective name``), ``group_size`` and
    ``process_group`` (interned ``Process Group Name``): a column at a time; only a
    collective that states no element count has its shapes parsed, one by one."""
    nbytes = np.full(n, -1, np.int64)
    collective = np.full(n, -1, np.int32)
    group = np.full(n, -1, np.int32)
    process_group = np.full(n, -1, np.int32)
    if not len(where):
        return nbytes, collective, group, process_group
    comm = list(map(args.__getitem__, where.tolist()))
    m = len(comm)
    sizes = _DtypeSizes()
    size = np.fromiter(map(sizes.__getitem__, map(_DTYPE, comm)), np.int64, m)
    nelems = np.maximum(
        np.fromiter(map(_IN_NELEMS, comm), np.int64, m),
        np.fromiter(map(_OUT_NELEMS, comm), np.int64, m),
    )
    counted = (size > 0) & (nelems >= 0)
    too_big = nelems.astype(np.float64) * size >= _MAX_BYTES  # (a corrupt count)
    total = np.where(counted & ~too_big, nelems * size, -1)
    for k in np.flatnonzero(~counted).tolist():
        total[k] = message_bytes(comm[k])
    nbytes[where] = total
    for column, field in ((collective, _COLLECTIVE), (process_group, _GROUP_NAME)):
        names = list(map(field, comm))
        named = np.flatnonzero(np.fromiter(map(bool, names), bool, m))
        if len(named):
            column[where[named]] = np.fromiter(
                map(intern, map(names.__getitem__, named.tolist())), np.int32, len(named)
            )
    groups = np.fromiter(map(_GROUP_SIZE, comm), np.int64, m)
    group[where] = np.where((groups > 0) & (groups < 2**31), groups, -1)
    return nbytes, collective, group, process_group


class _DtypeSizes(dict[str, int]):
    """Bytes per element of each dtype name (0: no dtype, or one profsight does not know)."""

    def __missing__(self, key: str) -> int:
        value = self[key] = (dtype_bytes(key) or 0) if key else 0
        return value


_DTYPE = attrgetter("msg_dtype")
_IN_NELEMS = attrgetter("in_msg_nelems")
_OUT_NELEMS = attrgetter("out_msg_nelems")
_COLLECTIVE = attrgetter("collective_name")
_GROUP_NAME = attrgetter("process_group")
_GROUP_SIZE = attrgetter("group_size")
