"""A report as one self-contained HTML page: charts, the call tree as an icicle, the table.

The page is ``html_assets/report.html`` with the stylesheets, the scripts (uPlot, vendored
in ``html_assets``, and the page's own) and the report's data inlined: it loads nothing from
anywhere, and its Content-Security-Policy runs only those inline scripts, by their hashes.
The data goes in as JSON inside a ``<script type="application/json">`` element, escaped so
that no input string can end that element; the script builds every view with DOM calls and
``textContent``, so names from a trace are shown as text, never parsed as markup. Large
traces are capped (table rows, tree nodes) so that a page stays a few MB at most, and so are
names (`names.HTML_NAME` characters: a 200,000-character range name goes in cut, never whole,
and the page shows less of it, with the rest in the element's ``title``).
"""

from __future__ import annotations

import base64
import hashlib
import heapq
import html
from importlib import resources
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from profsight.knowledge.advice import saving_phrase
from profsight.knowledge.collectives import bus_factor
from profsight.knowledge.phases import PHASE_LABELS
from profsight.knowledge.rows import DEVICE_KINDS, RowKind, classify
from profsight.model.collectives_seen import Communication
from profsight.model.table import Row
from profsight.model.tree import TreeNode
from profsight.names import HTML_NAME, cut_name, cut_words
from profsight.renderers.template import fill, script_json
from profsight.report.document import (
    breakdown_dict,
    communication_dict,
)
from profsight.report.sections import SECTIONS

if TYPE_CHECKING:
    from profsight.report.build import ExplainedRow, ReportData

SCHEMA = "profsight-html/1"
#: Table rows a page holds: the largest by total (CPU or device), the rest left out.
MAX_TABLE_ROWS = 2000
#: Call-tree nodes a page holds: the largest first, so that a kept node's parent is kept.
MAX_TREE_NODES = 3000
#: Bars of the top-operators and top-kernels charts.
TOP_BARS = 15
#: Row kinds that are operators (ops and runtime calls), not ranges that wrap them.
OPERATOR_KINDS = frozenset(
    {RowKind.ATEN, RowKind.BACKWARD, RowKind.RUNTIME, RowKind.SYNC, RowKind.COMMUNICATION}
)
#: Row kinds that are device work: the bars of the top-kernels chart.
KERNEL_KINDS = frozenset({*DEVICE_KINDS, RowKind.COMMUNICATION})

_ASSETS = "html_assets"


def render_html(report: ReportData) -> str:
    """The whole page, as text (writing it to a file is the caller's job)."""
    title = f"profsight: {PurePath(report.source).name or report.source}"
    return page(title, "profsight report", page_data(report))


def page(title: str, heading: str, data: dict[str, Any]) -> str:
    """The page template with its stylesheets, scripts (uPlot, then the page's own) and
    `data` inlined."""
    css = _asset("uPlot.min.css") + _asset("report.css")
    uplot, js = _asset("uPlot.iife.min.js"), _asset("report.js")
    slots = {
        "title": html.escape(title),
        "heading": html.escape(heading),
        "csp": content_policy(styles=[css], scripts=[uplot, js]),
        "css": css,
        "uplot": uplot,
        "js": js,
        "data": script_json(data),
    }
    return fill(_asset("report.html"), slots)


def content_policy(styles: list[str], scripts: list[str]) -> str:
    """The page's Content-Security-Policy: nothing loads from anywhere, and only the inline
    ``<style>`` and ``<script>`` elements whose text is one of these run (by their SHA-256,
    so markup that got into the page could run no script of its own). The data's
    ``<script type="application/json">`` is not run, so it needs no hash."""

    def hashes(texts: list[str]) -> str:
        digests = (hashlib.sha256(t.encode("utf-8")).digest() for t in texts)
        return " ".join(f"'sha256-{base64.b64encode(d).decode('ascii')}'" for d in digests)

    return (
        f"default-src 'none'; style-src {hashes(styles)}; script-src {hashes(scripts)}; "
        "img-src data:"
    )


def notebook_html(report: ReportData, height_px: int = 900) -> str:
    """The page inside an ``<iframe srcdoc>``, for Jupyter: a notebook holds many outputs in
    one document, and the frame keeps this page's ids, styles and script to itself."""
    return in_frame(render_html(report), height_px)


def in_frame(document: str, height_px: int = 900) -> str:
    page_text = html.escape(document, quote=True)
    return (
        f'<iframe srcdoc="{page_text}" style="width: 100%; height: {height_px}px; border: 0" '
        'sandbox="allow-scripts" title="profsight report"></iframe>'
    )


def page_data(report: ReportData) -> dict[str, Any]:
    """Everything the page's script draws, as plain data."""
    has_device = report.table.has_device
    return {
        "schema": SCHEMA,
        "source": report.source,
        "summary": list(report.summary),
        "diagnostics": [str(d) for d in report.diagnostics],
        "notes": list(report.notes),
        "device": report.device_name,
        "has_device": has_device,
        "verdict": _verdict(report),
        "findings": findings_data([f.to_dict() for f in report.findings]),
        "breakdown": _breakdown(report),
        "tree": _tree(report.tree.root) if report.tree is not None else None,
        "top_ops": _top_ops(report.rows),
        "top_kernels": _top_kernels(report.rows),
        "timelines": report.timelines.to_dict() if report.timelines is not None else None,
        "table": _table(report.rows, has_device),
        "collectives": _collectives(report),
        **{s.name: s.page(s.document(report.views.get(s.name))) for s in SECTIONS},
    }


def _with_texts(data: dict[str, Any] | None, texts: dict[str, str]) -> dict[str, Any] | None:
    """A section's data with the sentences the page says about it (knowledge's)."""
    return None if data is None else {**data, **texts}


def _verdict(report: ReportData) -> dict[str, Any] | None:
    if report.verdict is None:
        return None
    v = report.verdict.to_dict()
    v["summary"] = _prose(v["summary"])
    v["evidence"] = [_prose(line) for line in v["evidence"]]
    return v


def _prose(text: str) -> str:
    """Text that may quote a name from the trace, each word cut to `HTML_NAME`."""
    return cut_words(text, HTML_NAME)


def _collectives(report: ReportData) -> list[dict[str, Any]]:
    comms = report.communication
    data = communication_dict(comms)
    if comms is None or data is None:
        return []
    out = []
    for o in data["operations"]:
        calls = [
            c
            for c in comms.collectives
            if c.operation == o["operation"] and c.backend == o["backend"]
        ]
        ranks_known = any(c.group_size > 0 for c in calls)
        out.append({**o, "why": collective_gaps(o, _timing(comms), ranks_known)})
    return out


def _timing(comms: Communication) -> str:
    return "" if comms.timed else "the trace holds only the calls that enqueue the collectives"


def collective_gaps(operation: dict[str, Any], untimed: str, ranks_known: bool) -> dict[str, str]:
    """Why a collective's size, time or bus bandwidth is not known, by its key (the table
    shows a dash for these, with this as the cell's title). `untimed` says why the trace
    times no transfer ("" when it does)."""
    why: dict[str, str] = {}
    if operation["bytes"] is None:
        why["bytes"] = (
            "unknown: the trace states no message size for these calls (no 'In msg nelems' "
            "with 'dtype', no 'Input Dims' on the collective or the call that issued it)"
        )
    if operation["transfer_us"] is None:
        why["transfer_us"] = f"unknown: {untimed or 'the trace times no transfer'}"
    if operation["bus_gbps"] is None:
        if bus_factor(operation["operation"], 2) is None:
            reason = f"{operation['operation']} has no bus bandwidth (it moves no data, or "
            reason += "its traffic has no standard factor)"
        elif operation["bytes"] is None:
            reason = "it needs the message size, which the trace does not state"
        elif operation["transfer_us"] is None:
            reason = "it needs the transfer time, which the trace does not record"
        elif not ranks_known:
            reason = "it needs the number of ranks taking part ('Group size'), which the "
            reason += "trace does not state"
        else:
            reason = "no call has a size, a transfer time and a group size together"
        why["bus_gbps"] = f"unknown: {reason}"
    return why


def findings_data(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Findings as `Finding.to_dict` gives them, each evidence item's rows less the names its
    label already shows (``volta_sgemm_128x64_tn`` beside ``volta_sgemm_128x64_tn``); where
    the label shows a name cut short, ``title`` holds the whole name."""
    out = []
    for f in findings:
        evidence = []
        for item in f.get("evidence", []):
            label = str(item.get("label", ""))
            rows = [str(r) for r in item.get("rows", [])]
            shown = [r for r in rows if _label_shows(label, r)]
            kept = {
                **item,
                "label": cut_name(label, HTML_NAME),
                "rows": [cut_name(r, HTML_NAME) for r in rows if r not in shown],
            }
            if label.endswith("…") and shown:
                kept["title"] = ", ".join(cut_name(r, HTML_NAME) for r in shown)
            evidence.append(kept)
        could_save = (
            None
            if f.get("severity") == "info"
            else saving_phrase(
                str(f.get("saving_basis", "")),
                f.get("gain_pct"),
                f.get("at_stake_pct") or 0.0,
                f.get("gain_spread_pct"),
            )
            or None
        )
        prose = {k: _prose(str(f.get(k) or "")) for k in _FINDING_PROSE}
        out.append({**f, **prose, "evidence": evidence, "could_save": could_save})
    return out


#: A finding's text that may quote names from the trace.
_FINDING_PROSE = ("title", "explanation", "recommendation", "confidence")
#: Characters a cut label must share with a name to show it.
_CUT_MATCH = 16


def _label_shows(label: str, name: str) -> bool:
    """Whether `label` shows `name`: whole, or cut short with "…" at the label's end."""
    if not name or name in label:
        return True
    if not label.endswith("…"):
        return False
    stem = label[:-1]
    longest = min(len(name), len(stem))
    return any(stem.endswith(name[:k]) for k in range(longest, min(_CUT_MATCH, longest) - 1, -1))


def _asset(name: str) -> str:
    return (
        resources.files("profsight.renderers").joinpath(_ASSETS).joinpath(name).read_text("utf-8")
    )


def _breakdown(report: ReportData) -> dict[str, Any] | None:
    data = breakdown_dict(report.breakdown)
    if data is None:
        return None
    data["phases"] = [{"id": p.value, "label": label} for p, label in PHASE_LABELS.items()]
    return data


def _tree(root: TreeNode) -> dict[str, Any]:
    """The largest `MAX_TREE_NODES` nodes; a node's parent always comes along."""
    kept: set[int] = set()
    tie = 0
    heap: list[tuple[float, int, TreeNode]] = [(0.0, tie, root)]
    while heap and len(kept) < MAX_TREE_NODES:
        _, _, node = heapq.heappop(heap)
        kept.add(id(node))
        for child in node.children:
            tie += 1
            size = max(child.cpu_total_us, child.device_total_us)
            heapq.heappush(heap, (-size, tie, child))

    def encode(node: TreeNode) -> dict[str, Any]:
        return {
            "n": cut_name(node.name, HTML_NAME),
            "k": _node_kind(node),
            "c": node.calls,
            "cs": node.cpu_self_us,
            "ct": node.cpu_total_us,
            "ds": node.device_self_us,
            "dt": node.device_total_us,
            "d": node.is_device,
            "ch": [encode(c) for c in node.children if id(c) in kept],
        }

    return encode(root)


def _node_kind(node: TreeNode) -> str:
    """The row kind (as the table shows it) of a node; ``root`` and ``thread`` as they are."""
    if node.kind in ("root", "thread"):
        return node.kind
    return classify(node.name, node.kind).value


def _bar(e: ExplainedRow, value: float) -> dict[str, Any]:
    return {
        "name": cut_name(e.row.name, HTML_NAME),
        "kind": e.explanation.kind.value,
        "calls": e.row.calls,
        "us": value,
        "meaning": _prose(e.explanation.meaning),
    }


def _top_ops(rows: tuple[ExplainedRow, ...]) -> list[dict[str, Any]]:
    """Host operators by self CPU time; every host row when none is an operator."""
    host = [e for e in rows if not e.row.is_device and e.row.self_cpu_us > 0]
    ops = [e for e in host if e.explanation.kind in OPERATOR_KINDS] or host
    ops.sort(key=lambda e: e.row.self_cpu_us, reverse=True)
    return [_bar(e, e.row.self_cpu_us) for e in ops[:TOP_BARS]]


def _top_kernels(rows: tuple[ExplainedRow, ...]) -> list[dict[str, Any]]:
    """Device work (kernels, copies, memsets, collectives' kernels) by its own device time;
    not the device-side spans of labels (``gpu_user_annotation``: ``ProfilerStep#N``,
    ``## Call CompiledFxGraph ... ##``), which cover kernels and are none themselves."""
    work = [
        e
        for e in rows
        if e.row.is_device and e.row.self_device_us > 0 and e.explanation.kind in KERNEL_KINDS
    ]
    work.sort(key=lambda e: e.row.self_device_us, reverse=True)
    return [_bar(e, e.row.self_device_us) for e in work[:TOP_BARS]]


def _table(rows: tuple[ExplainedRow, ...], has_device: bool) -> dict[str, Any]:
    columns: list[tuple[str, str, str]] = [
        ("kind", "Kind", "tag"),
        ("name", "Name", "text"),
        ("calls", "Calls", "count"),
        ("self_cpu_us", "Self CPU", "time"),
        ("cpu_total_us", "CPU total", "time"),
        ("cpu_avg_us", "CPU avg", "time"),
    ]
    if has_device:
        columns += [
            ("self_device_us", "Self device", "time"),
            ("device_total_us", "Device total", "time"),
        ]
    memory = ("cpu_mem", "self_cpu_mem", "device_mem", "self_device_mem")
    labels = ("CPU mem", "Self CPU mem", "Device mem", "Self device mem")
    for key, label in zip(memory, labels, strict=True):
        if any(getattr(e.row, key) for e in rows):
            columns.append((key, label, "bytes"))
    columns.append(("meaning", "What it is", "text"))
    shown = sorted(rows, key=lambda e: _size(e.row), reverse=True)[:MAX_TABLE_ROWS]
    return {
        "columns": [{"key": k, "label": label, "type": t} for k, label, t in columns],
        "rows": [_table_row(e, [k for k, _, _ in columns]) for e in shown],
        "total_rows": len(rows),
    }


def _size(row: Row) -> float:
    return max(row.cpu_total_us, row.device_total_us)


def _table_row(e: ExplainedRow, keys: list[str]) -> dict[str, Any]:
    extra = {
        "name": cut_name(e.row.name, HTML_NAME),
        "kind": e.explanation.kind.value,
        "meaning": _prose(e.explanation.meaning),
        "cpu_avg_us": e.row.cpu_avg_us,
    }
    return {
        "cells": [extra[k] if k in extra else getattr(e.row, k) for k in keys],
        "layer": e.explanation.layer,
        "reading": _prose(e.explanation.reading),
        "device_row": e.row.is_device,
        "called_from": e.called_from,
    }
