"""Comparing two runs: what got faster or slower, which findings went or came, per step.

`compare(before, after)` reads both reports as their JSON documents (`RunFacts`), so a
trace, a printed table and a saved ``profsight/1`` report compare alike. Every time is per
profiled step (the run's totals divided by its steps), so runs of different lengths compare.
A row is *slower* or *faster* when its time changed by more than `ROW_NOISE_US` and
`ROW_NOISE_PCT` of the step; rows on one side only are *new* or *gone*; a row whose time
moved less but whose calls per step changed by `CALLS_MOVED` or more, or by a factor of
`CALLS_RATIO` or more, is *recounted* (a collective that now runs once a step instead of
twice, or every other step instead of every step, changes the run even when its time is
under the noise floor).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from profsight.compare.facts import FindingFacts, RowTimes, RunFacts
from profsight.errors import UsageError
from profsight.model.findings import Severity

if TYPE_CHECKING:
    from profsight.report.build import ReportData

SCHEMA = "profsight/diff/1"
#: A row changed when its time moved by at least this much ...
ROW_NOISE_US = 1.0
#: ... and by at least this share of the (longer) step.
ROW_NOISE_PCT = 0.5

By = Literal["total", "self"]
BYS: tuple[By, ...] = ("total", "self")
Status = Literal["slower", "faster", "unchanged", "new", "gone", "recounted"]
#: Calls per step a row must gain or lose to be *recounted* below the noise floor: a whole
#: call (calls per step are averages over the profiled steps) ...
CALLS_MOVED = 1.0
#: ... or the factor by which they changed, whatever the count: a row called less than once a
#: step changes by less than a whole call (a collective once a step that now runs every
#: other step: 1 -> 0.5), and is compared as a ratio.
CALLS_RATIO = 2.0
#: A self time per step below minus this (µs) is no duration (`_times`); above it, the
#: rounding of a total less its children's totals.
NEGATIVE_SELF_US = 0.05
#: A change of the step beyond this many standard errors of the difference of the two runs'
#: mean steps (their steps' own spread) is beyond the noise: two, about 95% of the changes
#: two recordings of one run show, for steps that vary normally.
NOISE_SPREADS = 2.0
#: Two runs are alike, where both count their FLOPs per step, when those differ by less than
#: this: the same model on the same shapes counts the same FLOPs in every recording, and a
#: batch, a sequence length or a layer changed is another workload (a fix that removes work
#: around the model, a metric or a sync, leaves them as they were) ...
LIKE_FLOPS_PCT = 10.0
#: ... and, where a run does not count them, when at least this share of their rows' time is
#: in rows both ran (a majority of the work one run's own: different models).
LIKE_SHARE_PCT = 50.0
Noise = Literal["beyond", "within", "unknown"]


class Change(msgspec.Struct, frozen=True):
    """One number before and after (None where a side lacks it)."""

    before: float | None
    after: float | None

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before

    @property
    def pct(self) -> float | None:
        """The change as a % of `before` (None when before is 0 or missing)."""
        delta = self.delta
        if delta is None or not self.before:
            return None
        return delta * 100.0 / self.before

    def to_dict(self) -> dict[str, float | None]:
        pct = self.pct
        return {
            "before": self.before,
            "after": self.after,
            "change": self.delta,
            "change_pct": None if pct is None else round(pct, 2),
        }


_TIMES = ("self_cpu_us", "cpu_total_us", "self_device_us", "device_total_us")


class RowChange(msgspec.Struct, frozen=True):
    name: str
    event_kind: str
    is_device: bool
    status: Status
    calls: Change
    """Calls per step."""
    times: dict[str, Change]
    """``self_cpu_us``, ``cpu_total_us``, ``self_device_us``, ``device_total_us`` per step."""
    key: str
    """The time `status` and the order go by: the one (CPU or device) that changed most."""

    @property
    def change(self) -> Change:
        return self.times[self.key]

    @property
    def delta_us(self) -> float:
        """Change of `key` per step; a new row counts its whole time, a gone one minus it."""
        c = self.change
        return (c.after or 0.0) - (c.before or 0.0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "event_kind": self.event_kind,
            "is_device": self.is_device,
            "status": self.status,
            "key": self.key,
            "change_us": self.delta_us,
            "calls": self.calls.to_dict(),
            **{name: change.to_dict() for name, change in self.times.items()},
        }


class FindingChange(msgspec.Struct, frozen=True):
    category: str
    title: str
    """The title in the run that has it (the after run's when both have it)."""
    severity: Change
    """Severity as a number (`Severity`: info 0 ... high 3)."""
    at_stake: Change
    """Share of the step at stake, %."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "title": self.title,
            # the levels by name; the change in levels (high 3 ... info 0) as a number: a
            # level's name for the change, or for its %, crashed on a negative change
            "severity": {
                "before": _severity_name(self.severity.before),
                "after": _severity_name(self.severity.after),
                "change": self.severity.delta,
            },
            "at_stake_pct": self.at_stake.to_dict(),
        }


class RunDiff(msgspec.Struct, frozen=True):
    before: RunFacts
    after: RunFacts
    by: By
    step: Change
    phases: dict[str, Change]
    """Phase id -> µs per step, largest after first."""
    device_busy: Change | None
    """None when neither run recorded device work."""
    rows: tuple[RowChange, ...]
    """Every row, by absolute change of its time per step, largest first."""
    resolved: tuple[FindingChange, ...]
    new_findings: tuple[FindingChange, ...]
    kept: tuple[FindingChange, ...]
    """Findings in both runs (matched by category and title, numbers aside)."""
    verdict: tuple[tuple[str | None, str | None], tuple[str | None, str | None]]
    """(bound, judgement) before and after."""
    memory_peaks: dict[str, Change] = msgspec.field(default_factory=dict)
    """Memory (``cpu``, ``device``) -> its peak in bytes, where either run recorded it."""
    noise_us: float | None = None
    """What the step can move between recordings of one run: `NOISE_SPREADS` standard
    errors of the difference of the two mean steps, or the run-to-run noise the user gave
    if larger (None: a run has fewer than two steps and none was given)."""
    shared_pct: float = 100.0
    """The share of the rows' time (both runs') in rows both ran."""
    flops: Change | None = None
    """The model's FLOPs per step before and after, where both reports count them."""

    @property
    def step_noise(self) -> Noise:
        """Whether the step's change is beyond what its recordings vary by."""
        delta = self.step.delta
        if self.noise_us is None or delta is None:
            return "unknown"
        return "beyond" if abs(delta) > self.noise_us else "within"

    @property
    def alike(self) -> bool:
        """Whether the two runs ran the same work (`LIKE_SHARE_PCT`, `LIKE_FLOPS_PCT`)."""
        pct = None if self.flops is None else self.flops.pct
        if pct is not None:  # the same model on the same shapes: the same FLOPs
            return abs(pct) < LIKE_FLOPS_PCT
        return self.shared_pct >= LIKE_SHARE_PCT

    def with_status(self, status: Status) -> tuple[RowChange, ...]:
        return tuple(r for r in self.rows if r.status == status)

    @property
    def slower(self) -> tuple[RowChange, ...]:
        return self.with_status("slower")

    @property
    def faster(self) -> tuple[RowChange, ...]:
        return self.with_status("faster")

    @property
    def new(self) -> tuple[RowChange, ...]:
        return self.with_status("new")

    @property
    def gone(self) -> tuple[RowChange, ...]:
        return self.with_status("gone")

    @property
    def verdict_changed(self) -> bool:
        return self.verdict[0] != self.verdict[1]

    def to_dict(self) -> dict[str, Any]:
        def side(run: RunFacts) -> dict[str, Any]:
            return {"source": run.source, "format": run.format, "steps": run.steps}

        (b_bound, b_judgement), (a_bound, a_judgement) = self.verdict
        return {
            "schema": SCHEMA,
            "before": side(self.before),
            "after": side(self.after),
            "by": self.by,
            "step_us": self.step.to_dict(),
            "phases_us": {phase: c.to_dict() for phase, c in self.phases.items()},
            "device_busy_us": None if self.device_busy is None else self.device_busy.to_dict(),
            "memory_peak_bytes": {m: c.to_dict() for m, c in self.memory_peaks.items()},
            "verdict": {
                "before": {"bound": b_bound, "judgement": b_judgement},
                "after": {"bound": a_bound, "judgement": a_judgement},
                "changed": self.verdict_changed,
            },
            "rows": {
                status: [r.to_dict() for r in self.with_status(status)]
                for status in ("slower", "faster", "new", "gone", "recounted")
            },
            "unchanged_rows": len(self.with_status("unchanged")),
            "noise": {
                "step_spread_us": {
                    "before": self.before.step_spread_us,
                    "after": self.after.step_spread_us,
                },
                "noise_us": self.noise_us,
                "step_change": self.step_noise,
            },
            "alike": {
                "shared_pct": round(self.shared_pct, 2),
                "flops_per_step": None if self.flops is None else self.flops.to_dict(),
                "alike": self.alike,
            },
            "findings": {
                "resolved": [f.to_dict() for f in self.resolved],
                "new": [f.to_dict() for f in self.new_findings],
                "kept": [f.to_dict() for f in self.kept],
            },
        }


#: Rows per status, and phases, a concise comparison keeps (`RunDiff.concise`).
CONCISE_ROWS = 5


def concise(diff: RunDiff) -> dict[str, Any]:
    """The comparison's facts in a few KB (for an assistant's context, MCP's ``diff``): the
    step with its noise and the runs' likeness, the largest phases, the verdict, each
    status's largest rows and its count, and the findings that came or went."""
    full = diff.to_dict()
    full.pop("unchanged_rows")
    full["phases_us"] = dict(list(full["phases_us"].items())[: CONCISE_ROWS + 1])

    def row(r: RowChange) -> dict[str, Any]:
        t = r.times[r.key]
        return {
            "name": r.name,
            "time": r.key,
            "before_us": t.before,
            "after_us": t.after,
            "change_us": round(r.delta_us, 3),
            "calls_per_step": r.calls.to_dict(),
        }

    full["rows"] = {
        status: {
            "count": len(diff.with_status(status)),
            "largest": [row(r) for r in diff.with_status(status)[:CONCISE_ROWS]],
        }
        for status in ("slower", "faster", "new", "gone", "recounted")
    }
    findings = full["findings"]
    findings["kept"] = len(findings["kept"])
    return full


def compare(
    before: ReportData | Mapping[str, Any],
    after: ReportData | Mapping[str, Any],
    by: By = "total",
    run_noise_pct: float | None = None,
) -> RunDiff:
    """Compare two runs: reports, or their ``profsight/1`` JSON documents.

    `by` picks the row times that rank the changes: ``total`` (CPU or device total) or
    ``self``. `run_noise_pct`: how much two runs of the same script differ on this machine
    (% of the step), which no run's own steps show (warm-up, clocks, caches, neighbours): the
    noise is then at least that much.
    """
    if by not in BYS:
        raise UsageError(f"unknown comparison {by!r}; use one of: {', '.join(BYS)}")
    old = RunFacts.of(before, "<before>")
    new = RunFacts.of(after, "<after>")
    phases = {
        p: Change(
            old.phases_us.get(p, 0.0) if old.step_us else None,
            new.phases_us.get(p, 0.0) if new.step_us else None,
        )
        for p in sorted(
            {*old.phases_us, *new.phases_us},
            key=lambda p: -max(new.phases_us.get(p, 0.0), old.phases_us.get(p, 0.0)),
        )
    }
    busy = None
    if old.device_busy_us is not None or new.device_busy_us is not None:
        busy = Change(old.device_busy_us, new.device_busy_us)
    noise = _noise(old, new)
    if run_noise_pct is not None:
        across = run_noise_pct / 100.0 * max(old.step_us or 0.0, new.step_us or 0.0)
        noise = max(noise or 0.0, across)
    # a row's change within what the whole step varies by cannot be told from noise either
    floor = max(ROW_NOISE_US, ROW_NOISE_PCT / 100.0 * max(old.step_us or 0, new.step_us or 0))
    floor = max(floor, noise or 0.0)
    rows = [_row_change(old.rows.get(k), new.rows.get(k), by, floor) for k in _keys(old, new)]
    rows.sort(key=lambda r: -abs(r.delta_us))
    resolved, appeared, kept = _findings(old.findings, new.findings)
    return RunDiff(
        before=old,
        after=new,
        by=by,
        step=Change(old.step_us, new.step_us),
        phases=phases,
        device_busy=busy,
        rows=tuple(rows),
        memory_peaks={
            m: Change(old.memory_peaks.get(m), new.memory_peaks.get(m))
            for m in sorted({*old.memory_peaks, *new.memory_peaks})
        },
        resolved=resolved,
        new_findings=appeared,
        kept=kept,
        verdict=((old.bound, old.judgement), (new.bound, new.judgement)),
        noise_us=noise,
        shared_pct=_shared_pct(old, new),
        flops=None
        if old.flops_per_step is None or new.flops_per_step is None
        else Change(old.flops_per_step, new.flops_per_step),
    )


def _noise(old: RunFacts, new: RunFacts) -> float | None:
    """`NOISE_SPREADS` standard errors of the difference of the two runs' mean steps."""
    a, b = old.step_spread_us, new.step_spread_us
    if a is None or b is None:
        return None
    error = float((a * a / len(old.step_walls) + b * b / len(new.step_walls)) ** 0.5)
    return NOISE_SPREADS * error


def _own_us(r: RowTimes) -> float:
    """A row's own time, CPU and device (self times: nested rows are not counted twice; a
    negative self time, children that outlast their parent in a table, weighs nothing)."""
    return max(r.self_cpu_us, 0.0) + max(r.self_device_us, 0.0)


def _shared_pct(old: RunFacts, new: RunFacts) -> float:
    """The share of both runs' rows' own time that is in rows both ran."""
    total = sum(_own_us(r) for r in old.rows.values()) + sum(_own_us(r) for r in new.rows.values())
    if total <= 0:
        return 100.0
    both = sum(_own_us(r) for k, r in old.rows.items() if k in new.rows)
    both += sum(_own_us(r) for k, r in new.rows.items() if k in old.rows)
    return 100.0 * both / total


def _keys(old: RunFacts, new: RunFacts) -> list[tuple[str, bool]]:
    return [*old.rows, *(k for k in new.rows if k not in old.rows)]


def _row_change(b: RowTimes | None, a: RowTimes | None, by: By, floor: float) -> RowChange:
    first = a if a is not None else b
    assert first is not None
    times = {t: _times(t, b, a) for t in _TIMES}
    cpu, device = ("self_cpu_us", "self_device_us") if by == "self" else _TIMES[1::2]
    if times[cpu].before is None and times[cpu].after is None:
        cpu = "cpu_total_us"  # a self time that is no duration: the row goes by its total
    if times[device].before is None and times[device].after is None:
        device = "device_total_us"

    def moved(t: str) -> float:
        c = times[t]
        return abs((c.after or 0.0) - (c.before or 0.0))

    key = device if moved(device) > moved(cpu) else cpu
    delta = (times[key].after or 0.0) - (times[key].before or 0.0)
    status: Status
    if b is None:
        status = "new"
    elif a is None:
        status = "gone"
    elif abs(delta) < floor:
        status = "recounted" if _recounted(b.calls, a.calls) else "unchanged"
    else:
        status = "slower" if delta > 0 else "faster"
    return RowChange(
        name=first.name,
        event_kind=first.event_kind,
        is_device=first.is_device,
        status=status,
        calls=Change(None if b is None else b.calls, None if a is None else a.calls),
        times=times,
        key=key,
    )


def _times(t: str, b: RowTimes | None, a: RowTimes | None) -> Change:
    """A row's time `t` per step in both runs. A self time below zero is no duration: torch's
    self time is the total less the children's totals, and children that overlap each other
    (Python frames recorded beside the ops, a thread's ranges that do not nest) outlast
    their parent; such a self time is compared in neither run (None), and the row goes by
    its total."""
    before = None if b is None else float(getattr(b, t))
    after = None if a is None else float(getattr(a, t))
    if t.startswith("self_") and min(before or 0.0, after or 0.0) < -NEGATIVE_SELF_US:
        return Change(None, None)
    return Change(before, after)


def _recounted(before: float, after: float) -> bool:
    """Whether a row's calls per step changed by a whole call or by `CALLS_RATIO`."""
    if abs(after - before) >= CALLS_MOVED:
        return True
    low, high = sorted((before, after))
    return high >= CALLS_RATIO * low if low > 0 else high > 0


def _severity_name(value: float | None) -> str | None:
    return None if value is None else Severity(int(value)).name.lower()


def _severity(f: FindingFacts | None) -> float | None:
    return None if f is None else float(f.level)


def _findings(
    old: tuple[FindingFacts, ...], new: tuple[FindingFacts, ...]
) -> tuple[tuple[FindingChange, ...], tuple[FindingChange, ...], tuple[FindingChange, ...]]:
    before = {f.key: f for f in old}
    after = {f.key: f for f in new}

    def change(b: FindingFacts | None, a: FindingFacts | None) -> FindingChange:
        f = a if a is not None else b
        assert f is not None
        return FindingChange(
            f.category,
            f.title,
            Change(_severity(b), _severity(a)),
            Change(None if b is None else b.at_stake_pct, None if a is None else a.at_stake_pct),
        )

    resolved = tuple(change(f, None) for k, f in before.items() if k not in after)
    appeared = tuple(change(None, f) for k, f in after.items() if k not in before)
    kept = tuple(change(before[k], f) for k, f in after.items() if k in before)
    return resolved, appeared, kept
