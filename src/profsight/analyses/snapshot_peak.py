"""A memory snapshot's peak per device, and what held it: by the user's source lines, and
by where and when each block was allocated.

The peak is the one memory_viz's active memory timeline draws (``torch/utils/viz/
MemoryViz.js``, ``process_alloc_data``): the blocks live when the history begins (those
freed in it that it never allocated, and those the segments hold at the end that it never
allocated) and then each ``alloc`` adding its size and each ``free_completed`` (or the
older ``free``) removing it. Replaying the whole history must end with the segments' own
blocks: `DevicePeak.reconciled` checks it, independently of the pairing.

A block live at the peak is charged to its allocation's innermost frame of the user's own
code (`knowledge.source_frames.is_user_frame`); without one, to the autograd node in its
C++ frames, then to the innermost library frame. Its holder (`knowledge.snapshot_sites.
HOLDERS`) follows from where it was made: in a module's forward (activations), in backward
(gradients when freed outside backward, by ``zero_grad`` or the optimizer, or never; else
temporaries), in the optimizer's step (its frames under ``torch/optim``, or torch's
``Optimizer.step#`` range), elsewhere, or before the recording.
"""

from __future__ import annotations

import bisect
from functools import cache
from itertools import accumulate

import msgspec

from profsight.knowledge.snapshot_sites import (
    AUTOGRAD_ENGINE,
    AUTOGRAD_NODE,
    AUTOGRAD_PART,
    BACKWARD_FILES,
    BACKWARD_FUNCTIONS,
    ENGINE_LABEL,
    HOLDERS,
    MODULE_CALL_FILE,
    NO_PYTHON_FRAME,
    NODE_LABEL,
    OPTIMIZER_FILES,
    OPTIMIZER_STEP_RANGE,
    PYTHON_FILE,
    REPLAY_MISMATCH,
    TIMELINE_POINTS,
)
from profsight.knowledge.source_frames import is_user_frame
from profsight.model.memory_snapshot import DeviceSnapshot, Frame, MemorySnapshot
from profsight.units import short_bytes

_ALLOC = "alloc"
_FREES = frozenset({"free_completed", "free"})
_REQUESTED = "free_requested"


class PeakSite(msgspec.Struct, frozen=True):
    label: str
    """``model.py:382 forward``, ``autograd node MmBackward0``, a library's frame, or
    `NO_PYTHON_FRAME`."""
    kind: str
    """``user``, ``backward``, ``library`` or ``none``."""
    filename: str
    line: int
    function: str
    bytes: int
    blocks: int
    holder: str
    """The holder most of its bytes have."""


class DevicePeak(msgspec.Struct, frozen=True):
    device: int
    events: int
    peak_bytes: int
    peak_index: int
    """The event that reached the peak, its index in the snapshot's ``device_traces`` list;
    -1 when nothing the history did went above its start."""
    peak_allocation: int
    """Which allocation reached it, counting from 1 (of `allocations`); 0 with `peak_index`
    -1. memory_viz's event list joins each free's two events, so this count is the one to
    find it by."""
    allocations: int
    peak_at_us: float | None
    """From the first event; None when the events carry no time (torch < 2.1)."""
    peak_phase: str
    """Where the event that reached the peak was made: ``forward``, ``backward``,
    ``optimizer`` or ``other`` (`knowledge.snapshot_sites.PHASE_PHRASE`)."""
    start_bytes: int
    """Live when the history begins."""
    before_bytes: int
    """Of the peak: blocks allocated before the history began."""
    end_bytes: int
    """Live after the whole history, replayed."""
    snapshot_end_bytes: int
    """What the segments hold allocated at the end, by their own account."""
    reserved_bytes: int
    holders: dict[str, int]
    """The peak's bytes by holder, every one of `HOLDERS` (0 where none)."""
    sites: tuple[PeakSite, ...]
    """Every site holding bytes at the peak, most first."""
    times_known: bool
    timeline: tuple[tuple[float, int], ...]
    """(µs from the first event, or the event's index; the most allocated in that slice)."""

    @property
    def reconciled(self) -> bool:
        return self.end_bytes == self.snapshot_end_bytes


def snapshot_peaks(snapshot: MemorySnapshot) -> list[DevicePeak]:
    """Each device's peak; appends a diagnostic where a replay does not reconcile."""
    sites = _Sites(snapshot)
    peaks = [_device_peak(d, sites) for d in snapshot.devices]
    for p in peaks:
        if not p.reconciled:
            note = REPLAY_MISMATCH.format(
                replayed=short_bytes(p.end_bytes), held=short_bytes(p.snapshot_end_bytes)
            )
            snapshot.diagnostics.append(f"device {p.device}: {note}")
    return peaks


class _Sites:
    """Per stack: its site and the phase it was made in, worked out once."""

    def __init__(self, snapshot: MemorySnapshot) -> None:
        self.stacks = snapshot.stacks
        self.steps = sorted(
            (a.start_us, a.end_us)
            for a in snapshot.annotations
            if OPTIMIZER_STEP_RANGE.match(a.name)
        )
        self.site = cache(self._site)
        self.stack_phase = cache(self._stack_phase)
        self.engine = cache(self._on_engine)

    def phase(self, stack: int, time_us: int | None) -> str:
        found = self.stack_phase(stack)
        if found == "other" and time_us is not None and self._in_step(time_us):
            return "optimizer"  # the user's own optimizer, inside torch's step range
        return found

    def _on_engine(self, stack: int) -> bool:
        return any(AUTOGRAD_ENGINE.search(f.name) for f in self.stacks[stack])

    def _in_step(self, at: int) -> bool:
        i = bisect.bisect_right(self.steps, (at, float("inf"))) - 1
        return i >= 0 and self.steps[i][0] <= at <= self.steps[i][1]

    def _stack_phase(self, stack: int) -> str:
        """Backward when the autograd engine is on the stack (an activation checkpoint's
        recompute runs a module's forward inside it); else the innermost frame that tells:
        Lightning runs forward and backward inside the optimizer's step (its closure), so
        the outer optimizer frame must not win."""
        frames = self.stacks[stack]
        if self.engine(stack):
            return "backward"
        for f in frames:
            if not PYTHON_FILE.search(f.filename):
                continue
            path = f.filename.replace("\\", "/")
            if path.endswith(MODULE_CALL_FILE):
                return "forward"
            if OPTIMIZER_FILES.search(f.filename):
                return "optimizer"
            if f.name in BACKWARD_FUNCTIONS and path.endswith(BACKWARD_FILES):
                return "backward"
        return "other"

    def _site(self, stack: int) -> tuple[str, str, str, int, str]:
        """(label, kind, filename, line, function)."""
        frames = self.stacks[stack]
        python = [f for f in frames if PYTHON_FILE.search(f.filename)]
        for f in python:
            if is_user_frame(f"{f.filename}({f.line}): {f.name}"):
                return _frame_label(f), "user", f.filename, f.line, f.name
        for f in frames:
            node = AUTOGRAD_NODE.search(f.name)
            if node:
                return NODE_LABEL.format(node=node.group(1)), "backward", "", 0, node.group(1)
        for f in frames:
            part = AUTOGRAD_PART.search(f.name)
            if part:  # the engine's own: summing two gradients of one input (InputBuffer::add)
                return ENGINE_LABEL.format(part=part.group(1)), "backward", "", 0, part.group(1)
        if python:
            f = python[0]
            return _frame_label(f, library=True), "library", f.filename, f.line, f.name
        return NO_PYTHON_FRAME, "none", "", 0, ""


def _frame_label(f: Frame, library: bool = False) -> str:
    path = f.filename.replace("\\", "/")
    if library and "-packages/" in path:
        shown = path.split("-packages/", 1)[1]
    else:
        shown = path.rsplit("/", 1)[-1]
    return f"{shown}:{f.line} {f.name}"


class _Alloc(msgspec.Struct):
    size: int
    stack: int
    index: int
    freed_at: int = -1
    freed_by: int = 0
    """The stack of its free (of the program's ``free_requested`` when there is one)."""


def _device_peak(device: DeviceSnapshot, sites: _Sites) -> DevicePeak:
    if not device.events:
        return _end_state(device, sites)
    events = device.events
    allocs: dict[int, _Alloc] = {}  # by event index
    live: dict[int, int] = {}  # addr -> event index of its alloc
    freed_first = 0  # bytes freed in the history that it never allocated
    requested: dict[int, int] = {}  # addr -> the stack of its free_requested
    change = []  # what each event adds to what is allocated, as memory_viz adds and removes
    for i, e in enumerate(events):
        delta = 0
        if e.action == _ALLOC:
            allocs[i] = _Alloc(e.size, e.stack, i)
            live[e.addr] = i
            delta = e.size
        elif e.action == _REQUESTED:
            requested[e.addr] = e.stack
        elif e.action in _FREES:
            j = live.pop(e.addr, None)
            if j is None:
                freed_first += e.size
                delta = -e.size
            else:
                allocs[j].freed_at = i
                allocs[j].freed_by = requested.pop(e.addr, e.stack) or e.stack
                delta = -allocs[j].size
        change.append(delta)
    trace_live = set(live)
    held_before = [b for b in device.held if b.addr not in trace_live]
    start = freed_first + sum(b.requested_size for b in held_before)

    totals = list(accumulate(change, initial=start))[1:]
    peak, peak_index = start, -1
    for i, current in enumerate(totals):
        if current > peak:
            peak, peak_index = current, i
    end = totals[-1]

    at_peak = [
        a for a in allocs.values() if a.index <= peak_index and not 0 <= a.freed_at <= peak_index
    ]
    before = peak - sum(a.size for a in at_peak)
    breaks = _breaks(device, sites)
    holders = dict.fromkeys(HOLDERS, 0)
    holders["before recording"] = before
    tally: dict[tuple[str, str, int], _Tally] = {}
    for a in at_peak:
        holder = _holder(a, events[a.index].time_us, sites, breaks)
        holders[holder] += a.size
        label, kind, filename, line, function = sites.site(a.stack)
        t = tally.setdefault((label, filename, line), _Tally(kind, function))
        t.add(a.size, holder)
    times = [e.time_us for e in events if e.action == _ALLOC or e.action in _FREES]
    times_known = bool(times) and all(t is not None for t in times)
    peak_event = events[peak_index] if peak_index >= 0 else None
    return DevicePeak(
        device=device.device,
        events=len(events),
        peak_bytes=peak,
        peak_index=peak_index,
        peak_allocation=sum(1 for i in allocs if i <= peak_index),
        allocations=len(allocs),
        peak_at_us=_since_first(device, peak_event.time_us) if peak_event and times_known else None,
        peak_phase=sites.phase(peak_event.stack, peak_event.time_us) if peak_event else "other",
        start_bytes=start,
        before_bytes=before,
        end_bytes=end,
        snapshot_end_bytes=sum(b.requested_size for b in device.held),
        reserved_bytes=device.reserved_bytes,
        holders=holders,
        sites=_sorted_sites(tally),
        times_known=times_known,
        timeline=_timeline(device, totals, start, times_known),
    )


def _end_state(device: DeviceSnapshot, sites: _Sites) -> DevicePeak:
    """A snapshot without a history: the end state is all that is known. Its blocks keep
    the frames of their allocation when the history was on for it."""
    tally: dict[tuple[str, str, int], _Tally] = {}
    holders = dict.fromkeys(HOLDERS, 0)
    for b in device.held:
        if b.stack == 0:
            holders["before recording"] += b.requested_size
            continue
        holder = _holder(_Alloc(b.requested_size, b.stack, -1), None, sites, [])
        holders[holder] += b.requested_size
        label, kind, filename, line, function = sites.site(b.stack)
        tally.setdefault((label, filename, line), _Tally(kind, function)).add(
            b.requested_size, holder
        )
    held = sum(b.requested_size for b in device.held)
    return DevicePeak(
        device=device.device,
        events=0,
        peak_bytes=held,
        peak_index=-1,
        peak_allocation=0,
        allocations=0,
        peak_at_us=None,
        peak_phase="other",
        start_bytes=held,
        before_bytes=holders["before recording"],
        end_bytes=held,
        snapshot_end_bytes=held,
        reserved_bytes=device.reserved_bytes,
        holders=holders,
        sites=_sorted_sites(tally),
        times_known=False,
        timeline=(),
    )


def _sorted_sites(tally: dict[tuple[str, str, int], _Tally]) -> tuple[PeakSite, ...]:
    found = (t.site(label, filename, line) for (label, filename, line), t in tally.items())
    return tuple(sorted(found, key=lambda s: (-s.bytes, s.label)))


class _Tally(msgspec.Struct):
    kind: str
    function: str
    bytes: int = 0
    blocks: int = 0
    shares: dict[str, int] = msgspec.field(default_factory=dict)

    def add(self, size: int, holder: str) -> None:
        self.bytes += size
        self.blocks += 1
        self.shares[holder] = self.shares.get(holder, 0) + size

    def site(self, label: str, filename: str, line: int) -> PeakSite:
        holder = max(self.shares.items(), key=lambda kv: kv[1])[0]
        return PeakSite(
            label, self.kind, filename, line, self.function, self.bytes, self.blocks, holder
        )


def _since_first(device: DeviceSnapshot, at: int | None) -> float | None:
    t0 = next((e.time_us for e in device.events if e.time_us is not None), None)
    return None if at is None or t0 is None else float(at - t0)


def _breaks(device: DeviceSnapshot, sites: _Sites) -> list[int]:
    """Indices of the allocations made outside backward: a backward pass ends at the next."""
    return [
        i
        for i, e in enumerate(device.events)
        if e.action == _ALLOC and sites.phase(e.stack, e.time_us) != "backward"
    ]


def _holder(a: _Alloc, time_us: int | None, sites: _Sites, breaks: list[int]) -> str:
    phase = sites.phase(a.stack, time_us)
    if phase == "forward":
        return "activations"
    if phase == "optimizer":
        return "optimizer"
    if phase != "backward":
        return "other"
    if a.freed_at < 0:
        return "gradients"  # still held when the history ends
    if a.freed_by:  # freed by backward itself, or after it (zero_grad, the optimizer)
        return (
            "backward temporaries" if sites.phase(a.freed_by, None) == "backward" else "gradients"
        )
    # the free has no frames (context="alloc"): held past the end of its backward pass
    k = bisect.bisect_right(breaks, a.index)
    ends = breaks[k] if k < len(breaks) else None
    return "gradients" if ends is not None and a.freed_at > ends else "backward temporaries"


def _timeline(
    device: DeviceSnapshot, totals: list[int], start: int, times_known: bool
) -> tuple[tuple[float, int], ...]:
    """The most allocated in each of `TIMELINE_POINTS` slices of the history."""
    events = device.events
    if not events:
        return ()
    if times_known:  # an event without a time (a segment's) takes the one before it
        xs, last = [], float(next(e.time_us for e in events if e.time_us is not None) or 0)
        for e in events:
            last = float(e.time_us) if e.time_us is not None else last
            xs.append(last)
    else:
        xs = [float(i) for i in range(len(events))]
    x0 = xs[0]
    width = max(xs[-1] - x0, 1.0) / TIMELINE_POINTS
    top = [-1] * TIMELINE_POINTS
    for x, current in zip(xs, totals, strict=True):
        k = min(max(int((x - x0) / width), 0), TIMELINE_POINTS - 1)
        top[k] = max(top[k], current)
    out, last = [], start
    for k, v in enumerate(top):
        last = v if v >= 0 else last
        out.append(((k + 0.5) * width, last))
    return tuple(out)
