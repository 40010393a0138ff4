"""The collectives of one profile: when each ran, how big it was, and how much compute hid.

A collective is *timed* by its device kernel (NCCL/RCCL) where the trace has one, else by the
backend's range on its worker thread (gloo, MPI, UCC); when neither exists, only the enqueue
calls (``nccl:all_reduce`` on the host) are known: counts and sizes, no timing
(`knowledge.collectives` says which event is which).

*Exposed* communication is the part of a step during which a collective runs and nothing
computes: on a GPU, no other kernel, copy or memset; on the CPU, the step's thread runs no
op (it may be inside a range, such as Lightning's backward, while it waits). That is the
time the step waits for communication, whether for the transfer or for a slower rank
(only a job of all ranks tells the two apart: `profsight.job`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from profsight.analyses.step import intervals
from profsight.analyses.step.comm_names import name_lut
from profsight.knowledge.collectives import (
    backend_of,
    operation_of,
)
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS, EventKind
from profsight.model.collectives_seen import (
    ENQUEUE_ONLY,
    TIMED_ON_DEVICE,
    TIMED_ON_HOST,
    Collective,
    Communication,
    StepComms,
)
from profsight.model.events import I32, I64, Bool, EventStore
from profsight.model.profile import Profile
from profsight.stats import unique

if TYPE_CHECKING:
    from profsight.model.step_windows import Breakdown

#: How far up the call chain a kernel's size and operation are looked for.
_CHAIN = 6


def communication(profile: Profile, breakdown: Breakdown) -> Communication | None:
    """The profile's collectives, or None when it has none."""
    ev = profile.events
    if not len(ev):
        return None
    device_lut, host_lut, sized_lut, comm_lut = name_lut(profile)
    kernels = np.flatnonzero((ev.kind == EventKind.KERNEL) & device_lut[ev.name])
    host = np.flatnonzero(host_lut[ev.name] & ~ev.unfinished & (ev.kind != EventKind.KERNEL))
    if len(kernels):
        chosen, timed_on = kernels, TIMED_ON_DEVICE
    elif len(host):
        chosen, timed_on = host, TIMED_ON_HOST
    else:
        at = profile.attribution
        enqueue = sized_lut[ev.name] & ~np.isin(ev.name, _ids(ev, "record_param_comms"))
        chosen, timed_on = np.flatnonzero(enqueue & at.is_row), ENQUEUE_ONLY
    if not len(chosen):
        return None
    # a collective belongs to the step whose host range issued it; its time is counted in the
    # steps' intervals on the device's clock, which never overlap
    host_lo, host_hi = breakdown.host_ranges_ns if breakdown.steps else ([], [])
    issued_in = list(zip(np.asarray(host_lo).tolist(), np.asarray(host_hi).tolist(), strict=True))
    windows = breakdown.intervals_ns
    collectives = _collectives(profile, chosen, issued_in, sized_lut)
    steps: tuple[StepComms, ...] = ()
    if timed_on != ENQUEUE_ONLY:
        compute = _compute_set(profile, breakdown, comm_lut, on_device=timed_on == TIMED_ON_DEVICE)
        busy = intervals.union(ev.start[chosen], ev.end_of(chosen))
        steps = tuple(_step(busy, compute, lo, hi) for lo, hi in windows)
    backends = sorted({c.backend for c in collectives})
    return Communication(timed_on, ", ".join(backends), collectives, steps, max(len(windows), 1))


def _ids(ev: EventStore, name: str) -> list[int]:
    return [i for i, s in enumerate(ev.strings) if s == name]


def _step(busy: tuple[I64, I64], compute: tuple[I64, I64], lo: int, hi: int) -> StepComms:
    clipped = intervals.clip(*busy, lo, hi)
    total = intervals.length(*clipped)
    hidden = intervals.overlap(clipped, intervals.clip(*compute, lo, hi))
    return StepComms(total / 1000.0, (total - hidden) / 1000.0)


def _compute_set(
    profile: Profile, breakdown: Breakdown, comm_lut: Bool, on_device: bool
) -> tuple[I64, I64]:
    """What computes: other device work on a GPU run; the step thread's ops on the CPU."""
    ev = profile.events
    if on_device:
        work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS) & ~comm_lut[ev.name])
    else:  # ops on any thread (autograd's too), not ranges: a range (Lightning's backward) can
        # be what the thread waits in
        at = profile.attribution
        work = np.flatnonzero(
            at.is_row & ~at.is_async & (ev.kind == EventKind.CPU_OP) & ~comm_lut[ev.name]
        )
    return intervals.union(ev.start[work], ev.end_of(work))


def _collectives(
    profile: Profile, chosen: I64, windows: list[tuple[int, int]], sized: Bool
) -> tuple[Collective, ...]:
    """The `Collective` of each chosen event, its fields worked out a column at a time (the
    string rules run once per distinct name)."""
    ev, at = profile.events, profile.attribution
    chain = _chains(profile, chosen)
    on = chain >= 0
    j = np.maximum(chain, 0)
    nbytes = np.where(on, ev.comm_bytes[j], -1).max(axis=1)
    group = _first(on & (ev.group_size[j] > 0), ev.group_size[j])
    group = np.where(group > 0, group, _declared_group(profile))
    pg = _first(on & (ev.process_group[j] >= 0), ev.process_group[j])
    operation = _operations(ev, chain, sized)
    launcher = at.launcher[chosen]
    issued = np.where((ev.kind[chosen] == EventKind.KERNEL) & (launcher >= 0), launcher, chosen)
    t = ev.start[issued]
    step = np.full(len(chosen), -1, np.int64)
    for k in range(len(windows) - 1, -1, -1):  # (the first window that holds it)
        lo, hi = windows[k]
        step[(t >= lo) & (t < hi)] = k
    declared = str(profile.meta.distributed.get("backend", ""))
    rocm = _on_rocm(profile)
    backend: dict[int, str] = {}
    for n in unique(ev.name[chosen]).tolist():
        b = backend_of(ev.strings[n], declared)
        backend[n] = "RCCL" if b == "NCCL" and rocm else b  # RCCL keeps NCCL's names
    strings = ev.strings
    return tuple(
        Collective(op, strings[n], backend[n], st, s, e, nb, g, strings[p] if p >= 0 else "")
        for op, n, st, s, e, nb, g, p in zip(
            operation,
            ev.name[chosen].tolist(),
            step.tolist(),
            ev.start[chosen].tolist(),
            ev.end_of(chosen).tolist(),
            nbytes.tolist(),
            group.tolist(),
            pg.tolist(),
            strict=True,
        )
    )


def _chains(profile: Profile, events: I64) -> I64:
    """Per event, its call chain (`_CHAIN` wide, -1 past its end): the event, then (for
    device work) the host row it is attributed to, and that row's parents."""
    at = profile.attribution
    chain = np.full((len(events), _CHAIN), -1, np.int64)
    chain[:, 0] = events
    kernel = profile.events.kind[events] == EventKind.KERNEL
    chain[:, 1] = np.where(kernel, at.owner[events], at.parent[events])
    for k in range(2, _CHAIN):
        up = chain[:, k - 1]
        chain[:, k] = np.where(up >= 0, at.parent[np.maximum(up, 0)], -1)
    return chain


def _first(where: Bool, values: I32 | I64) -> I64:
    """Per row, the value at the first column `where` holds (-1: none)."""
    k = np.argmax(where, axis=1)
    rows = np.arange(len(where))
    found: I64 = np.where(where[rows, k], values[rows, k], -1)
    return found


def _operations(ev: EventStore, chain: I64, sized: Bool) -> list[str]:
    """The collective's own ``Collective name``; else its host call's (an NCCL kernel named
    ``SendRecv`` may run an all-to-all); else what the event's own name says."""
    on = chain >= 0
    j = np.maximum(chain, 0)
    names, named = ev.name[j], on & (ev.collective[j] >= 0)
    pairs = names.astype(np.int64) * (len(ev.strings) + 1) + (ev.collective[j] + 1)
    distinct, inverse = np.unique(pairs, return_inverse=True)
    width = len(ev.strings) + 1
    found = [
        operation_of(ev.strings[p // width], ev.strings[p % width - 1] if p % width else "")
        for p in distinct.tolist()
    ]
    ops = np.array(found, object)
    code = inverse.reshape(chain.shape)
    known = np.array([op != "other" for op in found], bool)[code] & on
    caller = on & sized[names]
    caller[:, 0] = False
    out = np.full(len(chain), "other", object)
    own = np.zeros_like(known)
    own[:, 0] = known[:, 0]
    for choice in (own, known & caller, known & named):  # (the last choice set wins)
        k = np.argmax(choice, axis=1)
        rows = np.flatnonzero(choice[np.arange(len(chain)), k])
        out[rows] = ops[code[rows, k[rows]]]
    return [str(o) for o in out.tolist()]


def _on_rocm(profile: Profile) -> bool:
    header = profile.meta.header
    return any(k.startswith(("hip_", "roctracer")) for k in header) or any(
        "AMD" in str(d.get("name", "")) or "Instinct" in str(d.get("name", ""))
        for d in profile.meta.devices
    )


def _declared_group(profile: Profile) -> int:
    size = profile.meta.distributed.get("world_size")
    return size if isinstance(size, int) and size > 0 else -1


__all__ = ["communication"]
