"""A printed table's verdict facts, and what its rows say about the profile itself."""

from __future__ import annotations

from msgspec.structs import replace

from profsight.analyses.findings.from_table import idle_causes
from profsight.analyses.findings.setup import profiler_cost_finding, setup_finding
from profsight.analyses.step.printed_parts import DEVICE_ONLY_BASIS, PrintedStep
from profsight.analyses.step.startup import dominates, is_wait
from profsight.analyses.step.step_facts import StepFacts
from profsight.analyses.step.table_device import QUEUE_FULL, PrintedDevice
from profsight.analyses.step.table_legacy import is_leaf
from profsight.analyses.step.table_stall import printed_stall
from profsight.knowledge import advice
from profsight.knowledge.advice import (
    PARTIAL_TABLE_PCT,
    PROFILER_OVERHEAD_PCT,
    STARTUP_FACTOR,
    STARTUP_MIN_US,
)
from profsight.knowledge.catalogue import condition
from profsight.knowledge.phases import Phase
from profsight.knowledge.rows import (
    DEVICE_ONLY_OPS,
    FIRST_USE_CALLS,
    LIGHTNING_ACTION_EVENT,
    PROFILER_OVERHEAD_ROWS,
    STARTUP_ROWS,
)
from profsight.model.findings import Evidence, Finding, Severity, severity_for
from profsight.model.row_kind import row_kind
from profsight.model.table import ProfilerTable, Row
from profsight.units import short_time


def printed_facts(
    step: PrintedStep,
    device: PrintedDevice | None,
    table: ProfilerTable,
    flops: tuple[float | None, ...] = (),
    inclusive: bool = False,
) -> StepFacts:
    """What the verdict reads, from the table's step model."""
    device_only = step.basis == DEVICE_ONLY_BASIS  # the device's own time is the window
    phases = {p.value: step.phase_share(p) for p in Phase}
    # one-time start-up the rows show (`printed_startup`), for the verdict's "not judged"
    phases[Phase.STARTUP.value] = printed_startup(table, inclusive)[0]
    return StepFacts(
        step_us=step.step_us,
        steps=step.steps,
        phase_pct=phases,
        unknown=_unknown(step),
        device_busy_pct=None if device is None or device_only else device.busy_pct,
        device_idle_pct=idle_causes(step, device),
        compute=(_flops(step, flops),),
        busy_basis="busy at most",
        host_only=advice.DEVICE_ONLY_HOST_ONLY if device_only else _host_only(table, device),
        queue_full_pct=0.0 if device is None else step.share(device.waits.get(QUEUE_FULL, 0.0)),
        stall_pct=_stall_pct(step, table),
    )


def _stall_pct(step: PrintedStep, table: ProfilerTable) -> float:
    stall = printed_stall(table, step.steps)
    return 0.0 if stall is None else stall.share_pct


def _unknown(step: PrintedStep) -> frozenset[str]:
    """Phases a partial table may hide: no row of theirs is printed."""
    if step.coverage_pct >= PARTIAL_TABLE_PCT:
        return frozenset()
    return frozenset({Phase.DATA_LOADING.value} - step.phases.keys())


def _host_only(table: ProfilerTable, device: PrintedDevice | None) -> str:
    """Why the run is judged on host times without being known CPU-only ("" when it is)."""
    if table.rows and all(r.event_kind == LIGHTNING_ACTION_EVENT for r in table.rows):
        return advice.LIGHTNING_REPORT_HOST_ONLY
    if table.has_device and device is None:
        return advice.UNREADABLE_DEVICE_HOST_ONLY
    return ""


def _flops(step: PrintedStep, flops: tuple[float | None, ...]) -> str:
    counted = [f for f in flops if f]
    if not counted:
        return advice.PRINTED_FLOPS_UNKNOWN
    per_step = sum(counted) / step.steps
    achieved = per_step / (step.step_us * 1e-6) if step.step_us else 0.0
    return f"{_si(per_step)}FLOP per step in the printed rows, {_si(achieved)}FLOP/s achieved"


def _si(value: float) -> str:
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}"
    return f"{value:.3g} "


def printed_setup(
    step: PrintedStep, table: ProfilerTable, inclusive: bool = False
) -> list[Finding]:
    findings = []
    total = table.self_cpu_total_us
    bookkeeping = [r for r in table.rows if r.name in PROFILER_OVERHEAD_ROWS]
    overhead = sum(r.self_cpu_us for r in bookkeeping)
    if total:
        findings += profiler_cost_finding(
            overhead * 100 / total,
            advice.PRINTED_PROFILER_COST_TITLE,
            advice.PRINTED_PROFILER_COST_EXPLANATION.format(
                names=", ".join(sorted({r.name for r in bookkeeping}))
            ),
        )
    share, startup = printed_startup(table, inclusive)
    if share >= PROFILER_OVERHEAD_PCT:
        dominant = dominates(share)
        finding = setup_finding(
            (advice.STARTUP_DOMINANT_TITLE if dominant else advice.PRINTED_STARTUP_TITLE).format(
                share=share
            ),
            advice.PRINTED_STARTUP_EXPLANATION.format(names=", ".join(r.name for r in startup)),
            advice.PRINTED_STARTUP_ADVICE,
        )
        findings.append(
            replace(
                finding,
                severity=Severity.HIGH if dominant else finding.severity,
                at_stake_pct=share,
                blocks=dominant,
                evidence=tuple(
                    Evidence(r.name, f"{short_time(r.cpu_avg_us)} a call on the host", (r.name,))
                    for r in startup[:3]
                ),
            )
        )
    findings += _stall(step, table)
    if step.evaluation_only:
        findings.append(
            setup_finding(
                advice.EVALUATION_TABLE_TITLE,
                advice.EVALUATION_TABLE_EXPLANATION,
                advice.EVALUATION_TABLE_ADVICE,
            )
        )
    if "whole window" in step.basis:
        findings.append(
            setup_finding(
                advice.WHOLE_TABLE_TITLE, advice.WHOLE_TABLE_EXPLANATION, advice.WHOLE_TABLE_ADVICE
            )
        )
    return findings


def _stall(step: PrintedStep, table: ProfilerTable) -> list[Finding]:
    """A one-pass range's host time that no recorded op holds (`printed_stall`): first and
    not judged where it dominates the window."""
    stall = printed_stall(table, step.steps)
    if stall is None or stall.share_pct < PROFILER_OVERHEAD_PCT:
        return []
    dominant = dominates(stall.share_pct)
    name, own = stall.row.name, short_time(stall.row.self_cpu_us)
    finding = setup_finding(
        (advice.STALL_DOMINANT_TITLE if dominant else advice.STALL_TITLE).format(
            share=stall.share_pct, name=name
        ),
        advice.STALL_EXPLANATION.format(name=name, own=own, per_op=short_time(stall.per_op_us)),
        advice.STALL_ADVICE,
    )
    evidence = Evidence(
        name,
        f"{own} of its own host time in 1 call, {short_time(stall.per_op_us)} per op call "
        f"({stall.op.calls:,} calls of {stall.op.name}); Python between ops costs tens of µs",
        (name, stall.op.name),
    )
    return [
        replace(
            finding,
            severity=Severity.HIGH if dominant else severity_for(stall.share_pct),
            at_stake_pct=stall.share_pct,
            blocks=dominant,
            evidence=(evidence,),
            trigger=condition("profiler_setup", "stall"),
        )
    ]


def printed_startup(table: ProfilerTable, inclusive: bool = False) -> tuple[float, list[Row]]:
    """One-time start-up a table's rows show, % of its self CPU total, and those rows: CUPTI's
    own start-up rows (`STARTUP_ROWS`); first-use runtime calls (`FIRST_USE_CALLS`: creating
    the context, loading GPU code) averaging at least `STARTUP_MIN_US` a call; and ops that
    ran device work yet spent at least `STARTUP_MIN_US` a call on the host, `STARTUP_FACTOR`
    times their device time (a first cuDNN or cuBLAS call choosing and loading its kernels:
    no steady dispatch takes milliseconds), copies and syncs aside (they wait for the
    device), and the profiler's own rows too (`PROFILER_OVERHEAD_ROWS`: a ``Buffer Flush`` of
    6 ms a call is its cost, not start-up). The three can hold each other's time, so the
    largest of their sums counts, never their total.

    `inclusive`: a torch <= 1.6 table, whose device times are the time between CUDA events
    around each op, host time included (`table_legacy`): there a cold op is a leaf that runs
    only on the device (`DEVICE_ONLY_OPS`) and spent at least `STARTUP_MIN_US` a call of its
    own host time (a first cuDNN call creating its handle and choosing its algorithm, the
    device waiting meanwhile), and that host time is its start-up."""
    total = table.self_cpu_total_us
    if not total:
        return 0.0, []
    floor = STARTUP_MIN_US
    if inclusive:
        kinds = {id(r): row_kind(r, table) for r in table.rows}
        cold = [
            r
            for r in table.rows
            if DEVICE_ONLY_OPS.match(r.name)
            and is_leaf(r, kinds[id(r)])
            and r.calls
            and r.self_cpu_us / r.calls >= floor
        ]
        cold_us = sum(r.self_cpu_us for r in cold)
    else:
        cold = [
            r
            for r in table.rows
            if r.self_device_us > 0
            and not is_wait(r.name)  # a copy to the host waits for the device: not start-up
            and r.name not in PROFILER_OVERHEAD_ROWS  # the profiler's own work: its cost
            and r.cpu_avg_us >= floor
            and r.cpu_avg_us >= STARTUP_FACTOR * r.device_avg_us
        ]
        cold_us = sum(r.cpu_total_us - r.device_total_us for r in cold)
    named = [r for r in table.rows if r.name in STARTUP_ROWS and r.cpu_total_us]
    first_use = [r for r in table.rows if r.name in FIRST_USE_CALLS and r.cpu_avg_us >= floor]
    sets = (
        (sum(r.cpu_total_us for r in named), named),
        (sum(r.self_cpu_us for r in first_use), first_use),
        (cold_us, cold),
    )
    us, rows = max(sets, key=lambda s: s[0])
    rows = sorted(rows, key=lambda r: -r.cpu_total_us)
    return us * 100.0 / total, rows
