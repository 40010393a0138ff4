"""What a job's explanation holds (`JobData` and its views), as data: `job.analysis` makes
it, `job.findings` reads it, the renderers draw it."""

from __future__ import annotations

import statistics
from typing import Any

import msgspec

from profsight.job.summary import RowSummary
from profsight.model.findings import Evidence, Finding


class RankView(msgspec.Struct, frozen=True):
    rank: int
    path: str
    host: str
    device: str
    steps: int
    """Steps of the job this rank profiled (the common ones)."""
    step_us: float
    phases_us: dict[str, float]
    device_busy_us: float | None
    comm_busy_us: float
    comm_exposed_us: float
    wait_us: float | None
    """Per step: waiting at collectives for other ranks to arrive, no more than the rank's
    exposed communication (a GPU keeps computing on other streams while an NCCL kernel
    waits). None: not measurable."""
    last_arrivals: int
    """Collectives at which this rank arrived last."""
    offset_us: float
    """Its clock minus the reference rank's, as the collectives' ends show it."""
    bound: str | None
    top_finding: str
    rows: tuple[RowSummary, ...]
    seconds: float
    role: str = ""
    """Its part in the job: ``straggler``, ``waits for rank N``, or empty."""
    held: str = ""
    """What its trace holds when not a whole rank (`RankSummary.held`), else empty."""
    findings: tuple[Finding, ...] = ()
    """Its own trace's top findings (`RankSummary.findings`)."""

    @property
    def busy_us(self) -> float:
        """Step time not spent waiting for other ranks."""
        return self.step_us - (self.wait_us or 0.0)


class OperationView(msgspec.Struct, frozen=True):
    operation: str
    backend: str
    calls_per_step: float
    nbytes: int
    """Bytes per call (-1 unknown)."""
    transfer_us: float | None
    """Median time of one call on the rank that arrived last (which waited least): the
    transfer itself. None when the traces time no collective (enqueue calls only)."""
    bus_gbps: float | None


class Straggler(msgspec.Struct, frozen=True):
    rank: int
    last_at: int
    collectives: int
    others_wait_us: float
    """Per step: what the other ranks wait for it (median over them)."""
    saving_us: float
    """Per step: what making it as fast as the next-slowest rank would save."""
    share_pct: float
    """`others_wait_us` as a share of the median step."""
    cause: str
    """A key of `knowledge.advice.STRAGGLER_CAUSES`."""
    cause_evidence: tuple[Evidence, ...]
    cause_detail: str = ""
    """Where its extra time is: ``+30.2 ms per step in DistributedDataParallel.forward's ..."""
    own_wait_us: float = 0.0
    """What the straggler itself waits per step (for ranks not in the traces, in a partial
    job)."""


class JobData(msgspec.Struct, frozen=True):
    sources: tuple[str, ...]
    world_size: int | None
    ranks: tuple[RankView, ...]
    steps: tuple[int | None, ...]
    backend: str
    timed_on: str | None
    operations: tuple[OperationView, ...]
    straggler: Straggler | None
    findings: tuple[Finding, ...]
    summary: str
    diagnostics: tuple[str, ...] = ()
    run: dict[str, Any] = msgspec.field(default_factory=dict)
    """How the job was analysed: executor, workers, seconds."""
    not_one_job: str = ""
    """Why the traces are not the ranks of one job (separate runs), or "": then no rank is
    compared with another and the job has no findings of its own."""

    @property
    def step_us(self) -> float:
        return statistics.median(r.step_us for r in self.ranks) if self.ranks else 0.0


__all__ = ["JobData", "OperationView", "RankView", "Straggler"]
