"""Escaping of strings that come from inputs, for every output that could interpret them."""

from __future__ import annotations

_MD_SPECIAL = str.maketrans(
    {
        "|": "\\|",
        "\\": "\\\\",
        "<": "&lt;",
        ">": "&gt;",
        "`": "\\`",
        "*": "\\*",
        "_": "\\_",
        "[": "\\[",
        "]": "\\]",
        "\n": " ",
        "\r": " ",
    }
)


def markdown_cell(text: str) -> str:
    """`text` as inert Markdown table cell content: no markup, no HTML, no links."""
    return text.translate(_MD_SPECIAL)
