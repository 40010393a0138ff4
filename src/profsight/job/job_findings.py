"""The job's findings: ``straggler`` (a rank the others wait for, and why it is slow) and
``communication`` (the transfer itself, once the waiting is taken out), and its verdict."""

from __future__ import annotations

import statistics
from collections import defaultdict

from profsight.analyses.findings.communication import collective_evidence
from profsight.job.align import Alignment
from profsight.job.views import JobData, OperationView, RankView, Straggler
from profsight.knowledge import advice
from profsight.knowledge.catalogue import condition
from profsight.knowledge.phases import Phase
from profsight.knowledge.rows import RowKind
from profsight.model.findings import UPPER_BOUND, Evidence, Finding, severity_for
from profsight.units import short_time

#: Row kinds whose self time is the model's work (ops, kernels). A module's or a range's own
#: self time is Python (or waiting) that no op records: "untraced".
_COMPUTE_KINDS = {
    RowKind.ATEN.value,
    RowKind.KERNEL.value,
    RowKind.MEMCPY.value,
    RowKind.MEMSET.value,
    RowKind.BACKWARD.value,
    RowKind.OPTIMIZER.value,
    RowKind.RUNTIME.value,
    RowKind.SYNC.value,
    RowKind.METRIC.value,
}
#: Rows that are not the straggler's own work: waiting shows in them on the other ranks.
_SKIPPED_KINDS = {RowKind.STEP.value, RowKind.COMMUNICATION.value}
_NO_RANGE = "(time in no recorded range)"


def straggler_of(views: tuple[RankView, ...], alignment: Alignment) -> Straggler | None:

    matched = alignment.collectives
    if len(views) < 2 or not matched:
        return None
    steps = max(len(alignment.steps), 1)
    blame: dict[int, float] = defaultdict(float)
    saving: dict[int, float] = defaultdict(float)
    last_at: dict[int, int] = defaultdict(int)
    for c in matched:
        last = c.last
        waits = [c.wait_us(r) for r in c.arrival_ns if r != last]
        blame[last] += statistics.median(waits)
        saving[last] += c.lead_us()
        last_at[last] += 1
    rank = max(blame, key=lambda r: (blame[r], -r))
    step_us = statistics.median(v.step_us for v in views)
    view = next(v for v in views if v.rank == rank)
    others = [v for v in views if v.rank != rank]
    # what the others lose: no more than their waiting that compute does not hide
    lost = statistics.median(v.wait_us or 0.0 for v in others)
    wait = min(blame[rank] / steps, lost)
    share = wait * 100.0 / step_us if step_us else 0.0
    cause, detail, evidence = _cause(view, others, wait)
    return Straggler(
        rank,
        last_at[rank],
        len(matched),
        wait,
        min(saving[rank] / steps, wait),
        share,
        cause,
        evidence,
        detail,
        own_wait_us=view.wait_us or 0.0,
    )


def _cause(
    slow: RankView, others: list[RankView], wait_us: float
) -> tuple[str, str, tuple[Evidence, ...]]:
    """What the straggler spends more time on than the median other rank, by row self time
    (and time in no range): data loading, the model's work, or work no range records."""
    names = {(r.name, r.on_device): r.kind for v in (slow, *others) for r in v.rows}

    def self_us(view: RankView, key: tuple[str, bool]) -> float:
        return next((r.self_us for r in view.rows if (r.name, r.on_device) == key), 0.0)

    deltas: list[tuple[float, str, str]] = []
    for key, kind in names.items():
        if kind in _SKIPPED_KINDS:
            continue
        extra = self_us(slow, key) - statistics.median(self_us(v, key) for v in others)
        deltas.append((extra, key[0], kind))
    other = Phase.OTHER.value
    extra = slow.phases_us.get(other, 0.0) - statistics.median(
        v.phases_us.get(other, 0.0) for v in others
    )
    deltas.append((extra, _NO_RANGE, "untraced"))
    deltas.sort(reverse=True)
    by_cause: dict[str, float] = defaultdict(float)
    for us, _, kind in deltas:
        if us > 0:
            by_cause[_cause_of(kind)] += us
    evidence = tuple(
        Evidence(
            f"rank {slow.rank}: {_short(name)}",
            f"+{short_time(us)} per step vs the median rank",
            (name,) if name != _NO_RANGE else (),
        )
        for us, name, _ in deltas[:3]
        if us > 0
    )
    if not by_cause:
        return "other", "", evidence
    cause = max(by_cause, key=lambda c: by_cause[c])
    if by_cause[cause] < advice.STRAGGLER_CAUSE_SHARE * wait_us:
        return "other", "", evidence
    top = next((d for d in deltas if _cause_of(d[2]) == cause), None)
    return cause, _detail(top) if top else "", evidence


def _detail(delta: tuple[float, str, str]) -> str:
    """Where the straggler's extra time is, in words: +30.2 ms per step in ..."""
    us, name, kind = delta
    where = _short(name, 60)
    if name == _NO_RANGE:
        place = "between recorded ranges"
    elif kind == RowKind.MODULE.value:
        place = (
            f"in {where}'s own code (its Python, not its ops; Lightning runs training_step "
            "inside it)"
        )
    elif _cause_of(kind) == "untraced":
        place = f"in {where}'s own time (outside its ops)"
    else:
        place = f"in {where}"
    return f"+{short_time(us)} per step {place}"


def _short(name: str, chars: int = 80) -> str:
    return name if len(name) <= chars else name[: chars - 1] + "…"


def _cause_of(kind: str) -> str:
    if kind == RowKind.DATALOADER.value:
        return "data_loading"
    if kind in _COMPUTE_KINDS:
        return "compute"
    return "untraced"


def job_findings(report: JobData) -> list[Finding]:
    return [
        *_straggler_finding(report),
        *_communication_finding(report),
        *_idle_finding(report),
        *_imbalance(report),
    ]


def _straggler_finding(report: JobData) -> list[Finding]:
    s = report.straggler
    if s is None or s.share_pct < advice.STRAGGLER_PCT:
        return []
    what, fix = advice.STRAGGLER_CAUSES[s.cause]
    present, world = len(report.ranks), report.world_size
    partial = world is not None and present < world
    waits = [
        Evidence(f"rank {v.rank} waits at collectives", f"{short_time(v.wait_us)} per step")
        for v in report.ranks
        if v.wait_us is not None and v.rank != s.rank
    ][:4]
    return [
        Finding(
            category="straggler",
            severity=severity_for(s.share_pct),
            title=(f"Of the {present} of {world} ranks here, rank" if partial else "Rank")
            + f" {s.rank} is a straggler: the others wait {short_time(s.others_wait_us)} "
            f"per step for it ({s.share_pct:.0f}% of the step)",
            evidence=(
                Evidence(
                    "arrives last",
                    f"at {s.last_at} of {s.collectives} collectives in "
                    f"{max(len(report.steps), 1)} common steps",
                ),
                *waits,
                *(
                    [
                        Evidence(
                            f"rank {s.rank} itself waits",
                            f"{short_time(s.own_wait_us)} per step (for ranks not in these "
                            "traces: load them all to find the slowest)",
                        )
                    ]
                    if partial and s.own_wait_us > 0.25 * s.others_wait_us
                    else []
                ),
                *([Evidence("where its extra time is", s.cause_detail)] if s.cause_detail else []),
                Evidence(
                    "saved if it kept up",
                    f"{short_time(s.saving_us)} per step (the gap to the next-slowest rank)",
                ),
                *s.cause_evidence,
            ),
            explanation=f"Every rank must reach each collective before any can finish it, so "
            f"the job runs at the pace of its slowest rank. Rank {s.rank} reaches them last "
            f"because {what}"
            + (f": {s.cause_detail}." if s.cause_detail else ".")
            + (
                f" Only {present} of the job's {world} ranks are in these traces: a rank not "
                "here may be slower still."
                if partial
                else ""
            ),
            recommendation=fix,
            at_stake_pct=s.share_pct,
            gain_pct=s.saving_us * 100.0 / report.step_us if report.step_us else None,
            trigger=condition("straggler", "wait"),
        )
    ]


def _communication_finding(report: JobData) -> list[Finding]:
    """The exposed communication: the transfer itself (what the last rank to arrive, which
    waits for nobody, spends in collectives with nothing computing), else, where most ranks
    spend `COMMUNICATION_PCT` of the step in collectives but mostly waiting, that time as the
    ranks see it, said to be waiting: the time is theirs, its cause the rank they wait for."""
    ranks = [v for v in report.ranks if v.wait_us is not None]
    if len(ranks) < 2 or not report.step_us:
        return []  # waiting not measured: each rank's own finding covers its communication
    step = report.step_us
    transfer = statistics.median(max(v.comm_exposed_us - (v.wait_us or 0.0), 0.0) for v in ranks)
    share = transfer * 100.0 / step
    if share >= advice.COMMUNICATION_PCT:
        return [_transfer_finding(report, transfer, share)]
    if (
        statistics.median(v.comm_exposed_us for v in ranks) * 100.0 / step
        < advice.COMMUNICATION_PCT
    ):
        return []
    return [_waiting_finding(report, ranks)]


def _transfer_finding(report: JobData, transfer: float, share: float) -> Finding:
    evidence = [
        Evidence(
            "exposed transfer (no waiting, nothing computes)", f"{short_time(transfer)} per step"
        ),
        *(_operation_evidence(o) for o in report.operations[:3]),
    ]
    return Finding(
        category="communication",
        severity=severity_for(share),
        title=f"Communication itself takes {share:.0f}% of each step, not hidden by compute",
        evidence=tuple(evidence),
        explanation="Even the last rank to arrive, which waits for nobody, spends this long "
        "in collectives with nothing computing meanwhile: the transfers are on the critical "
        "path.",
        recommendation=advice.COMMUNICATION_ADVICE,
        at_stake_pct=share,
        # hidden wholly behind compute: the most overlapping them could give
        gain_pct=share,
        basis=UPPER_BOUND,
        trigger=condition("communication", "job_beyond"),
    )


def _waiting_finding(report: JobData, ranks: list[RankView]) -> Finding:
    """Collectives hold most ranks for `COMMUNICATION_PCT` of the step or more, mostly
    waiting: the transfer is timed on the last rank to arrive (the straggler), which waits
    for nobody."""
    step = report.step_us
    slow = report.straggler
    waiting = [v for v in ranks if v.comm_exposed_us * 100.0 / step >= advice.COMMUNICATION_PCT]
    names = ", ".join(str(v.rank) for v in waiting)
    whom = f"rank {slow.rank}" if slow is not None else "the last rank to arrive"
    exposed = statistics.median(v.comm_exposed_us for v in waiting) * 100.0 / step
    wait = statistics.median(v.wait_us or 0.0 for v in waiting) * 100.0 / step
    last = next((v for v in ranks if slow is not None and v.rank == slow.rank), None)
    transfer = (
        (
            max(last.comm_exposed_us - (last.wait_us or 0.0), 0.0)
            if last is not None
            else statistics.median(max(v.comm_exposed_us - (v.wait_us or 0.0), 0.0) for v in ranks)
        )
        * 100.0
        / step
    )
    held = any(v.held for v in waiting)
    alone = "" if held else ", nothing computing meanwhile"
    evidence = [
        Evidence(
            f"rank {v.rank} in collectives" + ("" if v.held else ", nothing computing"),
            f"{short_time(v.comm_exposed_us)} per step "
            f"({v.comm_exposed_us * 100.0 / step:.0f}%), of which waiting "
            f"{short_time(v.wait_us or 0.0)}",
        )
        for v in ranks
    ][:5]
    evidence.append(
        Evidence(
            "the transfer itself"
            + (f" (rank {last.rank}, which waits for nobody)" if last is not None else ""),
            f"{transfer:.1f}% of the step",
        )
    )
    evidence += [_operation_evidence(o) for o in report.operations[:2]]
    return Finding(
        category="communication",
        severity=severity_for(transfer),
        title=f"Collectives take {exposed:.0f}% of each step on ranks {names}{alone}: "
        f"{wait:.0f}% is waiting for {whom}, the transfer itself {transfer:.0f}%",
        evidence=tuple(evidence),
        explanation="A rank's collective starts when it arrives and ends when the last rank "
        "has sent its data, so a rank that arrives early spends the difference inside the "
        "collective: in its own trace that is communication time, but what it waits for is "
        f"{whom}. Hiding or shrinking the transfer saves only the transfer; the waiting goes "
        "when the ranks keep pace."
        + (
            " The traces hold only the collectives, so whether compute ran beside them is "
            "not known: their time is counted whole."
            if held
            else ""
        ),
        recommendation=(
            advice.STRAGGLER_CAUSES[slow.cause][1]
            if slow is not None
            else advice.COMMUNICATION_ADVICE
        ),
        at_stake_pct=exposed,
        # overlapping the transfer is all communication's own fix can give
        gain_pct=transfer,
        basis=UPPER_BOUND,
        trigger=condition("communication", "job_median"),
    )


#: The categories a rank's idle-device rule gives (`analyses.findings.device.idle_findings`):
#: the idle time itself, or, when the kernels are tiny and the host idles the GPU, that cause.
_IDLE_READINGS = ("gpu_idle", "launch_overhead")


def _idle_finding(report: JobData) -> list[Finding]:
    """The GPUs idle on most ranks: at least half the ranks' own traces find their device
    idle (each by the single trace's rule, which names its cause where it can). A job's
    step runs at its slowest rank's pace, so what fixing it saves is not one rank's figure:
    not estimated."""
    own = {
        v.rank: f
        for v in report.ranks
        if (f := next((f for f in v.findings if f.category in _IDLE_READINGS), None))
    }
    if len(own) < 2 or len(own) * 2 < len(report.ranks):
        return []
    shares = [f.at_stake_pct for f in own.values()]
    at_stake = statistics.median(shares)
    evidence = tuple(
        Evidence(f"rank {rank}, its own reading", f"{f.title} ({f.category})")
        for rank, f in sorted(own.items())
    )
    quiet = [str(v.rank) for v in report.ranks if v.rank not in own]
    if quiet:
        evidence += (Evidence("no idle finding on its own trace", "rank " + ", ".join(quiet)),)
    slow = report.straggler
    return [
        Finding(
            category="gpu_idle",
            severity=severity_for(at_stake),
            title=f"The GPU idles on {len(own)} of {len(report.ranks)} ranks: "
            f"{_span(min(shares), max(shares))}% of the step",
            evidence=evidence[:8],
            explanation=advice.JOB_IDLE_EXPLANATION
            + (
                f" Rank {slow.rank} sets the job's pace: its idle time is the job's to win."
                if slow is not None and slow.rank in own
                else ""
            ),
            recommendation=advice.GPU_IDLE_ADVICE,
            at_stake_pct=at_stake,
            trigger=condition("gpu_idle", "job"),
        )
    ]


def _span(low: float, high: float) -> str:
    return f"{low:.0f}" if round(low) == round(high) else f"{low:.0f}-{high:.0f}"


def _operation_evidence(o: OperationView) -> Evidence:
    return collective_evidence(
        o.operation,
        o.backend,
        o.calls_per_step,
        o.nbytes if o.nbytes > 0 else None,
        o.transfer_us,
        o.bus_gbps,
    )


def _imbalance(report: JobData) -> list[Finding]:
    """Without timed collectives to match, a rank whose steps are longer than the others'."""
    if report.straggler is not None or len(report.ranks) < 2 or not report.steps:
        return []
    if not report.step_us or any(v.steps == 0 for v in report.ranks):
        return []
    slow = max(report.ranks, key=lambda v: v.step_us)
    extra = slow.step_us - report.step_us
    share = extra * 100.0 / report.step_us
    if share < advice.STRAGGLER_PCT:
        return []
    return [
        Finding(
            category="straggler",
            severity=severity_for(share),
            title=f"Rank {slow.rank}'s steps take {share:.0f}% longer than the median rank's",
            evidence=(
                Evidence(f"rank {slow.rank} step", short_time(slow.step_us)),
                Evidence("median rank's step", short_time(report.step_us)),
            ),
            explanation="Ranks that synchronise every step run at the pace of the slowest one; "
            "these traces have no timed collectives to show the waiting directly.",
            recommendation=advice.STRAGGLER_CAUSES["other"][1],
            at_stake_pct=share,
            trigger=condition("straggler", "longer"),
        )
    ]


def job_summary(report: JobData, findings: tuple[Finding, ...]) -> str:
    n = len(report.ranks)
    world = f" of {report.world_size}" if report.world_size and report.world_size != n else ""
    head = (
        f"{n} rank(s){world}, {len(report.steps)} step(s) in common, median step "
        f"{short_time(report.step_us)}."
    )
    if report.not_one_job:
        return (
            f"These {n} traces are not ranks of one job: {report.not_one_job}. No rank is "
            "compared with another; explain each trace by itself."
        )
    top = next((f for f in findings if f.at_stake_pct >= advice.STRAGGLER_PCT), None)
    if top is None:
        if n < 2:
            return head + " One rank: nothing to compare; its own findings say where its time goes."
        if not report.steps:
            return head + " The ranks profiled different steps, so they cannot be compared."
        if not any(v.wait_us is not None for v in report.ranks):
            return head + _UNTIMED + " Their step times are within 5% of each other."
        return head + (
            " The ranks keep pace with each other and no communication is left exposed: each "
            "rank's own explanation says where its time goes."
        )
    if top.category == "straggler" and report.straggler is not None:
        s = report.straggler
        what, _ = advice.STRAGGLER_CAUSES[s.cause]
        text = (
            f" The job is held up by rank {s.rank}: the others wait {s.share_pct:.0f}% of "
            f"each step for it, because {what}"
            + (f": {s.cause_detail}." if s.cause_detail else ".")
        )
        if report.world_size and n < report.world_size:
            text += f" Only {n} of {report.world_size} ranks are here: load them all."
        return head + text
    untimed = n > 1 and not any(v.wait_us is not None for v in report.ranks)
    return head + f" {top.title}." + (_UNTIMED if untimed else "")


_UNTIMED = (
    " The traces do not time collectives on every rank (NCCL kernels or gloo's worker ranges), "
    "so waiting between ranks cannot be measured."
)


__all__ = ["job_findings", "job_summary", "straggler_of"]
