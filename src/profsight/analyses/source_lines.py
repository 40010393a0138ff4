"""Time by source line: the user's own Python functions, library frames folded into them.

A trace recorded with ``with_stack=True`` nests each op under the Python frames that called
it. Each host event's self time (and its kernels' device time) goes to the nearest frame of
the user's own code above it (`knowledge.source_frames.is_user_frame`): the library frames
between (``torch/nn/modules/module.py(1782): _call_impl``, a built-in) fold into it. An op
of the backward pass (inside an autograd node, under ``run_backward`` or on the autograd
engine's own thread) goes to the frame of the forward op that made its node: the last op
of the forward pass with the node's sequence number (torch's ``_set_backward_stacktraces``
gives it the first one's stack, which can be an op that made no node:
`model.backward_link`). A function's *total* is its self time and
that of every function it called, a recursive call counted once; its *calls* are how often
it ran.
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np

from profsight.knowledge.source_frames import SOURCE_LINE_ROWS, is_user_frame
from profsight.knowledge.trace_schema import EventKind
from profsight.model.backward_link import forward_ops
from profsight.model.events import I64
from profsight.model.nesting import nearest_marked
from profsight.model.profile import Profile
from profsight.stats import unique


class SourceLine(msgspec.Struct, frozen=True):
    frame: str
    """``path(line): function`` as ``with_stack`` names it (the function's first line)."""
    calls: int
    self_cpu_us: float
    total_cpu_us: float
    self_device_us: float
    total_device_us: float
    backward_cpu_us: float = 0.0
    """The part of the self CPU time spent in the backward of this function's ops."""
    backward_device_us: float = 0.0


class SourceLines(msgspec.Struct, frozen=True):
    rows: tuple[SourceLine, ...]
    """The functions with the most total time (the larger of CPU and device), at most
    `SOURCE_LINE_ROWS`."""
    functions: int
    """The user's functions seen."""
    cpu_us: float
    """Self CPU time of every host event."""
    device_us: float
    outside_cpu_us: float
    """Self CPU time no frame of the user's holds (before the first, or on a thread of
    their own)."""
    outside_device_us: float
    called_from: dict[str, str]
    """Per row name of the table: the user's function that holds most of its self time
    (device time on a GPU run)."""

    @property
    def by_device(self) -> bool:
        return self.device_us > 0

    @property
    def by(self) -> str:
        """What the rows are ranked by: ``device`` time on a GPU run, else ``cpu``."""
        return "device" if self.by_device else "cpu"


def source_lines(profile: Profile) -> SourceLines | None:
    """The user's functions and their time; None without Python frames of the user's."""
    ev = profile.events
    at = profile.attribution
    host = np.flatnonzero(at.is_row)
    python = host[ev.kind[host] == EventKind.PYTHON]
    if not len(python):
        return None
    names = unique(ev.name[python]).tolist()
    user_names = [i for i in names if is_user_frame(ev.strings[i])]
    if not user_names:
        return None
    user = python[np.isin(ev.name[python], user_names)].astype(np.int64)
    holder = nearest_marked(host.astype(np.int64), user, at.parent)
    holder, backward = _backward_to_forward(profile, host.astype(np.int64), holder)
    cpu = at.cpu_self[host]
    device = at.device_self[host]
    held = holder >= 0
    at_user = np.searchsorted(user, holder[held])
    self_cpu = np.bincount(at_user, weights=cpu[held], minlength=len(user))
    self_dev = np.bincount(at_user, weights=device[held], minlength=len(user))
    bw = held & backward
    at_bw = np.searchsorted(user, holder[bw])
    bw_cpu = _by_name(ev.name[user], at_bw, cpu[bw])
    bw_dev = _by_name(ev.name[user], at_bw, device[bw])
    totals = _totals(profile, user, self_cpu, self_dev)
    rows = []
    for name, (calls, s_cpu, t_cpu, s_dev, t_dev) in totals.items():
        rows.append(
            SourceLine(
                ev.strings[name],
                calls,
                s_cpu,
                t_cpu,
                s_dev,
                t_dev,
                bw_cpu.get(name, 0.0),
                bw_dev.get(name, 0.0),
            )
        )
    by_device = float(device.sum()) > 0
    rows.sort(key=lambda r: r.total_device_us if by_device else r.total_cpu_us, reverse=True)
    return SourceLines(
        rows=tuple(rows[:SOURCE_LINE_ROWS]),
        functions=len(rows),
        cpu_us=float(cpu.sum()),
        device_us=float(device.sum()),
        outside_cpu_us=float(cpu[~held].sum()),
        outside_device_us=float(device[~held].sum()),
        called_from=_called_from(profile, host, holder, device if by_device else cpu),
    )


def _by_name(names: Any, at: Any, weight: Any) -> dict[int, float]:
    """`weight` summed per user function name (`at`: positions among the user events)."""
    if not len(at):
        return {}
    ids, inverse = np.unique(names[at], return_inverse=True)
    sums = np.bincount(inverse.reshape(-1), weights=weight, minlength=len(ids))
    return dict(zip(ids.tolist(), sums.tolist(), strict=True))


def _backward_to_forward(profile: Profile, host: I64, holder: I64) -> tuple[I64, Any]:
    """`holder` with each event of the backward pass (inside an autograd node) given the
    frame of the forward op that made its node (`model.backward_link`), where that op has
    one: the backward of a layer is its forward line's, not the ``loss.backward()``
    caller's; and which events were so given."""
    ev = profile.events
    order = np.lexsort((-ev.end_of(host), ev.start[host]))  # torch's order
    node, op = forward_ops(profile, host[order], creator=True)
    moved = np.zeros(len(host), bool)
    found = np.flatnonzero((node >= 0) & (op >= 0))
    if not len(found):
        return holder, moved
    out: I64 = holder.copy()
    to = order[found]
    given = holder[order[op[found]]]
    keep = given >= 0
    out[to[keep]] = given[keep]
    moved[to[keep]] = True
    return out, moved


def _totals(
    profile: Profile, user: I64, self_cpu: Any, self_dev: Any
) -> dict[int, tuple[int, float, float, float, float]]:
    """Per user function (name id): calls, self and total CPU, self and total device time.
    A call's total is its own self time and that of every user call below it; a function
    on its own chain twice (recursion) counts it once."""
    ev = profile.events
    at = profile.attribution
    up = np.full(len(user), -1, np.int64)
    has_parent = at.parent[user] >= 0
    up[has_parent] = nearest_marked(at.parent[user[has_parent]].astype(np.int64), user, at.parent)
    order = np.lexsort((-ev.end_of(user), ev.start[user]))  # ancestors first
    position = np.searchsorted(user, up)
    chains: dict[tuple[int, int], int] = {}
    names_of: list[frozenset[int]] = [frozenset()]
    chain_of = np.zeros(len(user), np.int64)
    name = ev.name[user].tolist()
    for i in order.tolist():
        parent_chain = int(chain_of[position[i]]) if up[i] >= 0 else 0
        key = (parent_chain, name[i])
        chain = chains.get(key)
        if chain is None:
            chain = chains[key] = len(names_of)
            names_of.append(names_of[parent_chain] | {name[i]})
        chain_of[i] = chain
    per_chain_cpu = np.bincount(chain_of, weights=self_cpu, minlength=len(names_of))
    per_chain_dev = np.bincount(chain_of, weights=self_dev, minlength=len(names_of))
    ids = np.array(name, np.int64)
    distinct, inverse = np.unique(ids, return_inverse=True)
    calls = np.bincount(inverse.reshape(-1), minlength=len(distinct))
    s_cpu = np.bincount(inverse.reshape(-1), weights=self_cpu, minlength=len(distinct))
    s_dev = np.bincount(inverse.reshape(-1), weights=self_dev, minlength=len(distinct))
    t_cpu = dict.fromkeys(distinct.tolist(), 0.0)
    t_dev = dict.fromkeys(distinct.tolist(), 0.0)
    for chain, members in enumerate(names_of):
        c, d = float(per_chain_cpu[chain]), float(per_chain_dev[chain])
        if c or d:
            for n in members:
                t_cpu[n] += c
                t_dev[n] += d
    return {
        n: (int(calls[k]), float(s_cpu[k]), t_cpu[n], float(s_dev[k]), t_dev[n])
        for k, n in enumerate(distinct.tolist())
    }


def _called_from(profile: Profile, host: I64, holder: I64, weight: Any) -> dict[str, str]:
    """Per table row name (ops, ranges: not the frames themselves): the user's function
    holding most of its self time."""
    ev = profile.events
    at = profile.attribution
    keep = (holder >= 0) & (ev.kind[host] != EventKind.PYTHON) & (weight > 0)
    if not keep.any():
        return {}
    key = at.key[host[keep]].astype(np.int64)
    frame = ev.name[holder[keep]].astype(np.int64)
    pairs = np.stack([key, frame])
    distinct, inverse = np.unique(pairs, axis=1, return_inverse=True)
    time = np.bincount(inverse.reshape(-1), weights=weight[keep], minlength=distinct.shape[1])
    best: dict[int, tuple[float, int]] = {}
    for (k, f), t in zip(distinct.T.tolist(), time.tolist(), strict=True):
        if t > best.get(k, (-1.0, 0))[0]:
            best[k] = (t, f)
    return {at.key_names[k]: ev.strings[f] for k, (_, f) in best.items()}
