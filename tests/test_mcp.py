"""``profsight mcp``: the Model Context Protocol server, driven by the SDK's own client over
stdio, as an assistant would start it (a ``profsight mcp`` process)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

import profsight  # noqa: E402
from profsight.renderers.table_formats import render_json  # noqa: E402
from profsight.renderers.tree_text import render_tree_json  # noqa: E402
from profsight.report.build import build_report  # noqa: E402
from profsight.report.document import report_document  # noqa: E402
from profsight.samples import sample_trace  # noqa: E402

TOOLS = {"explain", "table", "tree", "diff", "check", "slice"}


def _session(calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[Any], list[Any]]:
    """The server's tools, and the results of `calls` made in turn in one session."""

    async def talk() -> tuple[list[Any], list[Any]]:
        server = StdioServerParameters(command=sys.executable, args=["-m", "profsight", "mcp"])
        async with Client(server, read_timeout_seconds=300) as client:
            tools = (await client.list_tools()).tools
            results = [await client.call_tool(name, args) for name, args in calls]
            return tools, results

    return asyncio.run(talk())


def _text(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


def test_the_tools_answer_as_the_command_line_does(tmp_path: Path) -> None:
    sample = str(sample_trace())
    out = tmp_path / "steps.json"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("explain", {"path": sample, "rows": 5}),
        ("table", {"path": sample, "limit": 5}),
        ("tree", {"path": sample, "depth": 2}),
        ("diff", {"before": sample, "after": sample}),
        ("check", {"path": sample, "max": ["data_loading=100%"], "fail_on": "high"}),
        ("check", {"path": sample, "max": ["nonsense"]}),
        ("explain", {"path": str(tmp_path / "missing.json")}),
        ("slice", {"path": sample, "steps": "3", "output": str(out)}),
        ("slice", {"path": sample, "steps": "3", "output": str(out)}),
    ]
    tools, results = _session(calls)
    explained, table, tree, diff, holds, bad_budget, missing, sliced, again = results

    assert {t.name for t in tools} == TOOLS
    schema = next(t for t in tools if t.name == "explain").input_schema
    assert schema["required"] == ["path"] and "rows" in schema["properties"]

    profile = profsight.load(sample)
    doc = report_document(build_report(profile))
    got = explained.structured_content
    assert not explained.is_error
    assert got["verdict"] == doc["verdict"]
    assert [f["title"] for f in got["findings"]] == [f["title"] for f in doc["findings"]]
    assert [r["name"] for r in got["rows"]] == doc["top"][:5]
    assert got["breakdown"]["average"] == doc["breakdown"]["average"]
    assert got["breakdown"]["step_count"] == len(doc["breakdown"]["steps"])
    assert "steps" not in got["breakdown"] and "tree" not in got

    assert table.structured_content == json.loads(render_json(profile.table(limit=5)))
    assert tree.structured_content == json.loads(
        render_tree_json(profile.tree().pruned(depth=2, min_share=1.0))
    )
    assert not diff.is_error and diff.structured_content["schema"].startswith("profsight/diff")

    # the sample's optimizer findings are high: the budget on data loading holds, they break
    verdicts = holds.structured_content
    assert verdicts["holds"] is False
    assert verdicts["outcomes"][0] == {
        "holds": True,
        "message": "data_loading is 0.3% of the step, within 100%",
    }
    broken = [o["message"] for o in verdicts["outcomes"] if not o["holds"]]
    assert broken and all(m.startswith("finding optimizer is high") for m in broken)
    assert bad_budget.is_error and "nonsense" in _text(bad_budget)
    assert missing.is_error and "no such file" in _text(missing)

    assert not sliced.is_error and sliced.structured_content["steps"] == [3, 3]
    assert json.loads(out.read_bytes())["traceEvents"]
    assert again.is_error and "already exists" in _text(again)


def test_without_the_sdk_it_says_what_to_install() -> None:
    import subprocess

    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "from profsight.cli.entry import run\n"
        "sys.exit(run(['mcp']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "profsight: error: profsight mcp needs the Model Context Protocol SDK: "
        "pip install 'profsight[mcp]'"
    )


def test_explain_gives_an_assistant_the_roofline_of_the_top_ops(tmp_path: Path) -> None:
    """On a GPU trace the assistant's `explain` holds the roofline (the ceilings, the
    coverage, the ten ops with the most device time) and `table` grouped by shape each
    op's bound, as the command line gives them."""
    from conftest import DATA

    bert = str(DATA / "shared/traces/tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz")
    _, (explained, table) = _session(
        [("explain", {"path": bert}), ("table", {"path": bert, "group_by": "shape", "limit": None})]
    )
    doc = report_document(build_report(profsight.load(bert)))["roofline"]
    got = explained.structured_content["roofline"]
    assert got["device"] == doc["device"] == "H100 SXM"
    assert got["coverage_pct"] == doc["coverage_pct"]
    assert got["ops"] == doc["ops"][:10] and len(doc["ops"]) > 10
    rows = table.structured_content["rows"]
    (vocab,) = [r for r in rows if r["name"] == "aten::addmm" and "30522" in r["shapes"]]
    assert vocab["bound"] == "memory"


def test_explain_reads_a_memory_snapshot() -> None:
    """A memory snapshot by others: the assistant gets each device's peak and the sites that
    hold it, as `profsight explain X --format json` writes them."""
    from profsight.report.snapshot import explain_snapshot, snapshot_document

    from conftest import DATA

    path = str(DATA / "shared/snapshots/kk_ctx128_fullstep.pickle.gz")
    _, (explained,) = _session([("explain", {"path": path})])
    got = explained.structured_content["snapshot"]
    (full,) = snapshot_document(explain_snapshot(path))["devices"]
    (device,) = got["devices"]
    assert device["peak_bytes"] == full["peak_bytes"] and device["holders"] == full["holders"]
    assert device["sites"] == full["sites"][: len(device["sites"])]
    assert device["sites_total"] == len(full["sites"])
    assert device["sites"][0]["site"] == "optimizers.py:82 step"
