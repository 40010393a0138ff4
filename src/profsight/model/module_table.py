"""The module view of a profile: one row per ``nn.Module``, as the TensorBoard plugin had.

A module's self time is the time of every event inside it that is not inside a nested
module (its own Python, its skip connection, its ops); its total is the module range's
duration. Time outside any module is one more row, so self times add up to the table's.
"""

from __future__ import annotations

import numpy as np

from profsight.knowledge.lightning_names import is_module_name, module_label
from profsight.model.attribution import Attributed
from profsight.model.events import I32, Bool
from profsight.model.table import ProfilerTable, Row
from profsight.model.table_build import _pct, device_label
from profsight.stats import unique

OUTSIDE_MODULES = "(outside any module)"


def has_module_ranges(table: ProfilerTable) -> bool:
    """Whether a module table holds any module: without module ranges in the trace its one
    row is `OUTSIDE_MODULES` (`knowledge.advice.NO_MODULE_RANGES` says how to record them)."""
    return any(r.name != OUTSIDE_MODULES for r in table.rows)


def module_rows(profile: Attributed) -> Bool:
    """Rows that are module ranges."""
    ev = profile.events
    module_ids = [i for i, s in enumerate(ev.strings) if is_module_name(s)]
    is_module: Bool = profile.attribution.is_row & np.isin(ev.name, module_ids)
    return is_module


def innermost_module(profile: Attributed) -> I32:
    """Per event: the innermost module range (itself included) around it, or -1 (int32:
    one per event of a huge trace)."""
    ev = profile.events
    at = profile.attribution
    is_module = module_rows(profile)
    inner = np.full(len(ev), -1, np.int32)
    own = np.flatnonzero(is_module)
    inner[own] = own
    del own
    rows = np.flatnonzero(at.is_row)
    row_depth = at.depth[rows]
    for d in unique(row_depth):
        level = rows[row_depth == d]
        inherit = level[(~is_module[level]) & (at.parent[level] >= 0)]
        inner[inherit] = inner[at.parent[inherit]]
    return inner


def module_table(profile: Attributed) -> ProfilerTable:
    ev = profile.events
    at = profile.attribution
    rows_idx = np.flatnonzero(at.is_row)
    owner_module = innermost_module(profile)[rows_idx]
    modules = np.flatnonzero(module_rows(profile))  # (sorted: each is its own innermost)
    # each distinct range name labelled once, in the order the labels first occur
    names_of, first, by_name = np.unique(ev.name[modules], return_index=True, return_inverse=True)
    label_of_name = [module_label(ev.strings[i]) for i in names_of.tolist()]
    label_ids: dict[str, int] = {}
    for n in np.argsort(first, kind="stable").tolist():
        label_ids.setdefault(label_of_name[n], len(label_ids))
    mgroups = np.array([label_ids[label] for label in label_of_name], np.int64)[by_name]
    n_groups = len(label_ids) + 1  # the last: outside any module
    groups = np.full(len(owner_module), n_groups - 1, np.int64)
    inside = np.flatnonzero(owner_module >= 0)
    groups[inside] = mgroups[np.searchsorted(modules, owner_module[inside])]
    del inside, owner_module
    self_cpu = np.bincount(groups, weights=at.cpu_self[rows_idx], minlength=n_groups)
    self_dev = np.bincount(groups, weights=at.device_self[rows_idx], minlength=n_groups)
    calls = np.bincount(mgroups, minlength=n_groups)
    cpu_total = np.bincount(mgroups, weights=at.cpu_total_of(modules), minlength=n_groups)
    dev_total = np.bincount(mgroups, weights=at.device_total[modules], minlength=n_groups)
    cpu_total[-1] = self_cpu[-1]
    dev_total[-1] = self_dev[-1]
    sum_cpu = float(self_cpu.sum())
    sum_dev = float(self_dev.sum())
    names = [*label_ids, OUTSIDE_MODULES]
    # torchmetrics modules are metrics, not layers of the model
    full = {
        label_of_name[n]: ev.strings[i] for n, i in enumerate(names_of.tolist())
    }  # (any one range name of a label says whether it is "torchmetrics.")
    kinds = ["metric" if "torchmetrics." in full[label] else "module" for label in label_ids]
    rows = tuple(
        Row(
            name=names[g],
            event_kind=kinds[g] if g < n_groups - 1 else "other",
            calls=int(calls[g]),
            self_cpu_us=float(self_cpu[g]),
            cpu_total_us=float(cpu_total[g]),
            self_device_us=float(self_dev[g]),
            device_total_us=float(dev_total[g]),
            self_cpu_pct=_pct(self_cpu[g], sum_cpu),
            cpu_total_pct=_pct(cpu_total[g], sum_cpu),
            self_device_pct=_pct(self_dev[g], sum_dev),
        )
        for g in range(n_groups)
        if g < n_groups - 1 or self_cpu[g] or self_dev[g]
    )
    return ProfilerTable(
        rows=rows,
        group_by="module",
        self_cpu_total_us=sum_cpu,
        self_device_total_us=sum_dev,
        has_device=sum_dev > 0,
        has_memory=False,
        has_device_memory=False,
        has_shapes=False,
        device_name=device_label(profile),
        total_rows=len(rows),
        longest_name=max((len(r.name) for r in rows), default=0),
    )
