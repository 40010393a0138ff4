"""What each finding's fix changes in the step graph: its edit (`edit_for`), which
`replay.savings` replays to price it.

Each finding category maps to the change its recommendation makes, built from the trace
itself: the phase it removes, the waits it frees, the kernels it speeds up by the device's
own peak ratio, the ops a vectorised or multi-tensor version issues once instead of once per
element.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from profsight.analyses.context import Context
from profsight.analyses.findings.sync_copies import peer_copy_events
from profsight.analyses.lead_in import lead_in_spans
from profsight.analyses.replay.engine import Edit, StepGraph
from profsight.analyses.replay.op_runs import (
    forward_name,
    holding,
    median_by_name,
    runs,
    top_ops,
    until_next_event,
)
from profsight.analyses.step import intervals
from profsight.analyses.step.breakdown import phase_intervals, work_intervals
from profsight.analyses.step.comm_names import is_communication
from profsight.analyses.step.startup import startup_intervals
from profsight.knowledge import advice
from profsight.knowledge.hardware import PEER_LINKS_GBS, tensor_core_speedup
from profsight.knowledge.kernels import decode_kernel
from profsight.knowledge.lightning_names import module_label
from profsight.knowledge.ops import is_in_place
from profsight.knowledge.phases import PHASE_LABELS, Phase
from profsight.knowledge.precedence import PROFILE_CATEGORY
from profsight.knowledge.trace_schema import EventKind
from profsight.model.events import F64, I32, I64
from profsight.model.findings import (
    PER_SAMPLE,
    REPLAYED,
    UPPER_BOUND,
    Finding,
)
from profsight.model.module_table import innermost_module, module_rows
from profsight.model.step_windows import phase_code
from profsight.stats import median, setdiff, unique

_MODEL = (Phase.FORWARD, Phase.BACKWARD, Phase.OPTIMIZER, Phase.ZERO_GRAD)
#: No intervals.
_NONE: tuple[np.ndarray, np.ndarray] = (np.zeros(0, np.int64), np.zeros(0, np.int64))
#: Finding categories whose fix removes a phase's host time, and whether the device work
#: launched from it goes with it (a metric computed less often: yes; data made ready ahead
#: of the step still has to be copied: no).
_PHASE_FIXES: dict[str, tuple[Phase, bool]] = {
    "data_loading": (Phase.DATA_LOADING, False),
    "metrics": (Phase.METRICS, True),
    "callbacks_logging": (Phase.CALLBACKS_LOGGING, True),
    "validation": (Phase.VALIDATION, True),
}


def edit_for(ctx: Context, graph: StepGraph, f: Finding) -> Edit | None:
    if any(e.label == advice.LEAD_IN_LABEL for e in f.evidence):
        return _lead_in(ctx, graph, f)  # a lead-in, of the input or not
    if f.category in _PHASE_FIXES:
        phase, drop = _PHASE_FIXES[f.category]
        spans = intervals.minus(
            phase_intervals(ctx.breakdown, phase), startup_intervals(ctx.profile)
        )
        return Edit(
            f"without {phase.value.replace('_', ' ')}",
            host=(_removed(spans),),
            drop_removed_work=drop,
        )
    build = _EDITS.get(f.category)
    return build(ctx, graph, f) if build is not None else None


def _removed(spans: tuple[I64, I64], factor: float = 0.0) -> tuple[I64, I64, F64]:
    return spans[0], spans[1], np.full(len(spans[0]), factor)


def _lead_in(ctx: Context, graph: StepGraph, f: Finding) -> Edit | None:
    """The host's work before each step's first launch, taken out of the step."""
    leads = lead_in_spans(ctx)
    if leads is None:
        return None
    return Edit("without the host's lead-in", host=(_removed(leads),))


def _startup(ctx: Context, graph: StepGraph, f: Finding) -> Edit | None:
    """The window without its one-time start-up: what it costs this window (evidence only;
    no steady step holds it, so it saves none)."""
    if not ctx.startup_us or not f.at_stake_pct:
        return None  # the other profiler_setup findings are about the profile, not the run
    return Edit("without the one-time start-up", host=(_removed(startup_intervals(ctx.profile)),))


def _held(ctx: Context, graph: StepGraph, f: Finding) -> Edit:
    return Edit("held work starting when launched", release_held=True)


def _syncs(ctx: Context, graph: StepGraph, f: Finding) -> Edit:
    """No host-device syncs: the waits no longer wait, and a loop that reads a value back per
    element (a sync in each of its iterations) reads them once: its ops, one per name."""
    pageable = _pageable_copy_calls(ctx, graph)
    loops = _read_loops(ctx, graph)
    return Edit(
        "no host-device syncs in the step"
        + (", each read-back loop made one read" if len(loops[0]) else ""),
        host=(loops,) if len(loops[0]) else (),
        free_waits=setdiff(graph.waits, pageable),
    )


def _read_loops(ctx: Context, graph: StepGraph) -> tuple[I64, I64, F64]:
    """Runs of the step thread's consecutive small ops that hold a wait in more than one of
    their iterations (`.item()`, `.cpu()` or a copy to the host per element), each as the one
    op per name that reads everything at once. An op of the loop is small by its name's
    typical call (`advice.READ_BACK_OP_US`): a loop of large copies moves data, and reading
    it at once saves no round trip."""
    ops, _ = top_ops(ctx)
    waited = holding(ctx, ops, graph.waits)
    if waited.sum() < 2:
        return (*_NONE, np.zeros(0))
    total = ctx.profile.attribution.cpu_total_of(ops)
    bound = advice.READ_BACK_OP_US
    every = np.ones(len(ops), bool)
    small = median_by_name(ctx.profile.events.name[ops], total, every) < bound
    starts, ends, factors, _ = runs(ctx, ops, small, gap_us=bound)
    at = np.sort(ctx.profile.events.start[ops[waited]])
    reads = np.searchsorted(at, ends) - np.searchsorted(at, starts)
    keep = reads >= 2
    spans, factor = _disjoint(starts[keep], ends[keep], factors[keep])
    return (*spans, factor)


def _pageable_copy_calls(ctx: Context, graph: StepGraph) -> I64:
    """Wait calls that waited for their own copy from pageable host memory to the device
    (a read back to the host waits for its value however it is copied: a sync)."""
    ev = ctx.profile.events
    targets = graph.items[graph.wait_target]
    pageable = ev.names_where(targets, lambda n: "Pageable -> Device" in n)
    return graph.waits[pageable] if len(targets) else graph.waits


def _copies(ctx: Context, graph: StepGraph, f: Finding) -> Edit:
    """The copies finding's fix: pageable copies pinned, or peer copies overlapped."""
    if f.title.startswith(advice.PEER_COPY_TITLE):
        peer = peer_copy_events(ctx)
        return Edit(
            "peer copies overlapped with compute (an upper bound)",
            device=(peer, np.zeros(len(peer))),
            basis=UPPER_BOUND,
        )
    return _pinned(ctx, graph, f)


def _pinned(ctx: Context, graph: StepGraph, f: Finding) -> Edit:
    """Pinned, asynchronous copies: the calls no longer wait, and the copies run at the
    bandwidth the trace's own pinned copies reached, else at most the PCIe link's peak for
    the architecture (`PEER_LINKS_GBS`)."""
    ev = ctx.profile.events
    copies = np.flatnonzero(ev.kind == EventKind.MEMCPY)
    pageable = copies[ev.names_where(copies, lambda n: "Pageable" in n)]
    pinned = copies[ev.names_where(copies, lambda n: "Pinned" in n)]
    rate_pinned, basis = 0.0, ""
    if len(pinned) and ev.nbytes[pinned].sum() > 0:
        rate_pinned, basis = ev.nbytes[pinned].sum() / max(ev.dur[pinned].sum(), 1), "measured"
    elif ctx.arch in PEER_LINKS_GBS:
        rate_pinned, basis = PEER_LINKS_GBS[ctx.arch or ""][0], "at most the PCIe link's peak"
    device = None
    if len(pageable) and rate_pinned > 0 and ev.nbytes[pageable].sum() > 0:
        rate_pageable = ev.nbytes[pageable].sum() / max(ev.dur[pageable].sum(), 1)
        device = (pageable, np.full(len(pageable), min(1.0, rate_pageable / rate_pinned)))
    return Edit(
        "pinned, asynchronous copies" + (f" ({basis}: {rate_pinned:.1f} GB/s)" if device else ""),
        free_waits=_pageable_copy_calls(ctx, graph),
        device=device,
        basis=UPPER_BOUND if device is not None and basis != "measured" else REPLAYED,
    )


def _precision(ctx: Context, graph: StepGraph, f: Finding) -> Edit | None:
    """FP32 matrix kernels at the device's tensor-core peak ratio: an upper bound, as
    memory-bound kernels gain less."""
    acc = ctx.device
    speedup = tensor_core_speedup(acc) if acc is not None else None
    if acc is None or speedup is None:
        return None
    ev = ctx.profile.events
    items = graph.items[ev.kind[graph.items] == EventKind.KERNEL]
    fp32 = []
    for e in items.tolist():
        if decode_kernel(ev.strings[ev.name[e]]).fp32_off_tensor_cores:
            fp32.append(e)
    kernels = np.array(fp32, np.int64)
    return Edit(
        f"FP32 matrix math at the {acc.name}'s tensor-core peak ({speedup:.0f}x, an upper bound)",
        device=(kernels, np.full(len(kernels), 1 / speedup)),
        basis=UPPER_BOUND,
    )


def _model_spans(ctx: Context) -> tuple[I64, I64]:
    """Host time of the model's work: its phases on the step thread, and backward on
    autograd's own thread."""
    return work_intervals(ctx.breakdown, *_MODEL)


def _graphs(ctx: Context, graph: StepGraph, f: Finding) -> Edit:
    """CUDA graphs: the model's host work and launch latency gone, its kernels back to back.
    A graph cannot hold a sync: its waits and one-time start-up stay, and so does every
    stretch between two waits that launches fewer than two items (a graph launch costs what
    the one launch it replaces does: a loop reading a value back per element gains nothing).
    Without phases (a window of bare ops) the model's work is the stretch from its first op
    that launched device work to its last."""
    ev = ctx.profile.events
    startup = startup_intervals(ctx.profile)
    kept = intervals.union(
        np.concatenate([ev.start[graph.waits], startup[0]]),
        np.concatenate([ev.end_of(graph.waits), startup[1]]),
    )
    model = _model_spans(ctx)
    if not len(model[0]):
        model = _launching_span(ctx)
    spans = _capturable(intervals.minus(model, kept), graph, ctx)
    at = graph.launch.astype(np.int64)
    return Edit(
        "launches replayed as a CUDA graph",
        host=(_removed(spans),),
        no_latency=graph.launched & intervals.overlaps(at, at + 1, spans),
    )


def _launching_span(ctx: Context) -> tuple[I64, I64]:
    """From the first op of the step thread that launched device work to the end of the last."""
    ops, _ = top_ops(ctx)
    feeding = ops[ctx.profile.attribution.device_total[ops] > 0]
    if not len(feeding):
        return _NONE
    ev = ctx.profile.events
    return intervals.union(
        np.array([int(ev.start[feeding].min())], np.int64),
        np.array([int(ev.end_of(feeding).max())], np.int64),
    )


def _capturable(spans: tuple[I64, I64], graph: StepGraph, ctx: Context) -> tuple[I64, I64]:
    """`spans` where a graph could replace them: inside a stretch between two waits (of the
    host thread or any) that launches at least `advice.GRAPH_MIN_LAUNCHES` items."""
    ev = ctx.profile.events
    waits = intervals.union(ev.start[graph.waits], ev.end_of(graph.waits))
    between = intervals.complement(*waits, graph.lo, graph.hi)
    launches = np.sort(graph.launch[graph.launched].astype(np.int64))
    count = np.searchsorted(launches, between[1]) - np.searchsorted(launches, between[0])
    full = count >= advice.GRAPH_MIN_LAUNCHES
    return intervals.minus(spans, intervals.union(between[0][~full], between[1][~full]))


def _free_host(ctx: Context, graph: StepGraph, f: Finding) -> Edit | None:
    """The host never late: every host stretch but the waits and the one-time start-up (a
    finding of its own) takes no time; what is left is what the device alone needs."""
    if not graph.launched.any():
        return None  # no device work the host launched: nothing to keep fed
    ev = ctx.profile.events
    startup = startup_intervals(ctx.profile)
    # the input's time is the data-loading finding's to price when that one fires
    loading = phase_intervals(ctx.breakdown, Phase.DATA_LOADING) if ctx.input_named else _NONE
    kept = intervals.union(
        np.concatenate([ev.start[graph.waits], startup[0], loading[0]]),
        np.concatenate([ev.end_of(graph.waits), startup[1], loading[1]]),
    )
    rest = intervals.complement(*kept, graph.lo, graph.hi)
    label = "the host never late" + (" (the input as it is)" if ctx.input_named else "")
    return Edit(label, host=(_removed(rest),))


def _batch(ctx: Context, graph: StepGraph, f: Finding) -> Edit:
    """A batch `BATCH_SCALE` times larger, per sample. Loading data is paid per sample, the
    optimizer and the step's fixed cost once per step. In the forward and backward, an op's
    work is its FLOPs at the best rate the trace's matrix ops reached: that part grows with
    the batch, the op's dispatch and Python do not; without shapes to count FLOPs, the whole
    op grows (the saving is then the fixed cost's share alone). Device work launched in the
    forward and backward grows with the batch."""
    k = advice.BATCH_SCALE
    passes = phase_intervals(ctx.breakdown, Phase.FORWARD, Phase.BACKWARD)
    seg_s, seg_e, owner = _op_segments(ctx, passes)
    factor = _batch_factors(ctx, seg_s, seg_e, owner, k)
    del owner
    data = phase_intervals(ctx.breakdown, Phase.DATA_LOADING)
    if len(data[0]):  # both sets are in order of start: the data's stretches go in between
        at = np.searchsorted(seg_s, data[0], side="right")
        seg_s, seg_e = np.insert(seg_s, at, data[0]), np.insert(seg_e, at, data[1])
        factor = np.insert(factor, at, float(k))
    spans, factors = _disjoint(seg_s, seg_e, factor)
    del seg_s, seg_e, factor
    passes = work_intervals(ctx.breakdown, Phase.FORWARD, Phase.BACKWARD)
    at = graph.launch.astype(np.int64)
    grows = graph.launched & intervals.overlaps(at, at + 1, passes)
    kernels = graph.items[grows]
    return Edit(
        f"{k}x the batch",
        host=((*spans, factors),),
        device=(kernels, np.full(len(kernels), float(k))),
        per=float(k),
        basis=PER_SAMPLE,
    )


def _batch_factors(ctx: Context, seg_s: I64, seg_e: I64, owner: I32, k: int) -> F64:
    """Per segment, what a `k` times larger batch scales it by: its op's time t, of which w
    is work (`_work_ns`; without FLOPs all of t), becomes t + (k - 1) w. Computed per event
    in place, then read per segment: a huge trace's segments take one float each here."""
    size = int(owner.max()) + 1 if len(owner) else 0
    t = np.bincount(owner, weights=np.subtract(seg_e, seg_s, dtype=np.float64), minlength=size)
    if ctx.flops.complete and ctx.flops.total > 0:
        w = _work_ns(ctx, size)
        np.minimum(w, t, out=w)
    else:
        w = t.copy()
    w *= k - 1
    w += t
    np.divide(w, np.maximum(t, 1.0), out=w, where=t > 0)
    w[t <= 0] = 1.0
    del t
    factor: F64 = w[owner]
    return factor


def _work_ns(ctx: Context, size: int) -> F64:
    """Per event (dense, `size`): its FLOPs at the best FLOP rate of the trace's ops (ns)."""
    flops = ctx.flops
    work = np.zeros(size)
    ev = ctx.profile.events
    events = flops.events[flops.events < size]
    if len(events) == 0:
        return work
    values = np.asarray(flops.flops, np.float64)[: len(flops.events)][flops.events < size]
    dur = np.maximum(ev.dur[events].astype(np.float64), 1.0)
    rate = float(np.max(values / dur))
    if rate > 0:
        work[events] = values / rate
    return work


def _leaves(ctx: Context, ops: I64) -> I64:
    """The ops of `ops` with no row inside them."""
    parent = ctx.profile.attribution.parent
    leaves: I64 = ops[~np.isin(ops, parent[parent >= 0])]
    return leaves


def _optimizer(ctx: Context, graph: StepGraph, f: Finding) -> Edit | None:
    """A fused optimizer: each run of its per-tensor ops becomes one op per name (on a
    CPU run, `_fused_on_host`); or, for the zero_grad finding, gradients freed instead of
    zeroed (its time gone)."""
    if any(e.label == PHASE_LABELS[Phase.ZERO_GRAD] for e in f.evidence):
        spans = phase_intervals(ctx.breakdown, Phase.ZERO_GRAD)
        return Edit("gradients set to None", host=(_removed(spans),))
    if not ctx.has_device:
        return _fused_on_host(ctx)
    ops, phase = top_ops(ctx)
    starts, ends, factors, _ = runs(ctx, ops, phase == phase_code(Phase.OPTIMIZER))
    if not len(starts):
        return None
    spans, factors = _disjoint(starts, ends, factors)
    return Edit("a fused optimizer", host=((*spans, factors),))


def _fused_on_host(ctx: Context) -> Edit | None:
    """The fused optimizer of a CPU run, whose ops do the parameters' arithmetic themselves
    (on a GPU their kernels do): an op's fastest call in the phase is its dispatch, and the
    rest of each call is work on the parameter's elements. The fused form keeps one dispatch
    per name and one pass over the parameters' state, priced as the in-place op name whose
    work beyond its dispatch is the largest (an in-place op is a pass over memory with no
    temporary to allocate; a fused kernel allocates none); the Python between the ops, the
    other passes and the temporaries go. (ResNet-18 under Adam one tensor at a time, on 2
    cores: the out-of-place ``sqrt`` and ``div`` took 8-24 ms each of a 35-63 ms phase
    beyond their dispatch, the in-place ones 1-3 ms; the one-op-per-name runs alone left the
    large tensors out and priced 14-20% against 29-31% measured.) The phase's time before its
    first op and after its last stays (`_around_ops`): the fused form gathers each
    parameter's state in Python too (a batch-4 MLP's Adam, timed unprofiled: 0.15 ms
    unfused, 0.07 ms fused, where dispatch and one pass alone kept about a tenth)."""
    ops, phase = top_ops(ctx)
    mine = ops[phase == phase_code(Phase.OPTIMIZER)]
    spans = phase_intervals(ctx.breakdown, Phase.OPTIMIZER)
    ids, inverse = np.unique(ctx.profile.events.name[mine], return_inverse=True)
    if len(mine) <= len(ids) * ctx.steps or not len(spans[0]):
        return None  # about one call per name and step already: nothing to fuse
    dur = ctx.profile.events.dur[mine].astype(np.float64)
    fastest = np.full(len(ids), np.inf)
    np.minimum.at(fastest, inverse, dur)
    beyond = np.bincount(inverse, weights=dur - fastest[inverse], minlength=len(ids))
    strings = ctx.profile.events.strings
    in_place = np.array([is_in_place(strings[n]) for n in ids.tolist()], bool)
    one_pass = beyond[in_place] if in_place.any() else beyond
    ends = ctx.profile.events.start[mine] + ctx.profile.events.dur[mine]
    around = _around_ops(spans, ctx.profile.events.start[mine], ends, ctx.breakdown.host_ranges_ns)
    kept = float(fastest.sum()) * ctx.steps + float(one_pass.max()) + around
    total = float((spans[1] - spans[0]).sum())
    if kept >= total:
        return None
    factors = np.full(len(spans[0]), kept / total)
    return Edit("a fused optimizer", host=((*spans, factors),))


def _around_ops(
    spans: tuple[I64, I64], op_start: I64, op_end: I64, steps: tuple[I64, I64]
) -> float:
    """The phase's time (`spans`) before its first op and after its last, in each step
    (ns, all steps): the step's Python that collects each parameter's state and gradient
    (``_init_group``) before the first op runs in the fused form too."""
    kept = 0.0
    for lo, hi in zip(steps[0].tolist(), steps[1].tolist(), strict=True):
        inside = (op_start >= lo) & (op_start < hi)
        if not inside.any():
            continue
        first, last = int(op_start[inside].min()), int(op_end[inside].max())
        for a, b in ((lo, first), (last, hi)):
            s = np.clip(spans[0], a, b)
            kept += float((np.clip(spans[1], a, b) - s).sum())
    return kept


def _module(ctx: Context, graph: StepGraph, f: Finding) -> Edit | None:
    """A module's own time or the forward's tiny ops: its loops of tiny ops vectorised
    (inside the module's own ranges when the finding names one)."""
    names = {r for e in f.evidence for r in e.rows}
    ev = ctx.profile.events
    inner = innermost_module(ctx.profile)
    modules = np.flatnonzero(module_rows(ctx.profile))
    mine = modules[np.array([module_label(ev.strings[n]) in names for n in ev.name[modules]], bool)]
    if len(mine):
        return _loops(ctx, graph, np.isin(inner, mine))
    return _loops(ctx, graph)


def _loops(ctx: Context, graph: StepGraph, within: np.ndarray | None = None) -> Edit | None:
    """Python loops of tiny ops in the forward, vectorised: each run of consecutive tiny
    ops (the Python between them shorter than a tiny op) becomes one op per name, and so do
    the backward nodes those ops created (the same names, in runs of their own). `within`:
    per event, whether its loop counts (a module's own ops)."""
    ev = ctx.profile.events
    ops, phase = top_ops(ctx)
    total = ctx.profile.attribution.cpu_total_of(ops)
    forward = phase == phase_code(Phase.FORWARD)
    if within is not None:
        forward &= within[ops]
    # "tiny" against the machine that recorded it: a loop's ops are the module's typical
    # ones (twice their median, at least TINY_OP_US): on a loaded 2-core machine the same
    # loop's ops took 30-60 µs and fell out of a fixed 25 µs bound
    typical = float(median(total[forward])) if within is not None and forward.any() else 0.0
    bound = max(advice.TINY_OP_US, 2.0 * typical)
    # an op is in a loop by what it is, not by one timing: a name whose typical call in the
    # forward is tiny. One call slowed by the machine (a preemption, an allocation) would
    # otherwise cut the loop in two and leave both halves a worse factor. A call that waited
    # for the device (a copy back to the host, a sync: the replay's waits) is long for a
    # reason no vectorising removes: the loop runs on through it, its own time is not claimed
    tiny = forward & (median_by_name(ev.name[ops], total, forward) < bound)
    waited = holding(ctx, ops, graph.waits)
    fwd_s, fwd_e, fwd_f, names = runs(ctx, ops, tiny, gap_us=bound, short=~waited)
    if ctx.has_device and len(fwd_s):
        # on a GPU run the loops are the ones feeding the device, as the finding counts them
        # (`findings.modules`): a loop on CPU tensors is CPU work the idle device waits for
        feeding = np.sort(ev.start[ops[ctx.profile.attribution.device_total[ops] > 0]])
        keep = np.searchsorted(feeding, fwd_e) > np.searchsorted(feeding, fwd_s)
        fwd_s, fwd_e, fwd_f = fwd_s[keep], fwd_e[keep], fwd_f[keep]
    if not len(fwd_s):
        return None
    created = (phase == phase_code(Phase.BACKWARD)) & np.array(
        [forward_name(ev.strings[n]) in names for n in ev.name[ops]], bool
    )
    bwd_s, bwd_e, bwd_f, _ = runs(ctx, ops, created, gap_us=float("inf"))
    spans, factors = _disjoint(
        np.concatenate([fwd_s, bwd_s]),
        np.concatenate([fwd_e, bwd_e]),
        np.concatenate([fwd_f, bwd_f]),
    )
    return Edit("the loops of tiny ops vectorised", host=((*spans, factors),))


def _churn(ctx: Context, graph: StepGraph, f: Finding) -> Edit | None:
    """A copy that grows a tensor every step replaced by appends: the copy ops gone, and the
    release of each old copy (the host time from the free of a block the size one of them
    allocated to the thread's next event: returning its pages to the system, in no op)."""
    names = {r for e in f.evidence for r in e.rows}
    if not names:
        return None
    ev = ctx.profile.events
    ids = [i for i, s in enumerate(ev.strings) if s in names]
    events = np.flatnonzero(np.isin(ev.name, ids) & ctx.profile.attribution.is_row)
    memory = np.flatnonzero(ev.kind == EventKind.MEMORY)
    inside = intervals.overlaps(
        ev.start[memory], ev.start[memory] + 1, intervals.union(ev.start[events], ev.end_of(events))
    )
    sizes = unique(ev.nbytes[memory[inside & (ev.nbytes[memory] > 0)]])
    frees = memory[np.isin(-ev.nbytes[memory], sizes)]
    release_s, release_e = until_next_event(ctx, frees)
    spans = intervals.union(
        np.concatenate([ev.start[events], release_s]),
        np.concatenate([ev.end_of(events), release_e]),
    )
    return Edit(f"no {'/'.join(sorted(names))} copies", host=(_removed(spans),))


def _op_segments(ctx: Context, spans: tuple[I64, I64]) -> tuple[I64, I64, I32]:
    """Self segments of the step thread inside `spans` (in order of start), and the event
    each belongs to."""
    assert ctx.breakdown.segments is not None
    seg_s, seg_e, _, owner = ctx.breakdown.segments
    inside = intervals.overlaps(seg_s, seg_e, spans)
    return seg_s[inside], seg_e[inside], owner[inside]


def _disjoint(seg_s: I64, seg_e: I64, factor: F64) -> tuple[tuple[I64, I64], F64]:
    """The stretches in order of start, empty ones dropped, each cut at the next one's
    start. Takes its arrays over: those already in order are cut in place (a huge trace's
    segments are not copied again)."""
    if not intervals.ascending(seg_s):
        order = np.argsort(seg_s, kind="stable")
        seg_s, seg_e, factor = seg_s[order], seg_e[order], factor[order]
        del order
    keep = seg_e > seg_s
    if not keep.all():
        seg_s, seg_e, factor = seg_s[keep], seg_e[keep], factor[keep]
    del keep
    if len(seg_s) > 1:
        np.minimum(seg_e[:-1], seg_s[1:], out=seg_e[:-1])
    return (seg_s, seg_e), factor


def _hidden_collectives(ctx: Context, graph: StepGraph, f: Finding) -> Edit | None:
    """Collectives wholly hidden behind compute (bucketing, overlap): their kernels take no
    time on the critical path, and the host no longer waits for a collective on a worker
    thread (gloo). No fix hides everything: an upper bound."""
    comms = ctx.comms
    if comms is None or not comms.timed:
        return None
    items = graph.items[is_communication(ctx.profile, graph.items)]
    waits = phase_intervals(ctx.breakdown, Phase.COMMUNICATION)
    if ctx.breakdown.collective_waits is not None:  # gloo: waits outside any op
        waits = intervals.union(
            np.concatenate([waits[0], ctx.breakdown.collective_waits[0]]),
            np.concatenate([waits[1], ctx.breakdown.collective_waits[1]]),
        )
    if not len(items) and not len(waits[0]):
        return None
    return Edit(
        "collectives hidden behind compute (an upper bound)",
        host=(_removed(waits),) if len(waits[0]) else (),
        device=(items, np.zeros(len(items))) if len(items) else None,
        basis=UPPER_BOUND,
    )


_EDITS: dict[str, Callable[[Context, StepGraph, Finding], Edit | None]] = {
    PROFILE_CATEGORY: _startup,
    "host_lead_in": _lead_in,
    "host_device_sync": _syncs,
    "memcpy": _copies,
    "low_precision": _precision,
    "launch_overhead": _graphs,
    "gpu_idle": _free_host,
    "gpu_held": _held,
    "per_step_overhead": _batch,
    "optimizer": _optimizer,
    "module_overhead": _module,
    "memory": _churn,
    "communication": _hidden_collectives,
}

__all__ = ["edit_for"]
