"""How loaders report progress without knowing who listens (the CLI draws a bar)."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def __call__(self, phase: str, done: int, total: int) -> None:
        """`done` of `total` units (bytes) of `phase` ("read", "decode") are finished."""


def no_progress(phase: str, done: int, total: int) -> None:
    """The default listener: nobody."""
