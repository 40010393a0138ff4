"""profsight: explains PyTorch and PyTorch Lightning profiler output.

>>> import profsight
>>> profile = profsight.load("trace.pt.trace.json.gz")
>>> print(profile.table(sort_by="cpu_total_us", limit=10).rows[0].name)
"""

from __future__ import annotations

from profsight.errors import InputError, ProfsightError, UsageError
from profsight.loaders import load
from profsight.model.diagnostics import Diagnostic
from profsight.model.profile import Profile
from profsight.model.table import ProfilerTable, Row
from profsight.model.tree import CallTree, TreeNode

__version__ = "0.1.0"

__all__ = [
    "CallTree",
    "Diagnostic",
    "InputError",
    "Profile",
    "ProfilerTable",
    "ProfsightError",
    "Row",
    "TreeNode",
    "UsageError",
    "__version__",
    "load",
]
