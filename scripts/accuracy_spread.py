"""Accuracy with its spread over several recordings: each planted scenario of
`tests/scenarios.py` recorded `N` times (default 5) with plain torch.profiler and with
Lightning's PyTorchProfiler; for each recording, the trace's top finding against the planted
one, its full printed table's top finding against the planted one and the trace's, the
verdict, and, where the scenario has a fixed twin (recorded each time beside it), the
replay's predicted saving against the measured one; and each Lightning SimpleProfiler /
AdvancedProfiler report a scenario suits (`Scenario.text_profilers`), recorded `N` times.
Every recording counts: nothing is recorded again until it matches. The spread of one
run's step shares between its recordings is the basis of `BORDERLINE_FRACTION`.

    .venv/bin/python scripts/accuracy_spread.py          # N=5: over 10 minutes on 2 cores
    .venv/bin/python scripts/accuracy_spread.py -n 3 --only tiny_batch heavy_metric
    .venv/bin/python scripts/accuracy_spread.py --json raw.json   # every recording, too

Prints the Markdown of docs/measurements.md's "Accuracy over several recordings".
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import profsight
import scenarios
from profsight.analyses.pipeline import diagnose
from scenarios import SCENARIOS, table_path
from test_replay import TOLERANCE, per_training_step

FORMS = ("plain", "lightning")


@dataclass(frozen=True)
class Recording:
    top: str | None
    """The trace's top finding."""
    table_top: str | None
    """The full printed table's top finding (the same run's ``key_averages().table()``)."""
    judgement: str | None
    predicted: float | None = None
    """The replay's saving of the planted finding, % of the step (twins only)."""
    measured: float | None = None
    """The fixed twin's measured saving, % of the step (per sample where the batch grows)."""


def _top(path: Path) -> str | None:
    findings = profsight.explain(str(path)).findings
    return findings[0].category if findings else None


def record(name: str, form: str, out: Path) -> Recording:
    scenario = SCENARIOS[name]
    run, twin = (
        (scenario.plain, scenario.fixed)
        if form == "plain"
        else (scenario.lightning, scenario.fixed_lightning)
    )
    planted = run(out / "planted")
    profile = profsight.load(planted)
    diagnosis = diagnose(profile)
    top = diagnosis.findings[0].category if diagnosis.findings else None
    judgement = diagnosis.verdict.judgement if diagnosis.verdict is not None else None
    table_top = _top(table_path(planted, "full"))
    if twin is None:
        return Recording(top, table_top, judgement)
    finding = next((f for f in diagnosis.findings if f.category == scenario.expected), None)
    predicted = finding.gain_pct if finding is not None and finding.gain_pct is not None else 0.0
    slow = per_training_step(profile)
    fast = per_training_step(profsight.load(twin(out / "fixed"))) / scenario.per_sample
    return Recording(top, table_top, judgement, predicted, (slow - fast) * 100.0 / slow)


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} ({min(values):.0f}–{max(values):.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=5, help="recordings per scenario and form")
    parser.add_argument("--only", nargs="*", default=None, help="scenario names")
    parser.add_argument("--json", type=Path, default=None, help="write every recording here")
    args = parser.parse_args()
    names = args.only or list(SCENARIOS)
    out = Path(tempfile.mkdtemp(prefix="profsight-spread-"))
    began = time.monotonic()
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            for form in FORMS:
                runs = [record(name, form, out / f"{name}-{form}-{k}") for k in range(args.n)]
                rows.append((name, form, runs))
                print(f"{name} ({form}) recorded", file=sys.stderr, flush=True)
        reports = []
        for name in names:
            for kind in SCENARIOS[name].text_profilers:
                tops = [
                    _top(SCENARIOS[name].lightning(out / f"{name}-{kind}-{k}", profiler=kind))
                    for k in range(args.n)
                ]
                reports.append((name, kind, tops))
                print(f"{name} ({kind}) recorded", file=sys.stderr, flush=True)
    if args.json is not None:
        raw = {
            "runs": [
                {"scenario": n, "form": f, "recordings": [dataclasses.asdict(r) for r in runs]}
                for n, f, runs in rows
            ],
            "reports": [{"scenario": n, "kind": k, "tops": t} for n, k, t in reports],
        }
        args.json.write_text(json.dumps(raw, indent=1))
    n = args.n
    print(
        f"{n} recordings of each run, {os.cpu_count()} cores, "
        f"{time.monotonic() - began:.0f} s, torch.get_num_threads() set to 1 while recording "
        "(`scripts/accuracy_spread.py`). *top*: recordings whose trace's top finding is the "
        "planted one; *table*: recordings whose full printed table names the trace's top "
        "finding; *table = planted*: those whose full printed table names the planted "
        "finding; *verdicts*: the verdicts' judgements, with their counts; *predicted* and "
        "*measured*: the replay's saving of the planted finding and "
        "the fixed twin's, % of the step, median (min–max); *within 25%*: recordings whose "
        "prediction is within 25% of that recording's measured saving.\n"
    )
    print(
        "| run | planted | top | other tops | table | table = planted | verdicts "
        "| predicted | measured | within 25% |"
    )
    print("|---|---|---:|---|---:|---:|---|---:|---:|---:|")
    hits = total = within = twins = 0
    for name, form, runs in rows:
        expected = SCENARIOS[name].expected
        matched = sum(r.top == expected for r in runs)
        others = sorted({str(r.top) for r in runs if r.top != expected})
        agreed = sum(r.table_top == r.top for r in runs)
        hits, total = hits + matched, total + len(runs)
        planted = sum(r.table_top == expected for r in runs)
        judged = collections.Counter(str(r.judgement) for r in runs)
        verdicts = ", ".join(f"{j} {c}" for j, c in judged.most_common())
        cells = [f"{name} ({form})", expected, f"{matched}/{n}", ", ".join(others) or "",
                 f"{agreed}/{n}", f"{planted}/{n}", verdicts]  # fmt: skip
        paired = [(r.predicted, r.measured) for r in runs if r.predicted is not None]
        if paired:
            ok = sum(abs(p - m) <= TOLERANCE * m for p, m in paired if m is not None)
            within, twins = within + ok, twins + len(paired)
            cells += [
                _spread([p for p, _ in paired]),
                _spread([m for _, m in paired if m is not None]),
                f"{ok}/{len(paired)}",
            ]
        else:
            cells += ["", "", ""]
        print("| " + " | ".join(cells) + " |")
    print(
        f"\nTop finding as planted: {hits}/{total} recordings; "
        f"predictions within 25%: {within}/{twins} recordings.\n"
    )
    print("| Lightning report | planted | top as planted | other tops |")
    print("|---|---|---:|---|")
    for name, kind, tops in reports:
        expected = SCENARIOS[name].expected
        others = sorted({str(t) for t in tops if t != expected})
        matched = sum(t == expected for t in tops)
        print(f"| {name} ({kind}) | {expected} | {matched}/{n} | {', '.join(others)} |")


if __name__ == "__main__":
    assert scenarios.PLAIN_STEPS  # the scenarios module is the tests' own
    main()
