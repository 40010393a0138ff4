"""`profsight slice`: the steps that matter as a valid trace, with profsight's findings.

GIVEN real traces (a loop recorded in this session, two ranks of a real NCCL job), WHEN a
step range is sliced, THEN the slice is a valid Trace Event Format document (every event's
fields, every flow paired), re-reads with profsight as those steps (calls and times add up
across adjacent slices), and carries the findings on a track of its own.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

import profsight
from profsight.cli.exit_codes import EXIT_USAGE
from profsight.cli.main import main
from profsight.slicing.window import FINDINGS_PID, slice_trace

from conftest import DATA
from recorders import Recorded

NCCL_RANK = DATA / "real/job/sampled_rank-0.json.gz"


def _valid(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The Trace Event Format's required fields, per phase; flows paired by (cat, id)."""
    events = doc["traceEvents"]
    flows: dict[tuple[Any, Any], set[str]] = defaultdict(set)
    for e in events:
        assert isinstance(e.get("ph"), str) and isinstance(e.get("name"), str), e
        assert "pid" in e and "tid" in e, e
        if e["ph"] == "M":
            assert isinstance(e.get("args"), dict), e
            continue
        assert isinstance(e.get("ts"), (int, float)), e
        if e["ph"] == "X":
            assert isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0, e
        if e["ph"] in ("s", "t", "f"):
            flows[(e.get("cat"), e.get("id"))].add(e["ph"])
    for key, phases in flows.items():
        assert {"s", "f"} <= phases, key
    return events


def _steps(path: Path) -> list[int]:
    profile = profsight.load(path)
    names = profile.events.strings
    return sorted(
        int(names[i].removeprefix("ProfilerStep#"))
        for i in set(profile.events.name.tolist())
        if names[i].startswith("ProfilerStep#")
    )


def _rows(path: Path) -> dict[str, profsight.Row]:
    return {r.name: r for r in profsight.load(path).table().rows}


def test_adjacent_slices_add_up_to_their_union(recorded_plain: Recorded, tmp_path: Path) -> None:
    steps = _steps(recorded_plain.trace)
    assert len(steps) >= 3
    first, last = steps[0], steps[-1]
    paths = {}
    for name, span in {"a": (first, first), "b": (first + 1, last), "ab": (first, last)}.items():
        out = tmp_path / f"{name}.json"
        assert main(["slice", str(recorded_plain.trace), "--steps", f"{span[0]}-{span[1]}",
                     "-o", str(out)]) == 0  # fmt: skip
        _valid(json.loads(out.read_text()))
        paths[name] = out
    a, b, ab = (_rows(paths[k]) for k in ("a", "b", "ab"))
    assert (
        ab["ProfilerStep*"].calls
        == len(steps)
        == a["ProfilerStep*"].calls + b["ProfilerStep*"].calls
    )
    original = profsight.load(recorded_plain.trace).table().row("ProfilerStep*")
    assert ab["ProfilerStep*"].cpu_total_us == pytest.approx(original.cpu_total_us, abs=0.01)
    ops = [n for n in ab if n.startswith("aten::")]
    assert len(ops) > 10
    for name in ops:
        calls = a[name].calls if name in a else 0
        calls += b[name].calls if name in b else 0
        assert ab[name].calls == calls, name
        self_us = (a[name].self_cpu_us if name in a else 0.0) + (
            b[name].self_cpu_us if name in b else 0.0
        )
        assert ab[name].self_cpu_us == pytest.approx(self_us, abs=0.01), name


def test_a_gpu_step_keeps_its_device_work_flows_and_findings(tmp_path: Path) -> None:
    """A rank of a real 128-rank NCCL job (A100): the last step's kernels, flows and
    collectives come along, and the findings of the slice sit on profsight's track."""
    step = _steps(NCCL_RANK)[-1]
    out = tmp_path / "step.json.gz"
    assert main(["slice", str(NCCL_RANK), "--steps", str(step), "-o", str(out)]) == 0
    doc = json.loads(gzip.decompress(out.read_bytes()))
    events = _valid(doc)
    assert doc["distributedInfo"]["rank"] == 0  # the trace's top-level fields are kept
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert kernels and any("nccl" in e["name"].lower() for e in kernels)
    marks = [e for e in events if e.get("pid") == FINDINGS_PID and e["ph"] == "i"]
    sliced = profsight.load(out)
    assert [m["name"].split(". ", 1)[1] for m in marks] == [
        f.title for f in profsight.explain(sliced).findings
    ]
    assert sliced.table().row("ProfilerStep*").calls == 1
    whole = slice_trace(str(NCCL_RANK), (step, step))
    assert whole.kept < whole.kept + whole.dropped


def test_slice_errors_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    trace = str(NCCL_RANK)
    assert main(["slice", trace, "--steps", "9999", "-o", str(tmp_path / "x.json")]) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the trace holds ProfilerStep#" in err[0]
    assert main(["slice", trace, "--steps", "3"]) == EXIT_USAGE
    assert "slice needs -o FILE" in capsys.readouterr().err
    assert main(["slice", trace, "--steps", "4-3", "-o", str(tmp_path / "x.json")]) == EXIT_USAGE
    assert "the last step comes before the first" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_launch_flows_come_along_paired(tmp_path: Path) -> None:
    """Rank 0 of a real 2-rank NCCL job on A100 (flows from launch to kernel, and unpaired
    flow ends in the original): the middle step's flows are kept whole, none half."""
    trace = DATA / "real/nccl_data.json.gz"
    steps = _steps(trace)
    out = tmp_path / "middle.json"
    assert main(["slice", str(trace), "--steps", str(steps[1]), "-o", str(out)]) == 0
    events = _valid(json.loads(out.read_text()))
    starts = [e for e in events if e["ph"] == "s"]
    assert len(starts) > 100
    kernels = {e["args"]["correlation"] for e in events if e.get("cat") == "kernel"}
    launches = {e["args"]["correlation"] for e in events if e.get("cat") == "cuda_runtime"}
    assert kernels and kernels <= launches  # each kernel with the call that launched it
    assert profsight.load(out).table().row("ProfilerStep*").calls == 1


def test_a_jobs_ranks_slice_into_one_file_read_back_as_the_job(tmp_path: Path) -> None:
    """Two ranks of a real NCCL job, step 552 of each, in one file: every event tagged with
    its rank, read back by `profsight job` as those two ranks and that step, each rank's step
    as long as in its own trace."""
    folder = DATA / "real/job"
    out = tmp_path / "job552.json.gz"
    assert main(["slice", str(folder), "--steps", "552", "-o", str(out)]) == 0
    events = _valid(json.loads(gzip.decompress(out.read_bytes())))
    assert {e["args"]["rank"] for e in events if e["ph"] != "M"} == {0, 1}
    tracks = {e["pid"] for e in events if str(e.get("pid")).startswith(FINDINGS_PID)}
    assert tracks == {f"{FINDINGS_PID} rank 0", f"{FINDINGS_PID} rank 1"}
    report = profsight.explain_job(out)
    assert [v.rank for v in report.ranks] == [0, 1]
    assert report.steps == (552,)
    for view in report.ranks:
        own = profsight.load(folder / f"sampled_rank-{view.rank}.json.gz")
        names = own.events.strings
        step = next(
            i for i in range(len(own.events)) if names[own.events.name[i]] == "ProfilerStep#552"
        )
        assert view.step_us == pytest.approx(own.events.dur[step] / 1000.0, rel=1e-6)
    one = tmp_path / "rank1.json"
    assert main(["slice", str(folder), "--steps", "552", "--ranks", "1", "-o", str(one)]) == 0
    assert {e["args"]["rank"] for e in _valid(json.loads(one.read_text())) if e["ph"] != "M"} == {1}
