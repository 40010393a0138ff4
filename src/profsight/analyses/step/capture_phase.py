"""CUDA-graph captures inside the profiled window (`knowledge.graph_capture`).

A stream records from a thread's ``cudaStreamBeginCapture`` to its ``cudaStreamEndCapture``:
what the host launched in between went into a graph, not to the device, so its ops' FLOPs
never ran in the window (`recording`). The capture phase is wider: the graph's
instantiation, and the ranges frameworks record around their captures, warm-up runs
included (`knowledge.graph_capture.CAPTURE_RANGES`). It is one-time set-up; where it fills
the profiled steps (or the window, without steps), the profile shows a capture, not steps
(`Captures.dominant`).
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import numpy as np

from profsight.analyses.step import intervals
from profsight.knowledge.graph_capture import (
    CAPTURE_BEGIN,
    CAPTURE_DOMINANT_PCT,
    CAPTURE_END,
    CAPTURE_RANGES,
    GRAPH_INSTANTIATE,
)
from profsight.knowledge.rows import LAUNCH_CALLS
from profsight.knowledge.trace_schema import (
    DEVICE_WORK_KINDS,
    LAUNCH_KINDS,
    PROFILER_STEP_PREFIX,
    EventKind,
)
from profsight.model.events import I64, Bool
from profsight.model.profile import Profile
from profsight.stats import unique

#: Host events whose span makes the window without profiler steps.
_HOST_KINDS = frozenset({EventKind.CPU_OP, EventKind.ANNOTATION, EventKind.PYTHON})
_RANGE_KINDS = frozenset({EventKind.ANNOTATION, EventKind.CPU_OP})


class Captures(msgspec.Struct, frozen=True):
    """The window's graph captures."""

    recording: tuple[I64, I64]
    """Sorted, disjoint intervals (ns) in which streams recorded into graphs."""
    phase: tuple[I64, I64]
    """The capture phase: `recording`, the instantiations and the frameworks' capture
    ranges (sorted, disjoint, ns)."""
    window: tuple[int, int]
    """The span judged (ns): from the first profiler step's start to the last one's end,
    else the host's first to last event."""
    graphs: int
    """Captures begun (one graph each)."""
    instantiated: int
    """Graphs made executable (``cudaGraphInstantiate``) in the window."""
    launches: int
    """Kernel launch calls made while recording (they went into the graphs)."""
    ran: int
    """Device items those launches queued that ran in the window all the same (a launch to
    a stream that was not captured)."""

    @property
    def share_pct(self) -> float:
        """The capture phase's share of the window, in percent."""
        lo, hi = self.window
        if hi <= lo:
            return 0.0
        return 100.0 * intervals.length(*intervals.clip(*self.phase, lo, hi)) / (hi - lo)

    @property
    def dominant(self) -> bool:
        """The capture phase fills the window past `CAPTURE_DOMINANT_PCT`: the profile shows
        a capture, not steps."""
        return self.share_pct >= CAPTURE_DOMINANT_PCT

    @property
    def recording_ms(self) -> float:
        return intervals.length(*self.recording) / 1e6


def captures(profile: Profile) -> Captures | None:
    """The graph captures of `profile` (None: no stream began recording). Found once per
    profile: the findings, the FLOPs, the roofline and the verdict read them."""
    return profile.derived("graph_captures", lambda: _captures(profile))


def recording_mask(profile: Profile, events: I64) -> Bool:
    """Which of `events` (host events) started while a stream recorded into a graph: their
    device work was captured, not run."""
    found = captures(profile)
    if found is None:
        return np.zeros(len(events), bool)
    start = profile.events.start[events]
    mask: Bool = intervals.overlaps(start, start + 1, found.recording)
    return mask


def _captures(profile: Profile) -> Captures | None:
    ev = profile.events
    calls = np.flatnonzero(ev.mask(LAUNCH_KINDS))
    if not len(calls):
        return None
    begins = calls[_named(profile, calls, CAPTURE_BEGIN.match)]
    if not len(begins):
        return None
    ends = calls[_named(profile, calls, CAPTURE_END.match)]
    last = int(ev.end_of(calls).max())
    starts, stops = [], []
    # a recording is one thread's: its begin to the first end after it on that thread; an
    # end missing (the window stopped first) leaves it open to the window's last call
    for track in unique(ev.track[begins]).tolist():
        closing = np.sort(ev.end_of(ends[ev.track[ends] == track]))
        opened = np.sort(ev.start[begins[ev.track[begins] == track]])
        at = np.searchsorted(closing, opened, side="left")
        close = np.where(at < len(closing), closing[np.minimum(at, len(closing) - 1)], last)
        starts.append(opened)
        stops.append(close.astype(np.int64))
    recording = intervals.union(np.concatenate(starts), np.concatenate(stops))
    instantiate = calls[_named(profile, calls, GRAPH_INSTANTIATE.match)]
    ranges = np.flatnonzero(ev.mask(_RANGE_KINDS))
    ranges = ranges[_named(profile, ranges, CAPTURE_RANGES.match)]
    parts = (
        recording,
        (ev.start[instantiate], ev.end_of(instantiate)),
        (ev.start[ranges], ev.end_of(ranges)),
    )
    phase = intervals.union(
        np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    )
    launches = calls[_named(profile, calls, LAUNCH_CALLS.__contains__)]
    inside = launches[intervals.overlaps(ev.start[launches], ev.start[launches] + 1, recording)]
    return Captures(
        recording=recording,
        phase=phase,
        window=_window(profile),
        graphs=len(begins),
        instantiated=len(instantiate),
        launches=len(inside),
        ran=_ran(profile, inside),
    )


def _named(profile: Profile, events: I64, test: Callable[[str], object]) -> Bool:
    """Which of `events` have a name that passes `test`."""
    ev = profile.events
    ids = [i for i, s in enumerate(ev.strings) if test(s)]
    found: Bool = np.isin(ev.name[events], ids)
    return found


def _window(profile: Profile) -> tuple[int, int]:
    """The profiler steps' span, else the host's first to last event (ns)."""
    ev = profile.events
    host = np.flatnonzero(ev.mask(_HOST_KINDS) & (ev.dur >= 0))
    if not len(host):
        return 0, 0
    steps = host[_named(profile, host, lambda s: s.startswith(PROFILER_STEP_PREFIX))]
    steps = steps[ev.kind[steps] == EventKind.ANNOTATION]
    chosen = steps if len(steps) else host
    return int(ev.start[chosen].min()), int(ev.end_of(chosen).max())


def _ran(profile: Profile, launches: I64) -> int:
    """Device items queued by `launches` that ran in the window."""
    if not len(launches):
        return 0
    ev = profile.events
    items = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    launcher = profile.attribution.launcher[items]
    return int(np.isin(launcher, launches).sum())


__all__ = ["Captures", "captures", "recording_mask"]
