"""`Report`: everything a renderer shows about one profile, computed once."""

from __future__ import annotations

from dataclasses import dataclass

from profsight.model.diagnostics import Diagnostic
from profsight.model.overview import Overview, overview
from profsight.model.profile import Profile
from profsight.model.table import ProfilerTable, device_label
from profsight.model.tree import CallTree

#: Rows of the table an explanation shows (the full table is ``profsight table``).
REPORT_ROWS = 25
#: Tree nodes under this share of the run are left out of an explanation.
REPORT_MIN_SHARE = 2.0
REPORT_DEPTH = 8


@dataclass(frozen=True)
class Report:
    overview: Overview
    table: ProfilerTable
    """The full table, in torch's order."""
    tree: CallTree
    """The call tree, pruned for reading."""
    diagnostics: tuple[Diagnostic, ...]
    device_name: str

    @property
    def top_rows(self) -> ProfilerTable:
        """The rows that matter most: by total CPU time, or device time when there is some."""
        key = "device_total_us" if self.table.has_device else "cpu_total_us"
        return self.table.sorted(key).head(REPORT_ROWS)


def build_report(profile: Profile) -> Report:
    return Report(
        overview=overview(profile),
        table=profile.table(),
        tree=profile.tree().pruned(depth=REPORT_DEPTH, min_share=REPORT_MIN_SHARE),
        diagnostics=tuple(profile.warnings),
        device_name=device_label(profile),
    )
