"""Whatever the front door explained (`profsight.front_door.open_input`), in the format asked
for: one registry of every kind's renderers, imported when used.

`RENDERERS` maps (kind, format) to the function that renders it (``"module:function"``,
`profsight.lazy`), so that a command imports only the renderer of its input's kind and
format: rich and the HTML page are about 20 ms of start-up that JSON and Markdown do
without, a job's and a snapshot's modules 40 ms that a trace does without. A text renderer
marked sized takes the terminal's width and whether to colour.
"""

from __future__ import annotations

from typing import Any, Final

from profsight.errors import UsageError
from profsight.lazy import resolve

#: (kind, format) -> (renderer, sized: it takes width= and color=).
RENDERERS: Final[dict[tuple[str, str], tuple[str, bool]]] = {
    ("profile", "text"): ("profsight.renderers.terminal:render_terminal", True),
    ("profile", "markdown"): ("profsight.renderers.report_markdown:render_markdown_report", False),
    ("profile", "json"): ("profsight.renderers.report_json:render_json_report", False),
    ("profile", "html"): ("profsight.renderers.html:render_html", False),
    ("job", "text"): ("profsight.renderers.job_text:render_job_text", True),
    ("job", "markdown"): ("profsight.renderers.job_text:render_job_markdown", False),
    ("job", "json"): ("profsight.renderers.job_text:render_job_json", False),
    ("job", "html"): ("profsight.renderers.job_html:render_job_html", False),
    ("snapshot", "text"): ("profsight.renderers.snapshot_report:render_snapshot_text", False),
    ("snapshot", "markdown"): (
        "profsight.renderers.snapshot_report:render_snapshot_markdown",
        False,
    ),
    ("snapshot", "json"): ("profsight.renderers.snapshot_report:render_snapshot_json", False),
    ("snapshot", "html"): ("profsight.renderers.snapshot_report:render_snapshot_html", False),
    ("saved", "text"): ("profsight.renderers.saved_text:render_saved_text", False),
    ("saved", "markdown"): ("profsight.renderers.saved_text:render_saved_markdown", False),
    ("saved", "json"): ("profsight.renderers.saved_text:render_saved_json", False),
    ("saved", "html"): ("profsight.renderers.saved_text:render_saved_html", False),
}
#: The formats every kind is rendered in.
FORMATS: Final = ("text", "markdown", "json", "html")
#: The format an output file's suffix asks for (``-o report.html``).
SUFFIXES: Final[dict[str, str]] = {
    ".txt": "text",
    ".md": "markdown",
    ".json": "json",
    ".html": "html",
    ".htm": "html",
}

#: The views of one profile and the comparison of two, each format's renderer
#: (``"module:function"``) and the format an output file's suffix asks for. ``table``'s
#: renderers take the table (and its roofline for the structured formats), ``tree``'s the
#: pruned call tree, ``diff``'s a `RunDiff`, ``snapshot_diff``'s two snapshots' comparison.
VIEWS: Final[dict[str, dict[str, str]]] = {
    "table": {
        "text": "profsight.model.table:render_torch_table",
        "json": "profsight.renderers.table_formats:render_json",
        "csv": "profsight.renderers.table_formats:render_csv",
        "markdown": "profsight.renderers.table_formats:render_markdown",
    },
    "tree": {
        "text": "profsight.renderers.tree_text:render_tree_text",
        "json": "profsight.renderers.tree_text:render_tree_json",
    },
    "diff": {
        "text": "profsight.renderers.diff_render:render_diff_text",
        "markdown": "profsight.renderers.diff_render:render_diff_markdown",
        "json": "profsight.renderers.diff_render:render_diff_json",
        "html": "profsight.renderers.diff_render:render_diff_html",
    },
    "snapshot_diff": {
        "text": "profsight.renderers.snapshot_report:render_snapshot_diff",
        "markdown": "profsight.renderers.snapshot_report:render_snapshot_diff",
        "json": "profsight.renderers.snapshot_report:render_snapshot_diff",
    },
}
VIEW_SUFFIXES: Final[dict[str, dict[str, str]]] = {
    kind: {suffix: fmt for suffix, fmt in SUFFIXES.items() if fmt in formats}
    | ({".csv": "csv"} if "csv" in formats else {})
    for kind, formats in VIEWS.items()
}


def view_renderer(kind: str, fmt: str) -> Any:
    """The function that renders view `kind` (`VIEWS`) in `fmt`, imported now."""
    try:
        return resolve(VIEWS[kind][fmt])
    except KeyError:
        raise UsageError(f"unknown format {fmt!r}; use one of: {', '.join(VIEWS[kind])}") from None


def render_explained(
    report: Any, kind: str, fmt: str, width: int = 120, color: bool = False
) -> str:
    """`report`, of `kind` (``profile``, ``job``, ``snapshot``, ``saved``), in `fmt`."""
    try:
        target, sized = RENDERERS[(kind, fmt)]
    except KeyError:
        raise UsageError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}") from None
    render = resolve(target)
    text: str = render(report, width=width, color=color) if sized else render(report)
    return text


__all__ = [
    "FORMATS",
    "RENDERERS",
    "SUFFIXES",
    "VIEWS",
    "VIEW_SUFFIXES",
    "render_explained",
    "view_renderer",
]
