"""A report section as a plug-in: registered once (`report.sections.SECTIONS`) with what it
computes, its document, its text and its page part, so that the renderers draw every section
the same way and none of them imports the analysis behind it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from profsight.analyses.pipeline import Diagnosis
from profsight.model.profile import Profile

#: A figure in a section's typed document: msgspec keeps an int an int (a count, a value
#: read as written) where a plain ``float`` field would write it as ``2039.0``.
Number = int | float


class Section(msgspec.Struct, frozen=True):
    """One section of a trace's report."""

    name: str
    """Its key: in `ReportData.sections`, the JSON document and the page's data."""
    title: str
    """Its heading in Markdown (the text's heading is the first of its `lines`)."""
    compute: Callable[[Profile, Diagnosis], Any]
    """What it shows, from the profile and its diagnosis (None or empty: nothing to show)."""
    document: Callable[[Any], Any]
    """Its computed data as JSON values (what the JSON report writes under `name`)."""
    lines: Callable[[Any], list[str]]
    """Its document as text lines, its heading first ([]: nothing to show)."""
    page: Callable[[Any], Any]
    """Its document as the page's script draws it (its block in ``report.js``)."""


def with_texts(texts: dict[str, str]) -> Callable[[Any], Any]:
    """A page part: the document with the sentences the page says about it."""

    def page(document: Any) -> Any:
        return None if document is None else {**document, **texts}

    return page


__all__ = ["Number", "Section", "with_texts"]
