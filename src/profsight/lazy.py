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
import re
from typing import Any, cast


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


class _LazyPattern:
    """A regular expression compiled when first used: the package holds about 500 (the kernel
    and collective tables), and compiling them at import was ~20 ms of every run's start-up,
    most of them for kernel names a CPU trace never has. The first use sets the compiled
    pattern's bound methods on the instance, so later calls go straight to them."""

    def __init__(self, source: str, flags: int) -> None:
        self.pattern = source
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name not in _COMPILED:  # (copy and pickle probe dunders)
            raise AttributeError(name)
        compiled = re.compile(self.pattern, self._flags)
        for attr in _COMPILED:
            setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)

    def __reduce__(self) -> tuple[type[_LazyPattern], tuple[str, int]]:
        return (_LazyPattern, (self.pattern, self._flags))  # (not the compiled methods)

    def __repr__(self) -> str:
        return f"regex({self.pattern!r})"


def regex(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, compiled on first use (a match, search, sub ...)."""
    return cast("re.Pattern[str]", _LazyPattern(source, flags))


__all__ = ["regex", "resolve"]
