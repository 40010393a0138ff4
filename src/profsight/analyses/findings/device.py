"""GPU-side findings: an idle device, launch overhead, host-device syncs, slow copies,
FP32 math on tensor-core GPUs, device memory near its limit (communication: `comm_findings`)."""

from __future__ import annotations

import numpy as np

from profsight.analyses.step.breakdown import host_read_calls
from profsight.analyses.step.context import Context
from profsight.knowledge import advice
from profsight.knowledge.hardware import PEER_LINKS_GBS, TENSOR_CORE_ARCHS
from profsight.knowledge.kernels import decode_kernel
from profsight.knowledge.rows import RowKind
from profsight.knowledge.trace_schema import (
    DEVICE_MEMORY_DEVICE_TYPES,
    DEVICE_WORK_KINDS,
    EventKind,
)
from profsight.model.findings import Evidence, Finding, Severity, severity_for
from profsight.units import short_time


def run(ctx: Context) -> list[Finding]:
    if not ctx.has_device or not ctx.breakdown.has_device:
        return []
    return [
        *_idle(ctx),
        *_syncs(ctx),
        *_copies(ctx),
        *_peer_copies(ctx),
        *_precision(ctx),
        *_memory(ctx),
    ]


def _idle(ctx: Context) -> list[Finding]:
    avg = ctx.average
    busy = ctx.steady_busy_us or 0.0
    # judged on the steady state: one-time start-up has its own finding
    busy_pct = busy * 100 / ctx.steady_us if ctx.steady_us else 0.0
    if busy_pct >= advice.GPU_IDLE_PCT:
        return []
    idle_pct = ctx.share(max(ctx.steady_us - busy, 0.0) * ctx.steps)
    causes = avg.device_idle_us
    # idle time in syncs is the sync finding's (its share is that idle time, to the µs):
    # this finding reports the rest
    synced = ctx.share(causes.get("sync", 0.0) * ctx.steps)
    rest = idle_pct - synced if synced >= advice.SYNC_PCT else idle_pct
    ev = ctx.profile.events
    kernels = ev.dur[ev.kind == EventKind.KERNEL] / 1000.0
    median = float(np.median(kernels)) if len(kernels) else 0.0
    per_step = len(kernels) / ctx.steps
    evidence = (
        Evidence(
            "device busy",
            f"{busy_pct:.0f}% of the step ({short_time(busy)})" + ctx.steady_note,
        ),
        Evidence("idle, waiting on the host", f"{short_time(causes.get('host', 0.0))} per step"),
        Evidence("idle, in a sync", f"{short_time(causes.get('sync', 0.0))} per step"),
        Evidence("idle, while loading data", f"{short_time(causes.get('input', 0.0))} per step"),
        Evidence("kernels", f"{per_step:.0f} per step, median {short_time(median)}"),
    )
    launch_bound = median < advice.SHORT_KERNEL_US and causes.get("host", 0.0) >= max(
        causes.get("sync", 0.0), causes.get("input", 0.0)
    )
    if launch_bound:
        return [
            Finding(
                category="launch_overhead",
                severity=severity_for(rest),
                title=f"The GPU idles {idle_pct:.0f}% of the step between many tiny kernels",
                evidence=evidence,
                explanation=advice.LAUNCH_EXPLANATION,
                recommendation=advice.LAUNCH_ADVICE,
                at_stake_pct=rest,
                trigger=f"device busy < {advice.GPU_IDLE_PCT:g}% ({advice.TB_PLUGIN}) and median "
                f"kernel < {short_time(advice.SHORT_KERNEL_US)}",
            )
        ]
    return [
        Finding(
            category="gpu_idle",
            severity=severity_for(rest),
            title=f"The GPU is idle {idle_pct:.0f}% of the step",
            evidence=(
                *evidence,
                *(
                    (Evidence("idle outside syncs", f"{rest:.0f}% of the step"),)
                    if rest < idle_pct
                    else ()
                ),
            ),
            explanation=advice.GPU_IDLE_EXPLANATION,
            recommendation=advice.GPU_IDLE_ADVICE,
            at_stake_pct=rest,
            trigger=f"device busy < {advice.GPU_IDLE_PCT:g}% of the step ({advice.TB_PLUGIN})",
        )
    ]


def _syncs(ctx: Context) -> list[Finding]:
    syncs = [r for r in ctx.rows(RowKind.SYNC) if not r.is_device]  # the host's calls
    items = [r for r in ctx.table.rows if r.name in ("aten::item", "aten::_local_scalar_dense")]
    us = sum(r.cpu_total_us for r in syncs)
    # what a sync costs is the time the device then idles (measured inside the step windows):
    # a CPU that waits for a busy GPU loses nothing
    idle_us = ctx.average.device_idle_us.get("sync", 0.0)
    share = idle_us * 100 / ctx.step_us if ctx.step_us else 0.0
    if share < advice.SYNC_PCT:
        return []
    calls = sum(r.calls for r in syncs) / ctx.steps
    ev = ctx.profile.events
    reads = len(host_read_calls(ctx.profile)) / ctx.steps
    blocking = (
        (
            Evidence(
                "device-to-host copies (each waits for the device)",
                f"{reads:.0f} per step"
                + (
                    ": values read back one by one in a loop (.item(), .cpu(), print)"
                    if reads >= advice.ITEM_LOOP_PER_STEP
                    else ""
                ),
                tuple(sorted({ev.strings[ev.name[e]] for e in host_read_calls(ctx.profile)})),
            ),
        )
        if reads
        else ()
    )
    return [
        Finding(
            category="host_device_sync",
            severity=severity_for(share),
            title=f"Host-device syncs leave the GPU idle {share:.0f}% of the step",
            evidence=(
                Evidence("device idle during syncs", f"{short_time(idle_us)} per step"),
                Evidence(
                    "synchronising calls",
                    f"{calls:.1f} per step, {short_time(us / ctx.steps)} of CPU time per step",
                    tuple(r.name for r in syncs),
                ),
                *blocking,
                *(
                    Evidence(r.name, f"{r.calls / ctx.steps:.1f} calls per step", (r.name,))
                    for r in items
                ),
            ),
            explanation=advice.SYNC_EXPLANATION,
            recommendation=advice.SYNC_ADVICE,
            at_stake_pct=share,
            trigger=f"device idle during syncs >= {advice.SYNC_PCT:g}% of the step "
            f"({advice.MEASURED})",
        )
    ]


def _copies(ctx: Context) -> list[Finding]:
    pageable = [r for r in ctx.rows(RowKind.MEMCPY) if "Pageable" in r.name]
    us = sum(r.device_total_us for r in pageable)
    share = ctx.share(us)
    if not pageable or share < advice.COPY_PCT:
        return []
    return [
        Finding(
            category="memcpy",
            severity=severity_for(share),
            title=f"Copies from pageable host memory: {share:.1f}% of the step",
            evidence=tuple(
                Evidence(
                    r.name,
                    f"{short_time(r.device_total_us / ctx.steps)} per "
                    f"step, {r.calls / ctx.steps:.0f} per step",
                    (r.name,),
                )
                for r in pageable
            ),
            explanation=advice.PAGEABLE_EXPLANATION,
            recommendation=advice.PAGEABLE_ADVICE,
            at_stake_pct=share,
            trigger="any Pageable memcpy >= 1% of the step",
        )
    ]


def peer_copy_events(ctx: Context) -> np.ndarray:
    """Device copies from one GPU to another (``Memcpy PtoP``)."""
    ev = ctx.profile.events
    copies = np.flatnonzero(ev.kind == EventKind.MEMCPY)
    peer: np.ndarray = copies[np.array(["PtoP" in n for n in ev.names(copies)], bool)]
    return peer


def _peer_copies(ctx: Context) -> list[Finding]:
    """Copies between GPUs, their bandwidth against the links they can take."""
    ev = ctx.profile.events
    peer = peer_copy_events(ctx)
    us = float(ev.dur[peer].sum()) / 1000.0
    share = ctx.share(us)
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
            trigger=f"peer-to-peer copies >= {advice.COPY_PCT:g}% of the step",
        )
    ]


def _precision(ctx: Context) -> list[Finding]:
    if ctx.arch not in TENSOR_CORE_ARCHS:
        return []
    kernels = ctx.rows(RowKind.KERNEL)
    fp32 = []
    for r in kernels:
        k = decode_kernel(r.name)
        matrix = k.operation is not None and k.operation.startswith(("gemm", "conv", "attention"))
        if matrix and k.precision == "fp32" and k.tensor_cores is not True:
            fp32.append(r)
    dev_total = ctx.table.self_device_total_us or 1.0
    share_dev = sum(r.self_device_us for r in fp32) * 100 / dev_total
    if share_dev < advice.FP32_ON_TENSOR_CORES_PCT:
        return []
    return [
        Finding(
            category="low_precision",
            severity=severity_for(ctx.share(sum(r.self_device_us for r in fp32))),
            title=f"{share_dev:.0f}% of GPU time is FP32 matrix math on a tensor-core GPU",
            evidence=tuple(
                Evidence(r.name, f"{short_time(r.self_device_us)}", (r.name,))
                for r in sorted(fp32, key=lambda r: -r.self_device_us)[:4]
            ),
            explanation=advice.FP32_EXPLANATION,
            recommendation=advice.mixed_precision(ctx.arch),
            at_stake_pct=ctx.share(sum(r.self_device_us for r in fp32)),
            trigger=f"FP32 GEMM/conv >= {advice.FP32_ON_TENSOR_CORES_PCT:g}% of device time on "
            f"{ctx.arch} ({advice.TB_PLUGIN}: tensor-core eligible work not on tensor cores)",
        )
    ]


def _memory(ctx: Context) -> list[Finding]:
    """Device memory near its capacity: the peak allocated by tensors against the device's
    total memory, with what the caching allocator reserved beside it."""
    ev = ctx.profile.events
    devices = ctx.profile.meta.devices
    mem = (ev.kind == EventKind.MEMORY) & np.isin(
        ev.mem_device_type, list(DEVICE_MEMORY_DEVICE_TYPES)
    )
    if not mem.any() or not devices:
        return []
    peak = int(ev.allocated[mem].max())
    reserved = int(ev.reserved[mem].max()) if len(ev.reserved) else -1
    capacity = devices[0].get("totalGlobalMem")
    if not isinstance(capacity, int) or peak <= 0 or peak < capacity * advice.MEMORY_PEAK_FRACTION:
        return []
    pct = peak * 100 / capacity
    gib = 2**30
    evidence = [Evidence("peak allocated", f"{peak / gib:.1f} GiB of {capacity / gib:.1f} GiB")]
    if reserved > 0:
        evidence.append(Evidence("peak reserved (caching allocator)", f"{reserved / gib:.1f} GiB"))
    return [
        Finding(
            category="memory",
            severity=Severity.HIGH,
            title=f"{advice.MEMORY_LIMIT_TITLE} {pct:.0f}% of the GPU's",
            evidence=tuple(evidence),
            explanation=advice.MEMORY_LIMIT_EXPLANATION,
            recommendation=advice.memory_limit_advice(ctx.arch),
            at_stake_pct=0.0,
            trigger=f"peak allocated > {advice.MEMORY_PEAK_FRACTION:.0%} of device memory "
            f"({advice.TB_PLUGIN})",
        )
    ]


__all__ = ["DEVICE_WORK_KINDS", "run"]
