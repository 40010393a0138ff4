"""A printed table's verdict facts, and what its rows say about the profile itself."""

from __future__ import annotations

from profsight.analyses.printed_device import PrintedDevice
from profsight.analyses.printed_findings import idle_causes
from profsight.analyses.printed_step import PrintedStep
from profsight.analyses.setup import setup_finding
from profsight.analyses.verdict import StepFacts
from profsight.findings import Finding
from profsight.knowledge.advice import PROFILER_OVERHEAD_PCT
from profsight.knowledge.phases import Phase
from profsight.knowledge.rows import LIGHTNING_ACTION_EVENT, PROFILER_OVERHEAD_ROWS, STARTUP_ROWS
from profsight.model.table import ProfilerTable


def printed_facts(
    step: PrintedStep,
    device: PrintedDevice | None,
    table: ProfilerTable,
    flops: tuple[float | None, ...] = (),
) -> StepFacts:
    """What the verdict reads, from the table's step model."""
    return StepFacts(
        step_us=step.step_us,
        steps=step.steps,
        phase_pct={p.value: step.phase_share(p) for p in Phase},
        unknown=_unknown(step),
        device_busy_pct=None if device is None else device.busy_pct,
        device_idle_pct=idle_causes(step, device),
        compute=(_flops(step, flops),),
        busy_basis="busy at most",
        host_only=_host_only(table, device),
    )


def _unknown(step: PrintedStep) -> frozenset[str]:
    """Phases a partial table may hide: no row of theirs is printed."""
    if step.coverage_pct >= 95.0:
        return frozenset()
    return frozenset({Phase.DATA_LOADING.value} - step.phases.keys())


def _host_only(table: ProfilerTable, device: PrintedDevice | None) -> str:
    """Why the run is judged on host times without being known CPU-only ("" when it is)."""
    if table.rows and all(r.event_kind == LIGHTNING_ACTION_EVENT for r in table.rows):
        return "a Lightning report does not say whether a GPU ran"
    if table.has_device and device is None:
        return "this table's device times cannot be read"
    return ""


def _flops(step: PrintedStep, flops: tuple[float | None, ...]) -> str:
    counted = [f for f in flops if f]
    if not counted:
        return (
            "FLOPs unknown: a printed table shows them only in its Total FLOPs column "
            "(profile(with_flops=True))"
        )
    per_step = sum(counted) / step.steps
    achieved = per_step / (step.step_us * 1e-6) if step.step_us else 0.0
    return f"{_si(per_step)}FLOP per step in the printed rows, {_si(achieved)}FLOP/s achieved"


def _si(value: float) -> str:
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}"
    return f"{value:.3g} "


def printed_setup(step: PrintedStep, table: ProfilerTable) -> list[Finding]:
    findings = []
    total = table.self_cpu_total_us
    bookkeeping = [r for r in table.rows if r.name in PROFILER_OVERHEAD_ROWS]
    overhead = sum(r.self_cpu_us for r in bookkeeping)
    if total and overhead * 100 / total >= PROFILER_OVERHEAD_PCT:
        findings.append(
            setup_finding(
                f"The profiler's own work is {overhead * 100 / total:.1f}% of the self CPU time",
                f"{', '.join(sorted({r.name for r in bookkeeping}))}: profiler bookkeeping "
                "(Kineto handing the device tracer new buffers) inside "
                "the profiled window; it is not your program's cost.",
                "Keep a warm-up step in the schedule (schedule(wait=1, warmup=1, active=3)), "
                "profile fewer steps per trace, and judge step time from the steps without it.",
            )
        )
    startup = [r for r in table.rows if r.name in STARTUP_ROWS and r.cpu_total_us]
    startup_us = sum(r.cpu_total_us for r in startup)
    if total and startup_us * 100 / total >= PROFILER_OVERHEAD_PCT:
        findings.append(
            setup_finding(
                f"One-time start-up is {startup_us * 100 / total:.1f}% of the self CPU time",
                f"{', '.join(r.name for r in startup)}: loading GPU code on first use happens "
                "once per process; inside the profiled window it reads as step time.",
                "Run a few steps before the profiled ones (schedule(wait=1, warmup=1, "
                "active=3)), or set CUDA_MODULE_LOADING=EAGER for the profiling run.",
            )
        )
    if step.evaluation_only:
        findings.append(
            setup_finding(
                "This table holds validation steps, not training steps",
                "Lightning's PyTorchProfiler prints fit-*.txt from the events of its last "
                "profiled window; after fit that is often the validation loop, so the table "
                "says nothing about the training step.",
                "Explain the training_step trace Lightning wrote beside it (profsight explain "
                "'fit-...training_step...pt.trace.json'), or profile fit with "
                "limit_val_batches=0 to get a table of training steps.",
            )
        )
    if "whole window" in step.basis:
        findings.append(
            setup_finding(
                "No row marks a training step: the whole table is read as one step",
                "Without ProfilerStep* (prof.step()), training_step or Optimizer.step# rows, "
                "the table's totals cover the whole profiled window, start-up included, and "
                "per-step figures are figures for the window.",
                "Call prof.step() once per iteration with schedule=torch.profiler.schedule("
                "wait=1, warmup=1, active=3) (Lightning's PyTorchProfiler does it for you).",
            )
        )
    return findings
