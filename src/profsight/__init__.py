"""profsight: explains PyTorch and PyTorch Lightning profiler output.

    >>> import profsight
    >>> profile = profsight.load("trace.pt.trace.json.gz")
    >>> print(profile.table(sort_by="cpu_total_us", limit=10).rows[0].name)

The public names are imported on first use, so that ``import profsight`` is cheap and the
command line can configure the process before numpy loads.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "explain": "profsight.api",
    "explain_job": "profsight.api",
    "explain_snapshot": "profsight.api",
    "explain_profile": "profsight.api",
    "SavedReportView": "profsight.api",
    "MemorySnapshotReport": "profsight.api",
    "JobReport": "profsight.api",
    "profile": "profsight.integrations.torch_profile",
    "load": "profsight.loaders",
    "load_text": "profsight.loaders",
    "Report": "profsight.api",
    "TextProfile": "profsight.model.text_profile",
    "Profile": "profsight.model.profile",
    "ProfilerTable": "profsight.model.table",
    "Row": "profsight.model.table",
    "CallTree": "profsight.model.tree",
    "TreeNode": "profsight.model.tree",
    "Diagnostic": "profsight.model.diagnostics",
    "ProfsightError": "profsight.errors",
    "InputError": "profsight.errors",
    "UsageError": "profsight.errors",
}

__all__ = [
    "CallTree",
    "Diagnostic",
    "InputError",
    "JobReport",
    "MemorySnapshotReport",
    "Profile",
    "ProfilerTable",
    "ProfsightError",
    "Report",
    "Row",
    "SavedReportView",
    "TextProfile",
    "TreeNode",
    "UsageError",
    "__version__",
    "explain",
    "explain_job",
    "explain_profile",
    "explain_snapshot",
    "load",
    "load_text",
    "profile",
]

if TYPE_CHECKING:
    from profsight.api import (
        JobReport,
        MemorySnapshotReport,
        Report,
        SavedReportView,
        explain,
        explain_job,
        explain_profile,
        explain_snapshot,
    )
    from profsight.errors import InputError, ProfsightError, UsageError
    from profsight.integrations.torch_profile import profile
    from profsight.loaders import load, load_text
    from profsight.model.diagnostics import Diagnostic
    from profsight.model.profile import Profile
    from profsight.model.table import ProfilerTable, Row
    from profsight.model.text_profile import TextProfile
    from profsight.model.tree import CallTree, TreeNode


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'profsight' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
