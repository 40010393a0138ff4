"""Reading a saved report back: the JSON ``profsight explain --format json`` writes.

A saved report is recognised by its first key, ``"schema": "profsight/1"`` (the document
starts with it), so that telling a report from a trace reads only the head of the file.
"""

from __future__ import annotations

import os
import re
import zlib
from typing import Any

import msgspec

from profsight.errors import InputError
from profsight.loaders.input_files import GZIP_MAGIC, read_input
from profsight.report.document import SCHEMA

#: The schema id of a report document (`report.document`).
REPORT_SCHEMA = SCHEMA
_HEAD = 4096
_SCHEMA = re.compile(rb'^\s*\{\s*"schema"\s*:\s*"(profsight/[^"]*)"')
#: The keys every report document has (`report_document`).
_REQUIRED = ("source", "table", "findings")


def saved_schema(path: str | os.PathLike[str]) -> str | None:
    """The ``profsight/...`` schema id a JSON file written by profsight opens with, else None
    (traces, tables and unreadable files: their loader says what is wrong with them)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD)
        if head[:2] == GZIP_MAGIC:
            import gzip  # (here: a plain file's run has no use for it)

            with gzip.open(path, "rb") as gz:
                head = gz.read(_HEAD)
    except (OSError, EOFError, zlib.error):
        return None
    match = _SCHEMA.match(head.lstrip(b"\xef\xbb\xbf"))
    return match.group(1).decode("utf-8", "replace") if match else None


class SavedReport(msgspec.Struct, frozen=True):
    """A report profsight saved (``--format json``), read back as its document: the findings
    and verdict of the run it was made from, as they were then."""

    path: str
    """Where it was read from (the document's own ``source`` names the profile)."""
    document: dict[str, Any]

    @property
    def diagnostics(self) -> tuple[str, ...]:
        return tuple(str(d) for d in self.document.get("diagnostics", []))


def load_saved(path: str | os.PathLike[str]) -> SavedReport:
    """A saved report (`load_report_document`)."""
    return SavedReport(os.fspath(path), load_report_document(path))


def load_report_document(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A saved report as the dict `report_document` made. Raises `InputError` naming the
    file when it is another profsight document or not a complete report."""
    source = os.fspath(path)
    schema = saved_schema(path)
    if schema != REPORT_SCHEMA:
        raise InputError(
            source,
            f"is a profsight {schema!r} document, not a report ({REPORT_SCHEMA!r}: "
            "write one with profsight explain PATH --format json -o FILE)",
        )
    raw = read_input(path)
    try:
        document = msgspec.json.decode(bytes(raw.data))
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise InputError(source, f"is a profsight report but not valid JSON ({exc})") from None
    except RecursionError:
        raise InputError(
            source, "is a profsight report but nested deeper than any report is"
        ) from None
    return checked_document(document, source)


def checked_document(document: Any, source: str) -> dict[str, Any]:
    """`document` if it is a ``profsight/1`` report with the keys a comparison reads."""
    if not isinstance(document, dict) or document.get("schema") != REPORT_SCHEMA:
        raise InputError(source, f"is not a {REPORT_SCHEMA!r} report document")
    missing = [key for key in _REQUIRED if not isinstance(document.get(key), (dict, list))]
    if missing:
        raise InputError(source, f"is a profsight report without {', '.join(missing)}")
    return document
