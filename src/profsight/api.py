"""The Python entry points that take "anything the profiler produced"."""

from __future__ import annotations

import os
from typing import Any

from profsight.loaders import load, load_text
from profsight.loaders.live import is_profiler, load_live
from profsight.model.profile import Profile
from profsight.model.text_profile import TextProfile
from profsight.report import Report, build_report


def explain(source: Any) -> Report:
    """Explain a profile: a trace or table file path, printed table text, a loaded profile,
    or a finished ``torch.profiler.profile`` object.

    The `Report` prints as text (``print(report)``), and has ``.markdown()`` and ``.json()``.
    """
    return build_report(_profile_of(source))


def _profile_of(source: Any) -> Profile | TextProfile:
    if isinstance(source, (Profile, TextProfile)):
        return source
    if isinstance(source, os.PathLike):
        return load(source)
    if isinstance(source, str):
        if "\n" in source and not os.path.exists(source):
            return load_text(source)
        return load(source)
    if is_profiler(source):
        return load_live(source)
    raise TypeError(
        "explain() takes a path, the text of a printed table, a profsight profile or a "
        f"torch profiler, not {type(source).__name__}"
    )
