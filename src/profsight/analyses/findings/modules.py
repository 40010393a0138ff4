"""Module overhead: time a module spends outside its child modules (its Python, its glue
ops such as a skip connection), and many tiny ops in the forward pass."""

from __future__ import annotations

import msgspec
import numpy as np

from profsight.analyses.context import Context
from profsight.analyses.findings.filling import TABLE, TRACE, Filling
from profsight.analyses.step.printed_parts import PrintedStep
from profsight.analyses.step.table_device import PrintedDevice
from profsight.knowledge import advice
from profsight.knowledge.advice import (
    DDP_FORWARD_NOTE,
    MODULE_ADVICE,
    MODULE_OWN_FRACTION,
    MODULE_OWN_PCT,
    TINY_OP_US,
    TINY_OPS_PER_STEP,
)
from profsight.knowledge.catalogue import condition
from profsight.knowledge.lightning_names import (
    CUT_MARK,
    LIGHTNING_MODULE_PREFIX,
    PYTHON_MODULE_PREFIX,
    TORCH_LAYERS,
    module_class,
)
from profsight.knowledge.op_families import OPTIMIZER, op_family
from profsight.knowledge.ops import lookup_op
from profsight.knowledge.phases import Phase
from profsight.knowledge.rows import RowKind
from profsight.knowledge.trace_schema import EventKind
from profsight.lazy import regex
from profsight.model.findings import Evidence, Finding, severity_for
from profsight.model.module_table import OUTSIDE_MODULES
from profsight.model.row_kind import row_kind
from profsight.model.table import ProfilerTable, Row
from profsight.units import short_time


def run(ctx: Context) -> list[Finding]:
    return _own_time(ctx) + _tiny_ops(ctx)


def _candidates(ctx: Context) -> list[Row]:
    """Modules by the module ranges (``with_modules``, Lightning's ``[pl][module]``), plus
    module rows of the plain table that no such range covers: the ``.forward`` ranges torch
    records itself (``DistributedDataParallel.forward``, in which Lightning runs
    ``training_step``)."""
    rows = list(ctx.profile.table(group_by="module").rows)
    seen = {r.name for r in rows}
    rows += [
        r for r in ctx.rows(RowKind.MODULE) if r.name not in seen and r.name.endswith(".forward")
    ]
    return rows


class ModuleTime(msgspec.Struct, frozen=True):
    """One module's own time: outside its child modules."""

    label: str
    own_us: float
    """Per step."""
    total_us: float
    """Per step."""
    share_pct: float
    """What its own time can cost the step, % (on a GPU run: at most the device idle)."""
    row: str
    """The row that shows it."""
    how: str = ""
    """How its own time was counted, when not from the trace's module ranges."""


def own_time_findings(modules: list[ModuleTime], filling: Filling = TRACE) -> list[Finding]:
    findings = []
    for m in modules:
        fraction = m.own_us / m.total_us if m.total_us else 0.0
        if m.share_pct < MODULE_OWN_PCT or fraction < MODULE_OWN_FRACTION:
            continue
        evidence = [
            Evidence(
                "own time (outside child modules)",
                f"{short_time(m.own_us)} per step, {m.share_pct:.1f}% of the step",
                (m.row,),
            ),
            Evidence("total time", f"{short_time(m.total_us)} per step"),
        ]
        if m.how:
            evidence.append(Evidence("how", m.how))
        findings.append(
            Finding(
                category="module_overhead",
                severity=severity_for(m.share_pct),
                title=f"{m.label} spends {fraction:.0%} of its time outside its layers",
                evidence=tuple(evidence),
                explanation=advice.MODULE_OWN_EXPLANATION
                + (DDP_FORWARD_NOTE if m.label.startswith("DistributedDataParallel") else ""),
                recommendation=MODULE_ADVICE,
                at_stake_pct=m.share_pct,
                gain_pct=filling.gain(m.share_pct),
                trigger=condition("module_overhead", "own_time"),
                confidence=filling.note,
            )
        )
    return findings


def _own_time(ctx: Context) -> list[Finding]:
    modules = [
        ModuleTime(
            row.name,
            row.self_cpu_us / ctx.steps,
            row.cpu_total_us / ctx.steps,
            ctx.host_at_stake(ctx.share(row.self_cpu_us)),
            row.name,
        )
        for row in _candidates(ctx)
        if row.name != OUTSIDE_MODULES
        and row.event_kind != "metric"
        and row.cpu_total_us
        and not _is_layer(row.name)
    ]
    return own_time_findings(modules)


def _is_layer(label: str) -> bool:
    """A torch.nn layer (``conv1 (Conv2d)``, or ``Linear_2`` as torch's with_stack module
    frames number instances): its own time is its computation."""
    cls = label.rsplit("(", 1)[-1].rstrip(")") if label.endswith(")") else label
    return cls in TORCH_LAYERS or _INSTANCE.sub("", cls) in TORCH_LAYERS


#: The instance number torch appends to a module frame's class (``nn.Module: Linear_2``).
_INSTANCE = regex(r"_\d+$")


class TinyOps(msgspec.Struct, frozen=True):
    """Ops of a few microseconds each: a Python loop over tensors."""

    per_step: float
    share_pct: float
    """Their time, what it can cost the step, %."""
    top: tuple[str, ...]
    """The most called."""
    where: str
    """Where they ran (``in the forward pass``), or what was counted (``op calls``)."""


def tiny_ops_findings(t: TinyOps, filling: Filling = TRACE) -> list[Finding]:
    if t.per_step < TINY_OPS_PER_STEP or t.share_pct < MODULE_OWN_PCT:
        return []
    return [
        Finding(
            category="module_overhead",
            severity=severity_for(t.share_pct),
            title=f"{t.per_step:.0f} tiny ops per step {t.where}",
            evidence=(
                Evidence(
                    "ops under " + short_time(TINY_OP_US),
                    f"{t.per_step:.0f} per step, {t.share_pct:.1f}% of the step",
                    t.top,
                ),
            ),
            explanation=advice.TINY_OPS_EXPLANATION,
            recommendation=MODULE_ADVICE,
            at_stake_pct=t.share_pct,
            gain_pct=filling.gain(t.share_pct),
            trigger=condition("module_overhead", "tiny_ops"),
            confidence=filling.note,
        )
    ]


def _tiny_ops(ctx: Context) -> list[Finding]:
    """Many ops of a few microseconds each in the forward pass."""
    bd = ctx.breakdown
    if not len(bd.row_events):
        return []
    ev = ctx.profile.events
    at = ctx.profile.attribution
    events = bd.row_events
    forward = bd.rows_in(Phase.FORWARD)
    ops = events[forward & (ev.kind[events] == EventKind.CPU_OP)]
    leaves = ops[at.cpu_total_of(ops) < TINY_OP_US]
    if ctx.has_device:
        # on a GPU run, a loop of tiny ops is the model's overhead when it feeds the device;
        # tiny ops on CPU tensors are CPU work the idle device waits for (`gpu_idle` names
        # it), and tiny ops each launching a tiny kernel are launch overhead first
        # (`knowledge.precedence`)
        leaves = leaves[at.device_total[leaves] > 0]
    share = ctx.host_at_stake(ctx.share(float(at.cpu_total_of(leaves).sum())))
    names, counts = np.unique(ev.name[leaves], return_counts=True)
    top = tuple(ev.strings[int(n)] for n in names[np.argsort(-counts)][:4])
    return tiny_ops_findings(TinyOps(len(leaves) / ctx.steps, share, top, "in the forward pass"))


# ------------------------------------------------------------ a printed table's filling


def from_table(
    step: PrintedStep, device: PrintedDevice | None, table: ProfilerTable
) -> list[Finding]:
    """The family on a printed table: each module's own time from the module tree its rows'
    names give, and the tiny ops among its rows."""
    return _table_modules(step, device, table) + _table_tiny_ops(step, device, table)


def _table_modules(
    step: PrintedStep, device: PrintedDevice | None, table: ProfilerTable
) -> list[Finding]:
    """A module's own time (outside its child modules): from the module tree the names'
    paths give (``[pl][module]<class>: <path>``), else torch's self time (its Python only)."""
    modules = [r for r in table.rows if row_kind(r, table) is RowKind.MODULE and r.cpu_total_us]
    # a child module missing from a table cut to its top rows would read as the parent's own
    # time: the paths are used only when every row is printed
    children = _module_children(modules) if step.coverage_pct >= advice.FULL_TABLE_PCT else None
    found = []
    for row in modules:
        cls = _INSTANCE.sub("", module_class(row.name).rsplit(".", 1)[-1])
        if cls in TORCH_LAYERS or (row.name.endswith(CUT_MARK) and cls not in row.name):
            continue
        if children is not None:
            own = row.cpu_total_us - sum(k.cpu_total_us for k in children.get(row.name, []))
            how = "its total less its child modules' totals (the paths in the names)"
        else:
            own = row.self_cpu_us
            how = (
                "torch's self time: its own Python only (the table cut names or rows of the "
                "modules inside it, so its own ops cannot be told from theirs)"
            )
        share = _host_at_stake(step.share(own / step.steps), device)
        found.append(
            ModuleTime(
                _label(row.name),
                own / step.steps,
                row.cpu_total_us / step.steps,
                share,
                row.name,
                how,
            )
        )
    note = (
        "the module's total holds its backward only if it runs inside it (it does not: "
        "backward is autograd's), so this is forward work"
    )
    return own_time_findings(found, TABLE.noted(note))


def _label(name: str) -> str:
    body = name.removeprefix(LIGHTNING_MODULE_PREFIX)
    cls, _, path = body.partition(": ")
    return f"{path} ({cls.rsplit('.', 1)[-1]})" if path else body


def _module_children(modules: list[Row]) -> dict[str, list[Row]] | None:
    """Each module row's direct child module rows, from the paths in the names; None when a
    name was cut before its path could place it."""
    placed: dict[str, tuple[str, str, bool]] = {}
    if any(r.name.startswith(PYTHON_MODULE_PREFIX) for r in modules):
        return None  # with_stack's module frames name an instance, not a path
    for row in modules:
        name = row.name
        cut = name.endswith(CUT_MARK)
        body = name[: -len(CUT_MARK)] if cut else name
        body = body.removeprefix(LIGHTNING_MODULE_PREFIX)
        if ": " not in body:
            return None
        cls, path = body.split(": ", 1)
        if not path:
            return None
        placed[name] = (cls, path, cut)
    children: dict[str, list[Row]] = {}
    whole = {n: p for n, (_, p, cut) in placed.items() if not cut}
    for row in modules:
        cls, path, cut = placed[row.name]
        parents = [
            n
            for n, p in whole.items()
            if n != row.name and (path.startswith(p + ".") or (cut and path == p))
        ]
        if cut and not parents:
            return None
        if parents:
            parent = max(parents, key=lambda n: len(whole[n]))
            children.setdefault(parent, []).append(row)
    return children


def _table_tiny_ops(
    step: PrintedStep, device: PrintedDevice | None, table: ProfilerTable
) -> list[Finding]:
    """Many ops of a few microseconds each: a Python loop over tensors. Ops of the optimizer's
    own update are left out, and so is as much tiny-op time as the optimizer takes (its
    per-parameter loop is tiny ops too: a table cannot tell whose they are)."""
    tiny = [
        r
        for r in table.rows
        if row_kind(r, table) is RowKind.ATEN
        and r.calls
        and r.cpu_total_us > 0
        and r.cpu_avg_us < TINY_OP_US
        and op_family(_category(r.name)) != OPTIMIZER
    ]
    calls = sum(r.calls for r in tiny) / step.steps
    us = sum(r.self_cpu_us for r in tiny) / step.steps
    us = max(us - step.phases.get(Phase.OPTIMIZER.value, 0.0), 0.0)
    share = _host_at_stake(step.share(us), device)
    top = tuple(r.name for r in sorted(tiny, key=lambda r: -r.calls)[:4])
    note = "the rows do not say which module or pass (forward, backward) ran these ops"
    return tiny_ops_findings(
        TinyOps(calls, share, top, "(op calls: every dispatch level counts)"), TABLE.noted(note)
    )


def _category(name: str) -> str | None:
    info = lookup_op(name)
    return info.category if info else None


def _host_at_stake(share: float, device: PrintedDevice | None) -> float:
    """Host time costs the step no more than the device idles (`Context.host_at_stake` on a
    trace)."""
    return share if device is None else min(share, device.idle_pct)
