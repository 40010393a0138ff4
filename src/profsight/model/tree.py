"""`CallTree`: the profile's events aggregated by call path.

Every row event (after torch's nesting and duplicate rules) is a node on the path of its
ancestors' table names; calls with the same path are merged, as pyinstrument's aggregated
view does, so ``ProfilerStep*`` holds all profiled steps. Device work hangs under the
launch call that queued it (or under its owner op when no launch call was recorded), as a
*device node*: its time is already its owner op's self device time, so device nodes are
shown but not added again. Invariants, checked by `TreeNode.check`:

* ``cpu_total == cpu_self + Σ host children's cpu_total``
* ``device_total == device_self + Σ host children's device_total``

When rows sit on more than one thread (the autograd engine runs backward on its own
thread), each thread is a node of its own under the root.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import numpy as np

from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS, EventKind
from profsight.model.attribution import Attributed
from profsight.model.events import I8, I32, I64
from profsight.model.table import kind_label
from profsight.stats import unique

ROOT_NAME = "(all threads)"


#: Events grouped at once when a tree level is built.
CHUNK = 1 << 20


class TreeNode(msgspec.Struct):
    name: str
    kind: str
    calls: int = 0
    cpu_self_us: float = 0.0
    cpu_total_us: float = 0.0
    device_self_us: float = 0.0
    device_total_us: float = 0.0
    is_device: bool = False
    children: list[TreeNode] = msgspec.field(default_factory=list)

    def walk(self) -> Iterator[TreeNode]:
        """Every node, depth first, parents before children (iterative: traces nest deep)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def find(self, name: str) -> TreeNode | None:
        """The first node named `name`, depth first."""
        return next((n for n in self.walk() if n.name == name), None)

    def check(self, tolerance_us: float = 1e-6) -> list[str]:
        """Violations of the invariants, as messages (empty when all hold)."""
        problems = []
        for node in self.walk():
            host = [c for c in node.children if not c.is_device]
            cpu = node.cpu_self_us + sum(c.cpu_total_us for c in host)
            dev = node.device_self_us + sum(c.device_total_us for c in host)
            if not node.is_device and abs(cpu - node.cpu_total_us) > tolerance_us:
                problems.append(f"{node.name}: cpu total {node.cpu_total_us} != {cpu}")
            if not node.is_device and abs(dev - node.device_total_us) > tolerance_us:
                problems.append(f"{node.name}: device total {node.device_total_us} != {dev}")
        return problems

    def to_dict(self) -> dict[str, object]:
        """The subtree as nested dicts (callers prune it first: see `CallTree.pruned`)."""
        data = self._fields()
        stack = [(self, data)]
        while stack:
            node, out = stack.pop()
            kids = [c._fields() for c in node.children]
            out["children"] = kids
            stack.extend(zip(node.children, kids, strict=True))
        return data

    def _fields(self) -> dict[str, object]:
        return {
            "name": self.name,
            "kind": self.kind,
            "calls": self.calls,
            "self_cpu_us": self.cpu_self_us,
            "cpu_total_us": self.cpu_total_us,
            "self_device_us": self.device_self_us,
            "device_total_us": self.device_total_us,
        }

    def _copy(self, children: list[TreeNode]) -> TreeNode:
        return TreeNode(
            self.name,
            self.kind,
            self.calls,
            self.cpu_self_us,
            self.cpu_total_us,
            self.device_self_us,
            self.device_total_us,
            self.is_device,
            children,
        )


#: Deepest level any view shows. Real call stacks are tens deep; a trace nesting thousands of
#: ranges (a recursive model, a broken exporter) is cut here so renderers and JSON encoders,
#: which recurse, keep working. `CallTree.cut_at` says when this happened.
MAX_TREE_DEPTH = 100


class CallTree(msgspec.Struct, dict=True):
    root: TreeNode
    cut_at: int | None = None
    """The depth this view was cut at although deeper nodes exist (see `MAX_TREE_DEPTH`)."""

    def __post_init__(self) -> None:
        # a cache, not a field: no argument, no part of equality or the repr
        self._callees: dict[str, dict[str, float]] | None = None

    @classmethod
    def build(cls, profile: Attributed) -> CallTree:
        return cls(_build(profile))

    def callees(self, name: str) -> dict[str, float]:
        """CPU total of each host call made by the nodes named `name`, by the callee's name,
        summed over every place `name` is called from (one walk of the tree, then a look-up:
        a table explains hundreds of rows)."""
        if self._callees is None:
            callees: dict[str, dict[str, float]] = {}
            for node in self.root.walk():
                for child in node.children:
                    if not child.is_device:
                        into = callees.setdefault(node.name, {})
                        into[child.name] = into.get(child.name, 0.0) + child.cpu_total_us
            self._callees = callees
        return self._callees.get(name, {})

    def pruned(self, depth: int | None = None, min_share: float = 0.0) -> CallTree:
        """A copy without nodes deeper than `depth` (at most `MAX_TREE_DEPTH`) or below
        `min_share` % of the root's time."""
        cpu_ref = self.root.cpu_total_us or 1.0
        dev_ref = self.root.device_total_us or 1.0
        limit = MAX_TREE_DEPTH if depth is None else min(depth, MAX_TREE_DEPTH)

        def keep(node: TreeNode) -> bool:
            share = max(node.cpu_total_us / cpu_ref, node.device_total_us / dev_ref) * 100
            return share >= min_share

        root = self.root._copy([])
        cut_at: int | None = None
        stack = [(self.root, root, 0)]
        while stack:
            node, out, level = stack.pop()
            kept = [c for c in node.children if keep(c)]
            if level >= limit:
                if kept and (depth is None or depth > MAX_TREE_DEPTH):
                    cut_at = MAX_TREE_DEPTH
                continue
            out.children = [c._copy([]) for c in kept]
            stack.extend((c, o, level + 1) for c, o in zip(kept, out.children, strict=True))
        return CallTree(root, cut_at=cut_at)


def _build(profile: Attributed) -> TreeNode:
    ev = profile.events
    at = profile.attribution
    rows = np.flatnonzero(at.is_row & ~at.is_async)  # torch nests no async (open) range
    threads = unique(ev.track[rows])
    per_thread = len(threads) > 1
    # path id of every row: (path of parent, table name), one depth level at a time
    path = np.full(len(ev), -1, np.int32)  # node ids: int32, one per event of a huge trace
    nodes: list[TreeNode] = []
    parents: list[int] = []
    root = TreeNode(ROOT_NAME, "root")
    thread_node: dict[int, int] = {}
    if per_thread:
        for t in threads.tolist():
            thread_node[t] = len(nodes)
            nodes.append(TreeNode(f"thread: {ev.tracks[t].label}", "thread"))
            parents.append(-1)
    names = (at.key_names, ev.kind)
    row_depth = at.depth[rows]
    for d in unique(row_depth).tolist():
        level = rows[row_depth == d]
        up = at.parent[level]
        base = np.where(up >= 0, path[np.maximum(up, 0)], -1)
        if per_thread:
            roots = up < 0
            base[roots] = [thread_node[t] for t in ev.track[level[roots]].tolist()]
        _assign_paths(level, base, at.key[level], path, nodes, parents, names, is_device=False)
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS))
    launcher_path = np.where(at.launcher[work] >= 0, path[np.maximum(at.launcher[work], 0)], -1)
    owner_path = np.where(at.owner[work] >= 0, path[np.maximum(at.owner[work], 0)], -1)
    anchor_path = np.where(launcher_path >= 0, launcher_path, owner_path)
    device = work[anchor_path >= 0]
    if len(device):
        _assign_paths(
            device,
            anchor_path[anchor_path >= 0],
            at.key[device],
            path,
            nodes,
            parents,
            names,
            is_device=True,
        )
    _accumulate(profile, rows, device, path, nodes)
    for i, node in enumerate(nodes):
        (nodes[parents[i]].children if parents[i] >= 0 else root.children).append(node)
    for node in root.walk():
        node.children.sort(key=lambda c: (c.is_device, -(c.cpu_total_us + c.device_total_us)))
    for node in nodes:
        if node.kind == "thread":
            _sum_children(node)
    _sum_children(root)
    root.calls = 1
    return root


def _assign_paths(
    events: I64,
    base: I64,
    key: I32 | I64,
    path: I32,
    nodes: list[TreeNode],
    parents: list[int],
    names: tuple[list[str], I8],
    *,
    is_device: bool,
) -> None:
    """`names`: the aggregation names (`Attribution.key_names`) and each event's kind.

    A node per distinct (parent node, name), numbered in the order of that pair: the events
    are taken `CHUNK` at a time (a level of a huge trace's tree holds millions of rows and a
    few distinct pairs), each chunk's distinct pairs first, then each event's node."""
    labels, kinds = names
    width = len(labels) + 1

    def pairs(lo: int) -> I64:
        pair: I64 = base[lo : lo + CHUNK].astype(np.int64)
        pair += 1
        pair *= width
        pair += key[lo : lo + CHUNK]
        return pair

    found = [np.unique(pairs(lo), return_index=True) for lo in range(0, len(events), CHUNK)]
    if not found:
        return
    every = np.concatenate([u for u, _ in found])
    firsts = np.concatenate([f + k * CHUNK for k, (_, f) in enumerate(found)])
    by_pair = np.lexsort((firsts, every))  # each pair's first event comes first
    every, firsts = every[by_pair], firsts[by_pair]
    new = np.ones(len(every), bool)
    new[1:] = every[1:] != every[:-1]
    unique, first = every[new], firsts[new]
    ids = np.arange(len(nodes), len(nodes) + len(first), dtype=np.int32)
    for at_event in first.tolist():
        event = int(events[at_event])
        label = labels[int(key[at_event])]
        nodes.append(TreeNode(label, kind_label(int(kinds[event])), is_device=is_device))
        parents.append(int(base[at_event]))
    for lo in range(0, len(events), CHUNK):
        path[events[lo : lo + CHUNK]] = ids[np.searchsorted(unique, pairs(lo))]


def _accumulate(
    profile: Attributed, rows: I64, device: I64, path: I32, nodes: list[TreeNode]
) -> None:
    at = profile.attribution
    n = len(nodes)

    row_path, device_path = path[rows], path[device]

    def sums(values: object) -> list[float]:
        weights = np.asarray(values)[rows]
        return np.bincount(row_path, weights=weights, minlength=n).tolist()  # type: ignore[no-any-return]

    calls = np.bincount(row_path, minlength=n) + np.bincount(device_path, minlength=n)
    cpu_self = sums(at.cpu_self)
    cpu_total = np.bincount(row_path, weights=at.cpu_total_of(rows), minlength=n).tolist()
    dev_self, dev_total = sums(at.device_self), sums(at.device_total)
    dur_us = profile.events.dur[device] / 1000.0
    dev_work = np.bincount(device_path, weights=dur_us, minlength=n).tolist()
    for i, node in enumerate(nodes):
        node.calls = int(calls[i])
        if node.is_device:
            node.device_self_us = node.device_total_us = dev_work[i]
        else:
            node.cpu_self_us, node.cpu_total_us = cpu_self[i], cpu_total[i]
            node.device_self_us, node.device_total_us = dev_self[i], dev_total[i]


def _sum_children(node: TreeNode) -> None:
    host = [c for c in node.children if not c.is_device]
    node.cpu_total_us = sum(c.cpu_total_us for c in host)
    node.device_total_us = sum(c.device_total_us for c in host)
    node.calls = 1


__all__ = ["CallTree", "EventKind", "TreeNode"]
