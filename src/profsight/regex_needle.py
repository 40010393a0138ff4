"""The longest run of plain characters every match of a regular expression contains: a
substring test (``needle in name``) that rules a pattern out before it is compiled.

A kernel name is tried against about 150 patterns in order (`knowledge.kernel_patterns`),
and compiling them was most of a small trace's run; nearly all of them name a library
("cutlass_", "nccl", "Cijk_A") that the name does not hold. The scan reads the pattern's
source once, by hand, and is conservative: it answers ``None`` (no needle: compile and try)
for anything it does not follow, and `tests/test_startup.py` checks every needle in the
package against the parse of `re` itself.
"""

from __future__ import annotations

import re

_SPECIAL = frozenset("\\.^$*+?{}[]()|")
_OPTIONAL = frozenset("?*{")
#: Escapes followed by their argument: \x41, \u017f, \N{...}, \1 (a group), \012 (octal).
_ARGUED = frozenset("xuUN0123456789")
_COUNT = re.compile(r"\{\d*(?:,\d*)?\}")
_GLOBAL_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")
#: What the scan does not follow: a comment group (its text is no pattern, and a quantifier
#: after it applies to the atom before), and verbose mode anywhere (scoped ``(?x:...)``).
_UNFOLLOWED = re.compile(r"\(\?#|\(\?[aiLmsux-]*x")


def needle(source: str, flags: int = 0) -> tuple[tuple[str, ...], bool] | None:
    """(needles, whether they are matched ignoring case): every match holds one of the
    needles, the longest plain run of its branch of a top-level ``a|b``. None where the scan
    cannot tell: verbose mode, or a branch with nothing plain at its top level."""
    start, inline = _inline_flags(source)
    flags |= inline
    if flags & re.VERBOSE or _UNFOLLOWED.search(source):
        return None
    ignore_case = bool(flags & re.IGNORECASE)
    needles = []
    for branch in _branches(source, start):
        runs = _top_level_runs(branch)
        if not runs:
            return None
        longest = max(runs, key=len)
        if ignore_case and not longest.isascii():
            return None
        needles.append(longest.lower() if ignore_case else longest)
    return tuple(needles), ignore_case


def _inline_flags(source: str) -> tuple[int, int]:
    """Where the pattern proper starts, and the flags its leading groups (``(?s)(?i)``) set."""
    start, flags = 0, 0
    while (found := _GLOBAL_FLAGS.match(source, start)) is not None:
        letters = found.group(1)
        flags |= (re.IGNORECASE if "i" in letters else 0) | (re.VERBOSE if "x" in letters else 0)
        start = found.end()
    return start, flags


def _branches(source: str, i: int) -> list[str]:
    """The pattern's top-level alternatives (``a|b|c``), from index `i`."""
    branches: list[str] = []
    begin, depth = i, 0
    while i < len(source):
        char = source[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            i = _class_end(source, i)
            continue
        depth += (char == "(") - (char == ")")
        if depth == 0 and char == "|":
            branches.append(source[begin:i])
            begin = i + 1
        i += 1
    return [*branches, source[begin:]]


def _top_level_runs(source: str) -> list[str] | None:
    """The runs of literal characters outside groups and classes; None where a brace is
    not a count."""
    runs: list[str] = []
    run: list[str] = []
    depth, i = 0, 0
    while i < len(source):
        char = source[i]
        if char == "\\":
            escaped = source[i + 1 : i + 2]
            if escaped in _ARGUED:
                return None  # a code point or group number: read no further
            if depth == 0 and not escaped.isalnum():
                run.append(escaped)
            elif depth == 0:
                runs.append("".join(run))
                run = []
            i += 2
            continue
        if char == "[":
            i = _class_end(source, i)
            runs.append("".join(run))
            run = []
            continue
        depth += (char == "(") - (char == ")")
        if depth == 0 and char in _OPTIONAL:
            if char == "{" and not _COUNT.match(source, i):
                return None
            runs.append("".join(run[:-1]))  # the character before may be absent or
            run = []  # repeated: what follows it is not next to what went before
            if char == "{":
                i = source.index("}", i)
        if depth == 0 and char not in _SPECIAL:
            run.append(char)
        elif depth == 0 or char == "(":
            runs.append("".join(run))
            run = []
        i += 1
    runs.append("".join(run))
    return [r for r in runs if r]


def _class_end(source: str, i: int) -> int:
    """The index after a character class ``[...]`` that starts at `i`."""
    j = i + 1
    if source[j : j + 1] == "^":
        j += 1
    if source[j : j + 1] == "]":  # a leading "]" is a member
        j += 1
    while j < len(source) and source[j] != "]":
        j += 2 if source[j] == "\\" else 1
    return j + 1


__all__ = ["needle"]
