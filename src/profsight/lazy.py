"""What start-up does without until it is used: declared, lazily imported targets, and regular
expressions compiled on first use.

Targets are ``"package.module:function"`` strings that a registry names and `resolve` imports
on first use.

A registry of them (the front door's explainers, the renderers of each kind and format)
keeps a command's start-up to the modules its input needs, and still declares every
dependency in one place: `tests/test_layout.py` resolves each target and checks that it lies
in a layer below the registry's.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from typing import Any, cast

import msgspec

from profsight.regex_needle import needle


def resolve(target: str) -> Any:
    """The object ``"module:name"`` names, its module imported now."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


#: The attributes a lazy pattern takes from its compiled one, once compiled.
_COMPILED = (
    "match",
    "search",
    "fullmatch",
    "sub",
    "subn",
    "split",
    "findall",
    "finditer",
    "flags",
    "groups",
    "groupindex",
)

#: A pattern's needle before its source is scanned (`_LazyPattern._found`).
_UNSCANNED: tuple[tuple[str, ...], bool] = ((), False)

#: The needle of each lazy pattern of the package, scanned by ``scripts/needles.py``: a run
#: scanned 184 at the first use of their patterns, ~4 ms of a 3-event ``explain``.
NEEDLES_FILE = os.path.join(os.path.dirname(__file__), "regex_needles.json")

_Needle = tuple[tuple[str, ...], bool] | None


def read_needles() -> dict[tuple[str, int], _Needle]:
    """(source, flags) -> needle, from `NEEDLES_FILE`; empty where it cannot be read (each
    pattern's needle is then scanned at its first use)."""
    try:
        with open(NEEDLES_FILE, "rb") as fh:
            rows = msgspec.json.decode(fh.read())
        return {(s, f): None if n is None else (tuple(n), i) for s, f, n, i in rows}
    except (OSError, msgspec.DecodeError, ValueError, TypeError):
        return {}


NEEDLES: dict[tuple[str, int], _Needle] = read_needles()


class _LazyPattern:
    """A regular expression compiled when first used: the package holds about 500 (the kernel
    and collective tables), and compiling them at import was ~20 ms of every run's start-up,
    most of them for kernel names a CPU trace never has. The first use sets the compiled
    pattern's bound methods on the instance, so later calls go straight to them.

    A search, match or full match first asks whether the string holds the pattern's needle
    (`regex_needle`: plain text every match contains). Where it does not, the answer is None
    and nothing is compiled: a kernel name tried against the ~150 library patterns compiles
    the few whose library it names."""

    def __init__(self, source: str, flags: int) -> None:
        self.pattern = source
        self._flags = flags
        self._needle: tuple[tuple[str, ...], bool] | None = _UNSCANNED

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name not in _COMPILED:  # (copy and pickle probe dunders)
            raise AttributeError(name)
        compiled = re.compile(self.pattern, self._flags)
        for attr in _COMPILED:
            setattr(self, attr, getattr(compiled, attr))
        found = self._found()
        if found is not None:
            for attr in ("search", "match", "fullmatch"):
                setattr(self, attr, _screened(getattr(compiled, attr), *found))
        return getattr(self, name)

    def search(self, string: str, *bounds: int) -> re.Match[str] | None:
        return self._screen("search", string, bounds)

    def match(self, string: str, *bounds: int) -> re.Match[str] | None:
        return self._screen("match", string, bounds)

    def fullmatch(self, string: str, *bounds: int) -> re.Match[str] | None:
        return self._screen("fullmatch", string, bounds)

    def _screen(self, method: str, string: str, bounds: tuple[int, ...]) -> re.Match[str] | None:
        """Before the first compile: None where the string lacks the needle, else compile."""
        found = self._found()
        if found is not None and not _holds(string, *found):
            return None
        return cast("re.Match[str] | None", self.__getattr__(method)(string, *bounds))

    def _found(self) -> tuple[tuple[str, ...], bool] | None:
        """The pattern's needle: the package's table's (`NEEDLES_FILE`), else scanned on
        first use."""
        if self._needle is _UNSCANNED:
            key = (self.pattern, int(self._flags))
            self._needle = NEEDLES[key] if key in NEEDLES else needle(*key)
        return self._needle

    def __reduce__(self) -> tuple[type[_LazyPattern], tuple[str, int]]:
        return (_LazyPattern, (self.pattern, self._flags))  # (not the compiled methods)

    def __repr__(self) -> str:
        return f"regex({self.pattern!r})"


def _holds(string: str, needles: tuple[str, ...], ignore_case: bool) -> bool:
    """Whether `string` holds one of the needles; a non-ASCII string under ignore-case is
    let through (`re` folds some of its letters to ASCII ones: "\\u017f" matches "s")."""
    if not ignore_case:
        return any(text in string for text in needles)
    if not string.isascii():
        return True
    folded = string.lower()
    return any(text in folded for text in needles)


def _screened(
    method: Callable[..., re.Match[str] | None], needles: tuple[str, ...], ignore_case: bool
) -> Callable[..., re.Match[str] | None]:
    """`method` (a compiled pattern's search, match or full match) behind the needle test."""
    if len(needles) == 1 and not ignore_case:
        (text,) = needles

        def screened(string: str, *bounds: int) -> re.Match[str] | None:
            return None if text not in string else method(string, *bounds)

        return screened

    def screened_any(string: str, *bounds: int) -> re.Match[str] | None:
        if not _holds(string, needles, ignore_case):
            return None
        return method(string, *bounds)

    return screened_any


def regex(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, compiled on first use (a match, search, sub ...)."""
    return cast("re.Pattern[str]", _LazyPattern(source, flags))


__all__ = ["regex", "resolve"]
