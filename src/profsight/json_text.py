"""JSON text inside a trace's fields (``Input Dims``, ``Concrete Inputs``), read and written
as the standard library's `json` does, without importing it on every run.

msgspec reads what `json.loads` reads to the same values (ints, correctly rounded floats,
the last of duplicate keys), and refuses what json alone takes: ``NaN``, ``Infinity``, a
float beyond the double range (json: inf), a lone surrogate. There `loads` asks json
itself, so the values are json's everywhere. The `json` module and its decoder were ~1.5 ms
of every run's start-up.
"""

from __future__ import annotations

from typing import Any

import msgspec

#: What json reads and msgspec refuses holds one of these (a lone surrogate is escaped).
_JSON_ONLY = ("NaN", "Infinity", "\\u")


def loads(text: str | bytes) -> Any:
    """`json.loads(text)`: the same value, or a `ValueError` where json raises one."""
    try:
        return msgspec.json.decode(text)
    except msgspec.ValidationError:  # a number beyond a double's range: json's is inf
        pass
    except msgspec.DecodeError:
        plain = text if isinstance(text, str) else text.decode("utf-8", "replace")
        if not any(token in plain for token in _JSON_ONLY):
            raise  # (malformed for json too: a ValueError, as json's would be)
    import json  # (only for what msgspec refuses)

    return json.loads(text)


def dumps(value: Any) -> str:
    """`json.dumps(value)` with its default separators: written here for the lists of
    integers (and lists of them) a shape is, by json for anything else."""
    if isinstance(value, list):
        return "[" + ", ".join(dumps(item) for item in value) + "]"
    if type(value) is int:  # (not bool: json writes true and false)
        return str(value)
    import json  # (a float, a string, a bool, None: json's own spelling)

    return json.dumps(value)
