"""An explanation of a profile as JSON (output contract ``profsight/1``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from profsight.report.document import report_document

if TYPE_CHECKING:
    from profsight.report.build import ReportData


def render_json_report(report: ReportData) -> str:
    text = msgspec.json.encode(report_document(report)).decode()
    return msgspec.json.format(text, indent=2) + "\n"
