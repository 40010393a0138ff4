"""cProfile listings (Lightning's ``AdvancedProfiler``): one per action, parsed.

Lightning's ``AdvancedProfiler`` runs a ``cProfile.Profile`` per action and prints its
``pstats`` listing (``ncalls tottime percall cumtime percall filename:lineno(function)``,
directories stripped) under ``Profile stats for: <action>``. Only one Python profiler can
be active at a time, so an action's profiler stops counting when an action inside it
starts its own: action times are close to exclusive, and outer actions read near zero.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CProfileEntry:
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


@dataclass(frozen=True)
class ActionProfile:
    """One action's cProfile listing."""

    action: str
    total_s: float
    """``... function calls in X seconds``: the action's profiled time."""
    calls: int | None
    """How many times the action ran (from the calls of Lightning's own ``stop``), None
    when the listing does not show it."""
    entries: tuple[CProfileEntry, ...]
