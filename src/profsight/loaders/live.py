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
        profile.memory_categories = memory_categories(profiler)
        return profile
    finally:
        os.unlink(path)


def memory_categories(profiler: Any) -> dict[str, dict[str, int]] | None:
    """What torch's own memory profiler (``torch.profiler._memory_profiler.MemoryProfile``,
    the one behind ``export_memory_timeline``) says is live at its peak, by category, per
    memory; None when the run was not recorded with what it needs (``profile_memory``,
    ``record_shapes``, ``with_stack``) or it cannot read the run (a private API: any
    failure is no answer, never an error)."""
    inner = getattr(profiler, "profiler", None)
    results = getattr(inner, "kineto_results", None)
    config = (getattr(profiler, "profile_memory", False), getattr(profiler, "record_shapes", False))
    if results is None or not all(config) or not getattr(profiler, "with_stack", False):
        return None
    try:
        from torch.profiler._memory_profiler import Action, MemoryProfile

        profile = MemoryProfile(results)
        live: dict[Any, tuple[str, int, str]] = {}
        totals = {"cpu": 0, "device": 0}
        by: dict[str, dict[str, int]] = {"cpu": {}, "device": {}}
        best: dict[str, tuple[int, dict[str, int]]] = {}
        for _, action, (key, version), size in profile.timeline:
            kept = (Action.PREEXISTING, Action.CREATE, Action.INCREMENT_VERSION, Action.DESTROY)
            if action not in kept:
                continue
            old = live.pop(key, None)
            if old is not None:
                totals[old[0]] -= old[1]
                by[old[0]][old[2]] -= old[1]
            if action == Action.DESTROY:
                continue
            category = profile._categories.get(key, version)
            name = category.name.lower() if category is not None else "unknown"
            memory = "cpu" if key.device.type == "cpu" else "device"
            live[key] = (memory, int(size), name)
            totals[memory] += int(size)
            by[memory][name] = by[memory].get(name, 0) + int(size)
            if totals[memory] > best.get(memory, (-1, {}))[0]:
                best[memory] = (totals[memory], {k: v for k, v in by[memory].items() if v})
    except Exception:
        return None
    return {memory: by for memory, (total, by) in best.items() if total > 0} or None
