"""Loading a live profiler object: a finished ``torch.profiler.profile`` (or the legacy
``torch.autograd.profiler.profile``), through the trace it exports.

Going through the exported trace gives the same model as a file: one code path, one set of
rules, and the table equals ``key_averages()`` (see tests/test_fidelity.py).
"""

from __future__ import annotations

import os
from typing import Any

from profsight.errors import UsageError
from profsight.loaders import load
from profsight.loaders.native_log import NativeLog
from profsight.loaders.progress import Progress, no_progress
from profsight.model.profile import Profile


def is_profiler(obj: Any) -> bool:
    return callable(getattr(obj, "export_chrome_trace", None))


def load_live(profiler: Any, progress: Progress = no_progress) -> Profile:
    import tempfile  # (here: it brings shutil, bz2, lzma and random, ~3 ms of a file's run)

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
        profile.memory_categories, profile.parameter_bytes = memory_categories(profiler)
        log = getattr(profiler, "native_log", None)  # integrations.native_capture
        if isinstance(log, NativeLog):
            profile.diagnostics += log.diagnostics()
        return profile
    finally:
        os.unlink(path)


def memory_categories(
    profiler: Any,
) -> tuple[dict[str, dict[str, int]] | None, dict[str, int] | None]:
    """What torch's own memory profiler says is live at its peak, by category, per memory:
    the time slot with the most bytes of ``MemoryProfileTimeline``'s series, the data
    ``export_memory_timeline`` plots (``torch.profiler._memory_profiler``); and the least
    it counts as parameters over the window. (None, None) when the run was not recorded
    with what it needs (``profile_memory``, ``record_shapes``, ``with_stack``) or it cannot
    read the run (a private API: any failure is no answer, never an error)."""
    inner = getattr(profiler, "profiler", None)
    results = getattr(inner, "kineto_results", None)
    config = (getattr(profiler, "profile_memory", False), getattr(profiler, "record_shapes", False))
    if results is None or not all(config) or not getattr(profiler, "with_stack", False):
        return None, None
    try:
        from torch.profiler._memory_profiler import (
            _CATEGORY_TO_INDEX,
            Category,
            MemoryProfile,
            MemoryProfileTimeline,
        )

        timeline = MemoryProfileTimeline(MemoryProfile(results))
        names = {
            i + 1: (c.name.lower() if c is not None else "unknown")
            for c, i in _CATEGORY_TO_INDEX.items()
        }
        devices = {str(key.device) for _, _, (key, _), _ in timeline.timeline}
        best: dict[str, tuple[int, dict[str, int]]] = {}
        least: dict[str, int] = {}
        parameter = _CATEGORY_TO_INDEX[Category.PARAMETER] + 1
        for device in sorted(devices):
            memory = "cpu" if device == "cpu" else "device"
            _, sizes = timeline._coalesce_timeline(device)  # type: ignore[no-untyped-call]
            for slot in sizes:
                total = sum(slot)
                if total > best.get(memory, (0, {}))[0]:
                    by = {names[i]: v for i, v in enumerate(slot) if i in names and v}
                    best[memory] = (total, by)
                if slot[parameter] > 0:
                    least[memory] = min(least.get(memory, slot[parameter]), slot[parameter])
    except Exception:
        return None, None
    return ({memory: by for memory, (_, by) in best.items()} or None), (least or None)
