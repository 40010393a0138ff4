"""The HTML report, opened in a real browser (Playwright driving Debian's chromium).

GIVEN a report rendered to a file, WHEN the page is opened from disk, THEN it loads with no
error, no network request and no Content-Security-Policy violation, its charts (uPlot,
inlined) and table work, and hostile names stay text.

The uPlot charts draw on a canvas: the tests read what they draw from the page's
``window.profsight.charts`` (each one's data, series and tick labels) and from the tooltip a
hover shows at a data point.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

import profsight
from profsight.api import Report, explain_job
from profsight.cli.main import main
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS
from profsight.names import HTML_NAME
from profsight.renderers.html import (
    MAX_TABLE_ROWS,
    notebook_html,
    page_data,
)
from profsight.renderers.job_html import job_page_data
from profsight.renderers.template import script_json
from profsight.samples import sample_trace
from profsight.units import short_bytes, short_time
from test_long_names import LONG, record
from tracebuilder import TraceBuilder

from conftest import DATA

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
MINIMAL = DATA / "minimal/minimal.pt.trace.json"
NCCL = DATA / "real/nccl_data.json.gz"  # rank 0 of 2, NCCL all-reduces and broadcasts
FP32 = DATA / "gpu_traces/incredere__gpu-profiling-pytorch-lab/fp32.pt.trace.json.gz"
#: A Switch Transformer on an A100: CPU and CUDA memory columns, 641 rows, long kernel names.
SWITCH = (
    DATA / "gpu_traces/CodingPlatelets__SwitchTransformers/"
    "trace_128token_100Kpar_4exp_4batch_128seq.json.gz"
)
REAL_JOB = DATA / "real/job"  # two ranks of a 128-rank NCCL job
# an NCCL all-reduce kernel with nothing on it or its caller that gives its size
NO_SIZE = DATA / "real/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz"
#: A phone's width, in CSS pixels.
NARROW = 420
HOSTILE = ("<script>alert(1)</script>", '<img src=x onerror="window.__pwned=1">', '"quotes"')


# ---- no browser needed ---------------------------------------------------------------------


def test_script_json_cannot_close_its_element() -> None:
    text = script_json({"a": "</script><!-- & \u2028\u2029 >"})
    assert not any(c in text for c in "<>&\u2028\u2029")
    assert json.loads(text) == {"a": "</script><!-- & \u2028\u2029 >"}


def test_page_caps_table_rows(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.step(1, 0, 30_000)
    for i in range(MAX_TABLE_ROWS + 300):
        t.host(f"op_{i}", 1 + i * 10, 5 + i % 7)
    report = profsight.explain(t.write(tmp_path / "wide.pt.trace.json"))
    table = page_data(report)["table"]
    assert table["total_rows"] > MAX_TABLE_ROWS == len(table["rows"])


def test_cli_writes_html_from_the_suffix(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    assert main(["explain", str(MINIMAL), "-o", str(target)]) == 0
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'id="profsight-data"' in page


def test_notebook_repr_is_a_framed_page() -> None:
    report = profsight.explain(MINIMAL)
    shown = report._repr_html_()
    assert shown == notebook_html(report)
    assert shown.startswith("<iframe srcdoc=") and "<script" not in shown


# ---- in the browser ------------------------------------------------------------------------


@dataclass
class Opened:
    page: Any
    report: Any
    """The `Report` (or the `JobReport`) the page shows."""
    url: str
    size: int
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def violations(self) -> list[str]:
        """The Content-Security-Policy directives the page broke so far."""
        return self.page.evaluate("window.__csp || []")  # type: ignore[no-any-return]


#: Records the page's CSP violations (an init script runs before the page's own, outside it).
WATCH_CSP = """document.addEventListener('securitypolicyviolation',
    e => (window.__csp = window.__csp || []).push(e.effectiveDirective))"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if os.environ.get("CI"):  # in CI the browser tests must run, not skip
        import playwright.sync_api as sync_api

        assert Path(CHROMIUM).exists(), "CI needs /usr/bin/chromium (scripts/setup.sh dev)"
    else:
        sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
        if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
            pytest.skip("chromium is not installed (scripts/setup.sh dev installs it as root)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def pages(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    folder = tmp_path_factory.mktemp("html")
    opened: list[Any] = []

    def open_report(report: Any, name: str, width: int = 1280) -> Opened:
        path = folder / f"{name}.html"
        path.write_text(report.html(), encoding="utf-8")  # a Report's or a JobReport's page
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.add_init_script(WATCH_CSP)
        opened.append(page)
        o = Opened(page, report, path.as_uri(), path.stat().st_size)
        page.on("console", lambda m: o.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: o.errors.append(str(e)))
        page.on("request", lambda r: o.requests.append(r.url))

        def on_dialog(d: Any) -> None:
            o.dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", on_dialog)
        page.goto(o.url)
        page.wait_for_load_state("load")
        return o

    yield open_report
    for page in opened:
        page.close()


@pytest.fixture(scope="module")
def sample(pages: Any) -> Opened:
    return pages(profsight.explain(sample_trace()), "sample")  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def minimal(pages: Any) -> Opened:
    return pages(profsight.explain(MINIMAL), "minimal")  # type: ignore[no-any-return]


def chart(page: Any, chart_id: str) -> dict[str, Any]:
    """The uPlot chart `chart_id` as drawn: its series' labels, data, width (and its box's),
    the tick labels of each axis (uPlot's own list of what it drew)."""
    return page.evaluate(  # type: ignore[no-any-return]
        """id => { const u = window.profsight.charts[id];
            return u && u.root.id === id ? {labels: u.series.slice(1).map(s => s.label),
                data: u.data, width: u.width, box: u.root.parentElement.clientWidth,
                ticks: u.axes.map(a => a._values)} : null; }""",
        chart_id,
    )


def tooltip(page: Any) -> dict[str, Any] | None:
    """The tooltip's name and its rows' values by field; None when it is hidden."""
    return page.evaluate(  # type: ignore[no-any-return]
        """() => { const tip = document.getElementById('ps-tooltip');
            return tip.hidden ? null : {name: tip.querySelector('.ps-tip-name').textContent,
                fields: Object.fromEntries([...tip.querySelectorAll('tr[data-field]')]
                    .map(tr => [tr.dataset.field, tr.cells[1].textContent]))}; }"""
    )


def hover_chart(page: Any, chart_id: str, x: float, y: float) -> dict[str, Any] | None:
    """The tooltip with the mouse on the point (`x`, `y`), in data units, of a uPlot chart."""
    at = page.evaluate(
        """([id, x, y]) => { const u = window.profsight.charts[id];
            u.root.scrollIntoView({block: 'center'});
            const r = u.over.getBoundingClientRect();
            return [r.left + u.valToPos(x, 'x'), r.top + u.valToPos(y, 'y')]; }""",
        [chart_id, x, y],
    )
    page.mouse.move(*at)
    return tooltip(page)


def percent(share: float) -> str:
    """A share as the page's tooltips print it (0.25 as 25.0%)."""
    return f"{share * 100:.1f}%"


def visible_cells(page: Any, key: str) -> list[str]:
    """The text of column `key` in the table's visible rows, top to bottom."""
    return page.evaluate(  # type: ignore[no-any-return]
        """key => {
            const i = [...document.querySelectorAll('#ps-table th')]
                .findIndex(th => th.dataset.key === key);
            return [...document.querySelectorAll('#ps-table tbody tr')]
                .filter(tr => !tr.hidden).map(tr => tr.cells[i].textContent);
        }""",
        key,
    )


def test_sample_loads_offline_without_errors(sample: Opened) -> None:
    assert sample.errors == []
    assert sample.requests == [sample.url]
    assert sample.violations() == []
    assert sample.size < 3 * 2**20
    page = sample.page
    assert page.evaluate("typeof uPlot") == "function"
    assert page.locator("#ps-summary li").count() == len(sample.report.summary)
    assert page.locator("#ps-verdict").is_visible()
    assert page.locator("#ps-busy").is_hidden()  # a CPU-only run: no device timeline
    assert chart(page, "ps-busy-chart") is None
    memory = chart(page, "ps-memory-chart")
    cpu = sample.report.timelines.memory["cpu"]  # type: ignore[union-attr]
    assert memory["labels"] == ["CPU memory allocated"]
    assert memory["data"][1] == pytest.approx(list(cpu), abs=1)
    order = page.evaluate(
        "[...document.querySelectorAll('main > section:not([hidden])')].map(s => s.id)"
    )
    assert order[:5] == ["ps-verdict", "ps-findings", "ps-breakdown", "ps-tree", "ps-top-ops"]


def test_minimal_has_device_charts(minimal: Opened) -> None:
    assert minimal.errors == []
    assert minimal.requests == [minimal.url]
    assert minimal.violations() == []
    page = minimal.page
    t = minimal.report.timelines
    assert t is not None
    busy = chart(page, "ps-busy-chart")
    assert busy["labels"] == ["CUDA busy share"] and busy["data"][1] == pytest.approx(
        t.device_busy, abs=1e-3
    )
    # two profiler steps, each a band: the tooltip names the step the mouse is in
    for name, start, end, *_ in t.steps:
        tip = hover_chart(page, "ps-busy-chart", (start + end) / 2, 0.5)
        assert tip is not None and tip["fields"]["step"] == name
    assert len(t.steps) == 2
    kernels = page_data(minimal.report)["top_kernels"]
    assert page.locator("#ps-kernels-chart .ps-bar").count() == len(kernels) == 3
    assert page.locator("#ps-memory").is_hidden() == (not t.memory)


#: A real V100 trace whose GPU runs behind its host and whose launch queue fills (HTA).
LAGGING = (
    DATA / "shared/traces/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
)


def test_a_lagging_gpus_steps_reach_the_end_of_its_work(pages: Any) -> None:
    """The busy chart runs until the device's last item ends (the host stopped 89 ms
    earlier); each step's band ends when the device finished it, the host's range drawn as a
    bar above it; the launch queue's depth has its own chart, up to the 1022 the trace
    plateaus at."""
    report = profsight.explain(str(LAGGING))
    o = pages(report, "lagging")
    assert o.errors == [] and o.violations() == []
    page = o.page
    t = report.timelines
    assert t is not None and t.queue_limit == 1022 and len(t.steps) == 5
    # the last step ends with the device's last item of it, 89 ms after its host range
    _, _, end, _, host_end = t.steps[-1]
    events = profsight.load(str(LAGGING)).events
    device_end = float(events.end_of(events.mask(DEVICE_WORK_KINDS)).max()) / 1000.0
    assert end + t.start_us == pytest.approx(device_end, abs=0.01)
    assert end - host_end > 80_000.0
    busy = chart(page, "ps-busy-chart")
    assert busy["data"][0][-1] >= end - t.bucket_us  # the chart runs to the device's end
    # each step a band on the device's clock: over the middle of each, its name
    for name, start, stop, host_start, host_stop in t.steps:
        tip = hover_chart(page, "ps-busy-chart", (start + stop) / 2, 0.5)
        assert tip is not None and tip["fields"]["step"] == name
        assert tip["fields"]["host_range"] == short_time(host_stop - host_start)
    # after the host's range of the last step, in a slice's middle: the device catches up
    i = int((host_end + end) / 2 // t.bucket_us)
    tip = hover_chart(page, "ps-busy-chart", (i + 0.5) * t.bucket_us, 0.5)
    assert tip is not None and tip["fields"]["step"] == t.steps[-1][0]
    assert tip["fields"]["host"].startswith("done")
    assert tip["fields"]["busy"] == percent(t.device_busy[i])
    queue = chart(page, "ps-queue-chart")
    assert queue["labels"] == ["launched items waiting"]
    assert queue["data"][1] == pytest.approx(t.queue_depth, abs=1e-3)
    assert max(queue["data"][1]) == 1022


def test_charts_have_their_elements(sample: Opened) -> None:
    page = sample.page
    data = page_data(sample.report)["breakdown"]
    bars = [*data["steps"], data["average"]]
    phases = [p for p in data["phases"] if any(b["host_us"].get(p["id"], 0) > 0 for b in bars)]
    drawn = chart(page, "ps-breakdown-chart")
    assert len(drawn["data"][0]) == len(sample.report.breakdown.steps) + 1  # type: ignore[union-attr]
    # a series per phase with time, last phase first; each bar is the running total
    assert drawn["labels"] == [p["label"] for p in reversed(phases)]
    assert drawn["data"][1] == pytest.approx([sum(b["host_us"].values()) for b in bars], abs=0.01)
    assert drawn["ticks"][0][-1] == "average"
    assert page.locator("#ps-icicle .ps-node").count() > 0
    assert page.locator("#ps-ops-chart .ps-bar").count() == len(page_data(sample.report)["top_ops"])
    assert page.locator("#ps-ops-chart .ps-bar").count() > 0


def test_breakdown_hover_names_the_phase(sample: Opened) -> None:
    page = sample.page
    average = page_data(sample.report)["breakdown"]["average"]
    optimizer = average["host_us"]["optimizer"]
    below = (
        sum(us for phase, us in average["host_us"].items() if phase in ("data_loading", "forward"))
        + average["host_us"]["backward"]
    )
    n = len(sample.report.breakdown.steps)  # type: ignore[union-attr]
    tip = hover_chart(page, "ps-breakdown-chart", n, below + optimizer / 2)  # the average
    assert tip is not None and tip["name"] == "average: optimizer step"
    assert tip["fields"]["time"] == short_time(optimizer)
    assert tip["fields"]["share"] == percent(optimizer / average["wall_us"])
    page.mouse.move(0, 0)
    assert tooltip(page) is None


def test_header_click_sorts_the_rows(sample: Opened) -> None:
    page = sample.page
    rows = sample.report.rows
    before = visible_cells(page, "name")[0]
    page.click("#ps-table th[data-key='calls']")
    calls = [int(c) for c in visible_cells(page, "calls")]
    assert calls == sorted(calls, reverse=True) and calls[0] == max(e.row.calls for e in rows)
    assert visible_cells(page, "name")[0] != before
    page.click("#ps-table th[data-key='calls']")
    assert [int(c) for c in visible_cells(page, "calls")] == sorted(calls)
    page.click("#ps-table th[data-key='self_cpu_us']")
    top = max(rows, key=lambda e: e.row.self_cpu_us).row.name
    assert visible_cells(page, "name")[0] == top
    assert page.get_attribute("#ps-table th[data-key='self_cpu_us']", "aria-sort") == "descending"


def test_kind_and_text_filters(sample: Opened) -> None:
    page = sample.page
    rows = sample.report.rows
    page.select_option("#ps-kind-filter", "aten")
    kinds = visible_cells(page, "kind")
    assert set(kinds) == {"aten"}
    assert len(kinds) == sum(e.explanation.kind.value == "aten" for e in rows)
    page.fill("#ps-text-filter", "Conv")
    names = visible_cells(page, "name")
    expected = [
        e.row.name
        for e in rows
        if e.explanation.kind.value == "aten" and "conv" in e.row.name.lower()
    ]
    assert sorted(names) == sorted(expected) and names
    assert page.inner_text("#ps-table-count") == f"{len(names)} of {len(rows)} rows"
    page.select_option("#ps-kind-filter", "")
    assert len(visible_cells(page, "name")) == sum("conv" in e.row.name.lower() for e in rows)
    page.fill("#ps-text-filter", "")
    assert len(visible_cells(page, "name")) == len(rows)


def test_icicle_hover_shows_the_node(sample: Opened) -> None:
    page = sample.page
    rect = page.locator("#ps-icicle .ps-node[data-depth='1']").first
    name = rect.get_attribute("data-name")
    node = next(c for c in sample.report.tree.root.children if c.name == name)  # type: ignore[union-attr]
    rect.hover()
    tip = page.locator("#ps-tooltip")
    assert tip.is_visible()
    assert tip.locator(".ps-tip-name").inner_text() == name
    assert tip.locator("tr[data-field='cpu_total'] td").nth(1).inner_text() == short_time(
        node.cpu_total_us
    )
    assert tip.locator("tr[data-field='cpu_self'] td").nth(1).inner_text() == short_time(
        node.cpu_self_us
    )
    assert tip.locator("tr[data-field='calls'] td").nth(1).inner_text() == str(node.calls)
    page.mouse.move(0, 0)
    assert tip.is_hidden()


def test_icicle_click_zooms_in_and_out(sample: Opened) -> None:
    page = sample.page
    root = page.locator("#ps-tree-root")
    assert root.inner_text() == "(all threads)"
    rect = page.locator("#ps-icicle .ps-node[data-depth='1']").first
    name = rect.get_attribute("data-name")
    rect.click()
    assert root.inner_text() == name
    assert page.get_attribute("#ps-icicle .ps-node[data-depth='0']", "data-name") == name
    assert page.locator("#ps-tree-crumbs .ps-crumb").count() == 2
    page.click("#ps-icicle .ps-node[data-depth='0']")
    assert root.inner_text() == "(all threads)"
    page.locator("#ps-icicle .ps-node[data-depth='2']").first.click()
    assert page.locator("#ps-tree-crumbs .ps-crumb").count() == 3
    page.locator("#ps-tree-crumbs .ps-crumb").first.click()
    assert root.inner_text() == "(all threads)"


def test_findings_expand_to_evidence_and_fix(sample: Opened) -> None:
    page = sample.page
    findings = sample.report.findings
    details = page.locator("#ps-findings details.ps-finding")
    assert details.count() == len(findings) > 1
    second = details.nth(1)
    assert second.locator(".ps-recommendation").is_hidden()
    second.locator("summary").click()
    assert second.locator(".ps-recommendation").is_visible()
    assert findings[1].recommendation in second.locator(".ps-recommendation").inner_text()
    assert second.locator(".ps-evidence tr").count() == len(findings[1].evidence)


def test_the_policy_runs_only_the_pages_own_scripts(browser: Any, tmp_path: Path) -> None:
    """The CSP names each inline script by its hash: the page's own run, with no violation;
    a script put into the page, or one of the page's changed, does not."""
    text = profsight.explain(MINIMAL).html()
    own = "<script>/* profsight HTML report"
    assert text.count(own) == 1 and "'unsafe-inline'" not in text
    changed = text.replace(own, "<script>window.__changed = 1; /* profsight HTML report")
    changed = changed.replace("</body>", "<script>window.__injected = 1</script></body>")
    for name, page_text, blocked in [("kept", text, []), ("changed", changed, [1, 1])]:
        path = tmp_path / f"{name}.html"
        path.write_text(page_text, encoding="utf-8")
        page = browser.new_page()
        try:
            page.add_init_script(WATCH_CSP)
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            ran = page.evaluate(
                "[typeof uPlot, typeof window.profsight, window.__changed, window.__injected]"
            )
            violations = page.evaluate("window.__csp || []")
            if not blocked:
                assert ran == ["function", "object", None, None] and violations == []
            else:  # uPlot still runs; the changed script and the injected one do not
                assert ran == ["function", "undefined", None, None]
                assert violations == ["script-src-elem"] * len(blocked)
        finally:
            page.close()


def test_charts_follow_the_window_width(pages: Any, fp32_report: Report) -> None:
    """Made at 1280 px, then the window narrows to a phone's: each uPlot chart takes its
    box's new width, the HTML bars and the icicle fit, and nothing scrolls sideways."""
    o = pages(fp32_report, "fp32-resized")
    page = o.page
    ids = page.evaluate("Object.keys(window.profsight.charts)")
    assert set(ids) == {
        "ps-breakdown-chart",
        "ps-busy-chart",
        "ps-queue-chart",
        "ps-memory-chart",
        "ps-copy-chart",
        "ps-roofline-chart",
    }
    wide = {i: chart(page, i)["width"] for i in ids}
    assert all(w > 1000 for w in wide.values())
    page.set_viewport_size({"width": NARROW, "height": 900})
    resized = """Object.values(window.profsight.charts)
        .every(u => u.width === u.root.parentElement.clientWidth)"""
    for _ in range(40):  # the page redraws 150 ms after the last resize event
        if page.evaluate(resized):
            break
        page.wait_for_timeout(50)
    for i in ids:
        drawn = chart(page, i)
        assert drawn["width"] == drawn["box"] < NARROW
        assert drawn["data"] and len(drawn["data"]) == len(drawn["labels"]) + 1
    fits = page.evaluate(
        """() => [...document.querySelectorAll('#ps-icicle, .ps-bars')].map(c =>
            c.scrollWidth <= c.clientWidth && c.getBoundingClientRect().right <= innerWidth)"""
    )
    assert fits and all(fits)
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1] == NARROW
    assert o.errors == [] and o.violations() == []


def test_theme_toggle_draws_the_charts_again(pages: Any, fp32_report: Report) -> None:
    """A canvas takes its colours once: the toggle makes each uPlot chart anew, with the
    dark theme's axis colour, and the same data."""
    o = pages(fp32_report, "fp32-themed")
    page = o.page
    axis_colour = "window.profsight.charts['ps-busy-chart'].axes[0].stroke(null, 0)"
    light = page.evaluate(axis_colour)
    before = chart(page, "ps-busy-chart")
    page.click("#ps-theme-toggle")
    assert page.evaluate(axis_colour) not in (light, "")
    assert chart(page, "ps-busy-chart") == before
    assert page.locator(".uplot").count() == 6
    page.click("#ps-theme-toggle")
    assert page.evaluate(axis_colour) == light
    assert o.errors == []


def test_theme_toggle_switches_colours(sample: Opened) -> None:
    page = sample.page
    bg = "getComputedStyle(document.documentElement).getPropertyValue('--bg').trim()"
    light = page.evaluate(bg)
    page.click("#ps-theme-toggle")
    assert page.get_attribute("html", "data-theme") == "dark"
    assert page.evaluate(bg) != light
    page.click("#ps-theme-toggle")
    assert page.evaluate(bg) == light


def test_hostile_names_render_as_text(pages: Any, tmp_path: Path) -> None:
    t = TraceBuilder()
    t.gpu()
    t.step(1, 0, 1000)
    for i, name in enumerate(HOSTILE):
        t.host(name, 10 + i * 300, 250)
    t.kernel(HOSTILE[1], launch_ts=20, ts=30, dur=100)
    trace = t.write(tmp_path / 'evil<b>"x".pt.trace.json')
    o = pages(profsight.explain(trace), "hostile")
    page = o.page
    assert o.errors == [] and o.dialogs == []
    assert o.requests == [o.url]
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("img").count() == 0
    assert page.locator("script").count() == 3  # the data, uPlot and the page's own script
    table = page.inner_text("#ps-table")
    for name in HOSTILE:
        assert name in table
    assert 'evil<b>"x"' in page.inner_text("#ps-summary")
    assert page.title() == 'profsight: evil<b>"x".pt.trace.json'
    hover = page.locator("#ps-icicle .ps-node[data-name='\"quotes\"']")
    hover.hover()
    assert page.locator("#ps-tooltip .ps-tip-name").inner_text() == '"quotes"'


# ---- a job of many ranks -------------------------------------------------------------------


def test_job_page_shows_ranks_side_by_side(
    browser: Any, lightning_job: Path, tmp_path: Path
) -> None:
    report = explain_job(lightning_job)
    path = tmp_path / "job.html"
    path.write_text(report.html(), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.add_init_script(WATCH_CSP)
    errors: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    try:
        assert errors == [] and requests == [path.as_uri()]
        assert page.evaluate("window.__csp || []") == []
        assert page.locator("h1").inner_text() == "profsight job report"
        bars = page.locator("#ps-ranks-chart .ps-rank-bar")
        assert bars.count() == 2
        assert page.locator(".ps-rank-bar.ps-straggler").get_attribute("data-rank") == "1"
        # rank 0's bar is mostly waiting for the all-reduce
        wait = page.locator(".ps-rank-bar[data-rank='0'] .ps-seg[data-phase='communication']")
        whole = page.locator(".ps-rank-bar[data-rank='0'] .ps-seg")
        widths = [whole.nth(i).bounding_box()["width"] for i in range(whole.count())]
        assert wait.bounding_box()["width"] > 0.5 * sum(widths)
        # each bar as long as its rank's step: the bars' lengths stand as the steps do
        lengths = [
            sum(s.bounding_box()["width"] for s in bar.locator(".ps-seg").all())
            for bar in bars.all()
        ]
        steps = [v.step_us for v in report.ranks]
        assert lengths[0] / lengths[1] == pytest.approx(steps[0] / steps[1], rel=0.02)
        wait.hover()
        assert page.locator("#ps-tooltip .ps-tip-name").inner_text() == (
            "rank 0: waiting for collectives (all-reduce, ...) to finish"
        )
        rows = page.locator("#ps-rank-table tbody tr")
        assert rows.count() == 2
        assert "straggler" in page.inner_text(
            "#ps-rank-table tr[data-rank='1'] td[data-field='rank']"
        )
        assert page.locator("#ps-collective-table tr[data-operation='all_reduce']").count() == 1
        finding = page.locator("details.ps-finding[data-category='straggler']")
        assert finding.count() == 1 and "Rank 1 is a straggler" in finding.inner_text()
        assert page.locator("details.ps-rank").count() == 2
        assert (
            page.locator("#ps-tree").is_hidden() and page.locator("#ps-table-section").is_hidden()
        )
    finally:
        page.close()


# ---- real traces: a phone's width, evidence, axes, collectives -------------------------------


@pytest.fixture(scope="module")
def nccl_report() -> Report:
    return profsight.explain(NCCL)


@pytest.fixture(scope="module")
def fp32_report() -> Report:
    return profsight.explain(FP32)


@pytest.fixture(scope="module")
def real_job_report() -> Any:
    return explain_job(REAL_JOB)


@pytest.fixture(scope="module")
def nccl(pages: Any, nccl_report: Report) -> Opened:
    return pages(nccl_report, "nccl")  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def fp32(pages: Any, fp32_report: Report) -> Opened:
    return pages(fp32_report, "fp32")  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def real_job(pages: Any, real_job_report: Any) -> Opened:
    return pages(real_job_report, "job-real")  # type: ignore[no-any-return]


def open_all_findings(page: Any) -> None:
    """Every finding expanded, as a reader who clicks them all sees the page."""
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")


@pytest.mark.parametrize("name", ["nccl", "fp32", "job"])
def test_no_sideways_scroll_at_a_phones_width(
    pages: Any, name: str, request: pytest.FixtureRequest
) -> None:
    report = request.getfixturevalue(
        {"nccl": "nccl_report", "fp32": "fp32_report", "job": "real_job_report"}[name]
    )
    o = pages(report, f"{name}-narrow", width=NARROW)
    page = o.page
    open_all_findings(page)
    assert o.errors == [] and o.violations() == []
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1] == NARROW
    # every uPlot chart as wide as its box, which fits the window
    ids = page.evaluate("Object.keys(window.profsight.charts)")
    assert bool(ids) == (name != "job")
    for chart_id in ids:
        drawn = chart(page, chart_id)
        assert drawn["width"] == drawn["box"] < NARROW, chart_id
    # the wide tables are whole: they scroll sideways in their own box
    wide = "#ps-collective-table" if name != "fp32" else "#ps-table"
    boxes = page.evaluate(
        """sel => { const t = document.querySelector(sel), box = t.parentElement;
            return [t.scrollWidth, box.clientWidth, getComputedStyle(box).overflowX]; }""",
        wide,
    )
    assert boxes[0] > boxes[1] and boxes[2] == "auto"


def evidence_cells(page: Any, finding: int) -> list[dict[str, Any]]:
    """Per evidence row of the `finding`-th finding: its cells' texts, its text, the label's
    title."""
    return page.evaluate(  # type: ignore[no-any-return]
        """i => [...document.querySelectorAll('details.ps-finding')[i]
                .querySelectorAll('.ps-evidence tr')].map(tr => ({
            cells: [...tr.cells].map(td => td.textContent),
            text: tr.textContent,
            title: (tr.querySelector('td.ps-evidence-label') || {}).title || '',
        }))""",
        finding,
    )


# nccl and fp32: five items under "measured"; fp32: four sgemm kernels, each its own row;
# the job: two of rank 1's rows, their label cut short at 80 characters (its third is its
# time in no recorded range, since self segments that overlap are counted once)
@pytest.mark.parametrize(("name", "named"), [("nccl", 0), ("fp32", 4), ("real_job", 2)])
def test_each_evidence_label_shows_once(
    name: str, named: int, request: pytest.FixtureRequest
) -> None:
    o: Opened = request.getfixturevalue(name)
    findings = o.report.findings
    shown_in_label = 0
    for i, f in enumerate(findings):
        rows = evidence_cells(o.page, i)
        assert len(rows) == len(f.evidence)
        cells = [c for r in rows for c in r["cells"]]
        for label in {e.label for e in f.evidence}:
            assert cells.count(label) == 1, (f.title, label)  # "measured" x5: once
        for e, row in zip(f.evidence, rows, strict=True):
            for source in e.rows:  # the row or node behind the number
                start = source[:40]
                assert row["text"].count(start) <= 1, (f.title, source)
                assert start in row["text"], (f.title, source)  # still shown
                if e.label.endswith("…") and start in e.label:
                    assert source in row["title"]  # the whole name, where the label cuts it
                shown_in_label += start in e.label
    assert shown_in_label == named


AXIS_LABEL = re.compile(
    r"^\d+(\.\d+)?(e[+-]?\d+)? ?(µs|ms|s|%|B|KiB|MiB|GiB|GB/s|items|[kMGTP]?FLOP/s|FLOP/B)$"
)


@pytest.mark.parametrize(
    ("name", "charts"),
    [
        (
            "nccl",
            {
                "ps-breakdown-chart",
                "ps-ops-chart",
                "ps-kernels-chart",
                "ps-busy-chart",
                "ps-queue-chart",
                "ps-copy-chart",
            },
        ),
        (
            "fp32",
            {
                "ps-breakdown-chart",
                "ps-ops-chart",
                "ps-kernels-chart",
                "ps-busy-chart",
                "ps-queue-chart",
                "ps-memory-chart",
                "ps-copy-chart",
                "ps-roofline-chart",
            },
        ),
        ("real_job", {"ps-ranks-chart"}),
    ],
)
def test_every_chart_axis_has_its_unit(
    name: str, charts: set[str], request: pytest.FixtureRequest
) -> None:
    """Every value axis, a uPlot one (its ticks) or an HTML bar chart's scale, has numbers
    with their unit; the breakdown's x axis names the steps."""
    o: Opened = request.getfixturevalue(name)
    axes: dict[str, list[list[str]]] = o.page.evaluate(
        """() => Object.fromEntries([
            ...Object.entries(window.profsight.charts).map(([id, u]) =>
                [id, u.axes.map(a => a._values)]),
            ...[...document.querySelectorAll('.ps-bars[id]')].map(c =>
                [c.id, [[...c.querySelectorAll('.ps-axis-label')].map(t => t.textContent)]]),
        ])"""
    )
    assert set(axes) == charts
    if "ps-breakdown-chart" in axes:
        steps, values = axes.pop("ps-breakdown-chart")
        assert steps[-1] == "average" and all(re.match(r"^#\d+$", s) for s in steps[:-1])
        axes["ps-breakdown-chart"] = [values]
    for drawn, labels in axes.items():
        for ticks in labels:
            # a logarithmic axis (the roofline's) leaves the ticks between decades blank
            labelled = [label for label in ticks if label]
            assert len(labelled) >= 2, drawn
            for label in labelled:
                assert AXIS_LABEL.match(label), (drawn, label)
    if name != "real_job":
        data = page_data(o.report)
        assert axes["ps-ops-chart"] == [["0 ms", short_time(data["top_ops"][0]["us"])]]
        assert axes["ps-kernels-chart"] == [["0 ms", short_time(data["top_kernels"][0]["us"])]]
        time, share = axes["ps-busy-chart"]
        assert share[0] == "0%" and share[-1] == "100%"
        assert time[0] in ("0 ms", "0 s")


def collective_cells(page: Any) -> dict[str, dict[str, dict[str, str]]]:
    """Per operation, per column heading: the cell's text and title."""
    return page.evaluate(  # type: ignore[no-any-return]
        """() => {
            const heads = [...document.querySelectorAll('#ps-collective-table th')]
                .map(th => th.textContent);
            return Object.fromEntries([...document.querySelectorAll(
                '#ps-collective-table tbody tr')].map(tr => [tr.dataset.operation,
                Object.fromEntries([...tr.cells].map((td, i) =>
                    [heads[i], {text: td.textContent, title: td.title}]))]));
        }"""
    )


def decimal(text: str) -> float:
    """``19.5 MiB`` as 19.5 * 2**20 bytes (sizes are IEC), ``5.75 GB/s`` as 5.75 GB/s (rates
    are decimal, as links are quoted)."""
    number, unit = text.split(" ")
    scale = {"B": 1.0, "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30}
    scale |= {"KB/s": 1e-6, "MB/s": 1e-3, "GB/s": 1.0}
    return float(number) * scale[unit]


def test_collectives_show_their_size_and_bandwidth(nccl: Opened) -> None:
    table = collective_cells(nccl.page)
    operations = page_data(nccl.report)["collectives"]
    assert {o["operation"] for o in operations} == set(table) == {"all_reduce", "broadcast"}
    for o in operations:
        row = table[o["operation"]]
        assert o["bytes"] > 0 and o["bus_gbps"] > 0
        assert decimal(row["size per call"]["text"]) == pytest.approx(o["bytes"], rel=5e-3)
        assert decimal(row["bus bandwidth"]["text"]) == pytest.approx(o["bus_gbps"], rel=5e-3)
        assert row["time per call"]["text"] == short_time(o["transfer_us"])
    # the trace's own calls: 5 all-reduces a step of 8.2 to 31.5 MB, 2 broadcasts a step
    calls = nccl.report.communication.collectives
    sizes = [c.nbytes for c in calls if c.operation == "all_reduce"]
    assert len(sizes) == 15 and min(sizes) > 0
    mean = sum(sizes) / len(sizes)
    assert decimal(table["all_reduce"]["size per call"]["text"]) == pytest.approx(mean, rel=5e-3)
    assert table["broadcast"]["size per call"]["text"] == "104 KiB"


def test_an_unknown_size_says_why(pages: Any) -> None:
    report = profsight.explain(NO_SIZE)
    (operation,) = page_data(report)["collectives"]
    assert operation["bytes"] is None and operation["bus_gbps"] is None
    o = pages(report, "no-size")
    row = collective_cells(o.page)["all_reduce"]
    assert row["size per call"]["text"] == row["bus bandwidth"]["text"] == "–"
    assert "no message size" in row["size per call"]["title"]
    assert "message size" in row["bus bandwidth"]["title"]
    assert row["time per call"]["text"] == "50 µs" and row["time per call"]["title"] == ""


def test_job_page_data_knows_its_collectives_and_names_cut_labels(real_job_report: Any) -> None:
    data = job_page_data(real_job_report)
    assert data["collectives"] and all(o["why"] == {} for o in data["collectives"])
    evidence = [e for f in data["findings"] for e in f["evidence"] if e["label"].endswith("…")]
    assert evidence and all(e["rows"] == [] and e["title"] for e in evidence)


# ---- a phone's and a laptop's width: numbers whole, nothing cut at the edge ----------------

#: A duration as the page prints it (812 µs, 12.3 ms, 1.52 s), anywhere in its text.
DURATION = r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ns|µs|ms|s)(?![\w/])"
LAPTOP = 1280


def layout(page: Any) -> dict[str, Any]:
    """What a reader sees of the page's layout: its width and the window's; each duration in
    the page's visible text that spans two lines (a Range's client rects at two heights); the
    "What it is" cells whose text is wider than the cell; the profiler table's width and its
    box's; each uPlot chart's width and its box's; the icicle's right edge."""
    return page.evaluate(  # type: ignore[no-any-return]
        """pattern => {
            const re = new RegExp(pattern, 'gu');
            const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
            const broken = [];
            let durations = 0;
            for (let n = walker.nextNode(); n; n = walker.nextNode()) {
                const box = n.parentElement;
                if (!box.getClientRects().length || box.closest('[hidden], #ps-tooltip')) continue;
                for (const m of n.textContent.matchAll(re)) {
                    const r = document.createRange();
                    r.setStart(n, m.index);
                    r.setEnd(n, m.index + m[0].length);
                    const tops = new Set([...r.getClientRects()].filter(x => x.width > 0)
                        .map(x => Math.round(x.top)));
                    durations += 1;
                    if (tops.size > 1) broken.push(m[0] + ' in ' + box.className);
                }
            }
            const table = document.querySelector('#ps-table');
            const icicle = document.querySelector('#ps-icicle');
            return {
                page: [document.documentElement.scrollWidth, innerWidth],
                durations: durations,
                broken: broken,
                clipped: [...document.querySelectorAll('#ps-table td.ps-meaning')]
                    .filter(td => td.scrollWidth > td.clientWidth).map(td => td.textContent),
                table: table && [table.scrollWidth, table.parentElement.clientWidth],
                charts: Object.values(window.profsight.charts).map(u =>
                    [u.width, u.root.parentElement.clientWidth]),
                icicle: icicle && icicle.getBoundingClientRect().right,
            };
        }""",
        DURATION,
    )


@pytest.mark.parametrize("width", [NARROW, LAPTOP])
@pytest.mark.parametrize("name", ["sample", "switch"])
def test_numbers_stay_whole_and_nothing_spills(
    pages: Any, name: str, width: int, request: pytest.FixtureRequest
) -> None:
    """At a phone's and a laptop's width, on the bundled sample (CPU) and a GPU trace whose
    table has every memory column, every finding open: no duration breaks over two lines
    ("21 / .9 / ms"), nothing reaches past the window, the charts and the icicle fit their
    boxes, the "What it is" cells wrap; at a laptop's width the whole profiler table is in
    view, "What it is" included."""
    report = request.getfixturevalue(f"{name}_report")
    o = pages(report, f"{name}-{width}-layout", width=width)
    open_all_findings(o.page)
    seen = layout(o.page)
    assert o.errors == [] and o.violations() == []
    assert seen["durations"] > 100 and seen["broken"] == []
    assert seen["page"] == [width, width]
    assert seen["clipped"] == []
    assert seen["charts"] and all(w == box <= width for w, box in seen["charts"])
    assert seen["icicle"] <= width
    table, box = seen["table"]
    if width == LAPTOP:
        assert table <= box  # every column in view, none past the box's edge
    else:
        assert table > box  # whole, scrolling in its own box


@pytest.fixture(scope="module")
def sample_report() -> Report:
    return profsight.explain(sample_trace())


@pytest.fixture(scope="module")
def switch_report() -> Report:
    return profsight.explain(SWITCH)


def test_a_long_name_is_cut_on_the_page(pages: Any, tmp_path: Path) -> None:
    """A range named with 200,000 characters, recorded here: the page holds its first
    `HTML_NAME` characters; the table shows three lines of it and its title the rest; zoomed
    into, the icicle's heading shows two lines; the tooltip four."""
    trace = record(tmp_path / "long.pt.trace.json", LONG)
    o = pages(profsight.explain(trace), "long-name", width=NARROW)
    page = o.page
    assert o.errors == [] and o.violations() == []
    cut = LONG[: HTML_NAME - 1] + "…"
    cell = page.evaluate(
        """cut => { const td = [...document.querySelectorAll('#ps-table td.ps-name')]
                .find(td => td.textContent === cut);
            const span = td.firstElementChild;
            return {lines: span.getBoundingClientRect().height /
                        parseFloat(getComputedStyle(span).lineHeight),
                    title: td.title}; }""",
        cut,
    )
    assert cell["lines"] == pytest.approx(3, abs=0.2)
    assert cell["title"].startswith(cut + "\n\n")
    # the range is a part of a step whose width on the icicle varies with the run's timing
    # (a sliver under load): its events are dispatched, not clicked at a position
    node = page.locator(f"#ps-icicle .ps-node[data-name='{cut}']").first
    node.dispatch_event("click")
    heading = page.evaluate(
        """() => { const h = document.getElementById('ps-tree-root');
            return [h.getBoundingClientRect().height / parseFloat(getComputedStyle(h).lineHeight),
                    h.title.length]; }"""
    )
    assert heading == [pytest.approx(2, abs=0.2), HTML_NAME]
    page.locator(f"#ps-icicle .ps-node[data-name='{cut}']").first.dispatch_event("mouseenter")
    tip = page.evaluate(
        """() => { const t = document.querySelector('#ps-tooltip .ps-tip-name');
            return t.getBoundingClientRect().height /
                parseFloat(getComputedStyle(t).lineHeight); }"""
    )
    assert tip == pytest.approx(4, abs=0.2)
    assert page.evaluate("[document.documentElement.scrollWidth, innerWidth]") == [NARROW] * 2


def test_launches_and_copies_show_the_reports_figures(fp32: Opened) -> None:
    """The device view's launch section: the short kernels and delays as the JSON states
    them, each copy direction's rate in the table, its bandwidth drawn over time."""
    page = fp32.page
    work = json.loads(fp32.report.json())["device_work"]
    assert fp32.errors == [] and fp32.violations() == []
    facts = page.locator("#ps-launch-facts li[data-field='short_kernels']").inner_text()
    short = work["short_kernels"]
    assert f"{short['count']} of {short['kernels']}" in facts
    assert f"{short['share_pct']:.1f}%" in facts
    delay = page.locator("#ps-launch-facts li[data-field='launch_delay']").inner_text()
    assert f"{work['launch_delay']['items']} items" in delay
    launchers = page.locator("#ps-short-launchers tbody tr")
    assert launchers.count() == len(short["launchers"])
    assert launchers.first.get_attribute("data-op") == short["launchers"][0]["op"]
    (copy,) = work["copies"]
    cell = page.locator(
        f"#ps-copy-table tr[data-direction='{copy['direction']}'] td[data-field='gbps']"
    )
    assert decimal(cell.inner_text()) == pytest.approx(copy["gbps"], rel=5e-3)
    drawn = chart(page, "ps-copy-chart")
    assert drawn["width"] == drawn["box"]


def test_roofline_shows_the_reports_figures(fp32: Opened) -> None:
    """The roofline section: the ceilings and coverage the JSON states, a row per op and
    shape with its rate and bound, and each op with FLOPs drawn at its intensity and rate
    under the device's roofs."""
    page = fp32.page
    roof = json.loads(fp32.report.json())["roofline"]
    assert fp32.errors == [] and fp32.violations() == []
    ceilings = page.locator("#ps-roofline-facts li[data-field='ceilings']").inner_text()
    assert ceilings.startswith("T4: FP32 8.10 TFLOP/s") and "320 GB/s" in ceilings
    coverage = page.locator("#ps-roofline-facts li[data-field='coverage']").inner_text()
    assert f"{roof['coverage_pct']:.1f}%" in coverage
    rows = page.locator("#ps-roofline-table tbody tr")
    assert rows.count() == len(roof["ops"])
    top = roof["ops"][0]
    first = rows.first
    assert first.get_attribute("data-op") == top["op"]
    assert first.locator("td[data-field='bound']").inner_text() == top["bound"] == "compute"
    rate = first.locator("td[data-field='tflops']").inner_text()
    assert rate.endswith(" TFLOP/s")
    assert float(rate.split(" ")[0]) == pytest.approx(top["tflops"], rel=5e-3)
    drawn = chart(page, "ps-roofline-chart")
    assert drawn["width"] == drawn["box"]
    assert drawn["labels"][0] == "FP32 roof"
    xs = drawn["data"][0]
    placed = [o for o in roof["ops"] if o["flops"] > 0]
    points = {
        (x, y)
        for series in drawn["data"][2:]
        for x, y in zip(xs, series, strict=True)
        if y is not None
    }
    # (the page's data carries three decimals)
    assert any(
        x == pytest.approx(top["intensity"], rel=1e-3)
        and y == pytest.approx(top["tflops"], rel=1e-3)
        for x, y in points
    )
    assert len(points) <= len(placed)
    roof_line = drawn["data"][1]
    assert max(roof_line) == pytest.approx(8.1)


def test_time_by_source_line_shows_the_reports_functions(pages: Any) -> None:
    """A GPU run recorded with_stack (SwitchTransformers' inference on an A100): each of the
    report's functions a row of the source-line table with its CPU and device times, the
    time outside the user's code a row of its own, and the table's rows name the function
    they came from."""
    report = profsight.explain(
        DATA / "gpu_traces/CodingPlatelets__SwitchTransformers/"
        "trace_100Kpar_4exp_8batch_128seq_1024.json.gz"
    )
    lines = report.source_lines
    assert lines is not None and lines.by_device
    o = pages(report, "source-lines")
    page = o.page
    assert o.errors == [] and o.violations() == []
    rows = page.locator("#ps-source-table tbody tr[data-frame]")
    assert rows.count() == len(lines.rows)
    top = lines.rows[0]
    first = rows.first
    assert first.get_attribute("data-frame") == top.frame
    assert first.locator("td[data-field='total_device_us']").inner_text() == short_time(
        top.total_device_us
    )
    assert page.locator("#ps-source-table tr.ps-outside").count() == 1
    (row,) = [e for e in report.rows if e.row.name == "aten::addmm"]
    assert row.called_from is not None
    shown = page.locator("#ps-table tbody tr").filter(has_text="aten::addmm").first
    assert shown.locator("td.ps-meaning .ps-from").inner_text() == "from " + row.called_from


def test_memory_peak_shows_what_held_it(fp32: Opened) -> None:
    """Under the memory chart: each memory's peak, its ops as the JSON has them, and what
    it held from before the window."""
    page = fp32.page
    peaks = {p["memory"]: p for p in json.loads(fp32.report.json())["memory_peaks"]}
    device = peaks["device"]
    rows = page.locator("#ps-memory-peak tr[data-memory='device']")
    assert rows.count() == len(device["held_by"]) + 1
    assert rows.first.locator("td[data-field='op']").inner_text() == device["held_by"][0]["op"]
    last = rows.nth(rows.count() - 1).locator("td[data-field='op']").inner_text()
    assert last.startswith("(allocated before the profiled window")
    assert fp32.errors == []
    # one byte formatter: the page's sizes read as the terminal's, in IEC units
    size = rows.first.locator("td[data-field='bytes']").inner_text()
    assert size == short_bytes(device["held_by"][0]["bytes"]) and size.endswith("iB")
    assert f"{size:>9}" in fp32.report.text()


SNAPSHOT = DATA / "shared/snapshots/wl_medium512_training.pickle.gz"


@pytest.mark.parametrize("width", [NARROW, 1280])
def test_snapshot_page_shows_the_peak_and_its_sites(pages: Any, width: int) -> None:
    """A memory snapshot by others (CS336's medium Transformer at context 512): the page
    states the JSON's peak, its holders and sites in order, and draws the allocated bytes
    over time with the peak as its highest point; nothing spills at a phone's width."""
    report = profsight.explain_snapshot(SNAPSHOT)
    (device,) = json.loads(report.json())["devices"]
    o = pages(report, f"snapshot-{width}", width=width)
    page = o.page
    assert o.errors == [] and o.violations() == [] and o.requests == [o.url]
    heading = page.locator("#ps-snapshot h3").inner_text()
    assert heading == f"Device 0: peak {short_bytes(device['peak_bytes'])}"
    assert heading.endswith(" GiB")  # IEC units, labelled as such
    assert f"peak {short_bytes(device['peak_bytes'])} allocated" in report.text()
    holders = page.locator("#ps-snapshot-holders tbody tr")
    shown = [h for h, v in device["holders"].items() if v]
    assert [holders.nth(i).get_attribute("data-holder") for i in range(holders.count())] == shown
    sites = page.locator("#ps-snapshot-sites tbody tr")
    assert sites.count() == len(device["sites"])
    assert [sites.nth(i).get_attribute("data-site") for i in range(3)] == [
        s["site"] for s in device["sites"][:3]
    ]
    drawn = chart(page, "ps-memory-chart")
    assert max(drawn["data"][1]) == device["peak_bytes"]
    assert page.evaluate("[document.documentElement.scrollWidth, innerWidth]") == [width] * 2


def test_memory_section_names_the_peaks_holders(fp32: Opened) -> None:
    """Under the memory chart: each memory's peak by holder, as the JSON states it."""
    peaks = json.loads(fp32.report.json())["memory_peaks"]
    (device,) = [p for p in peaks if p["memory"] == "device"]
    line = fp32.page.locator("#ps-memory p.ps-memory-holders[data-memory='device']").inner_text()
    assert fp32.errors == [] and fp32.violations() == []
    for holder, nbytes in device["holders"].items():
        assert (holder in line) == (nbytes > 0)


def test_the_page_words_the_device_and_its_notes_as_a_reader_would(
    pages: Any, nccl: Opened
) -> None:
    """Rough edges a new user met (issue 38): the page said "note: info: ..." (a diagnostic
    names its own level), "the CUDA ran kernels" (torch's column label in a sentence), and
    listed no name for devices the trace does not name."""
    report = profsight.explain(
        DATA / "graph_capture/vllm_decode_full_graph_capture_rank_0.pt.trace.json.gz"
    )
    o = pages(report, "words")
    notes = o.page.locator("#ps-diagnostics li").all_inner_texts()
    assert notes == [str(d) for d in report.diagnostics] and notes[0].startswith("info: ")
    text = o.page.locator("body").inner_text()
    assert "the CUDA " not in text and "The CUDA " not in text
    assert "Devices listed: 8, their names not recorded" in text
    assert o.errors == []
    assert "in which the GPU ran kernels" in nccl.page.locator("#ps-busy").inner_text()


# ---- what a canvas draws stays in its box (issue 38, charts) ---------------------------------

#: Per uPlot chart, per axis: each tick label's text and the box it is drawn in (CSS pixels of
#: the chart's canvas, measured with the axis's font, placed as uPlot places it); the chart's
#: size, its plot area; the x of each value its marks (bars, points) are drawn at.
DRAWN = """() => {
    const ctx = document.createElement('canvas').getContext('2d');
    const pr = uPlot.pxRatio;
    return Object.fromEntries(Object.entries(window.profsight.charts).map(([id, u]) => {
        const left = u.bbox.left / pr, top = u.bbox.top / pr;
        const axes = u.axes.map(a => {
            ctx.font = a.font[0];
            const size = a.font[1], off = a.ticks.size + a.gap;
            return a._splits.map((v, i) => [v, a._values[i]]).filter(([, t]) => t)
                .map(([v, text]) => {
                    const w = ctx.measureText(text).width, at = u.valToPos(v, a.scale);
                    if (a.side === 2) {
                        const x = left + at;
                        return {text, left: x - w / 2, right: x + w / 2,
                                top: a._pos + off, bottom: a._pos + off + size};
                    }
                    const y = top + at;
                    return {text, left: a._pos - off - w, right: a._pos - off,
                            top: y - size / 2, bottom: y + size / 2};
                });
        });
        // marks: every series but a roof, which is a line running to the plot's ends
        const marked = u.data.slice(1).filter((s, k) => !/ roof$/.test(u.series[k + 1].label));
        const xs = u.data[0].filter((x, i) => marked.some(s => s[i] !== null));
        return [id, {width: u.width, height: u.height, plot: [left, left + u.bbox.width / pr],
                     axes, marks: xs.map(x => left + u.valToPos(x, 'x'))}];
    }));
}"""

#: The charts whose marks stand alone (bars, points), each at a value of x: none may be cut
#: by the plot's edge.
MARKED = ("ps-breakdown-chart", "ps-copy-chart", "ps-roofline-chart")


@pytest.fixture(scope="module")
def steps_report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """Forty profiler steps: at a phone's width the breakdown labels some of them."""
    t = TraceBuilder()
    for i in range(40):
        t.step(i + 1, i * 10_000, 9_000)
        t.host(f"op_{i % 3}", i * 10_000 + 10, 5_000)
    return profsight.explain(t.write(tmp_path_factory.mktemp("steps") / "steps.pt.trace.json"))


@pytest.mark.parametrize("name", ["fp32", "switch", "steps"])
def test_charts_draw_inside_their_boxes_at_a_phones_width(
    pages: Any, name: str, request: pytest.FixtureRequest
) -> None:
    """At a phone's width (issue 38): every element of a chart inside its box and the window,
    and what uPlot draws on its canvas too: each tick label whole inside the canvas, none on
    top of its neighbour (the roofline's "1000 FLOP/B" ran past the right edge, its decades
    over each other; forty steps' "#36" ran into the breakdown's "average"), and no bar or
    point cut in half at the plot's edge (the copy chart's first and last samples sat on it)."""
    o = pages(request.getfixturevalue(f"{name}_report"), f"{name}-drawn", width=NARROW)
    page = o.page
    assert o.errors == [] and o.violations() == []
    assert page.evaluate("[document.documentElement.scrollWidth, innerWidth]") == [NARROW] * 2
    spill = page.evaluate(
        """() => [...document.querySelectorAll('.ps-chart, .ps-chart *, .ps-legend *')]
            .filter(e => { const r = e.getBoundingClientRect(),
                    box = e.closest('section').getBoundingClientRect();
                return r.width && (r.right > box.right + 0.5 || r.right > innerWidth); })
            .map(e => e.className || e.tagName)"""
    )
    assert spill == []
    drawn: dict[str, Any] = page.evaluate(DRAWN)
    assert "ps-breakdown-chart" in drawn
    assert ({"ps-copy-chart", "ps-roofline-chart"} <= set(drawn)) == (name != "steps")
    for chart_id, c in drawn.items():
        for labels in c["axes"]:
            assert len(labels) >= 2, chart_id
            for label in labels:
                inside = label["left"] >= 0 and label["right"] <= c["width"]
                assert inside and label["top"] >= 0 and label["bottom"] <= c["height"], (
                    chart_id,
                    label,
                )
            ordered = sorted(labels, key=lambda x: (x["top"], x["left"]))
            for a, b in pairwise(ordered):
                apart = a["right"] + 2 <= b["left"] or a["bottom"] <= b["top"]
                assert apart, (chart_id, a["text"], b["text"])
        if chart_id in MARKED:
            left, right = c["plot"]
            cut = [x for x in c["marks"] if not left + 3 <= x <= right - 3]
            assert cut == [], (chart_id, c["plot"])


def test_the_queue_axis_reads_whole_numbers_at_a_laptops_width(pages: Any) -> None:
    """The launch queue's y axis at 1280 px read "000 items" (issue 38): its "1000 items" was
    wider than the axis, cut at the canvas's left edge. Each tick label is the whole number
    of its tick with the unit, and drawn whole inside the canvas."""
    o = pages(profsight.explain(str(LAGGING)), "lagging-axis", width=LAPTOP)
    queue = o.page.evaluate(DRAWN)["ps-queue-chart"]
    splits = o.page.evaluate("window.profsight.charts['ps-queue-chart'].axes[1]._splits")
    labels = queue["axes"][1]
    assert [label["text"] for label in labels] == [f"{round(v)} items" for v in splits]
    assert labels[-1]["text"] == "1000 items"
    cut = [label for label in labels if label["left"] < 0 or label["right"] > queue["plot"][0]]
    assert cut == []


def test_copy_bandwidth_draws_no_ramp_across_a_gap(fp32: Opened) -> None:
    """The copy chart's samples are slices with copies, far apart on this trace (issue 38): a
    line joining them drew ramps through time no copy ran in, a rate never measured. Half way
    between two samples, the canvas's column over the plot holds none of the series' colour."""
    page = fp32.page
    page.locator("#ps-copy-chart").scroll_into_view_if_needed()
    columns = page.evaluate(
        """() => { const u = window.profsight.charts['ps-copy-chart'], pr = uPlot.pxRatio;
            const probe = document.createElement('canvas').getContext('2d');
            probe.fillStyle = u.series[1]._stroke || u.series[1].stroke();
            probe.fillRect(0, 0, 1, 1);
            const colour = [...probe.getImageData(0, 0, 1, 1).data.slice(0, 3)];
            const at = u.data[0].map((x, i) => [x, u.data[1][i]]).filter(([, y]) => y !== null)
                .map(([x]) => u.bbox.left + u.valToPos(x, 'x', true));
            const gaps = at.slice(1).map((x, i) => [at[i], x]).filter(([a, b]) => b - a > 40 * pr);
            return {colour, gaps: gaps.length, columns: gaps.map(([a, b]) => {
                const px = u.ctx.getImageData(Math.round((a + b) / 2), u.bbox.top, 1,
                    u.bbox.height).data;
                const rows = [];
                for (let i = 0; i < px.length; i += 4) rows.push([px[i], px[i + 1], px[i + 2]]);
                return rows; })}; }"""
    )
    assert columns["gaps"] >= 2  # the trace's three samples, tens of ms apart
    near = [
        rgb
        for column in columns["columns"]
        for rgb in column
        if sum(abs(c - s) for c, s in zip(rgb, columns["colour"], strict=True)) < 60
    ]
    assert near == []


def test_roofline_share_of_roof_reads_as_a_percentage(fp32: Opened) -> None:
    """The roofline table's column of each op's share of its roof (issue 38): its heading
    says it is a percentage, each value is one (or a dash, or why it is above its roof)."""
    page = fp32.page
    heads = page.locator("#ps-roofline-table th").all_inner_texts()
    assert heads[-1] == "% of roof"
    roof = page_data(fp32.report)["roofline"]
    cells = page.locator("#ps-roofline-table td[data-field='roof_pct']").all_inner_texts()
    assert len(cells) == len(roof["ops"])
    for cell, op in zip(cells, roof["ops"], strict=True):
        if op["roof_pct"] is None:
            assert cell == "–"
        elif op["roof_pct"] > 100:
            assert cell == roof["above_roof"]
        else:
            assert cell == f"{op['roof_pct']:.1f}%"
