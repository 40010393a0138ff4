"""Row kinds: which layer of the stack a row of the profiler table belongs to, and what that
layer's self-vs-total pattern means.

The kind is decided by a table of rules (first match wins) over the row's name and, for
traces, the kind of event it came from. Printed tables carry no event kinds, so the name
rules must also recognise runtime calls, copies and kernels by name alone.
"""

from __future__ import annotations

import enum
import functools
import re
from typing import Final

import msgspec

from profsight.knowledge.collectives import DEVICE_COMM_LIBRARIES
from profsight.knowledge.lightning_names import (
    LIGHTNING_ACTION_PREFIX,
    LIGHTNING_MODULE_PREFIX,
    PYTHON_MODULE_PREFIX,
    action_candidates,
)
from profsight.lazy import regex


class RowKind(enum.Enum):
    STEP = "step"
    LIGHTNING = "lightning"
    STRATEGY = "strategy"
    MODULE = "module"
    CALLBACK = "callback"
    DATALOADER = "dataloader"
    OPTIMIZER = "optimizer"
    METRIC = "metric"
    ATEN = "aten"
    BACKWARD = "backward"
    RUNTIME = "runtime"
    SYNC = "sync"
    KERNEL = "kernel"
    MEMCPY = "memcpy"
    MEMSET = "memset"
    COMMUNICATION = "communication"
    PYTHON = "python"
    USER = "user"
    OTHER = "other"


class KindInfo(msgspec.Struct, frozen=True):
    layer: str
    """The layer of the stack, as a reader would name it."""
    meaning: str
    """What rows of this kind are."""
    self_vs_total: str
    """What their self and total times tell."""


KINDS: Final[dict[RowKind, KindInfo]] = {
    RowKind.STEP: KindInfo(
        "profiler step",
        "one iteration of the profiler's schedule (prof.step() / one training batch); all "
        "ProfilerStep#N rows are merged into ProfilerStep*",
        "its total is the wall time of the profiled steps; its self time is what ran inside "
        "the step but in no recorded op (Python between ops, framework code)",
    ),
    RowKind.LIGHTNING: KindInfo(
        "Lightning loop",
        "a Lightning loop action or hook ([pl][profile]...): the framework's own bookkeeping "
        "around your code",
        "high self time is Lightning's own Python (logging, hooks, callbacks); low self with "
        "high total means the time is in what it calls (your step, the optimizer)",
    ),
    RowKind.STRATEGY: KindInfo(
        "Lightning strategy",
        "the strategy's wrapper ([Strategy]SingleDeviceStrategy, DDPStrategy, ...) around your "
        "step, backward and batch transfer: how data and work flow between CPU and devices",
        "its total is the wrapped phase (forward, backward, batch transfer); a self time well "
        "above zero is the strategy's own overhead (e.g. DDP's gradient hooks)",
    ),
    RowKind.MODULE: KindInfo(
        "your model",
        "one nn.Module call ([pl][module] with record_module_names, or nn.Module frames with "
        "with_stack): the cost of running that layer or block",
        "high self time is the module's own Python in forward() between its ops (e.g. the "
        "glue around a residual block's skip connection); low self with high total means its "
        "children (convolutions, matmuls) do the work",
    ),
    RowKind.CALLBACK: KindInfo(
        "Lightning callback",
        "a callback hook ([Callback]...): checkpointing, progress bars, early stopping, your own",
        "time here runs every batch or epoch and adds directly to the step time",
    ),
    RowKind.DATALOADER: KindInfo(
        "data pipeline",
        "fetching the next batch: enumerate(DataLoader)#... or Lightning's *_dataloader_next",
        "a large total means the training loop waits for data; with num_workers=0 it is the "
        "loading itself, with workers it is the wait for them",
    ),
    RowKind.OPTIMIZER: KindInfo(
        "optimizer",
        "the optimizer's step() or zero_grad() (Optimizer.step#Adam.step)",
        "self time is the optimizer's Python loop over parameters; a high total in many small "
        "ops calls for foreach=True or fused=True",
    ),
    RowKind.METRIC: KindInfo(
        "metrics",
        "a torchmetrics metric (update/compute) called during the step",
        "metrics computed every step cost CPU time and often a host-device sync",
    ),
    RowKind.ATEN: KindInfo(
        "PyTorch operator",
        "an ATen operator (aten::...): the C++ implementation of a tensor operation",
        "ops dispatch to other ops: a chain like conv2d -> convolution -> _convolution -> "
        "cudnn_convolution is one call seen at four levels, so only the innermost has a large "
        "self time; on a GPU run the CPU time is the launch, the CUDA time is the work",
    ),
    RowKind.BACKWARD: KindInfo(
        "autograd (backward)",
        "the backward pass: autograd::engine::evaluate_function rows and *Backward0 nodes, one "
        "per forward op that needs a gradient",
        "their totals add up to backward's cost; they run on autograd's own thread on GPU runs",
    ),
    RowKind.RUNTIME: KindInfo(
        "device runtime",
        "a CUDA/HIP/XPU runtime or driver call made by the CPU (cudaLaunchKernel, "
        "cudaMemcpyAsync, ...)",
        "this is CPU time spent talking to the driver; many short launches mean launch "
        "overhead dominates small kernels",
    ),
    RowKind.SYNC: KindInfo(
        "host-device sync",
        "a call that makes the CPU wait for the GPU (cudaStreamSynchronize, "
        "cudaDeviceSynchronize, cudaEventSynchronize)",
        "its self time is the CPU idling until the GPU catches up: often caused by .item(), "
        ".cpu(), printing or logging a GPU tensor",
    ),
    RowKind.KERNEL: KindInfo(
        "GPU kernel",
        "code that ran on the device, launched by an op above it",
        "kernels have no CPU time: their self and total device time are the time the GPU "
        "spent running them",
    ),
    RowKind.MEMCPY: KindInfo(
        "device copy",
        "a memory copy done by the device: HtoD (host to device), DtoH, DtoD",
        "HtoD from pageable memory is slow and synchronous: pin_memory=True helps",
    ),
    RowKind.MEMSET: KindInfo(
        "device memset",
        "the device filling memory (zeroing gradients or buffers)",
        "usually small; many of them point at zero_grad without set_to_none",
    ),
    RowKind.COMMUNICATION: KindInfo(
        "communication",
        "a collective between processes (all-reduce, all-gather, broadcast) via NCCL, RCCL or "
        "gloo, or its c10d op",
        "time here is communication; it hurts when the device waits for it instead of "
        "overlapping it with the backward pass",
    ),
    RowKind.PYTHON: KindInfo(
        "Python",
        "a Python function frame (with_stack=True)",
        "self time is the interpreter running that function's own lines",
    ),
    RowKind.USER: KindInfo(
        "your label",
        "a range you (or a library) labelled with record_function",
        "its total is the labelled block; self time is what ran in it outside recorded ops",
    ),
    RowKind.OTHER: KindInfo(
        "other",
        "a row profsight has no rule for",
        "",
    ),
}

_SYNC_CALLS = regex(
    r"^(cuda|hip)(Stream|Device|Event|Ctx)Synchronize|^cu(Stream|Ctx|Event)Synchronize|"
    r"^urQueueFinish|^urEventWait"
)
_RUNTIME_CALLS = regex(r"^(cuda|cu|hip|hsa_|ur|zeCommand|cudnn|cublas)[A-Z]")
_COMMUNICATION = regex(
    r"^(nccl|rccl|gloo|mpi|ucc)[:_]|^c10d::|^record_param_comms$|^nccl(Dev)?Kernel|"
    r"^(void )?ncclKernel|ProcessGroup|AllReduce|all_reduce|allgather|all_gather|"
    r"reduce_scatter|broadcast_"
)


#: The kernels of the communication libraries of their own, as one pattern.
_COMM_LIBRARY_KERNELS = regex("|".join(f"(?:{p.pattern})" for p, _ in DEVICE_COMM_LIBRARIES))


def _is_communication(name: str) -> bool:
    """A collective's row: NCCL/RCCL/gloo and the process group's names, or a kernel of a
    communication library of its own (DeepEP, NVSHMEM, MSCCL: `DEVICE_COMM_LIBRARIES`)."""
    return bool(_COMMUNICATION.search(name) or _COMM_LIBRARY_KERNELS.match(name))


_KERNEL_SHAPES = regex(
    r"^void |kernel|^(maxwell|pascal|volta|turing|ampere|sm\d+|cutlass|xmma|triton_|"
    r"Cijk_|MIOpen|igemm|\d+x_cudnn|implicit_convolve|flash_)|<.*>"
)
_DEVICE_EVENT_KINDS = frozenset({"kernel", "memcpy", "memset", "device_annotation"})
_HOST_HINTS: Final[dict[str, RowKind]] = {
    "python": RowKind.PYTHON,
    "runtime": RowKind.RUNTIME,
    "driver": RowKind.RUNTIME,
    "device_annotation": RowKind.USER,
}


#: ``Row.event_kind`` of a Lightning SimpleProfiler action (named without ``[pl][profile]``).
LIGHTNING_ACTION_EVENT = "lightning_action"
#: ``Row.event_kind`` of a metric's time read from an AdvancedProfiler listing, named
#: ``torchmetrics <entry> in <action>``.
METRIC_EVENT = "metric"
METRIC_IN = " in "


@functools.lru_cache(maxsize=8192)  # a run asks about each name ~2x (a 10 MB trace: 1,334 for 574)
def classify(name: str, event_kind: str = "unknown") -> RowKind:
    """The row kind of a table row or tree node. `event_kind` as in `Row.event_kind`."""
    if event_kind == LIGHTNING_ACTION_EVENT:
        name = LIGHTNING_ACTION_PREFIX + name
    for rule in _NAME_RULES:
        kind = rule(name)
        if kind is not None:
            if kind is RowKind.RUNTIME and _SYNC_CALLS.match(name):
                return RowKind.SYNC
            return kind
    if event_kind in ("runtime", "driver"):
        return RowKind.SYNC if _SYNC_CALLS.match(name) else RowKind.RUNTIME
    if event_kind == "sync":  # the device's record of a sync (Stream Sync, Event Sync)
        return RowKind.SYNC
    if event_kind == "memcpy":
        return RowKind.MEMCPY
    if event_kind == "memset":
        return RowKind.MEMSET
    if event_kind == "kernel":
        return RowKind.COMMUNICATION if _is_communication(name) else RowKind.KERNEL
    if event_kind in _HOST_HINTS:
        return _HOST_HINTS[event_kind]
    if event_kind == "annotation":
        return RowKind.USER
    if event_kind == METRIC_EVENT:
        return RowKind.METRIC
    if event_kind == "unknown" and _KERNEL_SHAPES.search(name):
        return RowKind.KERNEL
    if event_kind == "cpu_op":
        return RowKind.ATEN
    return RowKind.OTHER


def _lightning(name: str) -> RowKind | None:
    if name.startswith(LIGHTNING_MODULE_PREFIX):
        return RowKind.METRIC if "torchmetrics." in name else RowKind.MODULE
    if name.startswith(PYTHON_MODULE_PREFIX):
        return RowKind.MODULE
    if not name.startswith(LIGHTNING_ACTION_PREFIX):
        return None
    body = name[len(LIGHTNING_ACTION_PREFIX) :]
    if body.startswith("[Strategy]"):
        return RowKind.STRATEGY
    if body.startswith("[Callback]"):
        return RowKind.CALLBACK
    actions = action_candidates(name)  # several when the printed table cut the name
    if actions and all(a.endswith("_next") for a in actions):
        return RowKind.DATALOADER
    if actions and all(a in ("optimizer_zero_grad", "on_before_zero_grad") for a in actions):
        return RowKind.OPTIMIZER
    return RowKind.LIGHTNING


#: The step ranges ``prof.step()`` records (``ProfilerStep#3``) and torch's table merges
#: (``ProfilerStep*``).
STEP_PREFIXES: Final = ("ProfilerStep#", "ProfilerStep*")


def _by_prefix(name: str) -> RowKind | None:
    if name.startswith(STEP_PREFIXES):
        return RowKind.STEP
    if name.startswith("enumerate(DataLoader)#"):
        return RowKind.DATALOADER
    if name in _WRAPPER_MODULES:
        return RowKind.MODULE
    if name.startswith(("Optimizer.step#", "Optimizer.zero_grad#")):
        return RowKind.OPTIMIZER
    if name.startswith(("autograd::engine::evaluate_function", "torch::autograd::")):
        return RowKind.BACKWARD
    if re.fullmatch(r"[A-Za-z0-9_]+Backward\d*", name):
        return RowKind.BACKWARD
    if name.startswith(("Memcpy ", "Memcpy(")):
        return RowKind.MEMCPY
    if name.startswith(("Memset ", "Memset(")):
        return RowKind.MEMSET
    if _is_communication(name):
        return RowKind.COMMUNICATION
    if name.startswith("aten::"):
        return RowKind.ATEN
    if _SYNC_CALLS.match(name):
        return RowKind.SYNC
    if _RUNTIME_CALLS.match(name):
        return RowKind.RUNTIME
    return None


#: Python frames ``with_stack=True`` records (``<built-in method run_backward of ...>``,
#: ``<built-in function loads>``, ``train.py(42): train_step``): Python, never a kernel,
#: whose template arguments (``<...>``) a frame's angle brackets would otherwise look like.
_PYTHON_FRAME = regex(
    r"^<built-in (?:method|function) "
    # a file's frame (train.py(42): f, C:\\runs\\train.py(3): step) or a pseudo-file's
    # (<frozen os>(756): encode, <string>(2): __init__, FX's <eval_with_key>.5(4): forward)
    r"|^(?:<[^>]+>(?:\.\d+)?|(?:[A-Za-z]:)?[^()]*\.py)\(\d+\): "
)


def _python_frame(name: str) -> RowKind | None:
    return RowKind.PYTHON if _PYTHON_FRAME.match(name) else None


_NAME_RULES = (_python_frame, _lightning, _by_prefix)
#: Ranges torch's parallel wrappers record around the wrapped module's forward.
_WRAPPER_MODULES: Final = frozenset(
    {"DistributedDataParallel.forward", "DataParallel.forward", "FullyShardedDataParallel.forward"}
)

#: Row kinds whose time is on the device (no CPU time of their own).
DEVICE_KINDS: Final = frozenset({RowKind.KERNEL, RowKind.MEMCPY, RowKind.MEMSET})

#: Runtime calls that launch one kernel each (per-step launch counts; graph launches, which
#: start many kernels at once, are left out).
LAUNCH_CALLS: Final = frozenset(
    {
        "cudaLaunchKernel",
        "cudaLaunchKernelExC",
        "cudaLaunchCooperativeKernel",
        "cuLaunchKernel",
        "cuLaunchKernelEx",
        "hipLaunchKernel",
        "hipExtLaunchKernel",
        "hipModuleLaunchKernel",
        "hipExtModuleLaunchKernel",
    }
)
#: Runtime copy calls: a copy to or from pageable host memory, and any device-to-host copy,
#: returns only when the device has done it and everything queued before it (CUDA runtime
#: API, "API synchronization behavior"), so their host time can be a wait for the device.
BLOCKING_COPY_CALLS: Final = frozenset(
    {
        "cudaMemcpy",
        "cudaMemcpyAsync",
        "cudaMemcpy2D",
        "cudaMemcpy2DAsync",
        "cuMemcpy",
        "cuMemcpyAsync",
        "cuMemcpyDtoH_v2",
        "cuMemcpyHtoD_v2",
        "hipMemcpy",
        "hipMemcpyAsync",
        "hipMemcpyWithStream",
    }
)
#: Calls that synchronise the device implicitly: freeing device or pinned memory waits for
#: the work that may still use it (CUDA runtime API, "Implicit Synchronization"; HIP alike).
IMPLICIT_SYNC_CALLS: Final = frozenset(
    {"cudaFree", "cudaFreeHost", "cuMemFree_v2", "cuMemFreeHost", "hipFree", "hipHostFree"}
)
#: Calls that make a stream wait, on the device, for an event recorded on another stream
#: (``cudaStreamWaitEvent``): the stream's next work starts only once everything queued on
#: the other stream before the ``cudaEventRecord`` is done (CUDA runtime API, "Events").
#: PyTorch's ProcessGroupNCCL makes each collective's stream wait so for the current stream,
#: and ``Work.wait()`` the current stream for the collective.
STREAM_WAIT_CALLS: Final = frozenset(
    {"cudaStreamWaitEvent", "cuStreamWaitEvent", "hipStreamWaitEvent"}
)
EVENT_RECORD_CALLS: Final = frozenset(
    {
        "cudaEventRecord",
        "cudaEventRecordWithFlags",
        "cuEventRecord",
        "cuEventRecordWithFlags",
        "hipEventRecord",
        "hipEventRecordWithFlags",
    }
)
#: The device-side record of such a wait (a ``cuda_sync`` event, torch >= 2.2): its
#: ``wait_on_stream`` and ``wait_on_cuda_event_record_corr_id`` name the awaited record.
STREAM_WAIT_EVENT: Final = "Stream Wait Event"
#: Calls that run a captured CUDA graph: its kernels carry the call's correlation id.
GRAPH_LAUNCH_CALLS: Final = frozenset({"cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"})
#: CUPTI's overhead row for a launch that blocked because the device's launch queue (command
#: buffer) was full: the host is ahead of the device, which is therefore busy.
QUEUE_FULL_ROWS: Final = frozenset({"Command Buffer Full"})
#: Python frames (``with_stack=True``) in which a thread waits for work done on another:
#: autograd runs a device's backward on that device's own worker thread while the caller
#: blocks in ``run_backward`` (torch/csrc/autograd/engine.cpp, ``Engine::execute``: the
#: device threads of ``thread_main``), so that frame's self time repeats the backward's.
THREAD_WAIT_FRAMES: Final = regex(r"^<built-in method run_backward of ")
#: The profiler's own work, as CUPTI names its overhead records (``CUpti_ActivityOverheadKind``
#: in cupti_activity.h, the ``CUPTI_ACTIVITY_OVERHEAD_CUPTI_*`` kinds and the activity buffer
#: request; Kineto prints each as a row of that name): handing the device tracer buffers,
#: flushing them, CUPTI's instrumentation, resources and UVM set-up. The driver's compiler
#: and lazy loading are the program's start-up (`STARTUP_ROWS`), a full command buffer the
#: device's backlog (`QUEUE_FULL_ROWS`): not these. Kineto records them in a process of their
#: own (pid -1 in a trace), so they sit in no step, and a table's ``Self CPU time total``
#: holds them beside the program's threads.
PROFILER_OVERHEAD_ROWS: Final = frozenset(
    {"Activity Buffer Request", "Buffer Flush", "Instrumentation", "Resource", "UVM Activity Init"}
)
#: One-time start-up rows CUPTI records: lazy loading of GPU code on its first launch.
STARTUP_ROWS: Final = frozenset({"Runtime Triggered Module Loading", "Lazy Function Loading"})
#: Ops that run only on a GPU, whatever their inputs: cuDNN's and MIOpen's (``cudnn_convolution``,
#: ``aten::miopen_batch_norm``). torch <= 1.6 prints such an op's device time as the time
#: between two CUDA events around it, which an op on CPU tensors also gets: the name is what
#: says the op's host time was the device's set-up, not its own arithmetic.
DEVICE_ONLY_OPS: Final = regex(r"^(?:aten::)?_?(?:cudnn|miopen)_")
#: Runtime calls that do one-time work on a process's first use of the device, whatever
#: their count: creating the context (``cudaFree(0)`` is the CUDA programming guide's idiom
#: for it, and torch's first ``cudaStreamIsCapturing`` triggers it), loading a module of GPU
#: code (``cuModuleLoadData``, HIP's ``hipModuleLoadData``) and launching a kernel whose code
#: is loaded lazily on that first launch. A call of these lasting STARTUP_MIN_US or more
#: while the device idles is start-up even when its name runs once in the window: the
#: outlier rule needs siblings to compare with.
FIRST_USE_CALLS: Final = frozenset(
    {
        "cudaFree",
        "cudaStreamIsCapturing",
        "cudaGetDeviceCount",
        "cudaSetDevice",
        "cuModuleLoadData",
        "cuModuleLoadDataEx",
        "cuLibraryLoadData",
        "hipFree",
        "hipStreamIsCapturing",
        "hipModuleLoadData",
        "hipModuleLoad",
        "cudaLaunchKernel",
        "cuLaunchKernel",
        "cuLaunchKernelEx",
        "cudaLaunchKernelExC",
        "hipLaunchKernel",
        "hipExtModuleLaunchKernel",
        "hipModuleLaunchKernel",
    }
)
#: Host ops that make a batch's tensors: factories, random generation, conversions from numpy
#: or Python data, stacking samples (ATen's factory and random ops, ``native_functions.yaml``).
#: A step whose lead-in (`analyses.lead_in`) is mostly these builds its input in the
#: loop, on the host: input preparation, whoever runs it.
INPUT_MAKING_OPS: Final = regex(
    r"^aten::(?:randn|rand|randint|randperm|normal_|uniform_|bernoulli_?|random_|"
    r"multinomial|zeros|ones|empty|empty_strided|full|arange|linspace|tensor|scalar_tensor|"
    r"from_numpy|as_tensor|lift_fresh|lift_fresh_copy|stack|cat|_cat|pad_sequence)$"
)
#: torch.compile compiling inside the window: torch._dynamo's ``dynamo_timed`` wraps each
#: compile stage in a ``record_function`` range named ``<stage> (dynamo_timed)`` (torch 2.x);
#: the outer stages carry their own names too (``entire_frame_compile``, ``inductor_compile``).
COMPILE_ROWS: Final = regex(
    r"\(dynamo_timed\)$|^(?:entire_frame_compile|_compile\.compile_inner|inductor_compile|"
    r"backend_compile|compile_fx_inner)$"
)

#: Device-to-host copies not into pinned memory (.item(), .cpu(), printing a tensor): the
#: host waits until the device is done with everything queued before them (CUDA runtime API,
#: "API synchronization behavior"), so they are host-device syncs even where no synchronize
#: call appears. Kineto names them ``Memcpy DtoH (Device -> Pageable)``; ROCm ``Memcpy
#: DtoH``/``CopyDeviceToHost``. (Copies from pageable memory to the device block too; their
#: fix is pinned memory, so they stay copies.)
HOST_READ_NAME: Final = regex(r"(?:DtoH|DeviceToHost)(?!.*Pinned)")
#: Copies from pageable host memory to the device: the copy call stages the buffer into the
#: driver's pinned memory chunk by chunk while the copy runs, and "will return once the
#: pageable buffer has been copied to the staging memory for DMA transfer to device memory,
#: but the DMA to final destination may not have completed" (CUDA runtime API, "API
#: synchronization behavior"): it blocks for the copy however ``non_blocking`` is set, and
#: can return just before the copy ends. Kineto names them ``Memcpy HtoD (Pageable ->
#: Device)``; ROCm's names say no memory kind.
STAGED_COPY_NAME: Final = regex(r"HtoD \(Pageable")
