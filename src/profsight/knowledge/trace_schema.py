"""What the categories, phases and special names of Kineto / Chrome traces mean.

Categories changed across torch versions (see ../shared/data/real/MANIFEST.md): 1.8-1.9 wrote
``Operator``/``Runtime``/``Kernel``/``Memcpy``/``Memset``; 2.x writes ``cpu_op``,
``cuda_runtime``, ``cuda_driver``, ``kernel``, ``gpu_memcpy``, ...; ROCm keeps ``cuda_runtime``
with ``hip*`` names; Intel XPU uses ``xpu_runtime``; Meta MTIA ``mtia_runtime``. The table
below normalises all of them to one `EventKind`, so no code needs a chain of ``if``s.
"""

from __future__ import annotations

import enum
from typing import Final


class EventKind(enum.IntEnum):
    """What an event is, independent of the torch version that wrote it."""

    CPU_OP = 0
    """An operator (``aten::mm``, ``autograd::engine::...``) recorded on a CPU thread."""
    ANNOTATION = 1
    """A ``record_function`` range: ``ProfilerStep#N``, Lightning's ``[pl][...]``, user labels."""
    PYTHON = 2
    """A Python function frame (``with_stack=True``)."""
    RUNTIME = 3
    """A device runtime API call on the host: ``cudaLaunchKernel``, ``hipMemcpyAsync``, ..."""
    DRIVER = 4
    """A driver API call on the host (``cuLaunchKernel``), torch >= 2.1."""
    OVERHEAD = 5
    """Profiler overhead recorded on the host (``Activity Buffer Request``)."""
    KERNEL = 6
    """A kernel executed on the device."""
    MEMCPY = 7
    """A memory copy executed by the device (H2D, D2H, D2D)."""
    MEMSET = 8
    """A memset executed by the device."""
    GPU_ANNOTATION = 9
    """The device-side projection of a ``record_function`` range."""
    SYNC = 10
    """A synchronisation seen by the device (``Stream Sync``, ``Event Sync``, ``Context Sync``)."""
    MEMORY = 11
    """A ``[memory]`` allocation (positive bytes) or free (negative) instant event."""
    OTHER = 12
    """Profiler bookkeeping: trace spans, iteration markers, unknown categories."""
    COUNTERS = 13
    """A kernel measured by CUPTI's range profiler (``cuda_profiler_range``, recorded with
    ``experimental_config`` metrics): its hardware counters, not its run time (Kineto spreads
    the profiling session evenly over the kernels it measured)."""


#: Trace category (``cat``), compared case-insensitively, to the kind of event it holds.
CATEGORY_KINDS: Final[dict[str, EventKind]] = {
    "cpu_op": EventKind.CPU_OP,
    "operator": EventKind.CPU_OP,
    "user_annotation": EventKind.ANNOTATION,
    "python_function": EventKind.PYTHON,
    "cuda_runtime": EventKind.RUNTIME,
    "runtime": EventKind.RUNTIME,
    "xpu_runtime": EventKind.RUNTIME,
    "mtia_runtime": EventKind.RUNTIME,
    "privateuse1_runtime": EventKind.RUNTIME,
    "hpu_runtime": EventKind.RUNTIME,
    "cuda_driver": EventKind.DRIVER,
    "privateuse1_driver": EventKind.DRIVER,
    "overhead": EventKind.OVERHEAD,
    "kernel": EventKind.KERNEL,
    "mtia_ccp_events": EventKind.KERNEL,
    "gpu_memcpy": EventKind.MEMCPY,
    "memcpy": EventKind.MEMCPY,
    "gpu_memset": EventKind.MEMSET,
    "memset": EventKind.MEMSET,
    "gpu_user_annotation": EventKind.GPU_ANNOTATION,
    "cuda_sync": EventKind.SYNC,
    "cuda_profiler_range": EventKind.COUNTERS,
}

#: Kinds that are ranges on a host thread: they nest, and each is a row of torch's table.
HOST_KINDS: Final[frozenset[EventKind]] = frozenset(
    {
        EventKind.CPU_OP,
        EventKind.ANNOTATION,
        EventKind.PYTHON,
        EventKind.RUNTIME,
        EventKind.DRIVER,
        EventKind.OVERHEAD,
    }
)

#: Host events that say where the program's own work ran: ops, ranges, Python frames. A trace
#: with none was recorded without CPU activity (``activities=[ProfilerActivity.CUDA]``): its
#: host holds only the runtime's calls, and what the host did between them is unknown.
PROGRAM_KINDS: Final[frozenset[EventKind]] = frozenset(
    {EventKind.CPU_OP, EventKind.ANNOTATION, EventKind.PYTHON}
)

#: Kinds that are device work: their durations are the device ("CUDA") time of the op
#: that launched them.
DEVICE_WORK_KINDS: Final[frozenset[EventKind]] = frozenset(
    {EventKind.KERNEL, EventKind.MEMCPY, EventKind.MEMSET}
)

#: Kinds that are rows of torch's table on the device side (device time, no CPU time).
#: ``gpu_user_annotation`` is a row too, but its time is left out of the device total,
#: which is why torch can print ``Self CUDA %`` above 100 % for a ``record_function``.
DEVICE_ROW_KINDS: Final[frozenset[EventKind]] = DEVICE_WORK_KINDS | {EventKind.GPU_ANNOTATION}

#: Kinds that are device rows of torch's table with device time: the device rows, and the
#: synchronisations the device records (``Stream Sync``, ``Event Sync``): torch 2.x maps
#: Kineto's CUDA_SYNC activities to the CUDA device (kineto_shim ``deviceTypeFromActivity``),
#: so they are rows of their own and, like kernels, add their time to the op they link to.
TABLE_DEVICE_KINDS: Final[frozenset[EventKind]] = DEVICE_ROW_KINDS | {EventKind.SYNC}

#: Launch kinds: host calls whose ``correlation`` id links them to device activity.
LAUNCH_KINDS: Final[frozenset[EventKind]] = frozenset({EventKind.RUNTIME, EventKind.DRIVER})

#: Kinds that can own device work in torch's table ("frontend" events, correlation 0).
OWNER_KINDS: Final[frozenset[EventKind]] = frozenset({EventKind.CPU_OP, EventKind.ANNOTATION})

#: Names torch drops before building its table (``torch.autograd.profiler_util._filter_name``):
#: they are not rows and are not children, so their time stays in their parent's self time.
FILTERED_NAMES: Final[frozenset[str]] = frozenset(
    {
        "[memory]",
        "[OutOfMemory]",
        "profiler::_record_function_enter",
        "profiler::_record_function_enter_new",
        "profiler::_record_function_exit",
        "aten::is_leaf",
        "aten::output_nr",
        "aten::_version",
    }
)

MEMORY_EVENT_NAME: Final = "[memory]"
OUT_OF_MEMORY_EVENT_NAME: Final = "[OutOfMemory]"

#: ``ProfilerStep#12`` rows are merged into one ``ProfilerStep*`` row, as torch does.
PROFILER_STEP_PREFIX: Final = "ProfilerStep#"
PROFILER_STEP_ROW: Final = "ProfilerStep*"

#: The processes of torch's legacy Chrome exporter (``EventList.export_chrome_trace`` of
#: ``torch.autograd.profiler``, torch <= 1.7 or ``use_kineto=False``; libtorch's
#: ``RecordProfile`` writes ``CPU Functions``), compared case-insensitively: its events carry
#: no ``cat``. "CPU functions" holds the ops on their threads (``tid``); "CUDA functions"
#: (torch 1.4-1.7 with ``use_cuda=True``) holds each op's time between the CUDA events
#: recorded around it, named as the op, on the device's row (``tid`` = device): nested as
#: the ops are, so only an innermost one is device work and the others span it. Each op is
#: joined to its range by a ``cpu_to_cuda`` flow (``s`` at the op's start, ``f`` at the
#: range's); torch 2.x's legacy path writes the ``s`` side only.
LEGACY_PROCESS_KINDS: Final[dict[str, EventKind]] = {
    "cpu functions": EventKind.CPU_OP,
    "cuda functions": EventKind.KERNEL,
}
LEGACY_EXPORTER: Final = (
    "torch.autograd.profiler's legacy exporter (torch <= 1.7, or use_kineto=False)"
)

#: Flow-event categories that link a host launch to device activity, oldest first.
LAUNCH_FLOW_CATEGORIES: Final[frozenset[str]] = frozenset(
    {"async", "async_gpu", "async_cpu_to_gpu", "ac2g", "cpu_to_cuda"}
)

#: Values of ``[memory]`` ``Device Type`` (c10::DeviceType) that torch counts as CPU memory.
CPU_MEMORY_DEVICE_TYPES: Final[frozenset[int]] = frozenset({0, 2, 5})  # CPU, MKLDNN, IDEEP
#: ... and as device memory: CUDA, HIP, XPU, PrivateUse1.
DEVICE_MEMORY_DEVICE_TYPES: Final[frozenset[int]] = frozenset({1, 6, 12, 20})

#: Chrome-trace phases profsight reads.
PHASE_COMPLETE: Final = "X"
PHASE_INSTANT: Final = frozenset({"i", "I"})
PHASE_METADATA: Final = "M"
PHASE_FLOW_START: Final = "s"
PHASE_FLOW_END: Final = "f"
PHASE_BEGIN_END: Final = frozenset({"B", "E"})


#: Kineto's span of the whole collection (``PyTorch Profiler (0)``, category ``Trace``): a range
#: still open when the profiler stopped ends, in torch's own events, at its end.
PROFILER_SPAN_CATEGORY: Final = "trace"
PROFILER_SPAN_PREFIX: Final = "PyTorch Profiler"


def kind_of_category(category: str) -> EventKind:
    """The kind of event a trace category holds; unknown categories are `EventKind.OTHER`."""
    return CATEGORY_KINDS.get(category.lower(), EventKind.OTHER)


def table_key(name: str) -> str:
    """The name torch's table aggregates an event under (``ProfilerStep#3``: ``ProfilerStep*``)."""
    return PROFILER_STEP_ROW if name.startswith(PROFILER_STEP_PREFIX) else name


#: Schema signals -> the torch version that introduced them (see MANIFEST.md's notes),
#: newest first: the first one present dates the trace.
ERA_SIGNALS: Final[tuple[tuple[str, str], ...]] = (
    ("cat:cuda_driver", "torch >= 2.1"),
    ("key:baseTimeNanoseconds", "torch >= 2.1"),
    ("cat:ac2g", "torch >= 1.13"),
    ("cat:cpu_op", "torch >= 1.10"),
    ("key:deviceProperties", "torch 1.9"),
    ("key:computeProperties", "torch 1.9"),
    ("key:schemaVersion", "torch 1.8"),
)


def legacy_kind(pid: object) -> EventKind:
    """The kind of a legacy exporter's event (no ``cat``) by its process, else OTHER."""
    return LEGACY_PROCESS_KINDS.get(str(pid).lower(), EventKind.OTHER)


def torch_era(
    header_keys: set[str], categories: set[str], processes: frozenset[str] | set[str] = frozenset()
) -> str:
    """A best guess of the torch version that wrote a trace (traces do not record it)."""
    if any(p.lower() in LEGACY_PROCESS_KINDS for p in processes):
        return LEGACY_EXPORTER
    present = {f"key:{k}" for k in header_keys} | {f"cat:{c.lower()}" for c in categories}
    for signal, era in ERA_SIGNALS:
        if signal in present:
            return era
    return "torch 1.8 pre-release" if "cat:operator" in present else "unknown"


#: Stack frames torch drops from ``FunctionEvent.stack`` (``torch.autograd.profiler_util.
#: _filter_stack_entry``): a frame holding both strings of a pair is dropped.
FILTERED_STACK_ENTRIES: Final = (
    ("autograd/__init__", "_make_grads"),
    ("autograd/__init__", "backward"),
    ("torch/tensor", "backward"),
    ("_internal/common_utils", "prof_callable"),
    ("_internal/common_utils", "prof_func_call"),
    ("_internal/common_utils", "prof_meth_call"),
)
#: The autograd engine's range around running a node: it carries the node's sequence number
#: and forward thread, but is no node itself (torch gives it the backward call's stack).
ENGINE_EVALUATE_PREFIX: Final = "autograd::engine::evaluate_function"
