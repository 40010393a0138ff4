"""A `TuneReport` as text (terminal), Markdown and JSON."""

from __future__ import annotations

import html

import msgspec

from profsight.knowledge.tuning import LOSS_TOLERANCE
from profsight.tune.result import Cost, Outcome, TuneReport
from profsight.units import short_time

#: From this profiled-to-timed step ratio on the report says the profiler stretched it.
STRETCH_NOTED = 1.25
#: The formats `render_tune` writes.
FORMATS = ("text", "markdown", "json", "html")
_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>profsight tune: {title}</title>
<style>body{{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}}
pre{{background:#f4f4f4;padding:.6rem;overflow-x:auto}}li ul{{margin:0}}</style>
</head><body>
{body}
</body></html>
"""


def render_tune(report: TuneReport, fmt: str) -> str:
    if fmt == "json":
        return msgspec.json.format(msgspec.json.encode(report).decode(), indent=1) + "\n"
    if fmt == "html":
        return _PAGE.format(title=html.escape(report.target), body=tune_fragment(report))
    return _markdown(report) if fmt == "markdown" else _text(report)


def tune_fragment(report: TuneReport) -> str:
    """The report as an HTML fragment (a notebook's cell, the page's body)."""
    out: list[str] = []
    for i, (heading, lines) in enumerate(_lines(report)):
        out.append(f"<h{1 if i == 0 else 2}>{html.escape(heading)}</h{1 if i == 0 else 2}>")
        diff = [line for line in lines if line.startswith("+ ")]
        items = [line for line in lines if not line.startswith("+ ")]
        out.append("<ul>")
        for line in items:
            inner = "  " if line.startswith("  ") else ""
            text = html.escape(line.strip())
            out.append(f"<li>{text}</li>" if not inner else f"<ul><li>{text}</li></ul>")
        out.append("</ul>")
        if diff:
            out.append(f"<pre>{html.escape(chr(10).join(diff))}</pre>")
    return "\n".join(out)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _measured(o: Outcome) -> str:
    if o.skipped:
        return f"not tried ({o.skipped})"
    if o.failed:
        return f"failed: {o.failed}"
    if o.comparison is None or o.step is None:
        return "-"
    c = o.comparison
    verdict = "beyond the noise" if c.beyond_noise else "slower" if c.slower else "within the noise"
    return f"{c.saving_pct:+.0f}% ± {c.band_pct:.0f}% ({verdict}; step {_ms(o.step.mean_s)})"


def _predicted(o: Outcome) -> str:
    if o.predicted_pct is None:
        return f"not priced ({o.basis})" if o.basis else "not priced"
    return f"{o.predicted_pct:.0f}% ({o.basis})"


def _numerics(o: Outcome) -> str:
    if o.loss_change is None:
        return "not compared" if o.step is not None else "-"
    mark = "same" if o.numerics_ok else "CHANGED"
    off = f"{o.loss_change * 100:.2f}% off"
    line = f"{mark} (loss {o.loss:.4g}, {off}; tolerance {LOSS_TOLERANCE:.0%})"
    if o.numerics_ok and o.loss_change > LOSS_TOLERANCE and o.early_loss_change is not None:
        line += (
            f"; the warm-up steps' losses {o.early_loss_change:.0e} apart: rounding grown"
            " over the steps, not new arithmetic"
        )
    return line


def _cost(cost: Cost, price: float | None) -> str:
    parts = [f"{cost.hours_per_1000_steps:.3f} device-hours per 1,000 steps"]
    if cost.hours_per_epoch is not None:
        parts.append(f"{cost.hours_per_epoch:.4f} per epoch")
    if price is not None and cost.money_per_1000_steps is not None:
        money = f"{cost.money_per_1000_steps:.2f} per 1,000 steps"
        if cost.money_per_epoch is not None:
            money += f", {cost.money_per_epoch:.3f} per epoch"
        parts.append(f"at {price:g} per device-hour: {money}")
    return "; ".join(parts)


def _lines(report: TuneReport) -> list[tuple[str, list[str]]]:
    """(heading, lines) of each section, shared by text and Markdown."""
    b = report.baseline
    head = [
        f"{report.target} on {report.device}: baseline step {_ms(b.mean_s)} "
        f"(noise ±{b.noise_pct:.0f}%), {report.steps.measured} steps measured after "
        f"{report.steps.warmup} of warm-up, in {report.seconds:.0f} s",
    ]
    if report.drift_pct is not None:
        head.append(
            f"the baseline measured again after the trials moved {report.drift_pct:.0f}%: "
            "the trials are judged against both runs pooled, and a change within that is "
            "not counted"
        )
    stretch = _stretch(report)
    if stretch is not None and stretch >= STRETCH_NOTED:
        head.append(
            f"the profiled steps took {stretch:.1f}x the timed ones (the profiler's own cost"
            " per op): the trace's shares, and the predictions read from them, lean toward"
            " the phases dense in ops"
        )
    if report.handover is not None:
        h = report.handover
        head.append(
            f"the loader with {h.workers} workers, measured beside the baseline: a batch "
            f"every {short_time(h.interval_s * 1e6)}, {short_time(h.take_s * 1e6)} to receive one"
            " that is ready"
        )
    head += [f"finding: {f}" for f in report.findings]
    trials = []
    for o in report.outcomes:
        trials.append(f"{o.name} [{o.category}]")
        trials.append(f"  predicted {_predicted(o)}; measured {_measured(o)}")
        if o.comparison is not None and o.predicted_pct is not None:
            gap = o.comparison.saving_pct - o.predicted_pct
            trials.append(f"  measured - predicted: {gap:+.0f} points")
        trials.append(f"  numerics: {_numerics(o)}")
        if o.note:
            trials.append(f"  note: {o.note}")
    sections = [("profsight tune", head), ("Fixes tried, one at a time", trials)]
    combined = ["none helped beyond the noise"]
    if report.combined is not None:
        c = report.combined
        combined = [f"{c.name}: measured {_measured(c)}", *report.diff]
    sections.append(("Combined, and the change to make", combined))
    cost = [f"before: {_cost(report.cost_before, report.price)}"]
    if report.cost_after is not None:
        cost.append(f"after:  {_cost(report.cost_after, report.price)}")
    sections.append(("Cost", cost))
    if report.advice:
        sections.append(("Needs your code (advice only)", list(report.advice)))
    return sections


def _stretch(report: TuneReport) -> float | None:
    """The profiled step against the timed one."""
    if report.profiled_step_s is None or report.baseline.mean_s <= 0:
        return None
    return report.profiled_step_s / report.baseline.mean_s


def _text(report: TuneReport) -> str:
    out: list[str] = []
    for heading, lines in _lines(report):
        out += [heading, *(f"  {line}" for line in lines), ""]
    return "\n".join(out)


def _markdown(report: TuneReport) -> str:
    out: list[str] = []
    for i, (heading, lines) in enumerate(_lines(report)):
        out.append(f"{'#' if i == 0 else '##'} {heading}\n")
        if any(line.startswith("+ ") for line in lines):
            plain = [line for line in lines if not line.startswith("+ ")]
            out += [f"- {line}" for line in plain]
            out += ["", "```diff", *(line for line in lines if line.startswith("+ ")), "```"]
        else:
            out += [
                f"- {line.strip()}" if not line.startswith("  ") else f"  {line}" for line in lines
            ]
        out.append("")
    return "\n".join(out)
