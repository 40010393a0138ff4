"""One file, several ranks: a merged job trace split into one `Profile` per rank.

Merging per-rank traces into one file (by hand, or with a tool) keeps each rank's host
process apart, by its ``pid``; its GPU rows keep the device's number, which ranks on
different hosts share. A file holds several ranks when two or more host processes each
record ``ProfilerStep`` ranges (or, without steps, each launch device work); a DataLoader
worker does neither. Each rank is numbered by ``rank N`` in its process's name, else in
``pid`` order. Device work goes to the rank whose launch call (same ``correlation``) came
last before it: correlation ids repeat across processes, the launch-to-start order does not.
A file with no host op at all (a merge filtered down to its collective kernels) is split by
the ranks it states (``RANK 3 - GPU``, ``args.rank``), never by its device numbers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, overload

import numpy as np

from profsight.knowledge.trace_schema import (
    DEVICE_ROW_KINDS,
    LAUNCH_KINDS,
    PROFILER_STEP_PREFIX,
    EventKind,
)
from profsight.lazy import regex
from profsight.model.events import EventStore, Flows
from profsight.model.profile import Profile
from profsight.model.trace_meta import TraceMeta
from profsight.stats import median as median_of
from profsight.stats import unique

_RANK_LABEL = regex(r"rank[ _:#-]?(\d+)", re.IGNORECASE)
#: A launch further than this before its device work is not its launch (ns): an hour.
_MAX_LATENCY_NS = 3600 * 10**9


class RankParts(Sequence[Profile]):
    """The ranks of a merged trace, each `Profile` made when it is asked for (a copy of that
    rank's events). A job of many ranks is explained one rank at a time: all the copies at
    once would double the trace in memory (a 10 GB trace of 40 ranks: +1.7 GB)."""

    def __init__(
        self,
        profile: Profile,
        owner: np.ndarray,
        numbers: list[int],
        how: str = "one host process each",
    ) -> None:
        self._profile = profile
        self._owner = owner
        self._numbers = numbers
        self.how = how
        """How the ranks were told apart, for the job's notes."""

    def __len__(self) -> int:
        return len(self._numbers)

    @overload
    def __getitem__(self, k: int) -> Profile: ...
    @overload
    def __getitem__(self, k: slice) -> list[Profile]: ...
    def __getitem__(self, k: int | slice) -> Profile | list[Profile]:
        if isinstance(k, slice):
            return [self[i] for i in range(len(self))[k]]
        number = self._numbers[k]  # (raises IndexError past the end, as iteration expects)
        return _part(self._profile, self._owner == k % len(self), number, len(self))

    @property
    def sources(self) -> list[str]:
        """Each rank's `Profile.source`, without making the rank."""
        return [_source(self._profile, number) for number in self._numbers]


def rank_parts(profile: Profile) -> RankParts:
    """The ranks a merged trace holds, one `Profile` each (made when asked for); none for a
    trace of one rank."""
    ev = profile.events
    pid_of_track = [t.pid for t in ev.tracks]
    track_pid = np.array([hash(p) for p in pid_of_track], np.int64)
    pid_of = track_pid[ev.track] if len(ev) else np.zeros(0, np.int64)
    device = ev.mask(DEVICE_ROW_KINDS | {EventKind.SYNC})
    # a rank is a process running ops; a device's own timeline (runtime rows included, as
    # some tracers write them) is none
    ops = unique(pid_of[ev.kind == EventKind.CPU_OP])
    ops = ops[~np.isin(ops, unique(pid_of[device]))]
    host = ~device & np.isin(pid_of, ops)
    step_ids = [i for i, s in enumerate(ev.strings) if s.startswith(PROFILER_STEP_PREFIX)]
    stepping = unique(pid_of[host & np.isin(ev.name, step_ids)])
    launching = unique(pid_of[host & ev.mask(LAUNCH_KINDS)])
    ranks = stepping if len(stepping) >= 2 else launching
    labels = {hash(p): _label(profile, p) for p in pid_of_track}
    if len(ranks) < 2 and not len(ops):
        return _stated_ranks(profile, pid_of, labels)
    if len(ranks) < 2 or (len(stepping) == 1 and len(launching) >= 2):
        return RankParts(profile, np.zeros(0, np.int32), [])
    ranks = np.array(sorted(ranks.tolist(), key=lambda p: (labels[p] is None, labels[p], p)))
    owner = np.full(len(ev), -1, np.int32)
    for k, pid in enumerate(ranks.tolist()):
        owner[host & (pid_of == pid)] = k
    owner[device] = _device_owner(ev, np.flatnonzero(device), owner)
    numbers: list[int] = []
    for k, pid in enumerate(ranks.tolist()):
        label = labels[pid]
        numbers.append(label if label is not None else k)
    if len(set(numbers)) < len(numbers):
        numbers = list(range(len(ranks)))
    return RankParts(profile, owner, numbers)


def _stated_ranks(profile: Profile, pid_of: np.ndarray, labels: dict[int, int | None]) -> RankParts:
    """A trace with no host ops (a merge filtered down to its device rows, or the GPU
    timelines alone): its processes are ranks only where the trace states them (a process
    named ``RANK 3 - GPU``, events tagged ``args.rank``); one process driving several GPUs
    has a device number per GPU, which is no rank."""
    stated = sorted({r for r in labels.values() if r is not None})
    if len(stated) < 2:
        return RankParts(profile, np.zeros(0, np.int32), [])
    index = {pid: stated.index(r) for pid, r in labels.items() if r is not None}
    lut_keys = np.array(list(index), np.int64)
    lut_vals = np.array(list(index.values()), np.int32)
    order = np.argsort(lut_keys)
    pos = np.minimum(np.searchsorted(lut_keys[order], pid_of), len(order) - 1)
    hit = lut_keys[order][pos] == pid_of
    owner = np.where(hit, lut_vals[order][pos], -1).astype(np.int32)
    return RankParts(profile, owner, stated, "no host op; each process named by its rank")


def _source(profile: Profile, rank: int) -> str:
    return f"{profile.source} (rank {rank})"


def _label(profile: Profile, pid: int | str) -> int | None:
    """The rank a process's name states (``rank 3``), if any."""
    for track in profile.events.tracks:
        if track.pid == pid and (m := _RANK_LABEL.search(track.name or "")):
            return int(m.group(1))
    return None


def _device_owner(ev: EventStore, work: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """For each device event: its rank. A device whose work one rank's launches explain
    (`DEVICE_SHARE` of it: the same correlation id, launched before it) goes whole to that
    rank, the closest in time first, one device per rank; the work of a device no rank
    explains alone (ranks on different hosts share device numbers) goes event by event to
    the rank whose launch came last before it (-1: none)."""
    latency = _latencies(ev, work, owner)
    per_event = (
        np.where(np.isfinite(latency).any(axis=0), np.argmin(latency, axis=0), -1)
        if len(latency)
        else np.full(len(work), -1)
    )
    out = per_event.astype(np.int64)
    device = ev.device[work]
    scores = []
    for d in unique(device).tolist():
        on = device == d
        for k in range(len(latency)):
            matched = np.isfinite(latency[k][on])
            if matched.any():
                median = float(median_of(latency[k][on][matched]))
                scores.append((-float(matched.mean()), median, d, k))
    taken: set[int] = set()
    placed: set[int] = set()
    one_each = len(unique(device)) <= len(latency)
    for negative_share, _, d, k in sorted(scores):
        if d in placed or -negative_share < DEVICE_SHARE or (one_each and k in taken):
            continue
        out[device == d] = k
        placed.add(d)
        taken.add(k)
    return out


#: A device goes whole to a rank whose launches explain at least this share of its work.
DEVICE_SHARE = 0.9


def _latencies(ev: EventStore, work: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Per rank and device event: the time from the rank's launch with the event's
    correlation id to the event (inf: none before it)."""
    launch = np.flatnonzero(ev.mask(LAUNCH_KINDS) & (ev.correlation > 0) & (owner >= 0))
    ranks = int(owner.max()) + 1 if len(owner) else 0
    out = np.full((ranks, len(work)), np.inf)
    for k in unique(owner[launch]).tolist():
        mine = launch[owner[launch] == k]
        order = np.argsort(ev.correlation[mine], kind="stable")
        corr, start = ev.correlation[mine][order], ev.start[mine][order]
        pos = np.minimum(np.searchsorted(corr, ev.correlation[work]), len(corr) - 1)
        hit = corr[pos] == ev.correlation[work]
        latency = (ev.start[work] - start[pos]).astype(np.float64)
        ok = hit & (latency >= 0) & (latency < _MAX_LATENCY_NS)
        out[k] = np.where(ok, latency, np.inf)
    return out


def _part(profile: Profile, keep: np.ndarray, rank: int, world: int) -> Profile:
    ev = profile.events
    n = len(ev)
    fields: dict[str, Any] = {}
    for name in EventStore.__struct_fields__:
        value = getattr(ev, name)
        fields[name] = value[keep] if isinstance(value, np.ndarray) and len(value) == n else value
    flows = profile.flows
    tracks = unique(ev.track[keep])
    on = np.isin(flows.track, tracks)
    header = dict(profile.meta.header)
    info = dict(profile.meta.distributed)
    header["distributedInfo"] = {**info, "rank": rank, "world_size": info.get("world_size", world)}
    return Profile(
        source=_source(profile, rank),
        format=profile.format,
        events=EventStore(**fields),
        flows=Flows(flows.flow_id[on], flows.is_start[on], flows.track[on], flows.start[on]),
        meta=TraceMeta(header),
        diagnostics=list(profile.diagnostics),
        load_stats=profile.load_stats,
    )


__all__ = ["RankParts", "rank_parts"]
