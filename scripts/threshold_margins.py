"""Where the measured thresholds sit: each planted scenario of `tests/scenarios.py` recorded
with plain torch.profiler, and its fixed twin where it has one, and for every finding category
the share of the step at stake that each recording gives, next to the threshold the rule
fires at (`profsight.knowledge.threshold_sources`, the thresholds marked measured by this
script). A threshold measured here should sit between the planted runs that must fire and
the fixed twins and healthy runs that must not, with the spread of recordings
(`scripts/accuracy_spread.py`) on either side of it.

    .venv/bin/python scripts/threshold_margins.py            # one recording each, ~3 min
    .venv/bin/python scripts/threshold_margins.py -n 3 --only tiny_batch expensive_skip

Prints a Markdown table: scenario, run (planted or fixed), top finding, verdict, and each
finding's category and share at stake (% of the step), then each measured threshold with the
smallest share that fired it among the planted runs and the largest among the fixed and
healthy ones.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import profsight
import scenarios
from profsight.analyses.pipeline import diagnose
from profsight.knowledge import advice
from profsight.knowledge.threshold_sources import measured_by
from scenarios import SCENARIOS

SCRIPT = "scripts/threshold_margins.py"


def _findings(trace: Path) -> tuple[str | None, str | None, dict[str, float]]:
    diagnosis = diagnose(profsight.load(trace))
    shares: dict[str, float] = {}
    for f in diagnosis.findings:
        shares[f.category] = max(shares.get(f.category, 0.0), f.at_stake_pct)
    top = diagnosis.findings[0].category if diagnosis.findings else None
    judgement = diagnosis.verdict.judgement if diagnosis.verdict is not None else None
    return top, judgement, shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=1, help="recordings per scenario and run")
    parser.add_argument("--only", nargs="*", default=None, help="scenario names")
    args = parser.parse_args()
    names = args.only or list(SCENARIOS)
    fired: dict[str, list[float]] = collections.defaultdict(list)
    quiet: dict[str, list[float]] = collections.defaultdict(list)
    print("| scenario | run | top | verdict | findings (% of the step at stake) |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = Path(tmp)
        for name in names:
            scenario = SCENARIOS[name]
            runs = [("planted", scenario.plain)]
            if scenario.fixed is not None:
                runs.append(("fixed", scenario.fixed))
            for run, record in runs:
                for k in range(args.n):
                    top, judgement, shares = _findings(record(out / f"{name}-{run}-{k}"))
                    named = ", ".join(f"{c} {s:.1f}" for c, s in sorted(shares.items()))
                    print(f"| {name} | {run} | {top} | {judgement} | {named} |", flush=True)
                    healthy = run == "fixed" or scenario.fixed is None
                    for category, share in shares.items():
                        planted = not healthy and category == scenario.expected
                        (fired if planted else quiet)[category].append(share)
    print(
        "\n| threshold | value | category | lowest share where planted "
        "| highest share elsewhere (fixed twins, other scenarios) |"
    )
    print("|---|---:|---|---:|---:|")
    measured = [(t.name, t.value, t.category) for t in measured_by(SCRIPT)] + [
        (f"phase {r.phase.value}", r.threshold_pct, r.category)
        for r in advice.PHASE_RULES
        if r.source == advice.MEASURED
    ]
    for name, value, cat in measured:
        low = f"{min(fired[cat]):.1f}" if fired.get(cat) else ""
        high = f"{max(quiet[cat]):.1f}" if quiet.get(cat) else ""
        print(f"| {name} | {value:g} | {cat} | {low} | {high} |")


if __name__ == "__main__":
    assert scenarios.PLAIN_STEPS  # the scenarios module is the tests' own
    main()
