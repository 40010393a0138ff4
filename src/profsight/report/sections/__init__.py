"""The report's sections registered as plug-ins, in the order every format shows them.

A section computes what it shows from a trace and its diagnosis, and says it as a document,
as text and as a page part (`section.Section`). A new section is its module here and its line
below, and its block in ``renderers/html_assets/report.js``.
"""

from __future__ import annotations

from typing import Final

from profsight.report.sections import by_source_line, launches_copies, memory_at_peak, roofline_view
from profsight.report.sections.section import Section

SECTIONS: Final[tuple[Section, ...]] = (
    launches_copies.SECTION,
    roofline_view.SECTION,
    by_source_line.SECTION,
    memory_at_peak.SECTION,
)

__all__ = ["SECTIONS", "Section"]
