"""Table against trace: does the printed table of a run name the bottleneck its trace names?

For every run of `scenarios.SCENARIOS` (plain torch and Lightning), the top finding of each
printed form users keep (torch's ``key_averages().table()`` sorted by self CPU and by total,
the full table, Lightning's ``fit-*.txt``; and, where the scenario suits them, Lightning's
``SimpleProfiler`` and ``AdvancedProfiler`` reports of the same code) is compared with the
top finding of the run's trace. Both are judged by the same rules (`analyses.findings`, one
module per family): what this compares is the two fillings of their figures, a trace's
exact one and a table's from its rows. ``python tests/agreement.py`` records every run and prints
the matrix docs/measurements.md shows; `tests/test_printed_diagnosis.py` asserts the agreement.
"""

from __future__ import annotations

import sys
import tempfile
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import profsight
from scenarios import LIGHTNING_REPORT, SCENARIOS, TABLE_FORMS, table_path

RUNS = [(name, how) for name in SCENARIOS for how in ("plain", "lightning")]
REPORTS = [(name, kind) for name, s in SCENARIOS.items() for kind in s.text_profilers]
#: The printed forms, in the matrix's column order.
FORMS = (*TABLE_FORMS, LIGHTNING_REPORT, "simple", "advanced")


@dataclass(frozen=True)
class Pair:
    scenario: str
    how: str
    form: str
    trace_top: str | None
    table_top: str | None

    @property
    def agrees(self) -> bool:
        return self.table_top == self.trace_top


def top(path: Path | str) -> str | None:
    findings = profsight.explain(str(path)).findings
    return findings[0].category if findings else None


def pairs(
    traces: Mapping[tuple[str, str], Path], reports: Mapping[tuple[str, str], Path]
) -> list[Pair]:
    """Every (run, printed form) pair with both top findings."""
    out = []
    trace_tops = {run: top(path) for run, path in traces.items()}
    for (name, how), trace in traces.items():
        for form in (*TABLE_FORMS, LIGHTNING_REPORT):
            printed = table_path(trace, form)
            if printed.exists():
                out.append(Pair(name, how, form, trace_tops[(name, how)], top(printed)))
    for (name, kind), report in reports.items():
        out.append(Pair(name, "lightning", kind, trace_tops[(name, "lightning")], top(report)))
    return out


def markdown(found: list[Pair]) -> str:
    """The agreement matrix: one line per run, the trace's top finding, then each form's."""
    cells = {(p.scenario, p.how, p.form): p for p in found}
    head = ["run", "planted", "trace", *FORMS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, how in RUNS:
        row = [f"{name} ({how})", SCENARIOS[name].expected]
        trace = next((p.trace_top for p in found if (p.scenario, p.how) == (name, how)), None)
        row.append(str(trace))
        for form in FORMS:
            pair = cells.get((name, how, form))
            mark = "" if pair is None else "= " if pair.agrees else "≠ "
            row.append("" if pair is None else mark + str(pair.table_top))
        lines.append("| " + " | ".join(row) + " |")
    agreed = sum(p.agrees for p in found)
    lines.append("")
    lines.append(f"Agreement: {agreed} of {len(found)} (run, printed form) pairs.")
    return "\n".join(lines)


def record_all(out: Path) -> tuple[dict[tuple[str, str], Path], dict[tuple[str, str], Path]]:
    traces: dict[tuple[str, str], Path] = {}
    reports: dict[tuple[str, str], Path] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, how in RUNS:
            traces[(name, how)] = getattr(SCENARIOS[name], how)(out / f"{name}-{how}")
        for name, kind in REPORTS:
            reports[(name, kind)] = SCENARIOS[name].lightning(out / f"{name}-{kind}", profiler=kind)
    return traces, reports


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        print(markdown(pairs(*record_all(Path(tmp)))))
