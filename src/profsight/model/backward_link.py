"""Which forward op made each autograd node: the link torch follows to give the backward
pass its forward op's call stack (``EventList._set_backward_stacktraces``).

An autograd node's own range (``ReluBackward0``, ``torch::autograd::AccumulateGrad``) is
the child of the engine's range of its name (``autograd::engine::evaluate_function:
ReluBackward0``). It carries the ``Sequence number`` of the forward op that made it and the
``Fwd thread id`` of that op's thread, in torch's own numbering of threads, which the trace
does not map to its thread ids. Each of those numbers is given the trace thread whose
forward ops hold the most of its nodes' sequence numbers; a node's forward op is then the
first op (torch's order: start, then the longest) of that thread with its sequence number,
outside any node and not the engine's range around one, as torch takes it, or the last, the
op that made the node.
"""

from __future__ import annotations

import numpy as np

from profsight.knowledge.trace_schema import ENGINE_EVALUATE_PREFIX
from profsight.model.attribution import Attributed
from profsight.model.events import I64
from profsight.model.nesting import nearest_marked
from profsight.stats import unique


def autograd_nodes(profile: Attributed) -> I64:
    """The autograd nodes' own ranges (torch's ``BACKWARD_FUNCTION`` scope), sorted."""
    ev = profile.events
    parent = profile.attribution.parent
    names = {ev.strings[i]: i for i in unique(ev.name).tolist()}
    head = ENGINE_EVALUATE_PREFIX + ": "
    node_of = {
        i: names.get(text[len(head) :], -1) for text, i in names.items() if text.startswith(head)
    }
    if not node_of:
        return np.zeros(0, np.int64)
    engine = np.flatnonzero(np.isin(ev.name, list(node_of)))
    inside = np.flatnonzero(np.isin(parent, engine))
    lut = np.full(len(ev.strings), -2, np.int64)
    lut[list(node_of)] = list(node_of.values())
    named = ev.name[inside] == lut[ev.name[parent[inside]]]
    found: I64 = inside[named].astype(np.int64)
    return found


def forward_ops(profile: Attributed, events: I64, creator: bool = False) -> tuple[I64, I64]:
    """For each of `events` (sorted in torch's order): the autograd node it is or is inside
    (-1: none), and that node's forward op among `events` (-1: none found): torch's, the
    first op with the node's sequence number; or, with `creator`, the last, the op that
    made the node. (An op records the number the next node will take whether it makes one
    or not: ``argmax`` before a convolution records the convolution's node's number.)"""
    ev = profile.events
    none = np.full(len(events), -1, np.int64)
    if not len(ev.sequence) or not (ev.sequence >= 0).any():
        return none, none.copy()
    nodes = autograd_nodes(profile)
    node = nearest_marked(events, nodes, profile.attribution.parent)
    candidate = (node < 0) & (ev.sequence[events] >= 0)
    if len(ev.fwd_thread):  # not the engine's range around a node (the backward's side)
        candidate &= ev.fwd_thread[events] <= 0
    forward = np.flatnonzero(candidate)
    seq = ev.sequence[events[forward]].astype(np.int64)
    thread = ev.track[events[forward]].astype(np.int64)
    # the first forward op of each (thread, sequence number)
    packed = thread * (1 << 32) + seq
    if creator:  # the last of each: np.unique keeps the first, so read them reversed
        key, first = np.unique(packed[::-1], return_index=True)
        first_op = forward[::-1][first]
    else:
        key, first = np.unique(packed, return_index=True)
        first_op = forward[first]
    inside = np.flatnonzero(node >= 0)
    node_seq = ev.sequence[node[inside]].astype(np.int64)
    node_fwd = ev.fwd_thread[node[inside]].astype(np.int64) if len(ev.fwd_thread) else node_seq * 0
    op_of = np.full(len(events), -1, np.int64)
    # a tie goes to a thread that runs no node (the forward's, not the backward's own)
    node_threads = set(ev.track[node[inside]].astype(np.int64).tolist())
    for torch_thread in unique(node_fwd).tolist():
        mine = node_fwd == torch_thread
        seqs = node_seq[mine]
        best, best_rank = -1, (0, False)
        for t in unique(thread).tolist():
            rank = (int(np.isin(t * (1 << 32) + seqs, key).sum()), t not in node_threads)
            if rank[0] and rank > best_rank:
                best, best_rank = t, rank
        if best < 0:
            continue
        wanted = best * (1 << 32) + seqs
        pos = np.minimum(np.searchsorted(key, wanted), len(key) - 1)
        hit = key[pos] == wanted
        at = inside[mine]
        op_of[at[hit]] = first_op[pos[hit]]
    return node, op_of
