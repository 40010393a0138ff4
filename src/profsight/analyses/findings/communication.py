"""The ``communication`` finding of one rank: collectives that compute does not hide.

From a trace, the exposed time is measured. From a printed table (`from_table`), the
collectives' device time is known (`PrintedComms`), not when they ran, so how much of it
compute hid is bounded: at least the time by which they outlast all other device work, at
most all of it. A step whose device work is mostly collectives is bound by them (the finding
comes first, the verdict says communication); otherwise they are information, with the
bounds. Sharding frameworks (DeepSpeed's ZeRO, FSDP) gather parameters and reduce gradients
with collectives of their own and synchronise the host with them: a sync in such a table is
the framework's (`framework_syncs`), and removing an ``.item()`` does not remove it."""

from __future__ import annotations

from msgspec.structs import replace

from profsight.analyses.context import Context
from profsight.analyses.step.printed_parts import PrintedStep
from profsight.analyses.step.table_comms import PrintedComms
from profsight.knowledge import advice
from profsight.knowledge.advice import COMMUNICATION_BOUND_SHARE, COMMUNICATION_NOTED_PCT
from profsight.knowledge.catalogue import condition
from profsight.knowledge.collectives import OPERATION_MEANING
from profsight.model.collectives_seen import Communication, OperationStats
from profsight.model.findings import (
    ESTIMATED,
    Evidence,
    Finding,
    Severity,
    severity_for,
)
from profsight.units import short_bytes, short_rate, short_time


def run(ctx: Context) -> list[Finding]:
    comms = ctx.comms
    if comms is None or not comms.timed or not ctx.step_us:
        return []
    average = comms.average()
    share = average.exposed_us * 100.0 / ctx.step_us
    if share < advice.COMMUNICATION_PCT:
        return _hidden(ctx, comms, share, average.overlapped_us)
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
            trigger=condition("communication", "exposed"),
        )
    ]


def _hidden(ctx: Context, comms: Communication, share: float, overlapped: float) -> list[Finding]:
    """Collectives that compute hides, past `COMMUNICATION_PCT` of the step: information,
    with how much is left exposed."""
    if overlapped * 100.0 / ctx.step_us < advice.COMMUNICATION_PCT:
        return []
    return [
        Finding(
            category="communication",
            severity=Severity.INFO,
            title=advice.HIDDEN_COMMUNICATION_TITLE.format(
                overlapped=short_time(overlapped), exposed_pct=share, backend=comms.backend
            ),
            evidence=(
                Evidence("overlapped with compute", f"{short_time(overlapped)} per step"),
                Evidence("exposed (nothing computes meanwhile)", f"{share:.1f}% of the step"),
                *(operation_evidence(o, ctx.steps) for o in comms.operations()[:3]),
            ),
            explanation=advice.HIDDEN_COMMUNICATION_EXPLANATION,
            recommendation=advice.HIDDEN_COMMUNICATION_ADVICE,
            at_stake_pct=share,
            trigger=condition("communication", "overlapped"),
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


def from_table(step: PrintedStep, comms: PrintedComms | None) -> list[Finding]:
    if comms is None or comms.device_us <= 0 or not step.step_us:
        return []
    share = step.share(comms.device_us)
    least = min(step.share(comms.least_exposed_us), share)
    work = comms.device_us + comms.other_us
    of_work = comms.device_us * 100.0 / work if work else 100.0
    evidence = (
        Evidence(
            "collectives on the device",
            f"{short_time(comms.device_us)} per step ({share:.0f}% of the step, "
            f"{of_work:.0f}% of the device's work), from {comms.basis}",
            tuple(r.name for r in comms.rows[:4]),
        ),
        Evidence(
            "other device work (what they can hide behind)",
            f"{short_time(comms.other_us)} per step",
        ),
        Evidence(
            "exposed (nothing else runs on the device meanwhile)",
            f"at least {least:.0f}% of the step, at most {share:.0f}%",
        ),
    )
    note = advice.TABLE_COMMUNICATION_CONFIDENCE
    if of_work >= COMMUNICATION_BOUND_SHARE:
        # more collective time than everything else: the step is spent in communication.
        # The table's device-bound step adds the device's work up (one stream), and on that
        # model the collectives' removal saves their share, as a copy's does (`memcpy`)
        return [
            Finding(
                category="communication",
                severity=severity_for(share),
                title=advice.TABLE_COMMUNICATION_BOUND_TITLE.format(of_work=of_work),
                evidence=evidence,
                explanation=advice.COMMUNICATION_EXPLANATION + advice.COMMUNICATION_WAIT_NOTE,
                recommendation=advice.COMMUNICATION_ADVICE,
                # what waits for them for sure (the verdict says it as the exposed share)
                at_stake_pct=least,
                gain_pct=share,
                basis=ESTIMATED,
                trigger=condition("communication", "table_bound"),
                confidence=note,
            )
        ]
    if share < COMMUNICATION_NOTED_PCT:
        return []
    return [
        Finding(
            category="communication",
            severity=Severity.INFO,
            title=advice.TABLE_COMMUNICATION_HIDDEN_TITLE.format(share=share),
            evidence=evidence,
            explanation=advice.TABLE_COMMUNICATION_HIDDEN_EXPLANATION,
            recommendation=advice.COMMUNICATION_ADVICE,
            at_stake_pct=least,
            trigger=condition("communication", "table_noted"),
            confidence=note,
        )
    ]


def framework_syncs(findings: list[Finding], comms: PrintedComms | None) -> list[Finding]:
    """The sync finding told as the framework's own when a sharding framework runs the
    table's collectives: its advice is the framework's settings, not the user's .item()."""
    if comms is None or not comms.framework:
        return findings
    names = tuple(r.name for r in (*comms.host_rows, *comms.rows))[:4]
    out = []
    for f in findings:
        if f.category != "host_device_sync":
            out.append(f)
            continue
        out.append(
            replace(
                f,
                title=f.title.replace(
                    advice.SYNC_TITLE_START,
                    advice.FRAMEWORK_SYNC_TITLE_START.format(framework=comms.framework),
                    1,
                ),
                evidence=(
                    *f.evidence,
                    Evidence(f"{comms.framework}'s collectives in the table", "", names),
                ),
                explanation=advice.FRAMEWORK_SYNC_EXPLANATION.format(framework=comms.framework),
                recommendation=advice.FRAMEWORK_SYNC_ADVICE.get(
                    comms.framework, advice.COMMUNICATION_ADVICE
                ),
            )
        )
    return out


__all__ = [
    "Communication",
    "collective_evidence",
    "framework_syncs",
    "from_table",
    "operation_evidence",
    "run",
]


def fragment_communication(share: float, evidence: tuple[Evidence, ...]) -> list[Finding]:
    """A fragment of a printed table whose rows' Self CUDA % put the collectives at `share`
    of the run's device time (`findings.fragment`): how much compute hid is not in it."""
    return [
        Finding(
            category="communication",
            severity=severity_for(share),
            title=advice.FRAGMENT_COMMUNICATION_TITLE.format(share=share),
            evidence=evidence,
            explanation=advice.COMMUNICATION_EXPLANATION + advice.FRAGMENT_SHARES_NOTE,
            recommendation=advice.COMMUNICATION_ADVICE,
            at_stake_pct=share,
            trigger=condition("communication", "fragment"),
            confidence=advice.FRAGMENT_CONFIDENCE,
        )
    ]
