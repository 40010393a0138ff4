"""Names cut to the room an output gives them: the one owner of cutting, for every renderer
but JSON (which keeps every name whole).

A name from a trace can be any length: a range labelled with ``record_function`` can hold
200,000 characters, a CUTLASS kernel's demangled name 1,500. The terminal cuts a name to the
room its line leaves (`cut_name`, `distinct_names`), Markdown to `MARKDOWN_NAME` characters,
the HTML page's data to `HTML_NAME` (the page shows fewer, with CSS, and the rest in a
``title``). Prose that quotes a name (an explanation, a reading) is cut word by word
(`cut_words`): a word longer than a line could only be broken across lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from profsight.json_text import dumps, loads
from profsight.lazy import regex

ELLIPSIS = "…"
#: Characters of a name in Markdown (a table cell, a list item, a tree line).
MARKDOWN_NAME = 120
#: Characters of a name in the HTML page's data: each name is in the page once or twice (the
#: table, the call tree), so a 200,000-character name must not go in whole.
HTML_NAME = 2000
#: The fewest characters a name is cut to, however little room its line leaves.
NARROWEST = 20

_WORD = regex(r"\S+")


def cut_name(name: str, width: int) -> str:
    """`name` in at most `width` characters, its end cut to ``…`` when longer."""
    if len(name) <= width:
        return name
    if width < 1:
        return ""
    return name[: width - 1] + ELLIPSIS


def fit_name(name: str, room: int) -> str:
    """`name` cut to `room` characters, but never below `NARROWEST`."""
    return cut_name(name, max(room, NARROWEST))


def cut_words(text: str, width: int) -> str:
    """`text` with each word (a run of non-blank characters) longer than `width` cut to it."""
    if len(text) <= width:
        return text
    return _WORD.sub(lambda m: cut_name(m.group(0), max(width, NARROWEST)), text)


def markdown_name(name: str) -> str:
    """`name` as Markdown shows it: cut to `MARKDOWN_NAME` characters (before escaping)."""
    return cut_name(name, MARKDOWN_NAME)


def evidence_label(label: str, value: str, rows: Sequence[str], room: int) -> str:
    """A finding's evidence label, cut so that ``- label: value`` fits in `room` columns when
    the label is (or holds) the name of a row it is about: a kernel's name, not a phrase."""
    if not any(r and r in label for r in rows):
        return label
    return fit_name(label, room - len(f"- : {value}"))


def reads_from_its_end(name: str) -> bool:
    """Whether a name says what it is at its end: Lightning's and the profiler's bracketed
    ranges (``[pl][profile][Strategy]SingleDeviceStrategy.training_step``), module paths and
    Python frames (``...module.py(1751): _call_impl``). An op's or a kernel's name says it at
    its start (``aten::cudnn_convolution_…``, ``void at::native::…``)."""
    return name.startswith("[") or ".py(" in name


def cut_from_start(name: str, width: int) -> str:
    """`name` in at most `width` characters, its start cut to ``…`` when longer."""
    if len(name) <= width:
        return name
    return ELLIPSIS + name[len(name) - width + 1 :] if width > 1 else name[-width:]


def cut_to_read(name: str, width: int) -> str:
    """`name` cut where it says least: its start for a name that reads from its end
    (`reads_from_its_end`), its end otherwise."""
    return cut_from_start(name, width) if reads_from_its_end(name) else cut_name(name, width)


def distinct_names(names: list[str], width: int) -> list[str]:
    """Each name in at most `width` characters, cut where it says least (`cut_to_read`:
    ``…Strategy.training_step``, ``aten::cudnn_convolution_ba…``). Where cut names would
    read the same, each shows its start and then the part from where the names begin to
    differ (``void at:…BinaryFunctor<float…``, ``torch/nn…(1751): _call_impl``)."""
    cut = [cut_to_read(n, width) for n in names]
    groups: dict[str, list[str]] = {}
    for name, c in zip(names, cut, strict=True):
        groups.setdefault(c, []).append(name)
    out = []
    for name, c in zip(names, cut, strict=True):
        group = groups[c]
        out.append(c if len(set(group)) == 1 else _from_difference(name, group, width))
    return out


#: Characters of a name's start kept when its middle is cut, and of context before the
#: place where two names differ.
_HEAD = 8
_CONTEXT = 4


def _from_difference(name: str, group: list[str], width: int) -> str:
    """`name`'s start, then its text from just before where `group`'s names part."""
    first, last = min(group), max(group)  # the common prefix of all is theirs
    pairs = enumerate(zip(first, last, strict=False))
    common = next((i for i, (a, b) in pairs if a != b), len(first))
    head = name[: min(_HEAD, common)]
    start = max(common - _CONTEXT, len(head))
    if start <= len(head):
        return cut_name(name, width)
    room = width - len(head) - 1
    rest = name[start:]
    return head + ELLIPSIS + (rest if len(rest) <= room else rest[: room - 1] + ELLIPSIS)


__all__ = [
    "ELLIPSIS",
    "HTML_NAME",
    "MARKDOWN_NAME",
    "NARROWEST",
    "cut_from_start",
    "cut_name",
    "cut_to_read",
    "cut_words",
    "distinct_names",
    "evidence_label",
    "fit_name",
    "markdown_name",
    "reads_from_its_end",
]


def tensor_dims(input_dims: str) -> str:
    """An op's ``Input Dims`` with the scalars' and absent arguments' empty entries left
    out: ``[8944, 1024] [1024, 2816]``."""
    try:
        dims = loads(input_dims)
    except ValueError:
        return input_dims
    if not isinstance(dims, list):
        return input_dims
    shown = [d for d in dims if d]
    return " ".join(dumps(d) for d in shown) if shown else "[]"
