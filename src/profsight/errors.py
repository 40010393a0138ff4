"""The errors profsight raises.

    ProfsightError
     ├── InputError   an input can't be read: names the file and the reason
     └── UsageError   the caller asked for something that doesn't exist (a sort key, a format)

Everything else that goes wrong while reading a usable input is not an error but a
`Diagnostic` (see `profsight.model.diagnostics`): the result is still produced.
"""

from __future__ import annotations


class ProfsightError(Exception):
    """Base class of every error profsight raises on purpose."""


class InputError(ProfsightError):
    """An input file (or text) that profsight cannot read."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        """The path (or a label such as ``<text>``) of the unreadable input."""
        self.reason = reason
        """Why it cannot be read, in one line."""


class UsageError(ProfsightError):
    """A bad argument: an unknown column, format or option value."""
