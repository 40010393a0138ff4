"""`scripts/reports_unchanged.py`, the check that a change left every report as it was, refuses
a base that is no checkout: given a commit's name instead of a worktree, each of its runs
imported this checkout's package and compared the tree with itself ("0 differ", always)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import DATA

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "reports_unchanged.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300
    )


def test_a_commits_name_is_no_base_tree(tmp_path: Path) -> None:
    run = _run("HEAD", str(tmp_path))
    assert run.returncode == 2
    assert "HEAD is no checkout of profsight" in run.stderr
    assert "differ" not in run.stdout


def test_a_tree_against_itself_differs_nowhere() -> None:
    root = SCRIPT.parent.parent
    run = _run(str(root), str(DATA / "minimal"))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith(" reports differ")
    assert run.stdout.strip().startswith("0 of ")
