"""Building the profiler table from a profile's attributed events, as torch's
``key_averages()`` groups them."""

from __future__ import annotations

from typing import Any

import numpy as np

from profsight.errors import UsageError
from profsight.knowledge.trace_schema import (
    CPU_MEMORY_DEVICE_TYPES,
    DEVICE_MEMORY_DEVICE_TYPES,
    FILTERED_STACK_ENTRIES,
    EventKind,
)
from profsight.model.attribution import Attributed
from profsight.model.backward_link import forward_ops
from profsight.model.events import I64, EventStore
from profsight.model.table import GROUP_BYS, GroupBy, ProfilerTable, Row, kind_label
from profsight.stats import unique


def build_table(profile: Attributed, group_by: GroupBy = "name", stack: int = 0) -> ProfilerTable:
    """The table grouped by name or by name and input shapes (by module:
    `model.modules.module_table`), and by the first `stack` frames of each event's call
    stack too (torch's ``group_by_stack_n``; traces recorded with ``Call stack``)."""
    # one function: the table's columns aggregated in one pass over the grouped events, as
    # torch's key_averages does
    if group_by not in GROUP_BYS or group_by == "module":
        raise UsageError(f"unknown group-by {group_by!r}; use one of: {', '.join(GROUP_BYS)}")
    ev = profile.events
    at = profile.attribution
    members = _members_in_torch_order(profile)
    # one int64 key per event: (name, host/device, annotation, shapes), made in place (a
    # huge trace has tens of millions of members)
    group_key = at.key[members].astype(np.int64)
    group_key *= 4
    group_key += at.is_table_device_row[members] * 2
    kind = ev.kind[members]
    group_key += (kind == EventKind.ANNOTATION) | (kind == EventKind.GPU_ANNOTATION)
    del kind
    if group_by == "shape":
        shapes = ev.shapes[members].astype(np.int64)
        group_key *= int(shapes.max(initial=-1)) + 2
        shapes += 1
        group_key += shapes
        del shapes
    prefixes: list[tuple[str, ...]] = [()]
    stacks = _stacks(profile, members) if stack > 0 else members[:0]
    if stack > 0:
        prefix = _stack_prefixes(ev, stacks, stack, prefixes)
        group_key *= len(prefixes)
        group_key += prefix
    _, first, inverse = np.unique(group_key, return_index=True, return_inverse=True)
    del group_key
    inverse = inverse.reshape(-1)
    n_groups = len(first)

    def total(values: Any) -> Any:
        if values.strides == (0,):  # one value broadcast: no column to gather
            return calls * float(values[0]) if len(values) else np.zeros(n_groups)
        return np.bincount(inverse, weights=values[members], minlength=n_groups)

    calls = np.bincount(inverse, minlength=n_groups)
    self_cpu = total(at.cpu_self)
    cpu_total = np.bincount(inverse, weights=at.cpu_total_of(members), minlength=n_groups)
    self_dev = total(at.table_device_self)
    dev_total = total(at.table_device_total)
    cpu_mem = total(at.cpu_mem).astype(np.int64)
    self_cpu_mem = total(at.cpu_mem_self).astype(np.int64)
    dev_mem = total(at.device_mem).astype(np.int64)
    self_dev_mem = total(at.device_mem_self).astype(np.int64)
    memory_rows = np.isin(members, at.memory_rows)
    if memory_rows.any():
        cpu_mem, dev_mem, self_cpu_mem, self_dev_mem = _add_memory_records(
            profile,
            members,
            memory_rows,
            inverse,
            n_groups,
            (cpu_mem, dev_mem, self_cpu_mem, self_dev_mem),
        )
    sum_self_cpu = float(self_cpu.sum())
    device_members = members[at.is_table_device_row[members]]
    counted = device_members[ev.kind[device_members] != EventKind.GPU_ANNOTATION]
    sum_self_dev = float(at.table_device_self[counted].sum())
    group_device = at.is_table_device_row[members[first]]
    prefix_of_group = prefix[first] if stack > 0 else first
    strings = ev.strings
    row_order = np.argsort(first, kind="stable")
    rows = []
    for g in row_order.tolist():
        m = members[first[g]]
        is_async = bool(at.is_async[m])
        rows.append(
            Row(
                name=at.key_names[at.key[m]],
                event_kind=kind_label(int(ev.kind[m])),
                calls=int(calls[g]),
                self_cpu_us=float(self_cpu[g]),
                cpu_total_us=float(cpu_total[g]),
                self_device_us=float(self_dev[g]),
                device_total_us=float(dev_total[g]),
                self_cpu_pct=_pct(self_cpu[g], sum_self_cpu),
                cpu_total_pct=0.0 if is_async else _pct(cpu_total[g], sum_self_cpu),
                self_device_pct=_pct(self_dev[g], sum_self_dev),
                cpu_mem=int(cpu_mem[g]),
                self_cpu_mem=int(self_cpu_mem[g]),
                device_mem=int(dev_mem[g]),
                self_device_mem=int(self_dev_mem[g]),
                shapes=strings[ev.shapes[m]]
                if group_by == "shape" and ev.shapes[m] >= 0
                else ("[]" if group_by == "shape" else ""),
                is_device=bool(group_device[g]),
                is_async=is_async,
                stack=prefixes[int(prefix_of_group[g])] if stack > 0 else (),
            )
        )
    # (every host event with memory is a member: the others hold none)
    has_memory = bool(memory_rows.any()) or bool(np.any(at.cpu_mem))
    return ProfilerTable(
        rows=tuple(rows),
        group_by=group_by,
        self_cpu_total_us=sum_self_cpu,
        self_device_total_us=sum_self_dev,
        has_device=bool(np.any(self_dev > 0)),
        has_memory=has_memory or profile.meta.flag("profile_memory") is True,
        has_device_memory=bool(np.any(self_dev_mem != 0)),
        has_shapes=group_by == "shape",
        device_name=device_label(profile),
        total_rows=len(rows),
        longest_name=max((len(r.name) for r in rows), default=0),
        longest_shapes=max((len(r.shapes) for r in rows), default=0),
        stack_n=stack,
        longest_frame=max((len(f) for r in rows for f in r.stack), default=0),
    )


def _stack_frames(text: str) -> tuple[str, ...]:
    """A ``Call stack`` as torch's ``FunctionEvent.stack``: its ``;``-separated frames,
    innermost first, less those torch filters (``_filter_stack_entry``)."""
    return tuple(
        f
        for f in text.split(";")
        if f and not any(a in f and b in f for a, b in FILTERED_STACK_ENTRIES)
    )


def _stack_prefixes(ev: EventStore, stacks: I64, n: int, prefixes: list[tuple[str, ...]]) -> I64:
    """The first `n` frames of each of `stacks` (``Call stack`` string ids, -1 for none), as
    an index into `prefixes` (which it extends; 0 is the empty stack)."""
    distinct, inverse = np.unique(stacks, return_inverse=True)
    index = {prefix: i for i, prefix in enumerate(prefixes)}
    of_distinct = np.zeros(len(distinct), np.int64)
    for k, sid in enumerate(distinct.tolist()):
        prefix = _stack_frames(ev.strings[sid])[:n] if sid >= 0 else ()
        if prefix not in index:
            index[prefix] = len(prefixes)
            prefixes.append(prefix)
        of_distinct[k] = index[prefix]
    found: I64 = of_distinct[inverse.reshape(-1)]
    return found


def _stacks(profile: Attributed, members: I64) -> I64:
    """Each member's call stack (a ``Call stack`` string id, -1 for none) as torch's
    ``FunctionEvent.stack`` holds it: an op of the backward pass, inside an autograd node
    (``ReluBackward0``), has the stack of the forward op that made the node
    (`model.backward_link`; none when that op is not found)."""
    ev = profile.events
    if not len(ev.stack) or not (ev.stack >= 0).any():
        return np.full(len(members), -1, np.int64)
    own = ev.stack[members].astype(np.int64)
    node, op = forward_ops(profile, members)
    inside = node >= 0
    own[inside] = np.where(op[inside] >= 0, own[np.maximum(op[inside], 0)], -1)
    return own


def _members_in_torch_order(profile: Attributed) -> I64:
    """Every event that is a row, ordered by (start, -end) as torch orders its events."""
    ev = profile.events
    at = profile.attribution
    idx = np.flatnonzero(at.is_row | at.is_table_device_row)
    idx = np.concatenate([idx, at.memory_rows]).astype(np.int64)
    order = np.lexsort((idx, -ev.end_of(idx), ev.start[idx]))
    return idx[order]


def _add_memory_records(
    profile: Attributed,
    members: I64,
    memory_rows: Any,
    inverse: Any,
    n_groups: int,
    current: tuple[Any, Any, Any, Any],
) -> tuple[Any, Any, Any, Any]:
    """``[memory]`` rows hold the bytes of the records no host event covers."""
    ev = profile.events
    rec = members[memory_rows]
    dtype = ev.mem_device_type[rec]
    cpu = np.where(np.isin(dtype, list(CPU_MEMORY_DEVICE_TYPES)), ev.nbytes[rec], 0)
    dev = np.where(np.isin(dtype, list(DEVICE_MEMORY_DEVICE_TYPES)), ev.nbytes[rec], 0)
    groups = inverse[memory_rows]
    add_cpu = np.bincount(groups, weights=cpu, minlength=n_groups).astype(np.int64)
    add_dev = np.bincount(groups, weights=dev, minlength=n_groups).astype(np.int64)
    cpu_mem, dev_mem, self_cpu_mem, self_dev_mem = current
    return cpu_mem + add_cpu, dev_mem + add_dev, self_cpu_mem + add_cpu, self_dev_mem + add_dev


def _pct(value: float, total: float) -> float:
    return float(value) * 100.0 / total if total else 0.0


def device_label(profile: Attributed) -> str:
    """Device column label as torch prints it: XPU for Intel, CUDA otherwise (ROCm too)."""
    names = {profile.events.strings[c].lower() for c in unique(profile.events.category)}
    return "XPU" if "xpu_runtime" in names else "CUDA"
