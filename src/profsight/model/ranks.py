"""One file, several ranks: a merged job trace split into one `Profile` per rank.

Merging per-rank traces into one file (by hand, or with a tool) keeps each rank's host
process apart, by its ``pid``; its GPU rows keep the device's number, which ranks on
different hosts share. A file holds several ranks when two or more host processes each
record ``ProfilerStep`` ranges (or, without steps, each launch device work); a DataLoader
worker does neither. Each rank is numbered by ``rank N`` in its process's name, else in
``pid`` order. Device work goes to the rank whose launch call (same ``correlation``) came
last before it: correlation ids repeat across processes, the launch-to-start order does not.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np

from profsight.knowledge.trace_schema import (
    DEVICE_ROW_KINDS,
    LAUNCH_KINDS,
    PROFILER_STEP_PREFIX,
    EventKind,
)
from profsight.model.events import EventStore, Flows
from profsight.model.profile import Profile, TraceMeta

_RANK_LABEL = re.compile(r"rank[ _:#-]?(\d+)", re.IGNORECASE)
#: A launch further than this before its device work is not its launch (ns): an hour.
_MAX_LATENCY_NS = 3600 * 10**9


def rank_parts(profile: Profile) -> list[Profile]:
    """The ranks a merged trace holds, one `Profile` each; [] for a trace of one rank."""
    ev = profile.events
    pid_of_track = [t.pid for t in ev.tracks]
    track_pid = np.array([hash(p) for p in pid_of_track], np.int64)
    pid_of = track_pid[ev.track] if len(ev) else np.zeros(0, np.int64)
    device = ev.mask(DEVICE_ROW_KINDS | {EventKind.SYNC})
    host = ~device
    step_ids = [i for i, s in enumerate(ev.strings) if s.startswith(PROFILER_STEP_PREFIX)]
    stepping = np.unique(pid_of[host & np.isin(ev.name, step_ids)])
    launching = np.unique(pid_of[ev.mask(LAUNCH_KINDS)])
    ranks = stepping if len(stepping) >= 2 else launching
    if len(ranks) < 2 or (len(stepping) == 1 and len(launching) >= 2):
        return []
    labels = {hash(p): _label(profile, p) for p in pid_of_track}
    ranks = np.array(sorted(ranks.tolist(), key=lambda p: (labels[p] is None, labels[p], p)))
    owner = np.full(len(ev), -1, np.int64)
    for k, pid in enumerate(ranks.tolist()):
        owner[host & (pid_of == pid)] = k
    owner[device] = _device_owner(ev, np.flatnonzero(device), owner)
    numbers: list[int] = []
    for k, pid in enumerate(ranks.tolist()):
        label = labels[pid]
        numbers.append(label if label is not None else k)
    if len(set(numbers)) < len(numbers):
        numbers = list(range(len(ranks)))
    return [_part(profile, owner == k, number, len(ranks)) for k, number in enumerate(numbers)]


def _label(profile: Profile, pid: int | str) -> int | None:
    """The rank a process's name states (``rank 3``), if any."""
    for track in profile.events.tracks:
        if track.pid == pid and (m := _RANK_LABEL.search(track.name or "")):
            return int(m.group(1))
    return None


def _device_owner(ev: EventStore, work: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """For each device event: the rank whose launch with its correlation id came last
    before it (-1: none)."""
    launch = np.flatnonzero(ev.mask(LAUNCH_KINDS) & (ev.correlation > 0) & (owner >= 0))
    best = np.full(len(work), np.iinfo(np.int64).max, np.int64)
    out = np.full(len(work), -1, np.int64)
    for k in np.unique(owner[launch]).tolist():
        mine = launch[owner[launch] == k]
        order = np.argsort(ev.correlation[mine], kind="stable")
        corr, start = ev.correlation[mine][order], ev.start[mine][order]
        pos = np.minimum(np.searchsorted(corr, ev.correlation[work]), len(corr) - 1)
        hit = corr[pos] == ev.correlation[work]
        latency = np.where(hit, ev.start[work] - start[pos], np.iinfo(np.int64).max)
        ok = (latency >= 0) & (latency < _MAX_LATENCY_NS) & (latency < best)
        best = np.where(ok, latency, best)
        out = np.where(ok, k, out)
    return out


def _part(profile: Profile, keep: np.ndarray, rank: int, world: int) -> Profile:
    ev = profile.events
    n = len(ev)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(EventStore):
        value = getattr(ev, f.name)
        fields[f.name] = value[keep] if isinstance(value, np.ndarray) and len(value) == n else value
    flows = profile.flows
    tracks = np.unique(ev.track[keep])
    on = np.isin(flows.track, tracks)
    header = dict(profile.meta.header)
    info = dict(profile.meta.distributed)
    header["distributedInfo"] = {**info, "rank": rank, "world_size": info.get("world_size", world)}
    return Profile(
        source=f"{profile.source} (rank {rank})",
        format=profile.format,
        events=EventStore(**fields),
        flows=Flows(flows.flow_id[on], flows.is_start[on], flows.track[on], flows.start[on]),
        meta=TraceMeta(header),
        diagnostics=list(profile.diagnostics),
        load_stats=profile.load_stats,
    )


__all__ = ["rank_parts"]
