"""cProfile listings (Lightning's ``AdvancedProfiler``): one per action, parsed.

Lightning's ``AdvancedProfiler`` runs a ``cProfile.Profile`` per action and prints its
``pstats`` listing (``ncalls tottime percall cumtime percall filename:lineno(function)``,
directories stripped) under ``Profile stats for: <action>``. Python has one profile hook at
a time, so how the actions' times relate depends on Lightning's version
(`profsight.knowledge.lightning_names`, AdvancedProfiler's nesting): up to Lightning 2.5 an
outer action's time includes the actions inside it (its listing shows only the calls made
before the first of them started, the rest charged to that one's ``enable``); from 2.6 an
outer action stops counting when one inside it starts, so times are close to exclusive and
outer actions read near zero. `nests` tells which a report is.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from profsight.knowledge.advice import HOT_FUNCTION_SHARE, NESTED_HOLDS
from profsight.knowledge.lightning_names import (
    ACTION_HOLDERS,
    INNER_PROFILER_START,
    PROFILER_MACHINERY,
    STEP_ACTION_NAME,
    STEP_CODE_ACTIONS,
    advanced_action,
)


class CProfileEntry(msgspec.Struct, frozen=True):
    """One line of a pstats listing. Times in seconds, summed over the action's calls."""

    calls: int
    primitive_calls: int
    """Calls that were not recursive (``32/8``: 32 calls, 8 primitive)."""
    tottime_s: float
    """Time in the function itself, not in functions it called."""
    cumtime_s: float
    """Time in the function and everything it called."""
    location: str
    """``fetch.py:49(fetch)``, or ``{built-in method torch.tensor}`` for C functions."""

    @property
    def builtin(self) -> bool:
        """A C function or method (``{...}``): it has no file of its own."""
        return self.location.startswith("{")

    @property
    def anonymous(self) -> bool:
        """A comprehension or lambda (``train.py:9(<listcomp>)``): part of the function
        around it, not a function to name."""
        return self.location.endswith(">)")


class ActionProfile(msgspec.Struct, frozen=True):
    """One action's cProfile listing."""

    action: str
    total_s: float
    """``... function calls in X seconds``: the action's profiled time."""
    calls: int | None
    """How many times the action ran (from the calls of Lightning's own ``stop``), None
    when the listing does not show it."""
    entries: tuple[CProfileEntry, ...]

    @property
    def inner_start(self) -> CProfileEntry | None:
        """The ``enable`` of an action that started inside this one (Lightning <= 2.5): it
        holds the inner actions' time, and every entry above it is the path to it."""
        return next((e for e in self.entries if e.location == INNER_PROFILER_START), None)

    @property
    def own_s(self) -> float:
        """The time of the calls this listing shows itself: the total less what the actions
        started inside it took (their ``enable``)."""
        inner = self.inner_start
        return max(self.total_s - (inner.tottime_s if inner else 0.0), 0.0)

    def own_entries(self) -> tuple[CProfileEntry, ...]:
        """The entries of this action's own code: not the profiler's, not the path to an
        inner action's start (the calls still open when it started)."""
        inner = self.inner_start
        return tuple(
            e
            for e in self.entries
            if not PROFILER_MACHINERY.search(e.location)
            and (inner is None or e.cumtime_s < inner.cumtime_s)
        )

    def hot_functions(self, limit: int = 3) -> tuple[CProfileEntry, ...]:
        """The entries of most self time (tottime), largest first: where the action's own
        time goes, C functions included (``{method 'to' of 'torch._C.TensorBase' objects}``)."""
        own = sorted((e for e in self.own_entries() if e.tottime_s > 0), key=lambda e: -e.tottime_s)
        return tuple(own[:limit])


def holders(profiles: Sequence[ActionProfile]) -> dict[str, str | None]:
    """Each action -> the action that holds it in this report (Lightning's nesting,
    `ACTION_HOLDERS`: the innermost of its possible holders that the report has), None for
    an outermost action."""
    by_name: dict[str, str] = {}
    for p in profiles:
        by_name.setdefault(advanced_action(p.action), p.action)
    out: dict[str, str | None] = {}
    for p in profiles:
        candidates = ACTION_HOLDERS.get(advanced_action(p.action), ())
        out[p.action] = next((by_name[h] for h in candidates if h in by_name), None)
    return out


def nests(profiles: Sequence[ActionProfile]) -> bool:
    """The actions' times include the actions inside them (Lightning <= 2.5): a listing
    whose time is mostly an inner action's ``enable``, or the batch action holding at least
    `NESTED_HOLDS` of the training step's code (from 2.6 it reads near zero)."""
    if any(
        (inner := p.inner_start) is not None and inner.tottime_s >= HOT_FUNCTION_SHARE * p.total_s
        for p in profiles
        if p.total_s > 0
    ):
        return True
    by_name = {advanced_action(p.action): p for p in profiles}
    batch = by_name.get(STEP_ACTION_NAME)
    inside = max((by_name[a].total_s for a in STEP_CODE_ACTIONS if a in by_name), default=0.0)
    return batch is not None and inside > 0 and batch.total_s >= NESTED_HOLDS * inside


def outermost_s(profiles: Sequence[ActionProfile]) -> float:
    """The time of the outermost actions (the epoch, the hooks outside it): what the run
    took, when the actions nest."""
    held = holders(profiles)
    return sum(p.total_s for p in profiles if held[p.action] is None)


def exclusive_s(profiles: Sequence[ActionProfile]) -> dict[str, float]:
    """Each action's time less the actions it holds (`holders`): its own part, when the
    actions nest. These add up to `outermost_s`."""
    held = holders(profiles)
    inner: dict[str, float] = {}
    for p in profiles:
        holder = held[p.action]
        if holder is not None:
            inner[holder] = inner.get(holder, 0.0) + p.total_s
    return {p.action: max(p.total_s - inner.get(p.action, 0.0), 0.0) for p in profiles}
