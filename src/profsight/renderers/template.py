"""The one template engine of the HTML pages: ``{{slot}}`` filled in a single pass.

Each slot is replaced once, and text put into a slot is never searched for slots again: a
file name holding ``{{js}}`` stays a file name. Data for a page's script goes in as JSON that
is safe inside a ``<script>`` element.
"""

from __future__ import annotations

import json
from typing import Any

from profsight.lazy import regex
from profsight.units import clean_floats

_SLOT = regex(r"\{\{(\w+)\}\}")
#: What must not appear raw inside a <script> element (and the two line separators that
#: older JavaScript parsers take for newlines); each becomes a JSON string escape.
_SCRIPT_ESCAPES = str.maketrans(
    {
        "<": "\\u003c",
        ">": "\\u003e",
        "&": "\\u0026",
        "\u2028": "\\u2028",
        "\u2029": "\\u2029",
    }
)


def fill(template: str, slots: dict[str, str]) -> str:
    """`template` with each ``{{name}}`` replaced by ``slots[name]``, in one pass."""
    return _SLOT.sub(lambda m: slots[m.group(1)], template)


def script_json(data: Any) -> str:
    """`data` as JSON that is safe inside a ``<script>`` element."""
    text = json.dumps(
        clean_floats(data), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    return text.translate(_SCRIPT_ESCAPES)


__all__ = ["fill", "script_json"]
