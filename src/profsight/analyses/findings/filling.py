"""How a family's figures were filled, for the rules that read them (`Filling`).

Every rule of `analyses.findings` reads one record of figures and fires the same way for a
trace and for a printed table. A trace fills the record exactly: both clocks, the waits, the
device's items; the replay (`analyses.replay`) then prices the fix. A printed table or a
Lightning report fills what its rows allow: its `Filling` says what the rows could not show
(the finding's ``confidence``) and that the saving is the figure itself, estimated.
"""

from __future__ import annotations

import msgspec

from profsight.knowledge.advice import NO_TIMELINE


class Filling(msgspec.Struct, frozen=True):
    note: str = ""
    """What the input could not show, said with the finding; empty for a trace."""
    estimated: bool = False
    """The saving is the share at stake (a table: no timeline to replay); else the replay's."""

    def gain(self, share: float) -> float | None:
        """What the finding could save, as its filling prices it (None: the replay's)."""
        return share if self.estimated else None

    def noted(self, what: str) -> Filling:
        """The table's filling, saying `what` its rows could not show."""
        return Filling(f"{NO_TIMELINE}: {what}", self.estimated)


#: A trace's figures: exact, its fixes priced by the replay.
TRACE = Filling()
#: A printed table's figures: from its totals, each saving the share at stake.
TABLE = Filling(estimated=True)
