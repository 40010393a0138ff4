"""One file holding several ranks, read as the job it is: TraceLens TraceFuse merges of a real
4-rank MI300X DDP run (tests/data/merged_ranks/README.md), whole and filtered to its
collectives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profsight.api import explain_job
from profsight.cli.main import main
from profsight.loaders import load
from profsight.model.rank_split import rank_parts

from conftest import DATA

FOLDER = DATA / "merged_ranks"
WHOLE = FOLDER / "merged_all_events.json.gz"
COLLECTIVES = FOLDER / "merged_nccl_only.json.gz"


def test_a_merge_of_collectives_only_is_the_job_with_its_straggler() -> None:
    """No host event at all: the ranks are the processes the merge names (``RANK n - GPU``,
    ``args.rank``), each one window over its device work; rank 3 arrives last at every one of
    the 21 collectives, as its kernels' starts show."""
    parts = rank_parts(load(str(COLLECTIVES)))
    assert [p.meta.distributed["rank"] for p in parts] == [0, 1, 2, 3]
    assert [len(p.events) for p in parts] == [42, 42, 42, 42]  # 21 kernels, 21 annotations
    job = explain_job(COLLECTIVES)
    assert job.straggler is not None and job.straggler.rank == 3
    assert (job.straggler.last_at, job.straggler.collectives) == (21, 21)
    assert [f.category for f in job.findings] == ["straggler", "communication"]


def test_collectives_only_give_communication_and_no_idle_time() -> None:
    """NCCL holds ranks 0-2 for 49/36/38% of their windows and rank 3 for 2.75%: reported as
    communication, mostly waiting for rank 3. The file holds nothing else, so no device's
    idle time is judged, and the notes say why."""
    job = explain_job(COLLECTIVES)
    shares = [round(v.comm_busy_us * 100 / v.step_us, 1) for v in job.ranks]
    assert shares == pytest.approx([48.9, 35.7, 37.7, 2.75], abs=0.2)
    assert all(v.device_busy_us is None and v.held for v in job.ranks)
    comm = next(f for f in job.findings if f.category == "communication")
    assert "waiting for rank 3" in comm.title
    assert comm.gain_pct is not None and comm.gain_pct < 3.0  # rank 3's own transfer
    assert "gpu_idle" not in {f.category for f in job.findings}
    assert any("only collectives" in d and "idle time is not judged" in d for d in job.diagnostics)


def test_a_whole_merge_reports_communication_and_idle_gpus_after_its_straggler() -> None:
    """The whole merge: the straggler first (the others wait 28% of the step for rank 3), then
    the collectives the others sit in (exposed 29/26/28% on ranks 0-2, all of it waiting; the
    transfer on rank 3 is 2.3%), then the GPUs idle on ranks 1-3 by their own readings."""
    job = explain_job(WHOLE)
    assert [f.category for f in job.findings] == ["straggler", "communication", "gpu_idle"]
    exposed = [round(v.comm_exposed_us * 100 / v.step_us) for v in job.ranks]
    assert exposed == [29, 27, 28, 2]
    comm = job.findings[1]
    assert comm.gain_pct == pytest.approx(2.3, abs=0.2)
    idle = job.findings[2]
    assert idle.title.startswith("The GPU idles on 3 of 4 ranks: 37-65%")
    assert [e.label for e in idle.evidence][:3] == [f"rank {r}, its own reading" for r in (1, 2, 3)]


def test_explain_writes_the_merge_as_a_job(tmp_path: Path) -> None:
    """``profsight explain FILE`` on the collectives-only merge: a job document, exit 0."""
    out = tmp_path / "job.json"
    assert main(["explain", str(COLLECTIVES), "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert [r["rank"] for r in doc["ranks"]] == [0, 1, 2, 3]
    assert [r["holds"] for r in doc["ranks"]] == ["only collectives (their kernels)"] * 4
    assert doc["findings"][0]["category"] == "straggler"
