"""The ``communication`` finding of one rank: collectives that compute does not hide."""

from __future__ import annotations

from profsight.analyses.comms import Communication, OperationStats
from profsight.analyses.context import Context
from profsight.findings import Evidence, Finding, severity_for
from profsight.knowledge import advice
from profsight.knowledge.collectives import OPERATION_MEANING
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
            explanation="While a collective runs and nothing else computes, the step waits: "
            "for the data to cross the links, or for a slower rank to arrive. "
            + (advice.COMMUNICATION_WAIT_NOTE if ranks > 1 else ""),
            recommendation=advice.COMMUNICATION_ADVICE,
            at_stake_pct=share,
            gain_pct=share * 0.5,
            trigger=f"exposed communication >= {advice.COMMUNICATION_PCT:g}% of the step "
            f"(timed by {comms.timed_on})",
        )
    ]


def operation_evidence(o: OperationStats, steps: int) -> Evidence:
    calls = o.calls / max(steps, 1)
    parts = [f"{calls:.3g} per step", f"{short_time(o.total_us / max(steps, 1))} per step"]
    if o.nbytes > 0:
        parts.append(f"{short_bytes(o.nbytes / o.calls)} per call")
    if o.bus_gbps is not None:
        parts.append(f"bus bandwidth {short_rate(o.bus_gbps)}")
    meaning = OPERATION_MEANING.get(o.operation, "")
    return Evidence(
        f"{o.operation} ({o.backend})" + (f": {meaning}" if meaning else ""), ", ".join(parts)
    )


__all__ = ["Communication", "operation_evidence", "run"]
