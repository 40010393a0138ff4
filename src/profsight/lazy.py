"""Declared, lazily imported targets: ``"package.module:function"`` strings that a registry
names and `resolve` imports on first use.

A registry of them (the front door's explainers, the renderers of each kind and format)
keeps a command's start-up to the modules its input needs, and still declares every
dependency in one place: `tests/test_layout.py` resolves each target and checks that it lies
in a layer below the registry's.
"""

from __future__ import annotations

import importlib
from typing import Any


def resolve(target: str) -> Any:
    """The object ``"module:name"`` names, its module imported now."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


__all__ = ["resolve"]
