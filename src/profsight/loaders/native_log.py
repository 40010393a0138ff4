"""torch's C++ warnings (`knowledge.torch_warnings`) read from text, each distinct one a diagnostic.

The text is what a live profiler printed to stderr while profsight held it
(`integrations.native_capture`), or a printed table's lines around the table: a user
pasting a table often pastes the warning printed above it.
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

import msgspec

from profsight.knowledge.torch_warnings import (
    C10_LINE,
    ERROR_LEVELS,
    KINETO_LINE,
    NATIVE_CODE,
    NATIVE_MESSAGE,
    NATIVE_TIMES,
    SHOWN_LEVELS,
)
from profsight.model.diagnostics import Diagnostic, Level


class NativeMessage(NamedTuple):
    error: bool
    """Printed as an error (c10's ``E``, Kineto's ``ERROR``), not a warning."""
    message: str
    where: str
    """The C++ source file and line (``collection.cpp:1116``)."""


class NativeLog(msgspec.Struct):
    """The distinct warnings read so far, with how often each was printed."""

    counts: Counter[NativeMessage] = msgspec.field(default_factory=Counter)

    def read(self, text: str) -> list[str]:
        """Count the warnings among `text`'s lines; the lines that are no log line of torch's
        (to give back to the user as they were)."""
        other = []
        for line in text.splitlines():
            match = C10_LINE.match(line) or KINETO_LINE.match(line)
            if match is None:
                other.append(line)
            elif match["level"] in SHOWN_LEVELS:
                error = match["level"] in ERROR_LEVELS
                self.counts[NativeMessage(error, match["message"], match["where"])] += 1
        return other

    def diagnostics(self) -> list[Diagnostic]:
        """One per distinct warning, most printed first."""
        return [
            Diagnostic(
                NATIVE_CODE,
                NATIVE_MESSAGE.format(
                    times=NATIVE_TIMES.format(count=n) if n > 1 else "",
                    message=m.message,
                    where=m.where,
                ),
                level=Level.WARNING if m.error else Level.INFO,
                count=n,
            )
            for m, n in self.counts.most_common()
        ]


def native_diagnostics(text: str) -> list[Diagnostic]:
    """The warnings torch printed among `text`'s lines, each distinct one a diagnostic."""
    log = NativeLog()
    log.read(text)
    return log.diagnostics()


__all__ = ["NativeLog", "NativeMessage", "native_diagnostics"]
