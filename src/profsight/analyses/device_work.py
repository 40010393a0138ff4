"""How the device's work was launched and fed: short kernels, launch delays, copy bandwidth.

Holistic Trace Analysis's kernel launch statistics, read against what the hardware does:

* **Short kernels** (HTA's definition): kernels that ran for less time than the host call
  that launched them. The device finishes them faster than the host can queue the next, so
  a run made of them is as fast as its host's launches, whatever the GPU. Their share of
  the kernel time and the ops that launch the most of them say where fusing (or a CUDA
  graph) would pay.
* **Launch delay** (HTA's): the kernel's start less its launch call's end. A long delay is
  not by itself slow launching: a host that runs ahead of a busy device queues its work,
  and the delay is then the wait behind earlier work on the stream. So the delay is split
  at the end of the work queued ahead of the item on its stream: *behind earlier work*
  (until that end) and *launch latency* (the rest: the stream was free and the item had
  not started). Only the second is the launch path's own cost.
* **Copy bandwidth:** bytes over time of the copies of each direction (host to device,
  pinned or pageable, device to host, device to device, peer), over their busy time and
  per copy. A pageable copy's rate is the host's staging, not the link's.

Launch calls that queued more than one item (a CUDA graph's ``cudaGraphLaunch``) are left
out of the delays and the short kernels: their items wait on each other, not on the host.
"""

from __future__ import annotations

import msgspec
import numpy as np

from profsight.analyses.step import intervals
from profsight.knowledge.hardware import COPY_SERIES_POINTS
from profsight.knowledge.kernels import decode_kernel, is_transfer
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS, EventKind
from profsight.model.events import I64, Bool, EventStore
from profsight.model.profile import Profile
from profsight.stats import median, percentile, unique

NS_PER_US = 1000.0

#: The ops that launch the most short kernels, as many as a report names.
LAUNCHERS_SHOWN = 5


class Launcher(msgspec.Struct, frozen=True):
    """An op that launched short kernels."""

    op: str
    kernels: int
    device_us: float


class ShortKernels(msgspec.Struct, frozen=True):
    count: int
    """Kernels shorter than their launch call."""
    kernels: int
    """Kernels with a launch call of their own (the population judged)."""
    device_us: float
    """Device time of the short kernels."""
    kernel_us: float
    """Device time of all the judged kernels."""
    launch_us: float
    """Host time in the short kernels' launch calls."""
    launchers: tuple[Launcher, ...]
    """The ops that launch the most of them, most kernels first."""

    @property
    def share_pct(self) -> float:
        """The short kernels' share of the judged kernels' device time."""
        return 100.0 * self.device_us / self.kernel_us if self.kernel_us > 0 else 0.0


class LaunchDelays(msgspec.Struct, frozen=True):
    items: int
    """Device items with a launch call of their own."""
    median_us: float
    p90_us: float
    max_us: float
    """Start less the launch call's end (HTA's launch delay), floored at 0."""
    behind_median_us: float
    """The part spent behind earlier work on the item's stream, its median."""
    latency_median_us: float
    latency_p90_us: float
    """The rest (the stream free, the item not started): the launch path's own cost."""


class CopyRate(msgspec.Struct, frozen=True):
    direction: str
    """``HtoD Pinned``, ``DtoH Pageable``, ``DtoD``, ``PtoP``, as the copy's name says."""
    copies: int
    nbytes: int
    busy_us: float
    """The time copies of this direction ran, overlapping copies counted once."""
    rate_busy_us: float
    """The same, of the copies that state their bytes (the rate's denominator)."""
    median_gbps: float
    """The median copy's rate (copies that moved bytes and took time)."""
    series: tuple[tuple[float, float], ...]
    """(ms from the first device item's start, GB/s while copying: bytes over the summed
    durations of the copies begun in the bin) per time bin, the same bins for every
    direction, for a chart."""

    @property
    def gbps(self) -> float:
        """Bytes over the time the copies of this direction that state them ran, overlapping
        ones counted once (GB/s, 1e9 bytes)."""
        return self.nbytes / (self.rate_busy_us * 1e3) if self.rate_busy_us > 0 else 0.0


class DeviceWork(msgspec.Struct, frozen=True):
    short: ShortKernels | None
    delays: LaunchDelays | None
    copies: tuple[CopyRate, ...]

    @property
    def empty(self) -> bool:
        return self.short is None and self.delays is None and not self.copies


def device_work(profile: Profile) -> DeviceWork | None:
    """The trace's launches and copies; None when it recorded no device work."""
    ev = profile.events
    items = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    if not len(items):
        return None
    items = items[np.argsort(ev.start[items], kind="stable")]
    launcher = profile.attribution.launcher[items].astype(np.int64)
    own = _own_launch(launcher)
    work = DeviceWork(
        _short(profile, items[own], launcher[own]),
        _delays(profile, items, launcher, own),
        _copies(profile, items),
    )
    return None if work.empty else work


def _own_launch(launcher: I64) -> np.ndarray:
    """Items whose launch call queued them alone (not a graph launch of many)."""
    linked = launcher >= 0
    calls, counts = np.unique(launcher[linked], return_counts=True)
    single = np.zeros(len(launcher), bool)
    single[linked] = np.isin(launcher[linked], calls[counts == 1])
    return single


def _short(profile: Profile, items: I64, calls: I64) -> ShortKernels | None:
    ev = profile.events
    kernel = ev.kind[items] == int(EventKind.KERNEL)
    items, calls = items[kernel], calls[kernel]
    if not len(items):
        return None
    dur = ev.dur[items]
    short = dur < ev.dur[calls]
    # the ops that launched them, by name id (-1: no op), counted and timed in numpy
    owners = profile.attribution.owner[items[short]].astype(np.int64)
    ids = np.where(owners >= 0, np.asarray(ev.name)[np.maximum(owners, 0)], -1)
    distinct, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
    device = np.bincount(inverse.reshape(-1), weights=dur[short] / NS_PER_US)
    label = [ev.strings[int(n)] if n >= 0 else "(no op)" for n in distinct.tolist()]
    ranked = sorted(range(len(distinct)), key=lambda i: (-counts[i], -device[i], label[i]))
    return ShortKernels(
        count=int(short.sum()),
        kernels=len(items),
        device_us=float(dur[short].sum()) / NS_PER_US,
        kernel_us=float(dur.sum()) / NS_PER_US,
        launch_us=float(ev.dur[calls[short]].sum()) / NS_PER_US,
        launchers=tuple(
            Launcher(label[i], int(counts[i]), float(device[i])) for i in ranked[:LAUNCHERS_SHOWN]
        ),
    )


def _delays(profile: Profile, items: I64, launcher: I64, own: np.ndarray) -> LaunchDelays | None:
    """Each item's delay, split at the end of the work queued ahead of it on its stream
    (items sorted by start: the work ahead is what started before it on its lane)."""
    if not own.any():
        return None
    ev = profile.events
    start = ev.start[items]
    end = ev.end_of(items)
    ahead = np.full(len(items), np.iinfo(np.int64).min)
    lane = ev.lane(items)
    for key in unique(lane).tolist():
        on = np.flatnonzero(lane == key)
        ends = np.maximum.accumulate(end[on])
        ahead[on[1:]] = ends[:-1]
    called = ev.end_of(launcher[own])
    start, ahead = start[own], ahead[own]
    delay = np.maximum(start - called, 0)
    ready = np.maximum(called, ahead)
    latency = np.maximum(start - ready, 0)
    behind = delay - latency
    us = 1.0 / NS_PER_US
    return LaunchDelays(
        items=int(own.sum()),
        median_us=float(median(delay)) * us,
        p90_us=percentile(delay, 90) * us,
        max_us=float(delay.max()) * us,
        behind_median_us=float(median(behind)) * us,
        latency_median_us=float(median(latency)) * us,
        latency_p90_us=percentile(latency, 90) * us,
    )


def moves_data(ev: EventStore) -> Bool:
    """Which events move data on the device: copies and memsets, and the kernels that are a
    runtime's own transfers (MTIA's ``dma_request``: `knowledge.kernels.is_transfer`)."""
    kernel = ev.kind == EventKind.KERNEL
    lut = np.zeros(len(ev.strings), bool)
    for n in unique(ev.name[kernel]).tolist():
        lut[n] = is_transfer(ev.strings[n])
    moving: Bool = (ev.kind == EventKind.MEMCPY) | (ev.kind == EventKind.MEMSET)
    moving |= kernel & lut[ev.name]
    return moving


def _copies(profile: Profile, items: I64) -> tuple[CopyRate, ...]:
    ev = profile.events
    copies = items[ev.kind[items] == int(EventKind.MEMCPY)]
    if not len(copies):
        return ()
    names, which = np.unique(np.asarray(ev.name)[copies], return_inverse=True)
    direction = [decode_kernel(ev.strings[int(n)]).algorithm or "copy" for n in names.tolist()]
    labels = np.array(direction)[which.reshape(-1)]
    t0 = int(ev.start[items].min())
    span = max(int(ev.end_of(items).max()) - t0, 1)
    bins = min(COPY_SERIES_POINTS, len(copies))
    rates = []
    for label in sorted(set(labels.tolist())):
        these = copies[labels == label]
        nbytes = np.maximum(ev.nbytes[these], 0)
        dur = ev.dur[these]
        timed = (dur > 0) & (nbytes > 0)
        per = nbytes[timed] / dur[timed]  # bytes per ns = GB/s
        rates.append(
            CopyRate(
                direction=label,
                copies=len(these),
                nbytes=int(nbytes.sum()),
                busy_us=_ran_us(ev.start[these], ev.end_of(these)),
                rate_busy_us=_ran_us(ev.start[these][timed], ev.end_of(these)[timed]),
                median_gbps=float(median(per)) if len(per) else 0.0,
                series=_series(ev.start[these] - t0, dur, nbytes, span, bins),
            )
        )
    return tuple(rates)


def _ran_us(start: I64, end: I64) -> float:
    s, e = intervals.union(start, end)
    return float((e - s).sum()) / NS_PER_US


def _series(
    start: I64, dur: I64, nbytes: I64, span: int, bins: int
) -> tuple[tuple[float, float], ...]:
    """Bytes over copying time per bin of the trace (a bin is credited with a copy by its
    start): the rate the links ran at while they ran, over time."""
    at = np.minimum((start * bins) // span, bins - 1)
    moved = np.bincount(at, weights=nbytes.astype(np.float64), minlength=bins)
    busy = np.bincount(at, weights=dur.astype(np.float64), minlength=bins)
    width_ms = span / bins / 1e6
    return tuple(
        (round((b + 0.5) * width_ms, 6), float(moved[b] / busy[b]))
        for b in range(bins)
        if busy[b] > 0
    )
