"""`ProfilerTable`: torch's ``key_averages()`` rebuilt from a trace.

Rows are aggregated exactly as torch does (``EventList.key_averages``): by the event's
table name (``ProfilerStep#N`` -> ``ProfilerStep*``), whether it is a host or a device
event, and whether it is a ``record_function`` annotation; optionally also by input shapes.
Rows come in the order of their first occurrence, as in torch; percentages are shares of
the summed self time of all rows (device annotations left out of the device sum).

``group_by="module"`` is profsight's own view: one row per ``nn.Module`` (Lightning's
``[pl][module]`` ranges), its self time being the time of everything inside it that is
not inside a nested module.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from profsight.errors import UsageError
from profsight.knowledge.trace_schema import (
    CPU_MEMORY_DEVICE_TYPES,
    DEVICE_MEMORY_DEVICE_TYPES,
    EventKind,
)
from profsight.model.events import I64
from profsight.model.torch_layout import render_torch_table

if TYPE_CHECKING:
    from profsight.model.profile import Profile

GroupBy = Literal["name", "shape", "module"]
GROUP_BYS: tuple[GroupBy, ...] = ("name", "shape", "module")


@dataclass(frozen=True)
class Row:
    """One row of the profiler table. Times in microseconds, memory in bytes."""

    name: str
    event_kind: str
    """What the row's events are: ``cpu_op``, ``annotation``, ``kernel``, ``runtime``, ..."""
    calls: int
    self_cpu_us: float
    cpu_total_us: float
    self_device_us: float
    device_total_us: float
    self_cpu_pct: float
    cpu_total_pct: float
    self_device_pct: float
    cpu_mem: int = 0
    self_cpu_mem: int = 0
    device_mem: int = 0
    self_device_mem: int = 0
    shapes: str = ""
    """The input shapes, when grouped by shape."""
    is_device: bool = False
    """A device-side row (kernel, memcpy, memset, device annotation): no CPU time."""
    is_async: bool = False
    """torch's async flag (of the row's first event): a range left open when the profiler
    stopped. torch gives it no self time and prints its CPU total % as 0."""

    @property
    def cpu_avg_us(self) -> float:
        return self.cpu_total_us / self.calls if self.calls else 0.0

    @property
    def device_avg_us(self) -> float:
        return self.device_total_us / self.calls if self.calls else 0.0

    def to_dict_fields(self) -> dict[str, Any]:
        """The dataclass fields only (``Row(**row.to_dict_fields())`` copies a row)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def to_dict(self) -> dict[str, Any]:
        data = self.to_dict_fields()
        data["cpu_avg_us"] = self.cpu_avg_us
        data["device_avg_us"] = self.device_avg_us
        return data


#: Sort keys: profsight's column names, and torch's ``sort_by`` names for the same columns.
SORT_KEYS: dict[str, str] = {
    "name": "name",
    "calls": "calls",
    "count": "calls",
    "self_cpu_us": "self_cpu_us",
    "self_cpu": "self_cpu_us",
    "self_cpu_time_total": "self_cpu_us",
    "cpu_total_us": "cpu_total_us",
    "cpu_total": "cpu_total_us",
    "cpu_time_total": "cpu_total_us",
    "cpu_avg_us": "cpu_avg_us",
    "cpu_time": "cpu_avg_us",
    "self_device_us": "self_device_us",
    "self_device": "self_device_us",
    "self_cuda": "self_device_us",
    "self_cuda_time_total": "self_device_us",
    "self_device_time_total": "self_device_us",
    "self_xpu_time_total": "self_device_us",
    "device_total_us": "device_total_us",
    "device_total": "device_total_us",
    "cuda_total": "device_total_us",
    "cuda_time_total": "device_total_us",
    "device_time_total": "device_total_us",
    "xpu_time_total": "device_total_us",
    "device_avg_us": "device_avg_us",
    "cuda_time": "device_avg_us",
    "device_time": "device_avg_us",
    "cpu_mem": "cpu_mem",
    "cpu_memory_usage": "cpu_mem",
    "self_cpu_mem": "self_cpu_mem",
    "self_cpu_memory_usage": "self_cpu_mem",
    "device_mem": "device_mem",
    "cuda_memory_usage": "device_mem",
    "device_memory_usage": "device_mem",
    "self_device_mem": "self_device_mem",
    "self_cuda_memory_usage": "self_device_mem",
    "self_device_memory_usage": "self_device_mem",
}


@dataclass(frozen=True, repr=False)
class ProfilerTable:
    rows: tuple[Row, ...]
    group_by: GroupBy
    self_cpu_total_us: float
    """Sum of self CPU time over all rows: torch's "Self CPU time total"."""
    self_device_total_us: float
    """Sum of self device time over device rows: torch's "Self CUDA time total"."""
    has_device: bool
    has_memory: bool
    has_device_memory: bool
    has_shapes: bool
    device_name: str = "CUDA"
    """How torch labels device columns for this run (CUDA also for ROCm; XPU; ...)."""
    total_rows: int = 0
    """Rows before a row limit was applied."""
    longest_name: int = 0
    """Longest row name before a limit (torch sizes its name column on all rows)."""
    longest_shapes: int = 0

    def __str__(self) -> str:
        """The table as torch prints it (``print(profile.table())``)."""
        return render_torch_table(self)

    def __repr__(self) -> str:
        return (
            f"<ProfilerTable: {len(self.rows)} rows grouped by {self.group_by}, "
            f"self CPU {self.self_cpu_total_us:.3f} us; print() it for torch's layout>"
        )

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def row(self, name: str) -> Row:
        """The first row named `name` (KeyError if none)."""
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(name)

    def sorted(self, key: str) -> ProfilerTable:
        """Rows by `key`, largest first (``name``: alphabetical); stable, as torch sorts."""
        column = SORT_KEYS.get(key.lower().replace("-", "_"))
        if column is None:
            known = ", ".join(sorted({k for k in SORT_KEYS if "_time" not in k}))
            raise UsageError(f"unknown sort key {key!r}; use one of: {known}")
        if column == "name":
            rows = sorted(self.rows, key=lambda r: r.name)
        else:
            rows = sorted(self.rows, key=lambda r: getattr(r, column), reverse=True)
        return replace(self, rows=tuple(rows))

    def head(self, limit: int | None) -> ProfilerTable:
        if limit is None or limit < 0:
            return self
        return replace(self, rows=self.rows[:limit])

    def to_records(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.rows]

    def to_pandas(self) -> Any:
        """The table as a ``pandas.DataFrame`` (needs pandas: ``pip install profsight[pandas]``)."""
        try:
            import pandas as pd
        except ImportError:
            raise UsageError("to_pandas() needs pandas: pip install 'profsight[pandas]'") from None
        return pd.DataFrame.from_records(self.to_records())


_KIND_LABELS = {
    EventKind.CPU_OP: "cpu_op",
    EventKind.ANNOTATION: "annotation",
    EventKind.PYTHON: "python",
    EventKind.RUNTIME: "runtime",
    EventKind.DRIVER: "driver",
    EventKind.OVERHEAD: "overhead",
    EventKind.KERNEL: "kernel",
    EventKind.MEMCPY: "memcpy",
    EventKind.MEMSET: "memset",
    EventKind.GPU_ANNOTATION: "device_annotation",
    EventKind.SYNC: "sync",
    EventKind.MEMORY: "memory",
    EventKind.OTHER: "other",
    EventKind.COUNTERS: "counters",
}


def kind_label(kind: int) -> str:
    return _KIND_LABELS[EventKind(kind)]


def build_table(profile: Profile, group_by: GroupBy = "name") -> ProfilerTable:
    """The table grouped by name or by name and input shapes (by module:
    `model.modules.module_table`)."""
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
    )


def _members_in_torch_order(profile: Profile) -> I64:
    """Every event that is a row, ordered by (start, -end) as torch orders its events."""
    ev = profile.events
    at = profile.attribution
    idx = np.flatnonzero(at.is_row | at.is_table_device_row)
    idx = np.concatenate([idx, at.memory_rows]).astype(np.int64)
    order = np.lexsort((idx, -ev.end_of(idx), ev.start[idx]))
    return idx[order]


def _add_memory_records(
    profile: Profile,
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


def device_label(profile: Profile) -> str:
    """Device column label as torch prints it: XPU for Intel, CUDA otherwise (ROCm too)."""
    names = {profile.events.strings[c].lower() for c in np.unique(profile.events.category)}
    return "XPU" if "xpu_runtime" in names else "CUDA"
