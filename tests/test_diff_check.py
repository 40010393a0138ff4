"""``profsight diff`` and ``profsight check`` on runs recorded in the test session.

GIVEN two runs of one loop, the second with a slower ``record_function("slow_part")``
(an SVD instead of a small matmul), and two planted-bottleneck scenarios; WHEN they are
compared or checked through ``main(argv)``; THEN the slowed row, the step time, the findings
and the budgets come out as planted, with the documented exit codes.
"""

from __future__ import annotations

import html
import json
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

from profsight.cli.exit_codes import EXIT_BUDGET, EXIT_INPUT, EXIT_OK, EXIT_USAGE
from profsight.cli.main import main
from scenarios import SCENARIOS

from conftest import DATA
from recorders import SmallNet

MINIMAL = str(DATA / "minimal/minimal.pt.trace.json")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@dataclass(frozen=True)
class Run:
    trace: Path
    table: Path
    """torch's own printed table of the run, every row."""


def _record(out: Path, slow: bool) -> Run:
    """Three profiled steps of SmallNet training, each with a ``slow_part``: a 32x32 matmul,
    or (slow) the SVD of a 256x256 matrix, ~6 ms on one thread."""
    torch.manual_seed(0)
    model = SmallNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))
    side = torch.randn(256, 256) if slow else torch.randn(32, 32)
    trace, table = out / "run.pt.trace.json", out / "run.table.txt"

    def ready(prof: Any) -> None:
        prof.export_chrome_trace(str(trace))
        table.write_text(prof.key_averages().table(sort_by="cpu_time_total", row_limit=-1))

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with profile(
            activities=[ProfilerActivity.CPU],
            schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
            on_trace_ready=ready,
        ) as prof:
            for _ in range(5):
                opt.zero_grad(set_to_none=True)
                torch.nn.functional.cross_entropy(model(x), y).backward()  # type: ignore[no-untyped-call]
                opt.step()
                with record_function("slow_part"):
                    _ = torch.linalg.svd(side) if slow else side @ side
                prof.step()
    finally:
        torch.set_num_threads(threads)
    return Run(trace, table)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Run]:
    return (
        _record(tmp_path_factory.mktemp("before"), slow=False),
        _record(tmp_path_factory.mktemp("after"), slow=True),
    )


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("scenarios")
    with warnings.catch_warnings():  # as in test_diagnose: the profiled runs' own warnings
        warnings.simplefilter("ignore")
        return {n: str(SCENARIOS[n].plain(out)) for n in ("slow_dataset", "healthy_conv")}


def _diff(capsys: pytest.CaptureFixture[str], before: Any, after: Any) -> dict[str, Any]:
    code, out, err = run(capsys, "diff", str(before), str(after), "--format", "json")
    assert code == EXIT_OK, err
    doc: dict[str, Any] = json.loads(out)
    return doc


# ------------------------------------------------------------------------------------ diff


@pytest.mark.parametrize("side", ["trace", "table"])
def test_diff_names_the_slowed_row(
    capsys: pytest.CaptureFixture[str], runs: tuple[Run, Run], side: str
) -> None:
    before, after = (getattr(r, side) for r in runs)
    doc = _diff(capsys, before, after)
    assert doc["schema"] == "profsight/diff/1"
    assert (doc["before"]["steps"], doc["after"]["steps"]) == (3, 3)
    assert doc["step_us"]["change"] > 0 and doc["step_us"]["change_pct"] > 0
    slower = doc["rows"]["slower"]
    top = [r["name"] for r in slower[:5]]
    assert "slow_part" in top, top
    row = slower[top.index("slow_part")]
    assert row["change_us"] > 0 and row["cpu_total_us"]["change_pct"] > 100
    assert row["calls"] == {"before": 1.0, "after": 1.0, "change": 0.0, "change_pct": 0.0}
    assert "aten::linalg_svd" in {r["name"] for r in doc["rows"]["new"]}
    code, out, _ = run(capsys, "diff", str(before), str(after))
    assert code == EXIT_OK
    slower_section = out.split("Slower (")[1].split("\n\n")[1]
    assert "slow_part" in slower_section


def test_diff_of_a_trace_and_its_saved_report_is_zero(
    capsys: pytest.CaptureFixture[str], runs: tuple[Run, Run], tmp_path: Path
) -> None:
    trace = runs[1].trace
    saved = tmp_path / "r.json"
    assert run(capsys, "explain", str(trace), "--format", "json", "-o", str(saved))[0] == 0
    for before, after in ((trace, saved), (saved, trace)):
        doc = _diff(capsys, before, after)
        assert doc["step_us"]["change"] == 0
        assert all(c["change"] == 0 for c in doc["phases_us"].values())
        assert doc["rows"] == {"slower": [], "faster": [], "new": [], "gone": [], "recounted": []}
        assert doc["findings"]["resolved"] == doc["findings"]["new"] == []
        assert not doc["verdict"]["changed"]


def test_compare_api_takes_reports_and_documents(runs: tuple[Run, Run]) -> None:
    import profsight
    from profsight.compare.diff import compare
    from profsight.compare.saved_report import REPORT_SCHEMA
    from profsight.report.document import SCHEMA, report_document

    assert REPORT_SCHEMA == SCHEMA
    before, after = (profsight.explain(r.trace) for r in runs)
    diff = compare(before, report_document(after))
    assert diff.step.delta is not None and diff.step.delta > 0
    assert "slow_part" in [r.name for r in diff.slower[:5]]
    same = compare(after, report_document(after), by="self")
    assert same.step.delta == 0 and not (same.slower or same.faster or same.new or same.gone)


def test_findings_resolved_and_new(
    capsys: pytest.CaptureFixture[str], scenarios: dict[str, str]
) -> None:
    doc = _diff(capsys, scenarios["slow_dataset"], scenarios["healthy_conv"])
    assert "data_loading" in {f["category"] for f in doc["findings"]["resolved"]}
    assert doc["verdict"]["before"]["bound"] == "input" and doc["verdict"]["changed"]
    assert doc["phases_us"]["data_loading"]["change"] < 0
    back = _diff(capsys, scenarios["healthy_conv"], scenarios["slow_dataset"])
    assert "data_loading" in {f["category"] for f in back["findings"]["new"]}
    code, out, _ = run(capsys, "diff", scenarios["slow_dataset"], scenarios["healthy_conv"])
    assert code == EXIT_OK
    resolved = out.split("Findings resolved:")[1].split("\n\n")[1]
    assert "(data_loading)" in resolved
    assert "Verdict: input-bound, starved by data → " in out


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "html"])
def test_every_format_renders(
    capsys: pytest.CaptureFixture[str],
    runs: tuple[Run, Run],
    tmp_path: Path,
    fmt: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the text fits the terminal (here 120 columns, as a file's is): one text either way
    monkeypatch.setenv("COLUMNS", "120")
    before, after = (str(r.trace) for r in runs)
    code, out, _ = run(capsys, "diff", before, after, "--format", fmt)
    assert code == EXIT_OK
    if fmt == "json":
        assert json.loads(out)["schema"] == "profsight/diff/1"
    elif fmt == "html":
        assert out.startswith("<!DOCTYPE html>") and "<title>profsight diff: run.pt" in out
        data = out.split('<script type="application/json" id="ps-diff-data">')[1]
        page = json.loads(data.split("</script>")[0])
        assert page["diff"]["schema"] == "profsight/diff/1"
        assert "slow_part" in [row[0] for row in page["lists"][0]["rows"]]
    else:
        heading = "# profsight: comparing two runs" if fmt == "markdown" else "Comparing two runs"
        assert out.startswith(heading)
        assert ("slow\\_part" if fmt == "markdown" else "slow_part") in out
    suffix = {"text": ".txt", "markdown": ".md", "json": ".json", "html": ".html"}[fmt]
    target = tmp_path / f"diff{suffix}"
    assert run(capsys, "diff", before, after, "-o", str(target))[0] == EXIT_OK
    assert target.read_text(encoding="utf-8") == out
    code, short, _ = run(capsys, "diff", before, after, "--format", fmt, "--limit", "1")
    assert code == EXIT_OK and (fmt == "json") == (short == out)


def test_html_page_keeps_names_inert(runs: tuple[Run, Run]) -> None:
    import profsight
    from profsight.compare.diff import compare
    from profsight.renderers.diff_render import render_diff_html
    from profsight.report.document import report_document

    hostile = "</script><img src=x onerror=alert(1)>&amp;"
    before = report_document(profsight.explain(runs[0].trace))
    after = report_document(profsight.explain(runs[1].trace))
    after["table"] = [
        {**r, "name": hostile} if r["name"] == "slow_part" else r for r in after["table"]
    ]
    page = render_diff_html(compare(before, after))
    assert hostile not in page and "<img" not in page
    assert page.count("</script>") == 2
    assert "\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e\\u0026amp;" in page


def test_a_finding_whose_severity_changes_reads_in_json() -> None:
    """A finding in both runs, high before and low after (as a loaded machine's recording can
    give): its JSON names both levels and gives the change in levels. Each of the four
    numbers was read as a level's name, so a fall of two levels (-2) crashed `diff` with
    "-2 is not a valid Severity", in JSON and HTML, and a rise of one read as "low"."""
    from profsight.compare.diff import Change, FindingChange
    from profsight.model.findings import Severity

    def change(before: float, after: float) -> FindingChange:
        return FindingChange("optimizer", "t", Change(before, after), Change(30.0, 10.0))

    fell = change(float(Severity.HIGH), float(Severity.LOW)).to_dict()
    assert fell["severity"] == {"before": "high", "after": "low", "change": -2.0}
    rose = change(float(Severity.MEDIUM), float(Severity.HIGH)).to_dict()
    assert rose["severity"] == {"before": "medium", "after": "high", "change": 1.0}
    assert fell["at_stake_pct"]["change"] == -20.0


def test_diff_formats_match_the_registry() -> None:
    from profsight.cli import choices
    from profsight.compare.diff import BYS

    assert choices.DIFF_FORMATS == ("text", "markdown", "json", "html")
    assert choices.DIFF_SUFFIXES[".htm"] == "html"
    assert BYS == choices.DIFF_BYS


def test_diff_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\x00\x01garbage")
    code, out, err = run(capsys, "diff", str(bad), MINIMAL)
    assert (code, out, err.count("\n")) == (EXIT_INPUT, "", 1)
    assert err.startswith(f"profsight: error: {bad}: ")
    code, out, err = run(capsys, "diff", MINIMAL, str(bad))  # the first input's warnings come first
    assert (code, out) == (EXIT_INPUT, "")
    assert err.splitlines()[-1].startswith(f"profsight: error: {bad}: ")
    assert all(f"{MINIMAL}: warning:" in line for line in err.splitlines()[:-1])
    not_a_report = tmp_path / "diff.json"
    not_a_report.write_text('{\n  "schema": "profsight/diff/1"\n}\n')
    code, _, err = run(capsys, "diff", MINIMAL, str(not_a_report))
    assert code == EXIT_INPUT and "not a report" in err


# ----------------------------------------------------------------------------------- check

_BROKEN_COUNT = re.compile(r"^profsight: (\d+) of (\d+) budgets? broken$")


def _broken(out_err: tuple[str, str]) -> list[str]:
    """The broken budgets: each stated once, on stdout; stderr counts them in one line (a CI
    log that merges the streams reads each budget once)."""
    out, err = out_err
    broken = [
        line.removeprefix("BROKEN ") for line in out.splitlines() if line.startswith("BROKEN")
    ]
    count = _BROKEN_COUNT.match(err.strip())
    assert count is not None and err.count("\n") == 1, err
    assert int(count[1]) == len(broken) and int(count[2]) == len(out.splitlines())
    assert not any(b in err for b in broken), err
    return broken


def test_check_step_time_both_sides(capsys: pytest.CaptureFixture[str]) -> None:
    # the minimal trace's steps are 70 µs on average
    code, out, err = run(capsys, "check", MINIMAL, "--max", "step_time=0.1ms")
    assert (code, err) == (EXIT_OK, "")
    assert out == "ok     step_time is 70 µs, within 0.1ms\n"
    code, out, err = run(
        capsys, "check", MINIMAL, "--max", "step_time=60us", "--max", "step_time=1s"
    )
    assert code == EXIT_BUDGET
    assert _broken((out, err)) == ["step_time is 70 µs, above 60us"]


def test_check_device_busy_both_sides(capsys: pytest.CaptureFixture[str]) -> None:
    # the minimal trace's device is busy 21 of 70 µs a step: 30%
    assert run(capsys, "check", MINIMAL, "--min", "device_busy=25%")[0] == EXIT_OK
    code, out, err = run(capsys, "check", MINIMAL, "--min", "device_busy=60%")
    assert code == EXIT_BUDGET
    assert _broken((out, err)) == ["device_busy is 27.1% of the step, below 60%"]


def test_check_phases_and_findings(
    capsys: pytest.CaptureFixture[str], scenarios: dict[str, str], tmp_path: Path
) -> None:
    slow = scenarios["slow_dataset"]
    code, out, err = run(capsys, "check", slow, "--max", "data_loading=10%")
    assert code == EXIT_BUDGET
    (line,) = _broken((out, err))
    assert re.fullmatch(r"data_loading is \d+\.\d% of the step, above 10%", line), line
    assert run(capsys, "check", slow, "--max", "data_loading=100%")[0] == EXIT_OK
    code, out, err = run(capsys, "check", slow, "--max", "finding:data_loading=5%")
    assert code == EXIT_BUDGET
    stake = r"data_loading has \d+\.\d% of the step at stake, above 5%"
    assert re.fullmatch(stake, _broken((out, err))[0])
    assert run(capsys, "check", slow, "--max", "host_device_sync=5%")[0] == EXIT_OK
    code, out, err = run(capsys, "check", slow, "--fail-on", "severity>=high")
    assert code == EXIT_BUDGET
    gate = "finding data_loading is high, at or above high: "
    assert any(m.startswith(gate) for m in _broken((out, err)))
    # the form without shell metacharacters, and the quoted one, mean the same
    quoted = run(capsys, "check", slow, "--fail-on", "severity>=high")
    assert run(capsys, "check", slow, "--fail-on", "high") == quoted
    assert run(capsys, "check", slow, "--fail-on", "severity:HIGH") == quoted
    healthy = scenarios["healthy_conv"]
    code, out, err = run(capsys, "check", healthy, "--fail-on", "severity>=high")
    assert (code, err) == (EXIT_OK, ""), err
    assert out == "ok     no finding is high or above\n"
    # a saved report checks the same as its trace
    saved = tmp_path / "slow.json"
    assert run(capsys, "explain", slow, "--format", "json", "-o", str(saved))[0] == EXIT_OK
    args = ["--max", "data_loading=10%", "--fail-on", "severity>=medium"]
    assert run(capsys, "check", str(saved), *args)[1:] == run(capsys, "check", slow, *args)[1:]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--max", "data_loading=ten"], "--max data_loading=ten"),
        (["--max", "data_loading"], "--max data_loading"),
        (["--max", "nosuch=10%"], "--max nosuch=10%"),
        (["--max", "step_time=120"], "--max step_time=120"),
        (["--min", "device_busy=60ms"], "--min device_busy=60ms"),
        (["--fail-on", "severity>=huge"], "--fail-on severity>=huge"),
        (["--fail-on", "severity>high"], "--fail-on severity>high"),
        ([], "needs a budget"),
    ],
)
def test_check_bad_syntax_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], argv: list[str], named: str
) -> None:
    # the input does not exist: syntax is checked first
    code, out, err = run(capsys, "check", "missing.json", *argv)
    assert (code, out, err.count("\n")) == (EXIT_USAGE, "", 1)
    assert named in err


def test_check_bad_input_is_exit_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\x00\x01garbage")
    for path in (bad, tmp_path / "missing.json"):
        code, out, err = run(capsys, "check", str(path), "--max", "step_time=1s")
        assert (code, out, err.count("\n")) == (EXIT_INPUT, "", 1)
        assert err.startswith(f"profsight: error: {path}: ")


def test_unknown_budget_name_lists_each_name_once(capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(capsys, "check", "missing.json", "--max", "nosuch=10%")
    names = err.split("use one of: ")[1].strip().split(", ")
    assert "data_loading" in names and len(names) == len(set(names))


@pytest.mark.parametrize("hostile", ["{{js}}", "{{data}}", "{{css}}&<title><script>x()"])
def test_html_pages_fill_each_slot_once(
    hostile: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A file name holding a slot's name stays a file name: the diff page's title shows it,
    escaped, and the page keeps its one stylesheet, script and data (the diff page chained
    str.replace and put its script into the <title>)."""
    source = (DATA / "minimal/minimal.pt.trace.json").read_text()
    before = tmp_path / f"{hostile}.json"
    after = tmp_path / "after.json"
    before.write_text(source)
    after.write_text(source)
    for argv, scripts in (
        (["diff", str(before), str(after), "--format", "html"], 1),
        (["explain", str(before), "--format", "html"], 2),  # the charts' library, the page's
    ):
        code, page, _ = run(capsys, *argv)
        assert code == 0
        title = page.split("<title>", 1)[1].split("</title>", 1)[0]
        assert html.escape(hostile) in title and "{{" in title
        assert "<script>" not in title
        assert page.count("<script>") == scripts and page.count("<style>") == 1
        assert page.count('<script type="application/json"') == 1
        assert "{{js}}" not in page.split("<script>", 1)[1]


#: A committed recording whose report has four findings, each alone in its category (a
#: recording made in the session gave one such finding on a loaded machine).
SEVERAL_CATEGORIES = DATA / "recorded" / "expensive_skip_fixed.plain.pt.trace.json.gz"


def test_diff_of_saved_reports_whose_finding_changes_severity(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`diff --format json` and `diff -o x.html` between two saved reports that keep a
    finding whose severity changes: it once crashed with "-1 is not a valid Severity".
    The second report is the first, saved by `explain`, with two kept findings' severities
    changed (as a loaded machine's recording of the same run can give)."""
    before = tmp_path / "before.json"
    assert run(capsys, "explain", str(SEVERAL_CATEGORIES), "-o", str(before))[0] == EXIT_OK
    doc = json.loads(before.read_text(encoding="utf-8"))
    levels = ["info", "low", "medium", "high"]
    # two findings each the only one of its category (the diff matches kept findings by
    # category and title; a recording can give two of one category, as a loaded one did)
    categories = [f["category"] for f in doc["findings"]]
    alone = [f for f in doc["findings"] if categories.count(f["category"]) == 1]
    assert len(alone) >= 2, categories
    first, second = alone[:2]
    changed = {
        first["category"]: (first["severity"], levels[(levels.index(first["severity"]) + 2) % 4]),
        second["category"]: (
            second["severity"],
            levels[(levels.index(second["severity"]) + 1) % 4],
        ),
    }
    for f in (first, second):
        f["severity"] = changed[f["category"]][1]
    after = tmp_path / "after.json"
    after.write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = run(capsys, "diff", str(before), str(after), "--format", "json")
    assert code == EXIT_OK, err
    kept = {f["category"]: f["severity"] for f in json.loads(out)["findings"]["kept"]}
    for category, (was, now) in changed.items():
        step = levels.index(now) - levels.index(was)
        assert kept[category] == {"before": was, "after": now, "change": float(step)}
    page = tmp_path / "x.html"
    code, _, err = run(capsys, "diff", str(before), str(after), "-o", str(page))
    assert code == EXIT_OK, err
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "not a valid Severity" not in text
    data = json.loads(text.split('id="ps-diff-data">')[1].split("</script>")[0])
    html_kept = {f["category"]: f["severity"] for f in data["diff"]["findings"]["kept"]}
    assert html_kept == kept
