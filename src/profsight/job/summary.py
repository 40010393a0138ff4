"""`RankSummary`: what one rank's trace contributes to a job, small enough to travel.

`summarize` runs where the trace is read (a pool process, a Dask worker): it loads and
diagnoses the trace there and returns plain data only (steps, collectives, the top findings
and rows), never events, so a job of hundreds of ranks sends back kilobytes per rank.
"""

from __future__ import annotations

import os
import re
import time

import msgspec

from profsight.analyses.pipeline import diagnose
from profsight.analyses.verdict import Verdict
from profsight.errors import ProfsightError
from profsight.job.device_window import (
    COLLECTIVES_ONLY,
    DEVICE_ONLY,
    collectives_only,
    device_only,
    device_window,
)
from profsight.knowledge.rows import RowKind
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS, PROFILER_STEP_PREFIX
from profsight.lazy import regex
from profsight.loaders import load
from profsight.model.collectives_seen import Collective
from profsight.model.findings import Finding
from profsight.model.profile import Profile
from profsight.model.row_kind import is_device_label, row_kind
from profsight.model.table_build import device_label

#: Findings and rows of each rank kept for the job's per-rank view.
TOP_FINDINGS = 5
TOP_ROWS = 40
_STEP_NUMBER = regex(re.escape(PROFILER_STEP_PREFIX) + r"(\d+)")


class StepSummary(msgspec.Struct, frozen=True):
    number: int | None
    """N of ``ProfilerStep#N``; None for a trace without steps (one whole-trace window)."""
    start_ns: int
    """The host range's start, on the rank's own clock (`RankSummary.origin_ns` + this =
    absolute)."""
    wall_us: float
    host_us: dict[str, float]
    """Phase id -> µs of the step's thread (`analyses.breakdown`)."""
    device_busy_us: float | None
    comm_busy_us: float
    comm_exposed_us: float
    host_wall_us: float | None = None
    interval_us: float | None = None
    """The step's host range and its interval between completions (`analyses.clocks`): a
    rank's steady step is the longer of their means (None: `wall_us`)."""

    @property
    def host(self) -> float:
        return self.wall_us if self.host_wall_us is None else self.host_wall_us

    @property
    def interval(self) -> float:
        return self.wall_us if self.interval_us is None else self.interval_us


class RowSummary(msgspec.Struct, frozen=True):
    name: str
    kind: str
    self_us: float
    """Self time per step: the device's for device rows, the host's otherwise."""
    on_device: bool


class RankSummary(msgspec.Struct, frozen=True):
    path: str
    rank: int | None
    """From the trace's ``distributedInfo``; None when it has none."""
    world_size: int | None
    backend: str
    host: str
    device: str
    origin_ns: int
    """Absolute time of the rank's clock zero (``baseTimeNanoseconds``-aware)."""
    windows: str
    steps: tuple[StepSummary, ...]
    timed_on: str | None
    """How collectives are timed (`analyses.comms`), None without collectives."""
    collectives: tuple[Collective, ...]
    findings: tuple[Finding, ...]
    verdict: Verdict | None
    rows: tuple[RowSummary, ...]
    events: int
    seconds: float
    """Load and analysis time where it ran."""
    warnings: tuple[str, ...]
    held: str = ""
    """What the trace holds when it is not a whole rank: `DEVICE_ONLY` or `COLLECTIVES_ONLY`
    (`job.device_window`), else empty."""

    def step_numbers(self) -> list[int | None]:
        return [s.number for s in self.steps]


class RankFailure(msgspec.Struct, frozen=True):
    """A trace of the job that could not be read (the job goes on without it)."""

    path: str
    message: str


def summarize(path: str) -> RankSummary | RankFailure:
    """Load and diagnose one rank's trace; a trace that cannot be read is a `RankFailure`."""
    began = time.perf_counter()
    try:
        profile = load(path)
        if not isinstance(profile, Profile):
            return RankFailure(path, f"{path}: a printed table, not a trace")
        if not profile.events.kind.size:
            return RankFailure(path, f"{path}: the trace holds no events")
        return summarize_profile(profile, path, began)
    except ProfsightError as exc:
        return RankFailure(path, str(exc))
    except Exception as exc:  # a bug reading one rank must not lose the others
        if os.environ.get("PROFSIGHT_DEBUG"):
            raise
        return RankFailure(
            path, f"{path}: internal error: {type(exc).__name__}: {exc} (a bug in profsight)"
        )


def summarize_profile(profile: Profile, path: str, began: float | None = None) -> RankSummary:
    began = time.perf_counter() if began is None else began
    diagnosis = diagnose(profile)
    comms = diagnosis.communication
    info = profile.meta.distributed
    steps = tuple(
        StepSummary(
            number=_number(s.name),
            start_ns=round(s.host_start * 1000),
            wall_us=s.wall_us,
            host_us=dict(s.host_us),
            device_busy_us=s.device_busy_us,
            comm_busy_us=comms.steps[i].busy_us if comms is not None and comms.steps else 0.0,
            comm_exposed_us=comms.steps[i].exposed_us if comms is not None and comms.steps else 0.0,
            host_wall_us=s.host_range_us,
            interval_us=s.interval,
        )
        for i, s in enumerate(diagnosis.breakdown.steps)
    )
    collectives = comms.collectives if comms is not None else ()
    held = ""
    if not steps and device_only(profile):
        (lo, hi), busy, exposed, collectives = device_window(profile, comms)
        steps = (StepSummary(None, lo, (hi - lo) / 1000.0, {}, None, busy, exposed),)
        held = COLLECTIVES_ONLY if collectives_only(profile, collectives) else DEVICE_ONLY
    return RankSummary(
        path=path,
        rank=_int(info.get("rank")),
        world_size=_int(info.get("world_size")),
        backend=str(info.get("backend") or (comms.backend if comms else "")),
        host=str(profile.meta.header.get("host_name") or ""),
        device=_device(profile),
        origin_ns=_origin_ns(profile),
        windows=diagnosis.breakdown.windows,
        steps=steps,
        timed_on=comms.timed_on if comms is not None else None,
        collectives=collectives,
        findings=diagnosis.findings[:TOP_FINDINGS],
        verdict=diagnosis.verdict,
        rows=_top_rows(profile, max(len(steps), 1)),
        events=len(profile.events),
        seconds=time.perf_counter() - began,
        warnings=tuple(d.message for d in profile.warnings),
        held=held,
    )


def _device(profile: Profile) -> str:
    """The first listed GPU, else the device kind that ran kernels, else "CPU"."""
    devices = profile.meta.devices
    if devices:
        return str(devices[0].get("name", "") or "GPU")
    if profile.events.mask(DEVICE_WORK_KINDS).any():  # kernels without deviceProperties
        return device_label(profile)
    return "CPU"


def _number(name: str) -> int | None:
    m = _STEP_NUMBER.match(name)
    return int(m.group(1)) if m else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _origin_ns(profile: Profile) -> int:
    """Kineto writes ``ts`` relative to ``baseTimeNanoseconds`` (torch >= 2.1), else as
    epoch (or boot-clock) microseconds; the origin is the integer µs of the earliest ts."""
    base = profile.meta.header.get("baseTimeNanoseconds")
    base_ns = base if isinstance(base, int) and not isinstance(base, bool) else 0
    return base_ns + int(profile.events.origin_us) * 1000


def _top_rows(profile: Profile, steps: int) -> tuple[RowSummary, ...]:
    table = profile.table()
    rows = []
    for r in table.rows:
        if is_device_label(r, table):  # a span over kernels, whose own rows hold the time
            continue
        on_device = r.self_device_us > r.self_cpu_us
        rows.append(
            RowSummary(
                r.name,
                row_kind(r, table).value,
                (r.self_device_us if on_device else r.self_cpu_us) / steps,
                on_device,
            )
        )
    rows.sort(key=lambda r: -r.self_us)
    return tuple(r for r in rows if r.kind != RowKind.STEP.value)[:TOP_ROWS]


__all__ = ["RankFailure", "RankSummary", "RowSummary", "StepSummary", "summarize"]
