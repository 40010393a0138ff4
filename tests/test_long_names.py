"""Long names: every output but JSON cuts a name to the room it has.

GIVEN a real CPU trace recorded here whose step holds a ``record_function`` range with a
200,000-character name (and its twin, the same run with a short name), WHEN it is explained,
THEN the terminal text keeps to the terminal's width and to about its twin's length, the
Markdown shows the name cut to `MARKDOWN_NAME` characters, the HTML page holds it cut (not
200 KB twice) and the JSON keeps it whole. A finding about a real kernel with a 263-character
name shows that kernel on one terminal line.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

import profsight
from profsight.cli.main import main
from profsight.names import HTML_NAME, MARKDOWN_NAME
from profsight.renderers.terminal import render_terminal

from conftest import DATA

LONG = "x" * 200_000
SHORT = "short_range"
COLUMNS = 120
#: Lines of the whole text report: its short-named twin prints about 200 (the findings vary
#: with the run's timing); printed whole, the name took 3,500.
MOST_LINES = 300
#: A real cuBLAS kernel of 263 characters, in an FP32-on-tensor-cores finding.
TB_PLUGIN = DATA / "real/gpu_metrics_input.json"
_RUN_OF_X = re.compile(r"x{20,}")


def record(path: Path, range_name: str) -> Path:
    """A small model's training steps under torch.profiler, the forward pass and the loss
    inside a ``record_function`` range named `range_name`."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=1, warmup=1, active=3),
        on_trace_ready=lambda p: p.export_chrome_trace(str(path)),
    ) as prof:
        for _ in range(5):
            opt.zero_grad()
            with record_function(range_name):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                # a fixed 10 ms inside the range keeps it most of its step on a loaded
                # machine too, so the call tree (which leaves out parts under 2% of the run)
                # always holds it
                time.sleep(0.01)
            loss.backward()
            opt.step()
            prof.step()
    return path


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("long-names")
    return {
        "long": record(folder / "long.pt.trace.json", LONG),
        "short": record(folder / "short.pt.trace.json", SHORT),
    }


@pytest.fixture(scope="module")
def reports(traces: dict[str, Path]) -> dict[str, Any]:
    return {k: profsight.explain(p) for k, p in traces.items()}


def longest_run(text: str) -> int:
    """The longest run of the long name's character in `text`."""
    return max((len(m) for m in _RUN_OF_X.findall(text)), default=0)


def explain_text(trace: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["explain", str(trace)]) == 0
    return capsys.readouterr().out.splitlines()


def test_text_keeps_to_the_terminal(
    traces: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(COLUMNS))
    lines = explain_text(traces["long"], capsys)
    assert any(LONG[:40] in line for line in lines)  # the range is shown ...
    assert len(lines) < MOST_LINES  # ... and takes a line where it is
    # torch's table is printed as torch prints it, wider than the terminal; it cuts names
    # to its own column
    start = next(i for i, line in enumerate(lines) if line.startswith("Profiler table, as torch"))
    end = next(i for i, line in enumerate(lines) if line.startswith("Call tree ("))
    torch_table = lines[start + 1 : end]
    assert longest_run("\n".join(torch_table)) < 60
    ours = lines[: start + 1] + lines[end:]
    too_long = [(i, len(line)) for i, line in enumerate(ours) if len(line) > COLUMNS]
    assert too_long == []
    cut = [line for line in ours if LONG[:40] in line]
    assert len(cut) >= 3 and all("x…" in line for line in cut)  # the rows, the notes, the tree


def test_markdown_and_html_cut_the_name_json_keeps_it(reports: dict[str, Any]) -> None:
    long, short = reports["long"], reports["short"]
    markdown = long.markdown()
    assert MARKDOWN_NAME - 10 < longest_run(markdown) <= MARKDOWN_NAME - 1
    assert LONG[: MARKDOWN_NAME - 1] + "…" in markdown
    page, twin = long.html(), short.html()
    assert len(page.encode()) < 2 * len(twin.encode()) + 250_000
    assert HTML_NAME - 10 < longest_run(page) <= HTML_NAME - 1
    document = json.loads(long.json())
    names = [r["name"] for r in document["table"]]
    assert LONG in names


def evidence_lines(text: str, label: str) -> list[str]:
    """The lines of `text` from the one where an evidence item of `label` starts up to (not
    with) the next evidence item, ``why:`` or finding."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"     - {label[:30]}"))
    out = [lines[start]]
    for line in lines[start + 1 :]:
        if re.match(r"\s+(- |why: )|\d+\. ", line):
            break
        out.append(line)
    return out


def test_a_finding_shows_a_long_kernel_name_on_one_line() -> None:
    report = profsight.explain(TB_PLUGIN)
    finding = next(f for f in report.findings if f.category == "low_precision")
    kernels = [e for e in finding.evidence if e.label in e.rows]
    assert max(len(e.label) for e in kernels) > 250
    text = render_terminal(report, width=COLUMNS)
    for e in kernels:
        shown = evidence_lines(text, e.label)
        assert len(shown) == 1, shown
        line = shown[0].rstrip()
        assert len(line) <= COLUMNS and line.endswith(f": {e.value}")
