"""The compute-and-precision family: where the compute goes (convolutions, matrix
multiplies, everything else) and FP32 matrix math on a GPU with tensor cores.

On a GPU run the compute is the device time of the ops (their kernels); on a CPU run, the
CPU time of the ops themselves. Those findings are informational: they say what the model
spends its time on when nothing else dominates, and what makes that work cheaper. Each rule
(`compute_finding`, `precision_findings`) is filled by a trace and by a printed table.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
import numpy as np
from msgspec.structs import replace

from profsight.analyses.context import Context
from profsight.analyses.findings.filling import TABLE, TRACE, Filling
from profsight.analyses.step import intervals
from profsight.analyses.step.clocks import step_of
from profsight.analyses.step.printed_parts import PrintedStep
from profsight.analyses.step.startup import startup_intervals
from profsight.analyses.step.table_device import PrintedDevice
from profsight.knowledge.advice import (
    COMPILED_REGION_ROWS,
    COMPUTE_PCT,
    FP32_EXPLANATION,
    FP32_ON_TENSOR_CORES_PCT,
    NO_TIMELINE,
    compute_advice,
    compute_explanation,
    mixed_precision,
)
from profsight.knowledge.catalogue import condition
from profsight.knowledge.generations import matmul_advice
from profsight.knowledge.hardware import TENSOR_CORE_ARCHS, arch_speedup
from profsight.knowledge.kernels import decode_kernel, matrix_precision
from profsight.knowledge.op_families import (
    COMPUTE_FINDINGS,
    FAMILY_LABELS,
    MATMUL,
    kernel_family,
)
from profsight.knowledge.ops import lookup_op
from profsight.knowledge.phases import Phase
from profsight.knowledge.roofline_ops import (
    BOUND_MAJORITY,
    BOUND_SHARE,
    FINDING_FAMILIES,
    MATRIX_NOT_COMPUTE_BOUND,
    ROOFLINE_EVIDENCE,
)
from profsight.knowledge.rows import RowKind
from profsight.knowledge.trace_schema import EventKind
from profsight.model.findings import UPPER_BOUND, Evidence, Finding, Severity, severity_for
from profsight.model.table import Row
from profsight.stats import union, unique
from profsight.units import short_time

#: Op glossary categories -> compute finding category.
COMPUTE_CATEGORIES = {
    "convolution": "compute_conv",
    "matmul": "compute_matmul",
    "attention": "compute_matmul",
}


#: Phases whose ops are not the model's forward/backward math (they have their own findings).
NOT_MODEL_PHASES = (
    Phase.OPTIMIZER,
    Phase.ZERO_GRAD,
    Phase.METRICS,
    Phase.VALIDATION,
    Phase.DATA_LOADING,
    Phase.CALLBACKS_LOGGING,
)
SKIPPED_OP_CATEGORIES = frozenset({"view", "allocation", "sync", "profiler"})
#: Op categories whose own device time is classed by the kernels they launch: an autograd
#: node launches none itself unless it is a custom Function's backward.
_BY_KERNELS = frozenset({"autograd"})


def run(ctx: Context) -> list[Finding]:
    """The family on a trace: where the compute goes, and FP32 math on tensor cores."""
    found = _where_it_goes(ctx)
    if ctx.has_device and ctx.breakdown.has_device:
        precision = precision_from_trace(ctx)
        found += precision_findings(precision) if precision is not None else []
    return found


def _where_it_goes(ctx: Context) -> list[Finding]:
    if ctx.unrecorded:
        return []  # a GPU run's compute is its kernels, and none was recorded
    device = ctx.has_device
    ev = ctx.profile.events
    ops, ranges = _model_ops(ctx, device)
    by_category, by_kernels = _classified(ctx, ops, ranges, device)
    totals = {k: sum(c for _, c, _ in v) for k, v in by_category.items()}
    found = []
    names = unique(ev.name[ops]).tolist() if device else []
    where = "device" if device else "CPU"
    # every family doing COMPUTE_PCT of the step or more, the largest first: a matmul's 51%
    # beside five unfused elementwise kernels' 49% is two readings, not one
    for category in sorted(totals, key=lambda k: -totals[k]):
        us = totals[category]
        if device:
            # kernels of one family that run at once (on several streams, or several GPUs of
            # one process) hold the step for the time they run, not for the sum of their runs
            named = [
                n
                for n in names
                if n not in by_kernels and compute_category(ev.strings[n]) == category
            ]
            us = _running_us(ctx, ops[np.isin(ev.name[ops], named)], ops, by_kernels, category)
        share = ctx.share(us)
        if share < COMPUTE_PCT:
            continue
        leaders = [x for x in sorted(by_category[category], key=lambda x: -x[1]) if x[1] > 0]
        evidence = tuple(
            Evidence(name, f"{short_time(c)} {where} time, {n} calls", (name,))
            for name, c, n in leaders[:4]
        )
        finding = compute_finding(
            category,
            share,
            evidence,
            f"{where} time in the forward and backward passes",
            arch=ctx.arch if device else None,
            precision=_matrix_precision(ctx.rows(RowKind.KERNEL)) if device else None,
        )
        found.append(_as_the_roofline_reads(ctx, finding) if device else finding)
    return found


def _model_ops(ctx: Context, device: bool) -> tuple[np.ndarray, np.ndarray]:
    """The ops (and kernel-launching ranges) of the steps' model work: not start-up, not
    the phases around the model (data loading, the optimizer, ...)."""
    ev = ctx.profile.events
    at = ctx.profile.attribution
    bd = ctx.breakdown
    ops = np.flatnonzero(at.is_row & (ev.kind == EventKind.CPU_OP))
    # a user's range that launches kernels itself, no op between (a C++ extension's or a
    # Triton kernel called from Python: DeepSeek's mlp(F) launching its FP8 grouped GEMMs):
    # those kernels are classed by their own names, as an unknown op's are
    ranges = _launching_ranges(ctx) if device else ops[:0]
    ops = union(ops, ranges)
    # the steps' ops (their host ranges): the window's other ops are no step's compute
    if bd.steps:
        ops = ops[step_of(*bd.host_ranges_ns, ev.start[ops]) >= 0]
    # ops run once while starting up (torch.compile tracing the model) are not its compute
    startup = startup_intervals(ctx.profile)
    ops = ops[~intervals.overlaps(ev.start[ops], ev.start[ops] + 1, startup)]
    not_model = bd.row_events[bd.rows_in(*NOT_MODEL_PHASES)]
    return ops[~np.isin(ops, not_model)], ranges


def _classified(
    ctx: Context, ops: np.ndarray, ranges: np.ndarray, device: bool
) -> tuple[dict[str, list[tuple[str, float, int]]], list[int]]:
    """The ops' time by compute category, as (name, µs, calls) each, and the names of the
    ops whose kernels are classed by their own names instead."""
    ev = ctx.profile.events
    at = ctx.profile.attribution
    cost = (_kernel_self(ctx) if device else at.cpu_self)[ops]
    ids, inverse = np.unique(ev.name[ops], return_inverse=True)
    sums = np.bincount(inverse.reshape(-1), weights=cost, minlength=len(ids))
    counts = np.bincount(inverse.reshape(-1), minlength=len(ids))
    by_category: dict[str, list[tuple[str, float, int]]] = {}
    by_kernels: list[int] = []
    launching = set(ev.name[ranges].tolist())
    for name, c, n in zip(ids.tolist(), sums.tolist(), counts.tolist(), strict=True):
        text = ev.strings[name]
        op = lookup_op(text)
        if device and (
            op is None
            or op.category in _BY_KERNELS
            or COMPILED_REGION_ROWS.match(text)
            or name in launching
        ):
            # generated code, an op profsight does not know or an autograd node (a custom
            # autograd Function around FP8 GEMMs or flash attention, and its backward) that
            # launches kernels itself: those kernels are classed by their own names
            by_kernels.append(name)
            continue
        category = compute_category(text)
        if category is not None:
            by_category.setdefault(category, []).append((text, c, n))
    if by_kernels:
        for category, entry in _own_kernels(ctx, ops[np.isin(ev.name[ops], by_kernels)]):
            by_category.setdefault(category, []).append(entry)
    return by_category, by_kernels


def _as_the_roofline_reads(ctx: Context, finding: Finding) -> Finding:
    """The compute finding with what the roofline says of its ops: how much of their device
    time each bound holds; matrix work that memory or latency bounds gets that bound's
    advice, not the tensor cores'."""
    roof = ctx.roofline
    families = FINDING_FAMILIES.get(finding.category, ())
    if roof is None or roof.device is None or not families:
        return finding
    split: dict[str, float] = {}
    for family in families:
        for bound, us in roof.by_family_bound.get(family, {}).items():
            split[bound] = split.get(bound, 0.0) + us
    total = sum(split.values())
    if total <= 0:
        return finding
    shares = sorted(((us / total, b) for b, us in split.items()), reverse=True)
    reading = ", ".join(BOUND_SHARE.format(pct=100 * x, bound=b) for x, b in shares)
    text = ROOFLINE_EVIDENCE.format(time=short_time(total), device=roof.device, reading=reading)
    evidence = (*finding.evidence, Evidence("roofline", text))
    share, bound = shares[0]
    matrix = finding.category in ("compute_matmul", "compute_conv")
    if not matrix or bound not in MATRIX_NOT_COMPUTE_BOUND or share < BOUND_MAJORITY:
        return replace(finding, evidence=evidence)
    title, advice = MATRIX_NOT_COMPUTE_BOUND[bound]
    return replace(
        finding,
        title=f"{finding.title.split(':')[0]}, {title}: {finding.at_stake_pct:.0f}% of the step",
        evidence=evidence,
        recommendation=advice,
    )


def _launching_ranges(ctx: Context) -> np.ndarray:
    """Annotations (``record_function`` ranges) that kernels are attributed to directly:
    the kernels launched in them outside any op, classed by their own names (`_own_kernels`)."""
    ev = ctx.profile.events
    at = ctx.profile.attribution
    kernels = np.flatnonzero(ev.kind == EventKind.KERNEL)
    owners = unique(at.owner[kernels])
    owners = owners[owners >= 0]
    ranges: np.ndarray = owners[ev.kind[owners] == EventKind.ANNOTATION]
    return ranges


def _matrix_precision(rows: Iterable[Row]) -> str | None:
    """The precision the matrix math of `rows` (kernels, or a table's device rows) runs in,
    by their names (`knowledge.kernels.matrix_precision`)."""
    return matrix_precision((r.name, r.self_device_us) for r in rows)


def compute_category(text: str) -> str | None:
    """The compute category an op's time is filed in (None: skipped). A compiled region's
    range (`COMPILED_REGION_ROWS`) is no op: its own time is generated code's, its kernels
    are classed by their names on the device."""
    if COMPILED_REGION_ROWS.match(text):
        return None
    op = lookup_op(text)
    if op is not None and op.category in SKIPPED_OP_CATEGORIES:
        return None
    return COMPUTE_CATEGORIES.get(op.category, "compute_other") if op else "compute_other"


def _running_us(
    ctx: Context, owners: np.ndarray, ops: np.ndarray, by_kernels: list[int], category: str
) -> float:
    """How long the kernels of `category` ran inside the steps' windows, overlapping runs
    counted once: those `owners` launched, and those the ops classed by their kernels' names
    launched that are of it."""
    ev = ctx.profile.events
    at = ctx.profile.attribution
    kernels = np.flatnonzero(ev.kind == EventKind.KERNEL)
    mine = np.isin(at.owner[kernels], owners)
    launched = kernels[np.isin(at.owner[kernels], ops[np.isin(ev.name[ops], by_kernels)])]
    if len(launched):
        names = unique(ev.name[launched])
        of_it = [
            n
            for n in names.tolist()
            if COMPUTE_FINDINGS.get(kernel_family(decode_kernel(ev.strings[n]).operation))
            == category
        ]
        mine |= np.isin(kernels, launched[np.isin(ev.name[launched], of_it)])
    run = kernels[mine]
    spans = intervals.union(ev.start[run], ev.end_of(run))
    if ctx.breakdown.steps:  # the time inside the steps' windows, as the step's share counts
        spans = intervals.clip(*spans, *ctx.breakdown.span_ns)
    return intervals.length(*spans) / 1000.0


def _own_kernels(ctx: Context, owners: np.ndarray) -> list[tuple[str, tuple[str, float, int]]]:
    """The kernels `owners` launch themselves, each filed by its own name's class (a GEMM
    template is a matrix multiply, not elementwise work; a DeepEP dispatch is communication,
    no compute), as (category, (kernel, device µs, runs))."""
    ev = ctx.profile.events
    at = ctx.profile.attribution
    kernels = np.flatnonzero((ev.kind == EventKind.KERNEL) & np.isin(at.owner, owners))
    ids, inverse = np.unique(ev.name[kernels], return_inverse=True)
    sums = np.bincount(inverse.reshape(-1), weights=ev.dur[kernels] / 1000.0, minlength=len(ids))
    runs = np.bincount(inverse.reshape(-1), minlength=len(ids))
    out = []
    for name, us, n in zip(ids.tolist(), sums.tolist(), runs.tolist(), strict=True):
        text = ev.strings[name]
        category = COMPUTE_FINDINGS.get(kernel_family(decode_kernel(text).operation))
        if category is not None:
            out.append((category, (text, us, n)))
    return out


def _kernel_self(ctx: Context) -> np.ndarray:
    """Per event: the device self time of its kernels alone. Copies (host-device, device to
    device, peer to peer over NVLink or PCIe) and memsets move data, they do not compute: an
    ``aten::copy_`` that moves a tensor to another GPU is the copies' cost, not the model's."""
    ev = ctx.profile.events
    at = ctx.profile.attribution
    moves = np.flatnonzero(
        ((ev.kind == EventKind.MEMCPY) | (ev.kind == EventKind.MEMSET)) & (at.owner >= 0)
    )
    moved = np.bincount(at.owner[moves], weights=ev.dur[moves] / 1000.0, minlength=len(ev))
    kernel_self: np.ndarray = np.maximum(at.device_self - moved, 0.0)
    return kernel_self


def compute_finding(
    category: str,
    share: float,
    evidence: tuple[Evidence, ...],
    where: str,
    confidence: str = "",
    arch: str | None = None,
    precision: str | None = None,
) -> Finding:
    """The informational finding of where the compute goes: `category` takes `share` of the
    step, counted as the ops' own `where`; the advice names `arch`'s precisions, or, for
    matrix math whose kernels say they run in `precision` already, what is left to do."""
    title, advice = compute_advice(category, arch)
    known = matmul_advice(arch, precision) if category == "compute_matmul" else None
    advice = known or advice
    return Finding(
        category=category,
        severity=Severity.INFO,
        title=f"{title}: {share:.0f}% of the step",
        evidence=evidence,
        explanation=compute_explanation(where),
        recommendation=advice,
        at_stake_pct=share,
        trigger=condition(category, "share"),
        confidence=confidence,
    )


# ------------------------------------------------------------------ precision


class Fp32Matrix(msgspec.Struct, frozen=True):
    """FP32 matrix math (GEMM, convolution, attention) not on tensor cores, on a GPU that
    has them."""

    arch: str
    """The GPU's architecture (a table: the newest its kernels were built for)."""
    where: str
    """The GPU as the trigger names it (a table: ``a GPU of ampere or later``)."""
    device_pct: float
    """Their device time, % of all device time."""
    step_pct: float
    """Their device time, % of the step."""
    evidence: tuple[Evidence, ...]
    gain_pct: float | None = None
    """At the tensor cores' peak ratio, the most the kernels can gain (a table); None: the
    replay prices it."""
    filling: Filling = TRACE


def precision_findings(p: Fp32Matrix) -> list[Finding]:
    if p.device_pct < FP32_ON_TENSOR_CORES_PCT:
        return []
    return [
        Finding(
            category="low_precision",
            severity=severity_for(p.step_pct),
            title=f"{p.device_pct:.0f}% of GPU time is FP32 matrix math on a tensor-core GPU",
            evidence=p.evidence,
            explanation=FP32_EXPLANATION,
            recommendation=mixed_precision(p.arch),
            at_stake_pct=p.step_pct,
            gain_pct=p.gain_pct,
            basis=UPPER_BOUND if p.gain_pct is not None else "",
            trigger=condition("low_precision", "fp32"),
            confidence=p.filling.note,
        )
    ]


def precision_from_trace(ctx: Context) -> Fp32Matrix | None:
    """The kernels' names say their precision and whether they use tensor cores."""
    if ctx.arch not in TENSOR_CORE_ARCHS:
        return None
    fp32 = []
    for r in ctx.rows(RowKind.KERNEL):
        if decode_kernel(r.name).fp32_off_tensor_cores:
            fp32.append(r)
    us = sum(r.self_device_us for r in fp32)
    evidence = tuple(
        Evidence(r.name, f"{short_time(r.self_device_us)}", (r.name,))
        for r in sorted(fp32, key=lambda r: -r.self_device_us)[:4]
    )
    dev_total = ctx.table.self_device_total_us or 1.0
    return Fp32Matrix(ctx.arch, ctx.arch, us * 100 / dev_total, ctx.share(us), evidence)


def precision_from_table(step: PrintedStep, device: PrintedDevice) -> Fp32Matrix | None:
    if not device.tensor_cores or not device.work_us or device.arch is None:
        return None
    share = min(step.share(device.fp32_matrix_us), device.busy_pct)
    speedup = arch_speedup(device.arch)
    evidence = tuple(
        Evidence(r.name, f"{short_time(r.self_device_us / step.steps)} per step", (r.name,))
        for r in device.fp32_rows[:4]
    )
    return Fp32Matrix(
        device.arch,
        f"a GPU of {device.arch} or later, which its kernels are built for",
        device.fp32_matrix_us * 100 / device.work_us,
        share,
        evidence,
        share * (1 - 1 / speedup) if speedup else None,
        TABLE.noted(f"the GPU is known only from its kernels' names (at least {device.arch})"),
    )


# ------------------------------------------------------------ a printed table's filling


def from_table(step: PrintedStep, device: PrintedDevice | None) -> list[Finding]:
    """The family on a printed table: where its compute goes, and FP32 math on tensor cores
    when it has device columns."""
    found = _table_compute(step, device)
    fp32 = precision_from_table(step, device) if device is not None else None
    return found + (precision_findings(fp32) if fp32 is not None else [])


def _table_compute(step: PrintedStep, device: PrintedDevice | None) -> list[Finding]:
    """Where the compute goes: device time by family on a device run, else the ops' self
    CPU time by family (self times add up, so the shares are exact for the printed rows)."""
    spent = device.family_us if device is not None else step.family_self_us
    rows = device.family_rows if device is not None else step.family_rows
    by_category: dict[str, float] = {}
    for family, us in spent.items():
        category = COMPUTE_FINDINGS.get(family)
        if category is not None:
            by_category[category] = by_category.get(category, 0.0) + us
    where = f"{device.name} time" if device is not None else "self CPU time"
    # every family doing COMPUTE_PCT of the step or more, the largest first
    return [
        _table_family(step, device, rows, (category, step.share(us)), where)
        for category, us in sorted(by_category.items(), key=lambda kv: -kv[1])
        if step.share(us) >= COMPUTE_PCT
    ]


def _table_family(
    step: PrintedStep,
    device: PrintedDevice | None,
    rows: dict[str, tuple[Row, ...]],
    family: tuple[str, float],
    where: str,
) -> Finding:
    """The finding of one compute family of a printed table (its category and its share of
    the step), its largest rows as evidence."""
    top, share = family

    def cost(r: Row) -> float:
        if device is None:
            return r.self_cpu_us
        return r.device_total_us if device.reads_totals else r.self_device_us

    leaders = sorted(
        (r for f, rs in rows.items() if COMPUTE_FINDINGS.get(f) == top for r in rs),
        key=lambda r: -cost(r),
    )[:4]
    evidence = tuple(
        Evidence(
            r.name,
            f"{short_time(cost(r) / step.steps)} {where} per step, "
            f"{r.calls / step.steps:.0f} calls per step",
            (r.name,),
        )
        for r in leaders
    )
    return compute_finding(
        top,
        share,
        evidence,
        f"{where} ({FAMILY_LABELS.get(_family_of(top), top)})",
        f"{NO_TIMELINE}: self times of every pass are summed (forward, backward, "
        "validation and metrics alike)",
        precision=_matrix_precision(rows.get(MATMUL, ())) if device is not None else None,
    )


def _family_of(category: str) -> str:
    return next(f for f, c in COMPUTE_FINDINGS.items() if c == category)
