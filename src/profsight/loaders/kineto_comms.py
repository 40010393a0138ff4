"""Message size, operation and group size of the collectives in a chunk of trace events.

Only events named like a collective (`knowledge.collectives.COMMUNICATION_NAME`) are read;
every other event gets -1 in the three columns.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

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
        dims, types = json.loads(raw_dims), json.loads(raw_types)
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
    ``process_group`` (interned ``Process Group Name``)."""
    nbytes = np.full(n, -1, np.int64)
    collective = np.full(n, -1, np.int32)
    group = np.full(n, -1, np.int32)
    process_group = np.full(n, -1, np.int32)
    for i in where.tolist():
        a = args[i]
        nbytes[i] = message_bytes(a)
        if a.collective_name:
            collective[i] = intern(a.collective_name)
        if a.process_group:
            process_group[i] = intern(a.process_group)
        group[i] = a.group_size if 0 < a.group_size < 2**31 else -1
    return nbytes, collective, group, process_group
