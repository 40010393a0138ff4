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

#: Names of every form of a collective (the row kind ``communication`` uses a wider rule).
COMMUNICATION_NAME: Final = re.compile(
    r"^(nccl|rccl|gloo|mpi|ucc|xla|hccl)[:_]|^c10d::|^record_param_comms$|"
    r"^(void )?nccl(Dev)?Kernel|^(void )?rccl|^ncclDevKernel"
)
#: Backend ranges that time a collective on the host (worker threads of CPU backends).
HOST_TIMED: Final = re.compile(r"^(gloo|mpi|ucc):")
#: Device kernels of NCCL / RCCL.
DEVICE_KERNEL: Final = re.compile(r"^(void )?(nccl|rccl)(Dev)?Kernel|^ncclDevKernel")
#: ``record_param_comms`` and backend ranges: where sizes are written.
SIZED: Final = re.compile(r"^record_param_comms$|^(nccl|rccl|gloo|mpi|ucc|xla|hccl):")

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
    "float8_e5m2": 1,
    "complexfloat": 8,
    "c10::complex<float>": 8,
}

_BACKENDS: Final = (
    (re.compile(r"^(void )?rccl|^rccl:"), "RCCL"),
    (re.compile(r"^(void )?nccl|^nccl:"), "NCCL"),
    (re.compile(r"^gloo:"), "gloo"),
    (re.compile(r"^mpi:"), "MPI"),
    (re.compile(r"^ucc:"), "UCC"),
    (re.compile(r"^xla:"), "XLA"),
    (re.compile(r"^hccl:"), "HCCL"),
)
_KERNEL_OP = re.compile(r"(?:nccl|rccl)(?:Dev)?Kernel_([A-Za-z]+)")
_RANGE_OP = re.compile(r"^[a-z]+:_?([a-z_]+)")
_C10D_OP = re.compile(r"^c10d::_?([a-z_]+?)_?$")


def backend_of(name: str, declared: str = "") -> str:
    """``NCCL``, ``RCCL``, ``gloo``, ... from an event's name, else the trace's backend."""
    for pattern, backend in _BACKENDS:
        if pattern.search(name):
            return backend
    return declared.split(",")[0].split(":")[-1].upper().replace("GLOO", "gloo") or "unknown"


def operation_of(name: str, collective: str = "") -> str:
    """The canonical operation of a collective event (``all_reduce``, ...), or ``other``."""
    for text in (collective, *_spellings(name)):
        key = re.sub(r"[^a-z]", "", text.lower())
        if key in OPERATIONS:
            return OPERATIONS[key]
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
    "DEVICE_KERNEL",
    "HOST_TIMED",
    "OPERATION_MEANING",
    "SIZED",
    "backend_of",
    "bus_factor",
    "dtype_bytes",
    "operation_of",
]
