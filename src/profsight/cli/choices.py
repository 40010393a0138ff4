"""The choices the command line offers, kept light so that parsing imports nothing heavy.

Every view's formats and suffixes come from the renderers' registry
(`profsight.renderers.explained`), which imports no renderer until one is used;
`tests/test_cli.py` checks that the others equal the registries they name.
"""

from __future__ import annotations

from profsight.errors import UsageError
from profsight.renderers.explained import FORMATS, SUFFIXES, VIEW_SUFFIXES, VIEWS

TABLE_FORMATS = tuple(VIEWS["table"])
TABLE_SUFFIXES = VIEW_SUFFIXES["table"]
#: Every report kind's formats and output suffixes: the renderers' own registry, which
#: imports no renderer until one is used (`profsight.renderers.explained`).
REPORT_FORMATS = FORMATS
REPORT_SUFFIXES = SUFFIXES
#: `profsight.model.table.GROUP_BYS`
GROUP_BYS = ("name", "shape", "module")
TREE_FORMATS = tuple(VIEWS["tree"])
TREE_SUFFIXES = VIEW_SUFFIXES["tree"]
DIFF_FORMATS = tuple(VIEWS["diff"])
DIFF_SUFFIXES = VIEW_SUFFIXES["diff"]
SNAPSHOT_DIFF_SUFFIXES = VIEW_SUFFIXES["snapshot_diff"]
#: `profsight.compare.diff.BYS`
DIFF_BYS = ("total", "self")
#: `profsight.job.executors.EXECUTORS`
EXECUTORS = ("process", "serial", "dask")

#: `profsight.model.table.SORT_KEYS`, profsight's own names: the table's columns.
SORT_KEYS = (
    "name",
    "calls",
    "self_cpu_us",
    "self_cpu",
    "cpu_total_us",
    "cpu_total",
    "cpu_avg_us",
    "self_device_us",
    "self_device",
    "self_cuda",
    "device_total_us",
    "device_total",
    "cuda_total",
    "device_avg_us",
    "cpu_mem",
    "self_cpu_mem",
    "device_mem",
    "self_device_mem",
)
#: `profsight.model.table.SORT_KEYS`, torch's names: ``key_averages().table(sort_by=...)``
#: takes a `FunctionEventAvg` attribute (torch/autograd/profiler_util.py, `EventList.table`:
#: "cpu_time, cuda_time, xpu_time, cpu_time_total, ..., count"; the ``self_*_time_total``
#: and ``device_*`` properties of the same class).
TORCH_SORT_KEYS = (
    "self_cpu_time_total",
    "cpu_time_total",
    "cpu_time",
    "self_cuda_time_total",
    "cuda_time_total",
    "cuda_time",
    "self_device_time_total",
    "device_time_total",
    "device_time",
    "self_xpu_time_total",
    "xpu_time_total",
    "xpu_time",
    "count",
    "cpu_memory_usage",
    "self_cpu_memory_usage",
    "cuda_memory_usage",
    "self_cuda_memory_usage",
    "device_memory_usage",
    "self_device_memory_usage",
    "xpu_memory_usage",
    "self_xpu_memory_usage",
)


#: Frames ``--group-by stack`` groups by when it names no number (torch's examples use 5).
DEFAULT_STACK_FRAMES = 5


def group_by(text: str) -> tuple[str, int]:
    """``--group-by``: one of `GROUP_BYS`, or ``stack`` / ``stack:N`` (by name and the first
    N frames of the call stack, torch's ``group_by_stack_n``): (grouping, frames)."""
    if text in GROUP_BYS:
        return text, 0
    head, _, count = text.partition(":")
    if head == "stack" and (not count or (count.isdigit() and int(count) > 0)):
        return "name", int(count) if count else DEFAULT_STACK_FRAMES
    raise UsageError(
        f"unknown group-by {text!r}; use one of: {', '.join(GROUP_BYS)}, stack, stack:N"
    )


def sort_key(text: str) -> str:
    """``--sort``: one of `SORT_KEYS` or `TORCH_SORT_KEYS` (any case, ``-`` for ``_``)."""
    key = text.lower().replace("-", "_")
    if key in SORT_KEYS or key in TORCH_SORT_KEYS:
        return key
    raise UsageError(
        f"unknown sort key {text!r}; use one of profsight's: {', '.join(SORT_KEYS)}; "
        f"or torch's sort_by names: {', '.join(TORCH_SORT_KEYS)}"
    )
