"""`analyse`: a distributed job explained as one (`JobData`), from the summaries of its ranks.

Per rank, over the steps every rank profiled: step time and its breakdown, communication
(busy, exposed) and the time spent waiting for other ranks at collectives. Across ranks:
the straggler (the rank the others wait for) and what makes it slow, communication per
operation with sizes and bandwidth, and the findings that follow.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from msgspec.structs import asdict, replace

from profsight.job.align import Alignment, MatchedCollective, align
from profsight.job.device_window import held_note
from profsight.job.job_findings import job_findings, job_summary, straggler_of
from profsight.job.summary import RankSummary, StepSummary
from profsight.job.views import JobData, OperationView, RankView, Straggler
from profsight.knowledge.advice import STRAGGLER_PCT
from profsight.knowledge.collectives import bus_factor
from profsight.knowledge.phases import Phase
from profsight.model.collectives_seen import ENQUEUE_ONLY
from profsight.model.findings import ranked
from profsight.model.step_windows import step_time


def analyse(
    ranks: dict[int, RankSummary],
    world_size: int | None,
    diagnostics: list[str],
    run: dict[str, Any] | None = None,
    apart: str = "",
) -> JobData:
    """`apart`: why the traces are not the ranks of one job (`one_job.not_one_job`), or "":
    then each is shown on its own, and none is compared with another."""
    alignment = align(ranks)
    if len(ranks) > 1 and not alignment.steps:
        diagnostics.append(
            "the ranks profiled no step in common (ProfilerStep numbers differ): each rank's "
            "steps are shown, but ranks cannot be compared step by step"
        )
    if alignment.unmatched:
        diagnostics.append(
            f"{alignment.unmatched} collective(s) in the common steps are not on every rank "
            "(a rank's trace was cut, or ranks issue different collectives): they are left out "
            "of the comparison"
        )
    views = tuple(_view(rank, s, alignment) for rank, s in sorted(ranks.items()))
    if not apart:
        diagnostics += _notes(ranks, views, alignment, world_size)
    operations = _operations(ranks, alignment)
    straggler = None if apart else straggler_of(views, alignment)
    views = _with_roles(views, straggler)
    backends = sorted({s.backend for s in ranks.values() if s.backend})
    timed = sorted({s.timed_on for s in ranks.values() if s.timed_on})
    report = JobData(
        sources=tuple(s.path for _, s in sorted(ranks.items())),
        world_size=world_size,
        ranks=views,
        steps=alignment.steps,
        backend=", ".join(backends),
        timed_on=timed[0] if timed else None,
        operations=operations,
        straggler=straggler,
        findings=(),
        summary="",
        diagnostics=tuple(diagnostics),
        run=dict(run or {}),
        not_one_job=apart,
    )
    findings = () if apart else tuple(ranked(job_findings(report)))
    if len(ranks) == 1:  # nothing to compare: the rank's own findings are the job's
        findings = next(iter(ranks.values())).findings
    return JobData(
        **{**asdict(report), "findings": findings, "summary": job_summary(report, findings)}
    )


#: A clock offset past this share of the median step suggests steps that do not correspond.
_OFFSET_STEP_SHARE = 0.5
#: Ranks on one host share a clock: an offset past this (µs) means mismatched steps.
_SAME_HOST_OFFSET_US = 1000.0


def _notes(
    ranks: dict[int, RankSummary],
    views: tuple[RankView, ...],
    alignment: Alignment,
    world_size: int | None,
) -> list[str]:
    held: dict[str, list[int]] = defaultdict(list)
    for r, s in sorted(ranks.items()):
        if s.held:
            held[s.held].append(r)
    notes = [held_note(numbers, what) for what, numbers in held.items()]
    notes += [
        f"rank {r}: its trace has no collectives: it is not compared at the collectives"
        for r, s in sorted(ranks.items())
        if not s.collectives and len(ranks) > 1
    ]
    if world_size is not None:
        notes += [
            f"rank {r} is beyond the job's world size of {world_size}"
            for r in ranks
            if r >= world_size
        ]
    if not alignment.collectives or not views:
        return notes
    step = statistics.median(v.step_us for v in views)
    ref_host = ranks[min(ranks)].host
    for v in views:
        same_host = bool(ref_host) and ranks[v.rank].host == ref_host
        if abs(v.offset_us) > _OFFSET_STEP_SHARE * step or (
            same_host and abs(v.offset_us) > _SAME_HOST_OFFSET_US
        ):
            notes.append(
                f"rank {v.rank}'s clock is {v.offset_us / 1000:+.1f} ms from rank "
                f"{min(ranks)}'s"
                + (" on the same host" if same_host else "")
                + ": check that the ranks' ProfilerStep numbers refer to the same steps"
            )
    return notes


def _with_roles(views: tuple[RankView, ...], straggler: Straggler | None) -> tuple[RankView, ...]:
    if straggler is None:
        return views
    out = []
    for v in views:
        role = ""
        if v.rank == straggler.rank:
            role = "straggler"
        elif v.wait_us and v.step_us and v.wait_us * 100 / v.step_us >= STRAGGLER_PCT:
            role = f"waits for rank {straggler.rank}"
        out.append(replace(v, role=role))
    return tuple(out)


def _steps_of(summary: RankSummary, alignment: Alignment) -> list[StepSummary]:
    """The common steps; a rank's own steps when the ranks share none (then no rank is
    compared with another)."""
    wanted = set(alignment.steps)
    picked = [s for s in summary.steps if s.number in wanted]
    return picked if alignment.steps else list(summary.steps)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _view(rank: int, summary: RankSummary, alignment: Alignment) -> RankView:
    steps = _steps_of(summary, alignment)
    n = max(len(steps), 1)
    phases: dict[str, float] = defaultdict(float)
    lag = Phase.DEVICE_LAG.value
    for s in steps:
        for phase, us in s.host_us.items():
            if phase != lag:
                phases[phase] += us / n
    # the steady step, as one rank's explanation gives it (`clocks.step_time`)
    host = _mean([s.host for s in steps])
    step_us = step_time([s.host for s in steps], [s.interval for s in steps])
    if step_us > host:
        phases[lag] = step_us - host
    busy = [s.device_busy_us for s in steps if s.device_busy_us is not None]
    matched = alignment.collectives
    exposed = _mean([s.comm_exposed_us for s in steps])
    wait = (
        min(sum(c.wait_us(rank) for c in matched) / max(len(alignment.steps), 1), exposed)
        if matched and rank in matched[0].arrival_ns
        else None
    )
    top = summary.findings[0].title if summary.findings else ""
    return RankView(
        rank=rank,
        path=summary.path,
        host=summary.host,
        device=summary.device,
        steps=len(steps),
        step_us=step_us,
        phases_us=dict(phases),
        device_busy_us=sum(busy) / n if busy else None,
        comm_busy_us=_mean([s.comm_busy_us for s in steps]),
        comm_exposed_us=exposed,
        wait_us=wait,
        last_arrivals=sum(1 for c in matched if rank in c.arrival_ns and c.last == rank),
        offset_us=alignment.offsets_ns.get(rank, 0) / 1000.0,
        bound=summary.verdict.bound if summary.verdict else None,
        top_finding=top,
        rows=summary.rows,
        seconds=summary.seconds,
        held=summary.held,
        findings=summary.findings,
    )


def _operations(ranks: dict[int, RankSummary], alignment: Alignment) -> tuple[OperationView, ...]:
    """Per operation: from the matched collectives when ranks were matched (the transfer is
    timed on the last rank to arrive), else from the first rank's own collectives."""
    steps = max(len(alignment.steps), 1)
    if alignment.collectives:
        groups: dict[str, list[MatchedCollective]] = defaultdict(list)
        for c in alignment.collectives:
            groups[c.operation].append(c)
        backend = next(iter(ranks.values())).backend
        out = [
            _operation_view(op, backend, calls, steps, [c.duration_us(c.last) for c in calls])
            for op, calls in groups.items()
        ]
    else:
        first = ranks[min(ranks)]
        by_op: dict[tuple[str, str], list[Any]] = defaultdict(list)
        for col in first.collectives:
            by_op[(col.operation, col.backend)].append(col)
        n = max(len(first.steps), 1)
        timed = first.timed_on not in (None, ENQUEUE_ONLY)
        out = [
            _operation_view(op, backend, calls, n, [c.dur_us for c in calls] if timed else [])
            for (op, backend), calls in by_op.items()
        ]
    return tuple(sorted(out, key=lambda o: -(o.transfer_us or 0.0) * o.calls_per_step))


def _operation_view(
    operation: str, backend: str, calls: list[Any], steps: int, durations: list[float]
) -> OperationView:
    sizes = [c.nbytes for c in calls if c.nbytes > 0]
    size = round(statistics.median(sizes)) if sizes else -1
    transfer = statistics.median(durations) if durations else None
    group = next((c.group_size for c in calls if c.group_size > 0), -1)
    factor = bus_factor(operation, group)
    rate = None
    if factor and size > 0 and transfer:
        rate = size / (transfer * 1000.0) * factor
    return OperationView(operation, backend, len(calls) / steps, size, transfer, rate)


__all__ = ["JobData", "OperationView", "RankView", "Straggler", "analyse"]
