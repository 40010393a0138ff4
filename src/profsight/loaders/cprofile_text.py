"""Reading a pstats listing (one ``AdvancedProfiler`` action) into `ActionProfile`."""

from __future__ import annotations

from profsight.knowledge.lightning_names import ADVANCED_STOP
from profsight.lazy import regex
from profsight.model.cprofile import ActionProfile, CProfileEntry

#: ``  4367 function calls (4338 primitive calls) in 0.038 seconds``
_SUMMARY = regex(r"function calls(?: \(\d+ primitive calls\))? in (?P<s>[-\d.e+]+) seconds")
#: ``  32/8    0.000    0.000    0.038    0.005 combined_loader.py:339(__next__)``
_ENTRY = regex(
    r"^\s*(?P<calls>\d+)(?:/(?P<primitive>\d+))?\s+(?P<tottime>[\d.e+-]+)\s+[\d.e+-]+\s+"
    r"(?P<cumtime>[\d.e+-]+)\s+[\d.e+-]+\s+(?P<location>\S.*?)\s*$"
)


def parse_listing(action: str, text: str) -> ActionProfile | None:
    """The listing of one action; None when `text` holds no pstats summary line."""
    summary = _SUMMARY.search(text)
    if summary is None:
        return None
    entries = []
    for line in text.splitlines():
        match = _ENTRY.match(line)
        if match is None:
            continue
        calls = int(match["calls"])
        entries.append(
            CProfileEntry(
                calls=calls,
                primitive_calls=int(match["primitive"]) if match["primitive"] else calls,
                tottime_s=float(match["tottime"]),
                cumtime_s=float(match["cumtime"]),
                location=match["location"],
            )
        )
    return ActionProfile(
        action=action, total_s=float(summary["s"]), calls=_calls(entries), entries=tuple(entries)
    )


def _calls(entries: list[CProfileEntry]) -> int | None:
    """How many times the action ran: the calls of Lightning's own ``stop`` in its listing;
    when an action inside it took the profiler over before ``stop`` (Python has one profile
    function at a time), the primitive calls of the listing's outermost entry (the highest
    cumulative time: the function the action wraps)."""
    stops = [e.primitive_calls for e in entries if ADVANCED_STOP.search(e.location)]
    if stops:
        return stops[0]
    return max(entries, key=lambda e: e.cumtime_s).primitive_calls if entries else None
