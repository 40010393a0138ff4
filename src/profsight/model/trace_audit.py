"""A trace checked before it is judged: what its clocks and its records say about themselves.

Two problems a trace can carry that no figure shows, each a one-line diagnostic with how much
of the window it touches (`audit`, run on every trace as it is attributed):

* device work that starts before the call that launched it: the device's and the host's
  clocks disagree (or the file was stitched from two recordings), so every time that crosses
  from one to the other (launch delays, a step's device window, what overlaps what) is off by
  up to that lead;
* launch calls with no device work of their own, made before a later launch whose work the
  trace holds: the profiler lost those records (CUPTI drops activity records when its
  buffers run out), so the device time of the window is short by whatever they ran.
  Launches inside a CUDA-graph capture queue nothing (the stream is recorded, not run) and
  are not counted.

A third is said by the profiler itself: the warnings and errors Kineto logged while recording,
kept in the trace's top-level fields (`logged`): lost device records are a warning, anything
else it logged a note (`knowledge.profiler_log`).

Work launched before the window, and device work linked to no launch call, are said by the
attribution itself (``launched_before_window``, ``unlinked_device``); ranges that overlap
without nesting on one thread by the nesting (``partial_overlap``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from profsight.knowledge import profiler_log as log
from profsight.knowledge.graph_capture import CAPTURE_BEGIN, CAPTURE_END, CAPTURE_RANGES
from profsight.knowledge.rows import LAUNCH_CALLS
from profsight.model.diagnostics import Diagnostic, Level
from profsight.model.events import EventStore
from profsight.stats import setdiff, unique
from profsight.units import short_time

#: Under this lead (ns) a kernel's start before its launch call's is rounding between two
#: clocks read a few hundred ns apart, not a disagreement.
LEAD_NS = 1_000


def audit(ev: EventStore, launcher: np.ndarray, device_work: np.ndarray) -> list[Diagnostic]:
    """The problems the trace carries (`device_work`: the mask of its device items;
    `launcher`: each item's launch call, -1 none)."""
    work = np.flatnonzero(device_work)
    if not len(work):
        return []
    lo, hi = int(ev.start[work].min()), int(ev.end_of(work).max())
    return [*_before_launch(ev, launcher, work, max(hi - lo, 1)), *_lost(ev, launcher, work)]


def logged(header: dict[str, Any]) -> list[Diagnostic]:
    """What Kineto's own log in the trace (`header`: its top-level fields) says went wrong."""
    lines = [
        (level, log.message_text(line))
        for level in log.LOG_LEVELS
        for line in _listed(header.get(level))
        if isinstance(line, str) and line.strip()
    ]
    lost = [text for _, text in lines if log.LOST_RECORDS.search(text)]
    out = []
    if lost:
        dropped = sum(
            int(m.group(1)) for t in lost if (m := log.LOST_RECORDS.search(t)) and m.group(1)
        )
        out.append(
            Diagnostic(
                "profiler_lost_records",
                log.LOST_MESSAGE.format(
                    first=lost[0],
                    more=log.LOST_DROPPED.format(count=dropped) if dropped else "",
                ),
                Level.WARNING,
                count=len(lost),
                remedy=log.LOST_REMEDY,
            )
        )
    rest = [(level, text) for level, text in lines if text not in lost]
    if rest:
        levels = sorted({level.lower() for level, _ in rest})
        what = " and ".join(f"{lv}{'s' if len(rest) > 1 else ''}" for lv in levels)
        out.append(
            Diagnostic(
                "profiler_log",
                log.LOGGED_MESSAGE.format(
                    count=len(rest),
                    what=what,
                    which=log.LOGGED_FIRST if len(rest) > 1 else "",
                    first=rest[0][1],
                ),
                Level.INFO,
                count=len(rest),
            )
        )
    return out


def _listed(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _before_launch(
    ev: EventStore, launcher: np.ndarray, work: np.ndarray, window: int
) -> list[Diagnostic]:
    linked = work[launcher[work] >= 0]
    lead = ev.start[launcher[linked]] - ev.start[linked]
    early = linked[lead > LEAD_NS]
    if not len(early):
        return []
    busy = int(ev.dur[early].sum())
    return [
        Diagnostic(
            "kernel_before_launch",
            f"{len(early):,} of {len(linked):,} device items start before the call that "
            f"launched them, by up to {short_time(float(lead.max()) / 1000.0)} "
            f"({short_time(busy / 1000.0)} of device time, {100.0 * busy / window:.1f}% of "
            "the device's span): the device's and the host's clocks disagree, so times that "
            "cross between them (launch delays, the steps' device windows) are off by as much",
            Level.WARNING,
            count=len(early),
            remedy="record host and device in one session, with one torch.profiler; a "
            "stitched or clock-shifted file cannot be aligned after the fact",
        )
    ]


def _lost(ev: EventStore, launcher: np.ndarray, work: np.ndarray) -> list[Diagnostic]:
    """Launch calls with no device work, made before a later launch whose work the trace
    holds: the later work was recorded, so theirs would have been (the work of the last
    launches can run after the profiler stopped, and is no loss)."""
    ids = [i for i, s in enumerate(ev.strings) if s in LAUNCH_CALLS]
    used = unique(launcher[work])
    used = used[used >= 0]
    if not ids or not len(used):
        return []
    calls = np.flatnonzero(np.isin(ev.name, ids))
    calls = calls[ev.start[calls] < int(ev.start[used].max())]
    calls = calls[~_in_capture(ev, calls)]
    lost = setdiff(calls, used)
    if not len(lost):
        return []
    return [
        Diagnostic(
            "lost_device_records",
            f"{len(lost):,} of {len(calls):,} launch calls made before the last one whose work "
            "the trace holds have no device work in it: the profiler lost their records "
            "(CUPTI drops activity records when its buffers run out), or the links to them "
            "(a file merged from ranks that reuse correlation ids); the device's time is short "
            "by what they ran",
            Level.WARNING,
            count=len(lost),
            remedy="profile fewer steps at once, or give CUPTI larger activity buffers",
        )
    ]


def _in_capture(ev: EventStore, calls: np.ndarray) -> np.ndarray:
    """Whether each call falls inside a CUDA-graph capture: between a stream's begin and end
    capture calls on its thread, or inside a framework's capture range."""
    inside = np.zeros(len(calls), bool)
    names = {i: s for i, s in enumerate(ev.strings)}
    begin = [i for i, s in names.items() if CAPTURE_BEGIN.match(s)]
    end = [i for i, s in names.items() if CAPTURE_END.match(s)]
    ranges = [i for i, s in names.items() if CAPTURE_RANGES.match(s)]
    for r in np.flatnonzero(np.isin(ev.name, ranges)).tolist():
        inside |= (ev.start[calls] >= ev.start[r]) & (ev.start[calls] < ev.end_of(np.array([r]))[0])
    if begin:
        starts = np.flatnonzero(np.isin(ev.name, begin))
        stops = np.flatnonzero(np.isin(ev.name, end))
        for s in starts.tolist():
            same = stops[(ev.track[stops] == ev.track[s]) & (ev.start[stops] >= ev.start[s])]
            stop = int(ev.start[same].min()) if len(same) else int(np.iinfo(np.int64).max)
            on = ev.track[calls] == ev.track[s]
            inside |= on & (ev.start[calls] >= ev.start[s]) & (ev.start[calls] < stop)
    return inside


__all__ = ["LEAD_NS", "audit", "logged"]
