"""The sync-and-copies family: the host waiting for the device (syncs, reads back), copies
from pageable memory or that the host waits for, and copies between GPUs.

`sync_findings` and `copy_findings` each read one record, filled by a trace (exact: the
device's idle time during the waits is measured) or by a printed table (bounded: the rows
give the waits' host time and the device's total work, not when either ran).
"""

from __future__ import annotations

import msgspec
import numpy as np

from profsight.analyses.context import Context
from profsight.analyses.findings.filling import TABLE, TRACE, Filling
from profsight.analyses.findings.table_python import hotspot, leaf
from profsight.analyses.step import intervals
from profsight.analyses.step.breakdown import host_read_calls
from profsight.analyses.step.printed_parts import PrintedStep
from profsight.analyses.step.table_device import BLOCKING_COPY, QUEUE_FULL, SYNC, PrintedDevice
from profsight.knowledge import advice
from profsight.knowledge.catalogue import condition
from profsight.knowledge.hardware import PEER_LINKS_GBS
from profsight.knowledge.lightning_names import HOST_WAIT_CALL, STEP_CODE_ACTIONS, advanced_action
from profsight.knowledge.op_families import COPIES
from profsight.knowledge.rows import RowKind
from profsight.knowledge.trace_schema import EventKind
from profsight.model.cprofile import ActionProfile
from profsight.model.findings import UPPER_BOUND, Evidence, Finding, Severity, severity_for
from profsight.units import short_time


class SyncWaits(msgspec.Struct, frozen=True):
    """How long the device idled while the host waited for it."""

    idle_pct: float
    """Device idle during the host's waits, % of the step (a table: at most this)."""
    least_pct: float | None
    """A table's lower bound on it (None: measured, a trace)."""
    evidence: tuple[Evidence, ...]
    filling: Filling = TRACE


def sync_findings(s: SyncWaits) -> list[Finding]:
    if s.idle_pct < advice.SYNC_PCT:
        return []
    bounded = s.least_pct is not None
    return [
        Finding(
            category="host_device_sync",
            severity=severity_for(s.idle_pct),
            title=f"Host-device syncs leave the GPU idle {'up to ' if bounded else ''}"
            f"{s.idle_pct:.0f}% of the step",
            evidence=s.evidence,
            explanation=advice.SYNC_EXPLANATION,
            recommendation=advice.SYNC_ADVICE,
            at_stake_pct=s.idle_pct,
            gain_pct=s.filling.gain(s.idle_pct),
            # a table bounds the idle time between two figures: its saving is at most the
            # larger, and ranks with the other upper bounds (`ranked`)
            basis=UPPER_BOUND if bounded and (s.least_pct or 0.0) < s.idle_pct else "",
            trigger=condition("host_device_sync", "sync"),
            confidence=s.filling.note,
        )
    ]


def syncs_from_trace(ctx: Context) -> SyncWaits:
    """What a sync costs is the time the device then idles (measured inside the steps): a
    CPU that waits for a busy GPU loses nothing."""
    syncs = [r for r in ctx.rows(RowKind.SYNC) if not r.is_device]  # the host's calls
    items = [r for r in ctx.table.rows if r.name in advice.ITEM_OPS]
    idle_us = ctx.average.device_idle_us.get("sync", 0.0)
    calls = sum(r.calls for r in syncs) / ctx.steps
    cpu_us = sum(r.cpu_total_us for r in syncs) / ctx.steps
    ev = ctx.profile.events
    reads = host_read_calls(ctx.profile)
    per_step = len(reads) / ctx.steps
    evidence = [
        Evidence("device idle during syncs", f"{short_time(idle_us)} per step"),
        Evidence(
            "synchronising calls",
            f"{calls:.1f} per step, {short_time(cpu_us)} of CPU time per step",
            tuple(r.name for r in syncs),
        ),
    ]
    if per_step:
        loop = per_step >= advice.ITEM_LOOP_PER_STEP
        evidence.append(
            Evidence(
                "device-to-host copies (each waits for the device)",
                f"{per_step:.0f} per step" + (f": {advice.ITEM_LOOP_READING}" if loop else ""),
                tuple(sorted({ev.strings[ev.name[e]] for e in reads})),
            )
        )
    evidence += [
        Evidence(r.name, f"{r.calls / ctx.steps:.1f} calls per step", (r.name,)) for r in items
    ]
    share = idle_us * 100 / ctx.step_us if ctx.step_us else 0.0
    return SyncWaits(share, None, tuple(evidence))


def syncs_from_table(step: PrintedStep, device: PrintedDevice) -> SyncWaits:
    """The host blocked in syncs and in copies that waited for earlier device work. It costs
    the step only where the device idled meanwhile: at most the idle time, and at least the
    part of the wait that the device's total work cannot cover."""
    waited = device.waits.get(SYNC, 0.0) + max(
        device.waits.get(BLOCKING_COPY, 0.0) - device.copy_us, 0.0
    )
    wait_share = step.share(waited)
    share = min(wait_share, device.idle_pct)
    least = min(max(wait_share - device.busy_pct, 0.0), share)
    queue = step.share(device.waits.get(QUEUE_FULL, 0.0))
    full = queue >= advice.QUEUE_FULL_PCT
    rows = (*device.wait_rows.get(SYNC, ()), *device.wait_rows.get(BLOCKING_COPY, ()))
    calls = sum(r.calls for r in rows)
    # a host ahead of a device with a backlog waits for its work, and so does the one
    # synchronize that ends the profiled region: the device's time seen from the host (issue
    # 36: a cudaDeviceSynchronize on a busy GPU is not idle time)
    ending = calls <= 1 and step.steps <= 1 and not device.wait_rows.get(BLOCKING_COPY)
    if full:
        share = least
    if ending:
        share = least = 0.0
    evidence: tuple[Evidence, ...] = (
        Evidence(
            "host blocked in syncs and blocking copies",
            f"{short_time(waited)} per step ({wait_share:.0f}% of the step)",
            tuple(r.name for r in rows),
        ),
        Evidence(
            "device work",
            f"{short_time(device.work_us)} per step: busy at most {device.busy_pct:.0f}% of "
            "the step",
        ),
        Evidence("device idle during the waits", f"{least:.0f}% to {share:.0f}% of the step"),
    )
    if ending:
        evidence += (Evidence("the region's one synchronize", advice.ENDING_SYNC_EVIDENCE),)
    if full:
        evidence += (
            Evidence(
                "launch queue",
                advice.QUEUE_FULL_SYNC_EVIDENCE.format(queue=queue),
                tuple(r.name for r in device.wait_rows.get(QUEUE_FULL, ())),
            ),
        )
    note = (
        "whether the GPU idled during the waits is bounded, not measured (between the two "
        "figures above)"
    )
    return SyncWaits(share, least, evidence, TABLE.noted(note))


class HostCopies(msgspec.Struct, frozen=True):
    """Copies between host and device that the host waits for."""

    share_pct: float
    """Their device time, % of the step."""
    pageable: bool
    """Named as from pageable memory (else inferred: the host waited in their calls)."""
    evidence: tuple[Evidence, ...]
    filling: Filling = TRACE


def copy_findings(c: HostCopies) -> list[Finding]:
    if c.share_pct < advice.COPY_PCT:
        return []
    what = "Copies from pageable host memory" if c.pageable else "Copies the host waits for"
    return [
        Finding(
            category="memcpy",
            severity=severity_for(c.share_pct),
            title=f"{what}: {c.share_pct:.1f}% of the step",
            evidence=c.evidence,
            explanation=advice.PAGEABLE_EXPLANATION,
            recommendation=advice.PAGEABLE_ADVICE,
            at_stake_pct=c.share_pct,
            gain_pct=c.filling.gain(c.share_pct),
            trigger=condition("memcpy", "pageable" if c.pageable else "blocking"),
            confidence=c.filling.note,
        )
    ]


def copies_from_trace(ctx: Context) -> HostCopies:
    """A trace names each copy's memory kind (``Memcpy HtoD (Pageable -> Device)``)."""
    pageable = [r for r in ctx.rows(RowKind.MEMCPY) if "Pageable" in r.name]
    evidence = tuple(
        Evidence(
            r.name,
            f"{short_time(r.device_total_us / ctx.steps)} per step, "
            f"{r.calls / ctx.steps:.0f} per step",
            (r.name,),
        )
        for r in pageable
    )
    return HostCopies(ctx.share(sum(r.device_total_us for r in pageable)), True, evidence)


def copies_from_table(step: PrintedStep, device: PrintedDevice) -> HostCopies:
    """Copies the rows name as pageable, else all copies when their calls took as much host
    time as the copies took on the device (they were not asynchronous)."""
    pageable = [r for r in device.memcpy_rows if "Pageable" in r.name]
    blocking = device.waits.get(BLOCKING_COPY, 0.0)
    copy_us = sum(r.self_device_us for r in pageable) / step.steps if pageable else 0.0
    if not pageable and blocking:
        copy_us = device.copy_us
    evidence = (
        Evidence(
            "device time of the copies",
            f"{short_time(copy_us)} per step",
            tuple(r.name for r in device.family_rows.get(COPIES, ())[:4]),
        ),
        Evidence(
            "host time in the copy calls",
            f"{short_time(blocking)} per step",
            tuple(r.name for r in device.wait_rows.get(BLOCKING_COPY, ())),
        ),
    )
    note = "the copies' direction and memory kind are inferred from their host time"
    return HostCopies(step.share(copy_us), bool(pageable), evidence, TABLE.noted(note))


def peer_copy_events(ctx: Context) -> np.ndarray:
    """Device copies from one GPU to another (``Memcpy PtoP``)."""
    ev = ctx.profile.events
    copies = np.flatnonzero(ev.kind == EventKind.MEMCPY)
    peer: np.ndarray = copies[ev.names_where(copies, lambda n: "PtoP" in n)]
    return peer


def peer_copy_findings(ctx: Context) -> list[Finding]:
    """Copies between GPUs, their bandwidth against the links they can take (a trace's
    copies carry their bytes; a table's do not)."""
    ev = ctx.profile.events
    peer = peer_copy_events(ctx)
    us = float(ev.dur[peer].sum()) / 1000.0
    # copies in both directions, or to several GPUs, run at once: the step holds them for
    # the time they run inside its windows, not for the sum of their durations
    spans = intervals.union(ev.start[peer], ev.end_of(peer))
    if ctx.breakdown.steps:
        spans = intervals.clip(*spans, *ctx.breakdown.span_ns)
    share = ctx.share(intervals.length(*spans) / 1000.0)
    if not len(peer) or share < advice.COPY_PCT:
        return []
    nbytes = float(ev.nbytes[peer].sum())
    rate = nbytes / (us * 1e-6) / 1e9 if us else 0.0
    evidence = [
        Evidence(
            "peer-to-peer copies",
            f"{len(peer) / ctx.steps:.0f} per step, {short_time(us / ctx.steps)} per step",
            tuple(sorted(set(ev.names(peer)))),
        )
    ]
    links = PEER_LINKS_GBS.get(ctx.arch or "")
    pcie_speed = False
    if nbytes > 0:
        evidence.append(Evidence("achieved bandwidth", f"{rate:.1f} GB/s"))
        if links is not None:
            pcie, fabric = links
            pcie_speed = rate <= pcie * advice.PCIE_SPEED_FRACTION
            evidence.append(
                Evidence(
                    f"{ctx.arch} links per direction",
                    f"PCIe {pcie:g} GB/s"
                    + (f", NVLink / Infinity Fabric {fabric:g} GB/s" if fabric else "")
                    + (": these copies ran at PCIe speed or below" if pcie_speed else ""),
                )
            )
    return [
        Finding(
            category="memcpy",
            severity=severity_for(share),
            title=f"{advice.PEER_COPY_TITLE} {share:.0f}% of the step"
            + (" at PCIe speed" if pcie_speed else ""),
            evidence=tuple(evidence),
            explanation=advice.PEER_EXPLANATION,
            recommendation=advice.PEER_ADVICE,
            at_stake_pct=share,
            trigger=condition("memcpy", "peer"),
        )
    ]


def run(ctx: Context) -> list[Finding]:
    """The family on a trace with device work."""
    if not ctx.has_device or not ctx.breakdown.has_device:
        return []
    return [
        *sync_findings(syncs_from_trace(ctx)),
        *copy_findings(copies_from_trace(ctx)),
        *peer_copy_findings(ctx),
        *copy_bound(ctx),
    ]


def copy_bound(ctx: Context) -> list[Finding]:
    """Copies between host and device as the device's main work (information, like the
    compute families): past `COMPUTE_PCT` of the steps' span and more than the kernels' busy
    time. A device saturated by copies is not a model heavy for its hardware."""
    ev = ctx.profile.events
    lo, hi = ctx.breakdown.span_ns
    span = max(hi - lo, 1)
    copies = np.flatnonzero(ev.kind == EventKind.MEMCPY)
    copies = copies[ev.names_where(copies, lambda n: "PtoP" not in n and "DtoD" not in n)]
    kernels = np.flatnonzero(ev.kind == EventKind.KERNEL)
    moving = intervals.length(
        *intervals.clip(*intervals.union(ev.start[copies], ev.end_of(copies)), lo, hi)
    )
    computing = intervals.length(
        *intervals.clip(*intervals.union(ev.start[kernels], ev.end_of(kernels)), lo, hi)
    )
    share = moving * 100.0 / span
    if share < advice.COMPUTE_PCT or moving <= computing:
        return []
    return [
        Finding(
            category="memcpy",
            severity=Severity.INFO,
            title=advice.COPY_BOUND_TITLE.format(share=share),
            evidence=(
                Evidence("copying between host and device", f"{share:.0f}% of the steps' span"),
                Evidence("computing (kernels)", f"{computing * 100.0 / span:.0f}% of it"),
            ),
            explanation=advice.COPY_BOUND_EXPLANATION,
            recommendation=advice.COPY_BOUND_ADVICE,
            at_stake_pct=share,
            trigger=condition("memcpy", "copy_bound"),
        )
    ]


def from_table(step: PrintedStep, device: PrintedDevice) -> list[Finding]:
    """The family on a printed table with device columns."""
    return [
        *sync_findings(syncs_from_table(step, device)),
        *copy_findings(copies_from_table(step, device)),
    ]


def hook_waits(step: PrintedStep, profiles: tuple[ActionProfile, ...]) -> list[Finding]:
    """Actions outside the training step's code whose time ends in a host-wait call (their
    `leaf` is `HOST_WAIT_CALL`: ``.item()`` under the progress bar's metrics), each holding at
    least `HOT_FUNCTION_PCT` of the step: the host waiting for the device, a sync."""
    if not step.steps:
        return []
    found = []
    for profile in profiles:
        if advanced_action(profile.action) in STEP_CODE_ACTIONS:
            continue  # the step's own code: `table_python.hot_function_findings`
        entry = leaf(profile)
        wait = HOST_WAIT_CALL.search(entry.location) if entry is not None else None
        if entry is None or wait is None:
            continue
        share = step.share(entry.cumtime_s * 1e6 / step.steps)
        if share < advice.HOT_FUNCTION_PCT:
            continue
        via = hotspot(profile)
        method = f".{wait['method']}()" if wait["method"] else "torch.cuda.synchronize()"
        found.append(
            Finding(
                category="host_device_sync",
                severity=severity_for(share),
                title=advice.HOOK_WAIT_TITLE.format(
                    action=profile.action, method=method, share=share
                ),
                evidence=(
                    Evidence(
                        "the wait",
                        f"{entry.location}: {short_time(entry.cumtime_s * 1e6 / step.steps)} "
                        f"per step ({share:.0f}% of the step), {entry.calls / step.steps:.0f} "
                        f"calls per step",
                        (profile.action, entry.location),
                    ),
                    Evidence("step time", short_time(step.step_us)),
                ),
                explanation=advice.HOOK_WAIT_EXPLANATION.format(
                    method=wait["method"] or "synchronize",
                    path=via.location if via is not None else profile.action,
                ),
                recommendation=advice.HOOK_WAIT_ADVICE,
                at_stake_pct=share,
                gain_pct=share,
                basis=UPPER_BOUND,
                trigger=condition("host_device_sync", "hot_function"),
                confidence=advice.HOT_FUNCTION_CONFIDENCE,
            )
        )
    return found
