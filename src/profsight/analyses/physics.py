"""Physics as a check on the raw figures: no share of the step above all of it or below none,
no device busy beyond its window, no FLOP/s above the device's peak.

The analyses compute every share, saving, busy time and rate without clamping it. A figure
that breaks what the hardware can do is a bug in profsight's model of that trace, and a clamp
would hide it: it is shown instead, as a diagnostic that names the figure, its value and its
bound, in every format (`tests/test_physics.py` holds that none appears on the real traces).
"""

from __future__ import annotations

from profsight.analyses.roofline import Roofline
from profsight.analyses.verdict import Verdict
from profsight.knowledge.advice import PHYSICS_CODE, PHYSICS_REMEDY
from profsight.model.diagnostics import Diagnostic
from profsight.model.findings import Finding
from profsight.model.step_windows import Breakdown

#: Float sums over thousands of segments (µs), and shares rounded on the way (%).
SLACK_US = 1e-3
SLACK_PCT = 1e-6


def _break(figure: str, value: str, bound: str) -> Diagnostic:
    return Diagnostic(
        PHYSICS_CODE,
        f"{figure} is {value}, beyond {bound}: profsight's model of this trace is wrong there",
        remedy=PHYSICS_REMEDY,
    )


def _share(figure: str, pct: float | None, spread: float | None = None) -> list[Diagnostic]:
    """A share of the step outside 0-100%; a replayed saving (`spread`: its resolution, what
    the steps lengthened by under the edit) only where it is below zero by more than that:
    a negative saving within it is the replay's resolution, shown with it, not a figure
    beyond physics."""
    low = -SLACK_PCT - (spread or 0.0)
    if pct is None or low <= pct <= 100.0 + SLACK_PCT:
        return []
    return [_break(figure, f"{pct:.1f}%", "0-100% of the step")]


def physics_breaks(
    breakdown: Breakdown,
    findings: tuple[Finding, ...],
    verdict: Verdict | None,
    roofline: Roofline | None,
) -> tuple[Diagnostic, ...]:
    """Every figure of a diagnosis that breaks physics, as a diagnostic each."""
    out: list[Diagnostic] = []
    steps = (*breakdown.steps, breakdown.average()) if breakdown.steps else ()
    for step in steps:
        busy = step.device_busy_us
        if busy is not None and not -SLACK_US <= busy <= step.wall_us + SLACK_US:
            out.append(
                _break(
                    f"the device's busy time in {step.name}",
                    f"{busy:.1f} µs",
                    f"its window of {step.wall_us:.1f} µs",
                )
            )
    for f in findings:
        out += _share(f"the share at stake of '{f.title}'", f.at_stake_pct)
        out += _share(f"the saving of '{f.title}'", f.gain_pct, f.gain_spread_pct)
    if verdict is not None:
        out += _share("the device's busy share", verdict.device_busy_pct)
        out += _share("the data wait's share", verdict.data_wait_pct)
        out += _share("the share of the device's peak reached (MFU)", verdict.mfu_pct)
    if roofline is not None:
        for r in roofline.rows:
            if r.peak_tflops is not None and r.tflops > r.peak_tflops * (1 + SLACK_PCT):
                out.append(
                    _break(
                        f"{r.op} {r.shapes}'s rate",
                        f"{r.tflops:.3g} TFLOP/s",
                        f"the device's {r.precision} peak of {r.peak_tflops:.3g}",
                    )
                )
    return tuple(dict.fromkeys(out))


__all__ = ["SLACK_PCT", "SLACK_US", "physics_breaks"]
