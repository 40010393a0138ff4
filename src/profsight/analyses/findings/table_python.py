"""Where an action's time goes in Python: the hot function of an AdvancedProfiler listing.

An ``AdvancedProfiler`` listing is sorted by cumulative time, so the functions that hold
most of an action are a chain from the outermost call down. The deepest Python function
(not a C built-in) that still holds at least `HOT_FUNCTION_SHARE` of the action is where its time
goes: ``slow_collate (train.py:8)`` under ``train_dataloader_next``, not the DataLoader's
own ``__next__`` above it.
"""

from __future__ import annotations

from dataclasses import replace

from profsight.analyses.step.table_step import PrintedStep
from profsight.knowledge.advice import HOT_FUNCTION_SHARE
from profsight.knowledge.lightning_names import ADVANCED_STOP, METRIC_ENTRY
from profsight.knowledge.rows import METRIC_EVENT, METRIC_IN
from profsight.model.cprofile import ActionProfile, CProfileEntry
from profsight.model.findings import Evidence, Finding
from profsight.model.table import ProfilerTable, Row
from profsight.units import short_time


def hotspot(profile: ActionProfile) -> CProfileEntry | None:
    """The deepest Python function holding at least `HOT_FUNCTION_SHARE` of the action."""
    if profile.total_s <= 0:
        return None
    hot = [
        e
        for e in profile.entries
        if not e.builtin
        and not e.anonymous
        and not ADVANCED_STOP.search(e.location)
        and e.cumtime_s >= HOT_FUNCTION_SHARE * profile.total_s
    ]
    return min(hot, key=lambda e: e.cumtime_s) if hot else None


def leaf(profile: ActionProfile) -> CProfileEntry | None:
    """The deepest entry, built-ins included, holding at least `HOT_FUNCTION_SHARE`."""
    hot = [
        e
        for e in profile.entries
        if not ADVANCED_STOP.search(e.location)
        and e.cumtime_s >= HOT_FUNCTION_SHARE * profile.total_s > 0
    ]
    return min(hot, key=lambda e: e.cumtime_s) if hot else None


def hotspot_notes(profiles: tuple[ActionProfile, ...], limit: int = 3) -> tuple[str, ...]:
    """Where the largest actions spend their Python time, one sentence each."""
    notes = []
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
        for action in sorted(rows & by_action.keys()):
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
