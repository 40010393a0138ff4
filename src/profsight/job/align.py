"""Matching the ranks of a job step by step and collective by collective, on one clock.

**Steps** are matched by number (``ProfilerStep#N``): the job's steps are the numbers every
rank profiled. **Collectives** are matched by (step, process group, operation, order within
the step): ranks issue the collectives of a process group in the same order, which is what
makes them work. The group is known where the trace names it (``Process Group Name``, torch
>= 2.1); older traces and gloo's ranges leave it empty.

**Clocks.** Each rank's events are on its host's clock. A collective ends at (nearly) the
same moment on every rank, since none can finish before the last one has sent its data, so
the offset of a rank's clock is the median, over matched collectives, of its end minus the
reference rank's end. On one host the offsets come out near zero; across hosts they absorb
clock skew.

**Waiting.** On the common clock, a rank *arrives* at a collective when its kernel (or
gloo's range) starts; it waits from then until the last rank arrives. The last to arrive is
the one the others wait for.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

import msgspec

from profsight.job.summary import RankSummary
from profsight.model.collectives_seen import Collective

Key = tuple[int | None, str, str, int]
"""(step number, process group, operation, order among that group's and operation's calls in
the step)."""


class MatchedCollective(msgspec.Struct, frozen=True):
    step: int | None
    operation: str
    order: int
    arrival_ns: dict[int, int]
    """Rank -> start on the common clock."""
    end_ns: dict[int, int]
    nbytes: int
    group_size: int

    @property
    def last(self) -> int:
        """The rank that arrived last (the others waited for it)."""
        return max(self.arrival_ns, key=lambda r: (self.arrival_ns[r], r))

    def wait_us(self, rank: int) -> float:
        return (max(self.arrival_ns.values()) - self.arrival_ns[rank]) / 1000.0

    def lead_us(self) -> float:
        """How much later the last rank arrived than the next-to-last: what making the last
        rank as fast as the others would save at this collective."""
        arrivals = sorted(self.arrival_ns.values())
        return (arrivals[-1] - arrivals[-2]) / 1000.0 if len(arrivals) > 1 else 0.0

    def duration_us(self, rank: int) -> float:
        return (self.end_ns[rank] - self.arrival_ns[rank]) / 1000.0


class Alignment(msgspec.Struct, frozen=True):
    steps: tuple[int | None, ...]
    """The step numbers every rank profiled (one None: whole-trace windows)."""
    offsets_ns: dict[int, int]
    """Rank -> its clock minus the reference rank's (from the collectives' ends)."""
    collectives: tuple[MatchedCollective, ...]
    unmatched: int
    """Collectives in the common steps that not every rank has (counted once per rank)."""


def common_steps(ranks: dict[int, RankSummary]) -> tuple[int | None, ...]:
    sets = [set(r.step_numbers()) for r in ranks.values() if r.steps]
    if not sets:
        return ()
    common = set.intersection(*sets)
    if None in common and len(common) > 1:
        common.discard(None)
    return tuple(sorted(common, key=lambda n: -1 if n is None else n))


def _keyed(rank: RankSummary, steps: set[int | None]) -> dict[Key, Collective]:
    numbers = rank.step_numbers()
    seen: dict[tuple[int | None, str, str], int] = defaultdict(int)
    out: dict[Key, Collective] = {}
    for c in sorted(rank.collectives, key=lambda c: c.start_ns):
        if c.step < 0 or c.step >= len(numbers) or numbers[c.step] not in steps:
            continue
        group = (numbers[c.step], c.process_group, c.operation)
        out[(group[0], group[1], group[2], seen[group])] = c
        seen[group] += 1
    return out


def align(ranks: dict[int, RankSummary]) -> Alignment:
    steps = common_steps(ranks)
    timed = {r: s for r, s in ranks.items() if s.timed_on not in (None, "enqueue calls only")}
    keyed = {r: _keyed(s, set(steps)) for r, s in timed.items()}
    shared: set[Key] = set.intersection(*(set(k) for k in keyed.values())) if keyed else set()
    unmatched = sum(len(set(k) - shared) for k in keyed.values())
    if len(keyed) < 2 or not shared:
        return Alignment(steps, dict.fromkeys(ranks, 0), (), unmatched)
    order = sorted(shared, key=lambda k: (-1 if k[0] is None else k[0], k[1], k[2], k[3]))
    ref = min(keyed)

    def absolute_end(rank: int, key: Key) -> int:
        return ranks[rank].origin_ns + keyed[rank][key].end_ns

    offsets = {
        r: round(statistics.median(absolute_end(r, k) - absolute_end(ref, k) for k in order))
        for r in keyed
    }
    for r in ranks:
        offsets.setdefault(r, 0)
    matched = []
    for key in order:
        calls = {r: keyed[r][key] for r in keyed}
        base = {r: ranks[r].origin_ns - offsets[r] for r in keyed}
        first = calls[ref]
        matched.append(
            MatchedCollective(
                step=key[0],
                operation=key[2],
                order=key[3],
                arrival_ns={r: base[r] + c.start_ns for r, c in calls.items()},
                end_ns={r: base[r] + c.end_ns for r, c in calls.items()},
                nbytes=max(c.nbytes for c in calls.values()),
                group_size=first.group_size,
            )
        )
    return Alignment(steps, offsets, tuple(matched), unmatched)


__all__ = ["Alignment", "MatchedCollective", "align", "common_steps"]
