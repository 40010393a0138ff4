"""The ``communication`` finding of one rank: collectives that compute does not hide."""

from __future__ import annotations

from profsight.analyses.step.comms import Communication, OperationStats
from profsight.analyses.step.context import Context
from profsight.knowledge import advice
from profsight.knowledge.collectives import OPERATION_MEANING
from profsight.model.findings import Evidence, Finding, severity_for
from profsight.units import short_bytes, short_rate, short_time


def run(ctx: Context) -> list[Finding]:
    comms = ctx.comms
    if comms is None or not comms.timed or not ctx.step_us:
        return []
    average = comms.average()
    share = average.exposed_us * 100.0 / ctx.step_us
    if share < advice.COMMUNICATION_PCT:
        return []
    world = ctx.profile.meta.distributed.get("world_size")
    ranks = world if isinstance(world, int) else 0
    evidence = [
        Evidence(
            "exposed (nothing computes meanwhile)",
            f"{short_time(average.exposed_us)} per step ({share:.0f}% of the step)",
        ),
        Evidence(
            "overlapped with compute",
            f"{short_time(average.overlapped_us)} per step",
        ),
        *(operation_evidence(o, ctx.steps) for o in comms.operations()[:3]),
    ]
    return [
        Finding(
            category="communication",
            severity=severity_for(share),
            title=f"{share:.0f}% of each step waits for communication ({comms.backend})",
            evidence=tuple(evidence),
            explanation=advice.COMMUNICATION_EXPLANATION
            + (advice.COMMUNICATION_WAIT_NOTE if ranks > 1 else ""),
            recommendation=advice.COMMUNICATION_ADVICE,
            at_stake_pct=share,
            trigger=f"exposed communication >= {advice.COMMUNICATION_PCT:g}% of the step "
            f"(timed by {comms.timed_on})",
        )
    ]


def operation_evidence(o: OperationStats, steps: int) -> Evidence:
    n = max(steps, 1)
    return collective_evidence(
        o.operation,
        o.backend,
        o.calls / n,
        o.nbytes / o.calls if o.nbytes > 0 else None,
        o.total_us / o.calls if o.calls else None,
        o.bus_gbps,
    )


def collective_evidence(
    operation: str,
    backend: str,
    calls_per_step: float,
    bytes_per_call: float | None,
    us_per_call: float | None,
    bus_gbps: float | None,
) -> Evidence:
    """One operation's line of evidence: calls, time and size per call, bus bandwidth."""
    parts = [f"{calls_per_step:.3g} per step"]
    if us_per_call is not None:
        parts.append(f"{short_time(us_per_call)} per call")
    if bytes_per_call:
        parts.append(f"{short_bytes(bytes_per_call)} per call")
    if bus_gbps is not None:
        parts.append(f"bus bandwidth {short_rate(bus_gbps)}")
    meaning = OPERATION_MEANING.get(operation, "")
    return Evidence(
        f"{operation} ({backend})" + (f": {meaning}" if meaning else ""), ", ".join(parts)
    )


__all__ = ["Communication", "collective_evidence", "operation_evidence", "run"]
