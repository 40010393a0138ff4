"""One front door (`profsight.front_door`): the Python API, the CLI and MCP read every kind of
input the same way, so that ``profsight.explain(x).json()`` is what ``profsight explain x
--format json`` prints, for every kind, on real files.

A job's document carries how long its ranks took to read (``seconds``, ``run.seconds``): two
runs differ there and nowhere else, so those wall times are left out of the comparison.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import profsight
from profsight.api import JobReport, MemorySnapshotReport, Report, SavedReportView
from profsight.front_door import open_input
from profsight.integrations.mcp_server import explain_tool
from profsight.renderers.explained import FORMATS, render_explained

from conftest import DATA

SAMPLE = DATA / "causes" / "haraldger__resnet50_trace.json.gz"


def _cli_json(path: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "profsight", "explain", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


def _saved(tmp_path: Path) -> Path:
    path = tmp_path / "saved.json"
    path.write_text(_cli_json(DATA / "causes" / "mryab__efficient-dl-systems__1.txt"))
    return path


def _without_wall_times(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _without_wall_times(v) for k, v in doc.items() if k != "seconds"}
    if isinstance(doc, list):
        return [_without_wall_times(v) for v in doc]
    return doc


KINDS = {
    "trace": (lambda _: SAMPLE, Report),
    "printed table": (lambda _: DATA / "causes" / "Weepingchestnut__LbasicSR__1.txt", Report),
    "Lightning report": (lambda _: DATA / "tables" / "issue-lightning-4937-1.txt", Report),
    "job directory": (lambda _: DATA / "real" / "job", JobReport),
    "merged ranks": (lambda _: DATA / "merged_ranks" / "merged_nccl_only.json.gz", JobReport),
    "memory snapshot": (
        lambda _: DATA / "shared" / "snapshots" / "cb_ftcourse.pickle.gz",
        MemorySnapshotReport,
    ),
    "saved report": (_saved, SavedReportView),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_api_and_the_cli_give_the_same_document(kind: str, tmp_path: Path) -> None:
    make, cls = KINDS[kind]
    path = make(tmp_path)
    report = profsight.explain(str(path))
    assert isinstance(report, cls)
    api, cli = json.loads(report.json()), json.loads(_cli_json(path))
    assert _without_wall_times(api) == _without_wall_times(cli)
    if kind == "saved report":  # shown as saved, byte for byte
        assert report.json() == path.read_text()
    text = str(report)
    assert text.strip() and report.markdown().strip() and report.html().lstrip().startswith("<")


@pytest.mark.parametrize("kind", ["job directory", "memory snapshot", "saved report"])
def test_mcp_reads_the_kinds_the_api_reads(kind: str, tmp_path: Path) -> None:
    """MCP's explain goes through the same door: a job, a snapshot and a saved report."""
    path = KINDS[kind][0](tmp_path)
    doc = explain_tool(str(path))
    key = {"job directory": "job", "memory snapshot": "snapshot"}.get(kind)
    if key is None:
        assert doc["findings"] == json.loads(profsight.explain(str(path)).json())["findings"]
    else:
        assert key in doc


def test_text_of_a_table_and_a_loaded_profile() -> None:
    """The text itself and a loaded profile are inputs of the same door."""
    path = DATA / "causes" / "Weepingchestnut__LbasicSR__1.txt"
    by_text = profsight.explain(path.read_text())
    by_profile = profsight.explain(profsight.load(path))
    assert isinstance(by_text, Report) and isinstance(by_profile, Report)
    assert [f.title for f in by_text.findings] == [f.title for f in by_profile.findings]
    with pytest.raises(TypeError):
        profsight.explain(42)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_in_every_format_renders_as_the_api_does(
    kind: str, fmt: str, tmp_path: Path
) -> None:
    """One renderer contract: the registry the CLI renders from (`renderers.explained`)
    gives, for every kind and format, what the API's report object gives."""
    path = KINDS[kind][0](tmp_path)
    opened = open_input(str(path))
    report = profsight.explain(str(path))
    by_registry = render_explained(opened.report, opened.kind, fmt)
    by_api = {"text": str, "markdown": lambda r: r.markdown(), "json": lambda r: r.json()}.get(
        fmt, lambda r: r.html()
    )(report)
    if kind in ("job directory", "merged ranks"):  # the ranks' wall times differ run to run
        by_registry, by_api = _without_seconds(by_registry), _without_seconds(by_api)
    assert by_registry == by_api
    assert by_registry.strip()


def _without_seconds(text: str) -> str:
    import re

    text = re.sub(r'"seconds": ?[0-9.]+', '"seconds": _', text)
    return re.sub(r"[0-9.]+ s\b", "_ s", text)
