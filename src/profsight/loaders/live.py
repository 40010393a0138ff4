"""Loading a live profiler object: a finished ``torch.profiler.profile`` (or the legacy
``torch.autograd.profiler.profile``), through the trace it exports.

Going through the exported trace gives the same model as a file: one code path, one set of
rules, and the table equals ``key_averages()`` (see tests/test_fidelity.py).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from profsight.errors import UsageError
from profsight.loaders import load
from profsight.loaders.progress import Progress, no_progress
from profsight.model.profile import Profile


def is_profiler(obj: Any) -> bool:
    return callable(getattr(obj, "export_chrome_trace", None))


def load_live(profiler: Any, progress: Progress = no_progress) -> Profile:
    fd, path = tempfile.mkstemp(suffix=".pt.trace.json", prefix="profsight-")
    os.close(fd)
    try:
        try:
            profiler.export_chrome_trace(path)
        except (RuntimeError, AssertionError) as exc:
            raise UsageError(
                f"the profiler could not export its trace ({exc}); call explain() after the "
                "`with profile(...)` block has ended"
            ) from None
        profile = load(path, progress)
        if not isinstance(profile, Profile):  # an exported trace is always JSON
            raise UsageError("the profiler exported something that is not a trace")
        profile.source = f"<{type(profiler).__module__}.{type(profiler).__name__}>"
        return profile
    finally:
        os.unlink(path)
