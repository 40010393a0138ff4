"""A one-pass range's own host time in a printed table: a stall, or Python between ops.

Tables printed by torch from a profile recorded here: one ``record_function`` range around a
few hundred small ops, called once. Python between the ops costs microseconds each, and the
range is judged; a sleep inside it (a stall the profiler does not record, as reading a file
or a first pass's start-up would be) costs milliseconds per op call, and the window is not
judged (`analyses.step.table_stall`).
"""

from __future__ import annotations

import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, record_function

import profsight
from profsight.analyses.step.table_stall import STALL_GAP_US, printed_stall
from profsight.model.text_profile import TextProfile

_OPS = 300


def _table(tmp_path: Path, stall_s: float) -> Path:
    x = torch.ones(64)
    with profile(activities=[ProfilerActivity.CPU]) as prof, record_function("model_inference"):
        for _ in range(_OPS):
            x = x * 1.0001
        time.sleep(stall_s)
    path = tmp_path / "table.txt"
    path.write_text(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=20))
    return path


def test_a_sleep_in_one_pass_is_a_stall_and_not_judged(tmp_path: Path) -> None:
    path = _table(tmp_path, stall_s=1.0)
    report = profsight.explain(str(path))
    first = report.findings[0]
    assert first.category == "profiler_setup" and first.blocks
    assert "model_inference" in first.title
    assert report.verdict is not None and report.verdict.judgement == "not_judged"


def test_python_between_ops_is_no_stall(tmp_path: Path) -> None:
    path = _table(tmp_path, stall_s=0.0)
    profile_ = profsight.load(path)
    assert isinstance(profile_, TextProfile)
    table = profile_.tables[0].table
    row = next(r for r in table.rows if r.name == "model_inference")
    # the range's own time per op call, well under the bar even on a loaded machine
    assert row.self_cpu_us < STALL_GAP_US * _OPS
    assert printed_stall(table, steps=1) is None
    report = profsight.explain(str(path))
    assert all("no recorded op holds" not in f.title for f in report.findings)
    assert report.verdict is not None and report.verdict.judgement != "not_judged"
