"""Oddities found while reading an input: kept, counted and shown, never silently dropped."""

from __future__ import annotations

import enum

import msgspec


class Level(enum.Enum):
    INFO = "info"
    WARNING = "warning"


class Diagnostic(msgspec.Struct, frozen=True):
    """One kind of oddity, with how often it occurred and what to do about it."""

    code: str
    """Stable id, e.g. ``truncated``, ``partial_overlap``, ``unlinked_device``."""
    message: str
    """What was found and what profsight did about it, in one sentence."""
    level: Level = Level.WARNING
    count: int = 1
    remedy: str = ""
    """What the user can change so that it does not happen, if anything."""

    def __str__(self) -> str:
        text = f"{self.level.value}: {self.message}"
        return f"{text} ({self.remedy})" if self.remedy else text
