"""Where an action's time goes in Python: the hot function of an AdvancedProfiler listing.

An ``AdvancedProfiler`` listing is sorted by cumulative time, so the functions that hold
most of an action are a chain from the outermost call down. The deepest Python function
(not a C built-in) that still holds at least `HOT_FUNCTION_SHARE` of the action is where its time
goes: ``slow_collate (train.py:8)`` under ``train_dataloader_next``, not the DataLoader's
own ``__next__`` above it. An outer action's listing (Lightning <= 2.5) holds the path to the
first action started inside it, and Lightning's optimizer closure holds training_step and
backward: neither is a hot function (`ActionProfile.own_entries`, `LIGHTNING_CLOSURE`).

The training step's own code (training_step's listing, and the closure's) is also read by
self time (`hot_function_findings`): the function of most tottime is where its time goes,
``{method 'to' of 'torch._C.TensorBase' objects}`` for a host that waits on the device.
Outside the step's code (a callback, the logger), an action whose time ends in such a call is
a sync of its own (`sync_copies.hook_waits`): the progress bar reading logged tensors.
"""

from __future__ import annotations

from msgspec.structs import replace

from profsight.analyses.step.printed_parts import PrintedStep
from profsight.knowledge import advice
from profsight.knowledge.advice import HOT_FUNCTION_SHARE
from profsight.knowledge.catalogue import condition
from profsight.knowledge.lightning_names import (
    HOST_WAIT_CALL,
    LIGHTNING_CLOSURE,
    METRIC_ENTRY,
    STEP_CODE_ACTIONS,
    TORCH_CALL,
    advanced_action,
)
from profsight.knowledge.rows import METRIC_EVENT, METRIC_IN
from profsight.model.cprofile import ActionProfile, CProfileEntry, nests
from profsight.model.findings import ESTIMATED, UPPER_BOUND, Evidence, Finding, severity_for
from profsight.model.table import ProfilerTable, Row
from profsight.units import short_time


def hotspot(profile: ActionProfile) -> CProfileEntry | None:
    """The deepest Python function holding at least `HOT_FUNCTION_SHARE` of the action."""
    if profile.total_s <= 0:
        return None
    hot = [
        e
        for e in _candidates(profile)
        if not e.builtin and not e.anonymous and e.cumtime_s >= HOT_FUNCTION_SHARE * profile.total_s
    ]
    return _deepest(hot)


def _deepest(entries: list[CProfileEntry]) -> CProfileEntry | None:
    """The innermost of a chain of calls: the least cumulative time, and of equal times the
    last listed (pstats lists a chain outermost first: ``to_item`` holds all of its
    ``{method 'item'}``, both at 19.892 s)."""
    if not entries:
        return None
    least = min(e.cumtime_s for e in entries)
    return [e for e in entries if e.cumtime_s == least][-1]


def _candidates(profile: ActionProfile) -> list[CProfileEntry]:
    """The action's own entries, less Lightning's closure (training_step and backward)."""
    return [e for e in profile.own_entries() if not LIGHTNING_CLOSURE.search(e.location)]


def leaf(profile: ActionProfile) -> CProfileEntry | None:
    """The deepest entry, built-ins included, holding at least `HOT_FUNCTION_SHARE`."""
    hot = [
        e for e in _candidates(profile) if e.cumtime_s >= HOT_FUNCTION_SHARE * profile.total_s > 0
    ]
    return _deepest(hot)


def hotspot_notes(profiles: tuple[ActionProfile, ...], limit: int = 3) -> tuple[str, ...]:
    """Where the largest actions spend their Python time, one sentence each; first, for a
    report whose actions nest, how to read its times."""
    notes = [advice.ADVANCED_NESTED_NOTE] if nests(profiles) else []
    for profile in sorted(profiles, key=lambda p: -p.total_s)[:limit]:
        entry, inner = hotspot(profile), leaf(profile)
        if entry is None:
            continue
        share = entry.cumtime_s / profile.total_s
        text = f"In {profile.action}, {entry.location} holds {share:.0%} of its time"
        if inner is not None and inner is not entry and inner.builtin:
            text += f", mostly in {inner.location} ({inner.cumtime_s / profile.total_s:.0%})"
        notes.append(text + " (AdvancedProfiler's listing).")
    return tuple(notes)


#: The actions of a finding whose hot function is named, the largest first.
_HOTSPOT_ACTIONS = 3


def with_python_hotspots(
    findings: list[Finding], step: PrintedStep, profiles: tuple[ActionProfile, ...]
) -> list[Finding]:
    """Findings about a phase, with the hot function of each action behind it."""
    if not profiles:
        return findings
    by_action = {p.action: p for p in profiles}
    out = []
    for finding in findings:
        rows = {row for e in finding.evidence for row in e.rows}
        extra = []
        # the largest actions first, three at most: a phase's evidence names all its rows
        ranked = sorted(rows & by_action.keys(), key=lambda a: (-by_action[a].total_s, a))
        for action in ranked[:_HOTSPOT_ACTIONS]:
            profile = by_action[action]
            entry = hotspot(profile)
            if entry is None:
                continue
            share = entry.cumtime_s / profile.total_s
            calls = profile.calls or 1
            own = entry.tottime_s * 1e6 / calls
            extra.append(
                Evidence(
                    "where its Python time goes",
                    f"{entry.location}: {share:.0%} of {action} "
                    f"({short_time(entry.cumtime_s * 1e6 / calls)} of "
                    f"{short_time(profile.total_s * 1e6 / calls)} per call"
                    + (f", {short_time(own)} in its own lines)" if own >= 1 else ")"),
                    (entry.location,),
                )
            )
        out.append(replace(finding, evidence=(*finding.evidence, *extra)) if extra else finding)
    return out


def with_metric_rows(table: ProfilerTable, profiles: tuple[ActionProfile, ...]) -> ProfilerTable:
    """`table` with a metric row for each action whose listing shows torchmetrics' Metric
    entry points (their outermost call's cumulative time): a metric computed inside
    training_step is then metrics time, not forward time."""
    rows = []
    for profile in profiles:
        metric = [e for e in profile.entries if METRIC_ENTRY.search(e.location)]
        if not metric:
            continue
        entry = max(metric, key=lambda e: e.cumtime_s)
        rows.append(
            Row(
                name=f"torchmetrics {entry.location}{METRIC_IN}{profile.action}",
                event_kind=METRIC_EVENT,
                calls=profile.calls or 1,
                self_cpu_us=0.0,
                cpu_total_us=entry.cumtime_s * 1e6,
                self_device_us=0.0,
                device_total_us=0.0,
                self_cpu_pct=0.0,
                cpu_total_pct=0.0,
                self_device_pct=0.0,
            )
        )
    return replace(table, rows=(*table.rows, *rows), total_rows=len(table.rows) + len(rows))


def hot_function_findings(step: PrintedStep, profiles: tuple[ActionProfile, ...]) -> list[Finding]:
    """The functions of most self time in the training step's own code (training_step's
    listing, and the closure's), when the first holds at least `HOT_FUNCTION_PCT` of the
    step: a host-wait call (``Tensor.to``, ``.item``, ``.cpu``) is a sync to look at."""
    code = [p for p in profiles if advanced_action(p.action) in STEP_CODE_ACTIONS]
    self_s: dict[str, float] = {}
    calls: dict[str, int] = {}
    where: dict[str, str] = {}
    for profile in code:
        for entry in profile.hot_functions(limit=len(profile.entries)):
            if TORCH_CALL.match(entry.location) and not HOST_WAIT_CALL.search(entry.location):
                continue  # the model's own compute (conv2d, linear, backward), not overhead
            self_s[entry.location] = self_s.get(entry.location, 0.0) + entry.tottime_s
            calls[entry.location] = calls.get(entry.location, 0) + entry.calls
            where.setdefault(entry.location, profile.action)
    top = sorted(self_s, key=lambda loc: -self_s[loc])[:3]
    if not top or not step.steps:
        return []
    first = top[0]
    share = step.share(self_s[first] * 1e6 / step.steps)
    if share < advice.HOT_FUNCTION_PCT:
        return []
    evidence = tuple(
        Evidence(
            "self time (tottime)",
            f"{loc}: {short_time(self_s[loc] * 1e6 / step.steps)} per step "
            f"({step.share(self_s[loc] * 1e6 / step.steps):.0f}% of the step), "
            f"{calls[loc] / step.steps:.0f} calls per step, in {where[loc]}",
            (where[loc], loc),
        )
        for loc in top
    )
    wait = HOST_WAIT_CALL.search(first)
    if wait is not None:
        # the wait lasts as long as the device work queued before it: removing the call
        # removes the wait, not that work, so it saves at most the wait (an upper bound)
        category, gain = "host_device_sync", share
        explanation = advice.HOST_WAIT_EXPLANATION.format(method=wait["method"] or "synchronize")
        fix = advice.HOST_WAIT_ADVICE
    else:
        # Python in the step's own code: the model's overhead, not the loop's fixed cost
        category, gain = "module_overhead", share
        explanation, fix = advice.HOT_FUNCTION_EXPLANATION, advice.HOT_FUNCTION_ADVICE
    return [
        Finding(
            category=category,
            severity=severity_for(share),
            title=advice.HOT_FUNCTION_TITLE.format(location=first),
            evidence=(*evidence, Evidence("step time", short_time(step.step_us))),
            explanation=explanation,
            recommendation=fix,
            at_stake_pct=share,
            gain_pct=gain,
            basis=UPPER_BOUND if category == "host_device_sync" else ESTIMATED,
            trigger=condition(category, "hot_function"),
            confidence=advice.HOT_FUNCTION_CONFIDENCE,
        )
    ]
