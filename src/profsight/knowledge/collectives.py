"""Collective communication as profiler traces name it: backends, operations, sizes.

A collective shows up in several forms, depending on the torch version and the backend:

* the c10d op on the calling thread (``c10d::allreduce_``, ``c10d::_allgather_base_``);
* ``record_param_comms`` (torch >= 1.13; since 2.1 with ``Collective name``, ``In msg nelems``,
  ``Out msg nelems``, ``dtype`` and ``Group size`` in its args);
* the backend's own range: ``nccl:all_reduce`` (enqueue only: a few µs on the host) or
  ``gloo:all_reduce`` (gloo's worker thread, from enqueue to completion: it includes the
  wait for the other ranks);
* on GPUs, the NCCL/RCCL kernel (``ncclKernel_AllReduce_RING_LL_Sum_float``,
  ``ncclDevKernel_AllGather_RING_LL``), which spins until every rank has joined, so its
  duration includes the wait for the slowest rank; torch >= 2.3 copies the collective's
  args onto it.

The *timed* form of a collective is its device kernel where the trace has one, else the
backend's range on a worker thread (gloo, MPI); ``c10d::`` ops and ``record_param_comms``
only enqueue the work.
"""

from __future__ import annotations

import re
from typing import Final

from profsight.lazy import regex

#: A backend's own range around a collective (``nccl:all_reduce``, ``gloo:broadcast``,
#: ``rccl:...``); on the device, its span over the collective's kernel: a label, not work.
#: torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp names it ``nccl:<op>`` (profilingTitle).
COMM_LABEL: Final = regex(r"^(?:nccl|rccl|gloo|mpi|ucc|xccl):")

#: Frameworks that shard a model and run its collectives themselves, told by the rows they
#: add to a table: DeepSpeed's ZeRO (deepspeed/runtime/zero/parameter_offload.py defines the
#: autograd Functions PreBackwardFunctionForModuleBackward and PostBackwardFunctionModule,
#: linear.py LinearFunctionForZeroStage3; Lightning's DeepSpeedStrategy) and FSDP
#: (torch/distributed/fsdp: FullyShardedDataParallel.forward, FSDP::pre_forward ranges).
#: Their host syncs wait for their own collectives, not for the user's .item().
FRAMEWORK_COMMS: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (
        regex(
            r"DeepSpeed|^(?:autograd::engine::evaluate_function: )?"
            r"(?:PreBackwardFunction|PostBackwardFunction|LinearFunctionForZeroStage3)"
        ),
        "DeepSpeed's ZeRO",
    ),
    (regex(r"FullyShardedDataParallel|^FSDP::"), "FSDP"),
)

#: Device kernels of the communication libraries other than NCCL/RCCL, each with its library
#: (the collective's backend), ordered. Every one moves data between ranks and waits for
#: them, as an NCCL kernel does; each pattern cites where the library names its kernels.
DEVICE_COMM_LIBRARIES: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    # DeepEP (github.com/deepseek-ai/DeepEP): csrc/kernels/{intranode,internode,internode_ll}.cu
    # (kernels/legacy/ since 2026): deep_ep::intranode::{notify_dispatch, cached_notify_combine,
    # dispatch, combine, barrier}, deep_ep::internode::cached_notify, deep_ep::internode_ll::
    # {dispatch, combine}; deep_ep/include/deep_ep/impls/*.cuh: deep_ep::elastic::*_impl.
    # DeepSeek's own traces (deepseek-ai/profile-data) spell it dpsk::ep::. Not communication:
    # get_dispatch_layout (layout.cu: counts tokens per rank locally) and the clean_* buffer resets.
    (
        regex(r"^(?:void )?(?:deep_ep|dpsk::ep)::(?!(?:\w+::)*(?:get_dispatch_layout|clean_))"),
        "DeepEP",
    ),
    # NVSHMEM (github.com/NVIDIA/nvshmem): the kernels its on-stream collectives launch,
    # src/include/internal/non_abi/nvshmemi_h_to_d_coll_defs.cuh (alltoall_on_stream_kernel,
    # barrier_on_stream_kernel, fcollect_/rdxn_/reducescatter_/broadcast_on_stream_kernel, ...),
    # and its internal nvshmemi_* kernels (nvshmemi_<type>_wait_until_on_stream_kernel)
    (
        regex(
            r"^(?:void )?(?:nvshmemx?i?_\w+|(?:barrier|sync|sync_all|alltoall|broadcast|fcollect"
            r"|rdxn|reducescatter)_on_stream_kernel)"
        ),
        "NVSHMEM",
    ),
    # MSCCL, inside NCCL forks and RCCL: src/include/msccl/msccl_kernel.h,
    # mscclKernel_<redop>_<type>_<proto>[_<fullOps>]
    (regex(r"^(?:void )?mscclKernel_"), "MSCCL"),
    # MSCCL++ (github.com/microsoft/mscclpp): src/ext/collectives/*/*.cu
    # (mscclpp::collective::allreducePacket, allgatherFullmesh, ...) and
    # src/core/include/execution_kernel.hpp (mscclpp::executionKernel)
    (regex(r"^(?:void )?mscclpp::"), "MSCCL++"),
    # pplx-kernels (github.com/perplexityai/pplx-kernels): csrc/all_to_all/
    # {intranode,internode}_{dispatch,combine}.cu, in an anonymous namespace
    (regex(r"^void \(anonymous namespace\)::(?:dispatch|combine)Kernel<"), "pplx-kernels"),
    # one-shot/two-shot all-reduce over NVLink/xGMI: vLLM's csrc/custom_all_reduce.cuh
    # (vllm::cross_device_reduce_1stage/_2stage) and AITER's copy of it
    (regex(r"^(?:void )?vllm::cross_device_reduce_"), "vLLM"),
    (regex(r"^(?:void )?aiter::cross_device_reduce_"), "AITER"),
    # torch's symmetric memory: torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemoryOps.cu
    # (multimem_all_reduce_kernel, one_shot_all_reduce_kernel, two_shot_all_reduce_kernel, ...)
    (
        regex(
            r"(?:^void |::)(?:multimem_(?:one_shot_)?all_(?:reduce|gather)|(?:one|two)_shot_all_"
            r"reduce|reduce_scatter)_kernel<"
        ),
        "PyTorch",
    ),
)
_DEVICE_COMM = "|".join(f"(?:{p.pattern})" for p, _ in DEVICE_COMM_LIBRARIES)

#: Names of every form of a collective (the row kind ``communication`` uses a wider rule).
COMMUNICATION_NAME: Final = regex(
    r"^(nccl|rccl|gloo|mpi|ucc|xla|hccl)[:_]|^c10d::|^record_param_comms$|"
    r"^(void )?nccl(Dev)?Kernel|^(void )?rccl|^ncclDevKernel|" + _DEVICE_COMM
)
#: Backend ranges that time a collective on the host (worker threads of CPU backends).
HOST_TIMED: Final = regex(r"^(gloo|mpi|ucc):")
#: Device kernels of collectives: NCCL / RCCL, and `DEVICE_COMM_LIBRARIES`.
DEVICE_KERNEL: Final = regex(r"^(void )?(nccl|rccl)(Dev)?Kernel|^ncclDevKernel|" + _DEVICE_COMM)
#: ``record_param_comms`` and backend ranges: where sizes are written.
SIZED: Final = regex(r"^record_param_comms$|^(nccl|rccl|gloo|mpi|ucc|xla|hccl):")

#: Canonical operation ids, and how each spelling maps to one.
OPERATIONS: Final[dict[str, str]] = {
    "allreduce": "all_reduce",
    "allreducecoalesced": "all_reduce",
    "allgather": "all_gather",
    "allgatherbase": "all_gather",
    "allgatherintotensorcoalesced": "all_gather",
    "allgathercoalesced": "all_gather",
    "reducescatter": "reduce_scatter",
    "reducescatterbase": "reduce_scatter",
    "reducescattertensorcoalesced": "reduce_scatter",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "gather": "gather",
    "scatter": "scatter",
    "alltoall": "all_to_all",
    "alltoallbase": "all_to_all",
    "alltoallv": "all_to_all",
    "sendrecv": "send_recv",
    "send": "send_recv",
    "recv": "send_recv",
    "barrier": "barrier",
}

#: What each operation does, for the report.
OPERATION_MEANING: Final[dict[str, str]] = {
    "all_reduce": "sums (or averages) a tensor across ranks; DDP's gradient sync",
    "all_gather": "collects every rank's shard on every rank; FSDP/ZeRO gather parameters "
    "with it before forward and backward",
    "reduce_scatter": "sums across ranks and leaves each rank one shard; FSDP/ZeRO's gradient sync",
    "broadcast": "copies one rank's tensor to all (DDP's initial parameter sync, buffers)",
    "reduce": "sums onto one rank",
    "gather": "collects onto one rank",
    "scatter": "splits one rank's tensor across ranks",
    "all_to_all": "every rank sends a slice to every other (embedding sharding, MoE routing)",
    "send_recv": "point-to-point transfer (pipeline parallelism; NCCL also runs all-to-all as "
    "send/recv)",
    "barrier": "waits until every rank arrives; moves no data",
}

#: Bus-bandwidth factor of each operation for n ranks (NCCL tests' convention): bus bandwidth
#: = message bytes / time x factor, comparable with the link's peak whatever the rank count.
_BUS_FACTORS: Final[dict[str, tuple[float, float]]] = {
    # factor = a * (n - 1) / n + b
    "all_reduce": (2.0, 0.0),
    "all_gather": (1.0, 0.0),
    "reduce_scatter": (1.0, 0.0),
    "all_to_all": (1.0, 0.0),
    "broadcast": (0.0, 1.0),
    "reduce": (0.0, 1.0),
    "send_recv": (0.0, 1.0),
    "gather": (1.0, 0.0),
    "scatter": (1.0, 0.0),
}

#: Bytes per element of the dtypes traces spell (``Input type`` / ``dtype``).
DTYPE_BYTES: Final[dict[str, int]] = {
    "float": 4,
    "float32": 4,
    "double": 8,
    "float64": 8,
    "half": 2,
    "float16": 2,
    "c10::half": 2,
    "bfloat16": 2,
    "c10::bfloat16": 2,
    "long": 8,
    "int64": 8,
    "long int": 8,
    "int": 4,
    "int32": 4,
    "short": 2,
    "int16": 2,
    "signed char": 1,
    "int8": 1,
    "char": 1,
    "unsigned char": 1,
    "byte": 1,
    "uint8": 1,
    "bool": 1,
    "c10::float8_e4m3fn": 1,
    "c10::float8_e5m2": 1,
    "float8_e4m3fn": 1,
    "c10::float8_e4m3fnuz": 1,
    "c10::float8_e5m2fnuz": 1,
    "c10::float8_e8m0fnu": 1,
    "c10::float4_e2m1fn_x2": 1,
    "short int": 2,
    "unsigned int": 4,
    "unsigned short": 2,
    "unsigned long": 8,
    "c10::complex<double>": 16,
    "complexdouble": 16,
    "float8_e5m2": 1,
    "complexfloat": 8,
    "c10::complex<float>": 8,
}

_BACKENDS: Final = (
    (regex(r"^(void )?rccl|^rccl:"), "RCCL"),
    (regex(r"^(void )?nccl|^nccl:"), "NCCL"),
    (regex(r"^gloo:"), "gloo"),
    (regex(r"^mpi:"), "MPI"),
    (regex(r"^ucc:"), "UCC"),
    (regex(r"^xla:"), "XLA"),
    (regex(r"^hccl:"), "HCCL"),
)
_KERNEL_OP = regex(r"(?:nccl|rccl)(?:Dev)?Kernel_([A-Za-z]+)")
#: The operation of the `DEVICE_COMM_LIBRARIES` kernels whose names say it, ordered: DeepEP's
#: and pplx's dispatch/combine (and DeepEP's notify_* exchange of their counts) are the two
#: halves of MoE's all-to-all; NVSHMEM's fcollect is an all-gather and rdxn an all-reduce.
_DEVICE_OPERATIONS: Final = (
    (regex(r"(?:^|::|_)(?:dispatch|combine)|alltoall"), "all_to_all"),
    (regex(r"(?:deep_ep|dpsk::ep)::\w+::cached_notify\b"), "all_to_all"),
    (regex(r"(?i)all_?reduce|rdxn|cross_device_reduce"), "all_reduce"),
    (regex(r"(?i)all_?gather|fcollect"), "all_gather"),
    (regex(r"(?i)reduce_?scatter"), "reduce_scatter"),
    (regex(r"broadcast"), "broadcast"),
    (regex(r"pp_(?:send|recv)"), "send_recv"),
    (regex(r"(?:^|::|void )(?:barrier|sync|sync_all)(?:_on_stream|_impl|<|\(|$)"), "barrier"),
)
_RANGE_OP = regex(r"^[a-z]+:_?([a-z_]+)")
_C10D_OP = regex(r"^c10d::_?([a-z_]+?)_?$")


def backend_of(name: str, declared: str = "") -> str:
    """``NCCL``, ``RCCL``, ``gloo``, ... from an event's name, else the trace's backend."""
    for pattern, backend in (*_BACKENDS, *DEVICE_COMM_LIBRARIES):
        if pattern.search(name):
            return backend
    return declared.split(",")[0].split(":")[-1].upper().replace("GLOO", "gloo") or "unknown"


def operation_of(name: str, collective: str = "") -> str:
    """The canonical operation of a collective event (``all_reduce``, ...), or ``other``."""
    for text in (collective, *_spellings(name)):
        key = re.sub(r"[^a-z]", "", text.lower())
        if key in OPERATIONS:
            return OPERATIONS[key]
    if any(pattern.search(name) for pattern, _ in DEVICE_COMM_LIBRARIES):
        return next((op for pattern, op in _DEVICE_OPERATIONS if pattern.search(name)), "other")
    return "other"


def _spellings(name: str) -> list[str]:
    found = []
    for pattern in (_KERNEL_OP, _RANGE_OP, _C10D_OP):
        m = pattern.search(name)
        if m:
            found.append(m.group(1))
    return found


def bus_factor(operation: str, ranks: int) -> float | None:
    """NCCL tests' bus-bandwidth factor, None for operations without one (barrier)."""
    if operation not in _BUS_FACTORS or ranks < 1:
        return None
    a, b = _BUS_FACTORS[operation]
    return a * (ranks - 1) / ranks + b


def dtype_bytes(dtype: str) -> int | None:
    return DTYPE_BYTES.get(dtype.strip().lower())


__all__ = [
    "COMMUNICATION_NAME",
    "DEVICE_COMM_LIBRARIES",
    "DEVICE_KERNEL",
    "HOST_TIMED",
    "OPERATION_MEANING",
    "SIZED",
    "backend_of",
    "bus_factor",
    "dtype_bytes",
    "operation_of",
]
