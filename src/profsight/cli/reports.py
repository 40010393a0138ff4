"""Reading any input as a report's JSON document (``profsight/1``), for ``diff`` and ``check``.

A saved report (``profsight explain X --format json -o r.json``) is read as it is; a trace,
a printed table or a Lightning report is loaded and explained first, so both take one path.
"""

from __future__ import annotations

import argparse
from typing import Any


def load_document(path: str, args: argparse.Namespace) -> dict[str, Any]:
    from profsight.cli.common import load_profile, warn_analysis
    from profsight.compare.saved_report import load_report_document, saved_schema
    from profsight.report.build import build_report
    from profsight.report.document import report_document

    if saved_schema(path) is not None:
        return load_report_document(path)
    profile = load_profile(path, args)
    report = build_report(profile)
    warn_analysis(path, profile)
    return report_document(report)
