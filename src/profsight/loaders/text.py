"""Text inputs: a printed torch table (one or several, with or without its header) or a
Lightning profiler report, read into a `TextProfile` (`profsight.loaders.load_text`)."""

from __future__ import annotations

from profsight.errors import InputError
from profsight.loaders.lightning_text import looks_like_lightning_report, parse_lightning_report
from profsight.loaders.native_log import native_diagnostics
from profsight.loaders.table_headerless import looks_like_rows, parse_rows
from profsight.loaders.table_pasted import relay
from profsight.loaders.table_text import looks_like_table, parse_tables
from profsight.model.text_profile import TextProfile


def load_text(text: str, source: str = "<text>") -> TextProfile:
    """A printed torch table (one or several) or a Lightning profiler report."""
    text = relay(text)
    if looks_like_table(text) or looks_like_rows(text):
        tables = parse_tables(text, source) if looks_like_table(text) else parse_rows(text, source)
        diagnostics = [d for t in tables for d in t.diagnostics] + native_diagnostics(text)
        return TextProfile(source, "torch_table", tables=tables, diagnostics=diagnostics)
    if looks_like_lightning_report(text):
        report = parse_lightning_report(text, source)
        return TextProfile(
            source,
            f"lightning_{report.kind}",
            lightning=report,
            diagnostics=list(report.diagnostics),
        )
    raise InputError(
        source,
        "is text but neither a profiler trace, a printed profiler table nor a "
        "Lightning profiler report",
    )
