"""`Profile`: what a loader produces. Stored data only; trees and tables are derived on demand."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any, TypeVar

import msgspec

from profsight.errors import UsageError
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS
from profsight.malloc_trim import release_grown_memory
from profsight.model.attribution import Attribution, attribute
from profsight.model.diagnostics import Diagnostic
from profsight.model.events import EventStore, Flows
from profsight.model.module_table import module_table
from profsight.model.table import GroupBy, ProfilerTable
from profsight.model.table_build import build_table
from profsight.model.trace_audit import audit, logged
from profsight.model.trace_meta import LoadStats, TraceMeta
from profsight.model.tree import CallTree

T = TypeVar("T")


class Profile(msgspec.Struct, dict=True):
    """One profiled process: its events, the trace's metadata and what was odd about it."""

    source: str
    """The path (or label) it was loaded from."""
    format: str
    """The input format, e.g. ``kineto``."""
    events: EventStore
    flows: Flows
    meta: TraceMeta = msgspec.field(default_factory=TraceMeta)
    diagnostics: list[Diagnostic] = msgspec.field(default_factory=list)
    load_stats: LoadStats = msgspec.field(default_factory=LoadStats)
    memory_categories: dict[str, dict[str, int]] | None = None
    """A live profiler's memory at its own peak, by torch's categories (``parameter``,
    ``gradient``, ``optimizer_state``, ...), per memory (``cpu``, ``device``): torch's
    ``MemoryProfile``, which a trace file has not what it needs for (`loaders.live`)."""
    parameter_bytes: dict[str, int] | None = None
    """The model's parameters, per memory: the least torch's memory profiler counts as
    parameters over the window (it can count a copy made in the optimizer's step as one
    too, 70 KB against the model's 37 KB at the peak of a small Adam step)."""

    def __post_init__(self) -> None:
        # caches, not fields: no argument, no part of equality or the repr (instance
        # attributes of its __dict__, like the cached properties)
        self._tables: dict[tuple[str, int], ProfilerTable] = {}
        self._derived: dict[str, Any] = {}

    def derived(self, key: str, make: Callable[[], T]) -> T:
        """What `make` computes from this profile, once (an analysis several others read,
        e.g. its one-time start-up events); the value is shared: read it, do not change it."""
        if key not in self._derived:
            self._derived[key] = make()
        value: T = self._derived[key]
        return value

    @cached_property
    def attribution(self) -> Attribution:
        """Nesting, CPU -> device links and self/total times of every event."""
        attribution = attribute(self.events)
        release_grown_memory()
        return attribution

    def table(
        self,
        group_by: GroupBy = "name",
        sort_by: str | None = None,
        limit: int | None = None,
        stack: int = 0,
    ) -> ProfilerTable:
        """The profiler table, aggregated like torch's ``key_averages()`` (built once per
        grouping; sorting and cutting make new tables from it). `stack`: group by the first
        N frames of each event's call stack too (``key_averages(group_by_stack_n=N)``;
        traces recorded with ``_ExperimentalConfig(verbose=True)`` carry the stacks)."""
        if stack and group_by == "module":
            raise UsageError("a table by module cannot be grouped by call stack too")
        key = (group_by, stack)
        table = self._tables.get(key)
        if table is None:
            if group_by == "module":
                built = module_table(self)
            else:
                built = build_table(self, group_by, stack)
            table = self._tables[key] = built
            release_grown_memory()
        if sort_by is not None:
            table = table.sorted(sort_by)
        return table.head(limit) if limit is not None else table

    def tree(self) -> CallTree:
        """The call tree: steps -> Lightning actions -> modules -> ops -> runtime -> kernels."""
        tree = CallTree.build(self)
        release_grown_memory()
        return tree

    @cached_property
    def audited(self) -> list[Diagnostic]:
        """What the trace's audit says of its clocks and records (`model.trace_audit`)."""
        at = self.attribution
        found = audit(self.events, at.launcher, self.events.mask(DEVICE_WORK_KINDS))
        return found + logged(self.meta.header)

    @property
    def warnings(self) -> list[Diagnostic]:
        """What loading found, what the attribution found, and the trace's audit."""
        return self.diagnostics + self.attribution.diagnostics + self.audited
