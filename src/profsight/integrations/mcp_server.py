"""``profsight mcp``: the commands as tools of a Model Context Protocol server, over stdio.

A coding assistant helping someone with a training script calls these on the user's local
files and gets profsight's own JSON (the documents the command line writes with
``--format json``), cut to what a model can use in one reading: ``explain`` keeps the
verdict, the step-time breakdown (its average, not every step), the findings with their
evidence, fix and replayed saving, and the rows that matter; ``table`` and ``tree`` give the
rest on demand. A user's mistake (no such file, not a profile, a bad budget) is a tool
error of one line; nothing a tool does changes the user's files (``slice`` writes only a
new file it is told to).

Needs the ``mcp`` extra (``pip install 'profsight[mcp]'``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal, TypeVar

import msgspec
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

from profsight.analyses.roofline import table_roofline
from profsight.compare.budgets import check, parse_budget, parse_fail_on
from profsight.compare.diff import compare
from profsight.compare.diff import concise as concise_diff
from profsight.compare.saved_report import SavedReport, load_report_document, saved_schema
from profsight.errors import ProfsightError
from profsight.front_door import JobOptions, open_input
from profsight.job.job_document import job_document
from profsight.job.views import JobData
from profsight.loaders import load
from profsight.model.profile import Profile
from profsight.model.text_profile import TextProfile
from profsight.report.build import build_report
from profsight.report.document import report_document
from profsight.report.snapshot import SnapshotReport, snapshot_document
from profsight.report.view_documents import table_document, tree_document
from profsight.slicing.window import encode, explained_slice, parse_steps

INSTRUCTIONS = (
    "profsight explains PyTorch and PyTorch Lightning profiler output: Kineto/Chrome trace "
    "files (.json, .json.gz, one rank or a directory of ranks), printed key_averages() "
    "tables and Lightning profiler reports, and saved profsight JSON reports. Start with "
    "explain: its verdict says what bounds the step (data loading, the host, the device, "
    "communication) and its findings are ranked by the time they would save, measured by "
    "replaying the step with the fix. table and tree give every row and the call tree; diff "
    "compares two runs; check tests budgets; slice cuts steps into a small trace for "
    "Perfetto. Times are microseconds (fields ending in _us)."
)
#: Rows `explain` gives at most (the table tool gives them all).
MAX_ROWS = 50
#: Roofline rows (and source lines) an assistant gets: the ops (functions) that hold most
#: of the time.
ROOFLINE_OPS = 10
_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def _version() -> str:
    try:
        return version("profsight")
    except PackageNotFoundError:  # run from a checkout without installing
        return ""


server = MCPServer("profsight", instructions=INSTRUCTIONS, version=_version(), log_level="WARNING")

T = TypeVar("T")


@contextmanager
def _user_errors() -> Iterator[None]:
    """profsight's one-line errors (a file that is not a profile, a bad budget) as the
    tool's error message; anything else is a bug, reported by the server as such."""
    try:
        yield
    except ProfsightError as exc:
        raise ToolError(str(exc)) from None


def _tool(name: str, read_only: bool = True) -> Callable[[Callable[..., T]], Callable[..., T]]:
    def register(fn: Callable[..., T]) -> Callable[..., T]:
        server.add_tool(fn, name=name, annotations=_READ_ONLY if read_only else None)
        return fn

    return register


def _builtins(document: dict[str, Any]) -> dict[str, Any]:
    """A document as plain JSON values (tuples as lists, a non-finite float as null, as the
    JSON renderers write it): the tools return documents, not JSON text to parse again."""
    built: dict[str, Any] = _finite(msgspec.to_builtins(document))
    return built


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _document(path: str) -> dict[str, Any]:
    """The report's document (``profsight/1``) of a trace, a printed table or report, or a
    saved JSON report, as ``diff`` and ``check`` read it."""
    if saved_schema(path) is not None:
        return load_report_document(path)
    return report_document(build_report(load(path)))


def concise(doc: dict[str, Any], rows: int) -> dict[str, Any]:
    """A report's document without what only a person scrolling needs: every row (`rows` of
    the top ones are kept, in the report's order), every step (their average is kept), the
    call tree, the walkthrough of torch's table, the copy rates over time and the roofline's
    rows past its first `ROOFLINE_OPS`."""
    out = {k: doc.get(k) for k in ("schema", "source", "summary", "verdict", "findings")}
    breakdown = doc.get("breakdown")
    if breakdown is not None:
        breakdown = {k: v for k, v in breakdown.items() if k != "steps"}
        breakdown["step_count"] = len(doc["breakdown"]["steps"])
    out["breakdown"] = breakdown
    out["communication"] = doc.get("communication")
    work = doc.get("device_work")
    if work is not None:  # the copies' rates, not their series over time
        copies = [{k: v for k, v in c.items() if k != "series_ms_gbps"} for c in work["copies"]]
        work = {**work, "copies": copies}
    out["device_work"] = work
    roof = doc.get("roofline")
    if roof is not None:  # the ops that hold the most device time
        roof = {**roof, "ops": roof["ops"][:ROOFLINE_OPS]}
    out["roofline"] = roof
    lines = doc.get("source_lines")
    if lines is not None:  # the functions that hold the most time
        lines = {**lines, "lines": lines["lines"][:ROOFLINE_OPS]}
    out["source_lines"] = lines
    by_name: dict[str, Any] = {}
    for record in doc.get("table", []):
        by_name.setdefault(record["name"], record)
    top = [by_name[name] for name in doc.get("top", []) if name in by_name]
    out["rows"] = top[: max(0, min(rows, MAX_ROWS))]
    out["rows_in_table"] = len(doc.get("table", []))
    out["notes"] = doc.get("notes", [])
    out["diagnostics"] = doc.get("diagnostics", [])
    return out


def concise_snapshot(doc: dict[str, Any]) -> dict[str, Any]:
    """A snapshot's document with each device's `ROOFLINE_OPS` largest sites."""
    devices = [
        {**d, "sites": d["sites"][:ROOFLINE_OPS], "sites_total": len(d["sites"])}
        for d in doc["devices"]
    ]
    return {**doc, "devices": devices}


@_tool("explain")
def explain_tool(path: str, rows: int = 10) -> dict[str, Any]:
    """Explain a PyTorch / Lightning profile: the verdict (what bounds the step), the
    step-time breakdown, findings ranked by the time each fix saves (with evidence and the
    fix), and the `rows` table rows that matter most, each explained.

    path: a trace (.json or .json.gz), a directory of per-rank traces (a distributed job), a
    printed key_averages() table or Lightning profiler report, a saved profsight JSON
    report, or a memory snapshot (torch.cuda.memory._dump_snapshot's pickle: then each
    device's peak and the source lines that hold it)."""
    with _user_errors():
        opened = open_input(path, JobOptions(executor="serial"))
        report = opened.report
        if isinstance(report, JobData):
            return {"job": job_document(report)}
        if isinstance(report, SnapshotReport):
            return {"snapshot": concise_snapshot(snapshot_document(report))}
        if isinstance(report, SavedReport):
            return concise(report.document, rows)
        return concise(report_document(report), rows)


@_tool("table")
def table_tool(
    path: str,
    sort_by: str | None = None,
    limit: int | None = 25,
    group_by: Literal["name", "shape", "module"] = "name",
) -> dict[str, Any]:
    """torch's profiler table (key_averages()) rebuilt from a trace, or read from a printed
    table: every row's calls, self and total CPU and device time (microseconds), memory.

    sort_by: a column (self_cpu_us, cpu_total_us, self_device_us, device_total_us, calls,
    ...; default: the device total when there is device time, else the CPU total). limit:
    rows kept (None: all). group_by: name, shape (op and input shapes; on a GPU profsight
    knows, each op's achieved FLOP/s and bytes/s, FLOPs per byte and roofline bound) or
    module."""
    with _user_errors():
        profile = load(path)
        result = profile.table(group_by=group_by, sort_by=sort_by, limit=limit)
        roof = None
        if group_by == "shape" and isinstance(profile, Profile):
            roof = table_roofline(profile)
        return _builtins(table_document(result, roof))


@_tool("tree")
def tree_tool(path: str, depth: int = 6, min_share: float = 1.0) -> dict[str, Any]:
    """The call tree of a trace: steps, Lightning hooks, modules, ops and the kernels they
    launched, with CPU and device time per node. depth: levels kept; min_share: nodes under
    this percentage of the total are folded."""
    with _user_errors():
        profile = load(path)
        if isinstance(profile, TextProfile):
            profile.tree()  # raises: a printed table has no call tree
        return _builtins(tree_document(profile.tree().pruned(depth=depth, min_share=min_share)))


@_tool("diff")
def diff_tool(
    before: str,
    after: str,
    by: Literal["total", "self"] = "total",
    full: bool = False,
    noise_pct: float | None = None,
) -> dict[str, Any]:
    """What got faster or slower between two runs (traces, tables or saved JSON reports):
    whether they ran the same work, the step against its noise, phases, findings and the
    largest row changes (a few KB). by: total or self time per row; full: every row;
    noise_pct: how much two runs of one script differ on this machine (% of the step)."""
    with _user_errors():
        diff = compare(_document(before), _document(after), by=by, run_noise_pct=noise_pct)
        return _builtins(diff.to_dict() if full else concise_diff(diff))


@_tool("check")
def check_tool(
    path: str,
    max: list[str] | None = None,
    min: list[str] | None = None,
    fail_on: str | None = None,
) -> dict[str, Any]:
    """Budgets, as `profsight check` tests them in CI: max/min hold NAME=LIMIT (for example
    data_loading=10%, step_time=120ms, device_busy=80%); fail_on: high, medium or low fails
    on any finding at or above it. Returns whether all hold and each outcome."""
    with _user_errors():
        budgets = [parse_budget(a, "max") for a in max or []]
        budgets += [parse_budget(a, "min") for a in min or []]
        level = None if fail_on is None else parse_fail_on(fail_on)
        if not budgets and level is None:
            raise ToolError("check needs a budget: max, min or fail_on")
        outcomes = check(_document(path), budgets, level)
        return {
            "holds": all(o.holds for o in outcomes),
            "outcomes": [{"holds": o.holds, "message": o.message} for o in outcomes],
        }


@_tool("slice", read_only=False)
def slice_tool(path: str, steps: str, output: str) -> dict[str, Any]:
    """Cut steps of a trace (steps: "3" or "3-4", ProfilerStep numbers) into a small trace
    for Perfetto or chrome://tracing, with the findings on a track of their own, written to
    output (a new .json or .json.gz file: an existing file is never replaced)."""
    with _user_errors():
        target = Path(output)
        if not output.endswith((".json", ".json.gz")):
            raise ToolError(f"{output}: a slice is written as .json or .json.gz")
        if target.exists():
            raise ToolError(f"{output}: already exists (a slice never replaces a file)")
        if not target.parent.is_dir():
            raise ToolError(f"{output}: the folder {target.parent} does not exist")
        piece = explained_slice(path, parse_steps(steps))
        target.write_bytes(encode(piece, output.endswith(".gz")))
        return {
            "output": str(target),
            "steps": list(piece.steps),
            "events_kept": piece.kept,
            "events_dropped": piece.dropped,
        }


def run() -> None:
    """Serve the tools over standard input and output until the client closes them."""
    server.run("stdio")
