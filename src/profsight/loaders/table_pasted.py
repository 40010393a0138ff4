"""A printed table whose lines or columns were rewritten on the way into an issue, back in
torch's fixed-width layout, so that `table_text` reads it as printed.

* **Lines joined by HTML line breaks** (``<br/>``): a table pasted into a Markdown table's
  cell, or into an HTML page, with its spaces as ``&nbsp;``. The breaks become lines again,
  the HTML entities their characters and non-breaking spaces spaces.
* **A Markdown pipe table** (``Name | Self CPU % | ...`` over ``-- | -- | ...``, or the same
  between outer pipes over ``|---|---|``): what a rendered table copied from a web page
  becomes in GitHub's editor. Its cells are laid out as torch lays them: each column as
  wide as its widest cell, two spaces apart, under a dashed rule, with the footer below
  it. A last row cut short stays the last line, as in a fragment of a printed table.

Text with neither is returned as it is (one substring test each).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from profsight.lazy import regex
from profsight.loaders.table_columns import NAME_TITLE, parse_footer

_BREAK: Final = regex(r"<br\s*/?>", re.IGNORECASE)
#: A pipe table's delimiter row: ``--``, ``:--:`` cells between pipes (outer pipes optional).
_DELIMITER: Final = regex(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)+\|?\s*$")
_SPACES: Final = regex(r"\s+")
_CELL_OPEN: Final = regex(r"^\s*\|")
_CELL_CLOSE: Final = regex(r"\|\s*$")
_NBSP: Final = "\xa0"
#: torch writes two spaces after every cell.
_GAP: Final = "  "


def relay(text: str) -> str:
    """`text` with HTML line breaks and Markdown pipe tables laid out as torch prints."""
    if "<br" in text or "<BR" in text:
        text = _unbreak(text)
    if _NBSP in text:  # a web page's non-breaking spaces hold a table's columns apart
        text = text.replace(_NBSP, " ")
    if "|" in text and "--" in text:
        text = _unpipe(text)
    return text


def _unbreak(text: str) -> str:
    """Each line holding HTML breaks split at them, without the pipes of the Markdown
    table cell it was (``|line<br/>line|``)."""
    if not _BREAK.search(text):
        return text
    import html  # only for text pasted as HTML

    out: list[str] = []
    for line in text.splitlines():
        parts = _BREAK.split(line)
        if len(parts) > 1:
            parts[0] = _CELL_OPEN.sub("", parts[0])
            parts[-1] = _CELL_CLOSE.sub("", parts[-1])
        out += parts
    return html.unescape("\n".join(out)) + ("\n" if text.endswith("\n") else "")


def _unpipe(text: str) -> str:
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        end = _table_end(lines, i)
        if end is None:
            out.append(lines[i])
            i += 1
            continue
        out += _laid_out([_cells(line) for line in lines[i:end] if not _DELIMITER.match(line)])
        i = _footer_after(lines, end)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _table_end(lines: Sequence[str], i: int) -> int | None:
    """Where the pipe table whose header is line `i` ends (None: no table there)."""
    if i + 1 >= len(lines) or not _DELIMITER.match(lines[i + 1]):
        return None
    titles = _cells(lines[i])
    if NAME_TITLE not in titles or len(titles) != len(_cells(lines[i + 1])):
        return None
    end = i + 2
    while end < len(lines) and "|" in lines[end] and len(_cells(lines[end])) > 1:
        end += 1
    return end


def _footer_after(lines: Sequence[str], end: int) -> int:
    """Where what follows the pipe table at `end` resumes: at its footer (``Self CPU time
    total: ...``) where only blank lines part them, as torch prints it under the rule."""
    k = end
    while k < len(lines) and not lines[k].strip():
        k += 1
    return k if k < len(lines) and parse_footer(lines[k].strip()) is not None else end


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [_SPACES.sub(" ", cell).strip() for cell in body.split("|")]


def _laid_out(rows: list[list[str]]) -> list[str]:
    """The header (`rows[0]`) and rows as torch lays them out, between dashed rules."""
    columns = len(rows[0])
    widths = [max(len(r[c]) for r in rows if c < len(r)) for c in range(columns)]
    rule = _GAP.join("-" * w for w in widths)
    lines = [_GAP.join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in rows]
    # a last row cut short stays the table's last line, as in a printed fragment
    closing = [rule] if len(rows[-1]) >= columns else []
    return [rule, lines[0], rule, *lines[1:], *closing]
