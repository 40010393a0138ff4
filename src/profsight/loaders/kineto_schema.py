"""The typed view of a Kineto / Chrome trace event that profsight decodes.

Only the fields the model needs are declared; msgspec skips everything else without
building Python objects for it, which is what makes decoding fast and small. Both spellings
of a renamed key are declared (``External id`` since torch 1.9, ``external id`` before).
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

_NO_RAW = msgspec.Raw()


class Args(msgspec.Struct, frozen=True, gc=False):
    external_id: int = msgspec.field(default=-1, name="External id")
    external_id_v1: int = msgspec.field(default=-1, name="external id")
    correlation: int = -1
    device: int = -1
    stream: int | str = -1
    """An int for device work; ROCm runtime calls write a hex string (``"0x0"``)."""
    input_dims: msgspec.Raw = msgspec.field(default=_NO_RAW, name="Input Dims")
    input_dims_v1: msgspec.Raw = msgspec.field(default=_NO_RAW, name="Input dims")
    concrete_inputs: msgspec.Raw = msgspec.field(default=_NO_RAW, name="Concrete Inputs")
    """Scalar arguments (stride, padding, ...): read for the ops `FLOP_OPS` names only."""
    mem_bytes: int = msgspec.field(default=0, name="Bytes")
    mem_addr: int = msgspec.field(default=-1, name="Addr")
    """The block a ``[memory]`` record allocates (bytes above 0) or frees."""
    copy_bytes: int | str = msgspec.field(default=0, name="bytes")
    """An int; ROCm's ``hipMemcpyWithStream`` writes a string (``"1"``)."""
    mem_device_type: int = msgspec.field(default=-1, name="Device Type")
    total_allocated: int = msgspec.field(default=-1, name="Total Allocated")
    """Bytes allocated on that device after a ``[memory]`` event (torch >= 1.10)."""
    total_reserved: int = msgspec.field(default=-1, name="Total Reserved")
    """Bytes the caching allocator holds on that device after a ``[memory]`` event."""
    finished: bool = True
    """False for a range still open when the profiler stopped (torch treats it as async)."""
    input_type: msgspec.Raw = msgspec.field(default=_NO_RAW, name="Input type")
    """Element types of the inputs: read for collectives (their message size) and the ops
    the roofline places (the bytes they move)."""
    sequence_nr: int = msgspec.field(default=-1, name="Sequence number")
    """An op's autograd sequence number: a backward node carries its forward op's."""
    fwd_thread: int = msgspec.field(default=-1, name="Fwd thread id")
    """Set (above 0) on the backward side's ops: the thread the forward op ran on."""
    call_stack: str = msgspec.field(default="", name="Call stack")
    """The Python frames around a host event, innermost first, ``;``-separated: written
    with ``with_stack=True`` under ``_ExperimentalConfig(verbose=True)`` only."""
    in_msg_nelems: int = msgspec.field(default=-1, name="In msg nelems")
    out_msg_nelems: int = msgspec.field(default=-1, name="Out msg nelems")
    msg_dtype: str = msgspec.field(default="", name="dtype")
    group_size: int = msgspec.field(default=-1, name="Group size")
    collective_name: str = msgspec.field(default="", name="Collective name")
    process_group: str = msgspec.field(default="", name="Process Group Name")
    """``record_param_comms`` (torch >= 2.1) and NCCL kernels (torch >= 2.3) carry these."""
    rank: int = -1
    """The rank an event belongs to, where a merged job trace tags each event with it."""
    wait_on_stream: int = -1
    wait_on_record: int = msgspec.field(default=-1, name="wait_on_cuda_event_record_corr_id")
    """A device-side wait (``cuda_sync`` ``Stream Wait Event``, torch >= 2.2): the stream
    the awaited event was recorded on, and the correlation of its ``cudaEventRecord``."""
    # CUPTI range profiler's instruction counters (`knowledge.flop_counters`), read from
    # ``cuda_profiler_range`` events only
    hadd: float = msgspec.field(
        default=0.0, name="smsp__sass_thread_inst_executed_op_hadd_pred_on.sum"
    )
    hmul: float = msgspec.field(
        default=0.0, name="smsp__sass_thread_inst_executed_op_hmul_pred_on.sum"
    )
    hfma: float = msgspec.field(
        default=0.0, name="smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"
    )
    fadd: float = msgspec.field(
        default=0.0, name="smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
    )
    fmul: float = msgspec.field(
        default=0.0, name="smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"
    )
    ffma: float = msgspec.field(
        default=0.0, name="smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
    )
    dadd: float = msgspec.field(
        default=0.0, name="smsp__sass_thread_inst_executed_op_dadd_pred_on.sum"
    )
    dmul: float = msgspec.field(
        default=0.0, name="smsp__sass_thread_inst_executed_op_dmul_pred_on.sum"
    )
    dfma: float = msgspec.field(
        default=0.0, name="smsp__sass_thread_inst_executed_op_dfma_pred_on.sum"
    )

    @property
    def unfinished(self) -> int:
        return 0 if self.finished else 1

    name: str = ""
    """``thread_name`` / ``process_name`` metadata."""
    labels: str = ""
    """``process_labels`` metadata."""


NO_ARGS = Args()


class Event(msgspec.Struct, gc=False):
    ph: str = ""
    name: str = ""
    cat: str = ""
    pid: int | str = 0
    tid: int | str = 0
    ts: float = math.nan
    """NaN when the event has none: the builder skips such timed events."""
    dur: float = 0.0
    id: int | str = -1
    args: Args = NO_ARGS


EVENTS_DECODER = msgspec.json.Decoder(list[Event])
ANY_DECODER = msgspec.json.Decoder()


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _int(value: Any, default: int = -1) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value if _INT64_MIN <= value <= _INT64_MAX else default
    if isinstance(value, float) and value.is_integer() and abs(value) < 2.0**63:
        return int(value)
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:
            pass
    return default


def _float(value: Any, default: float = 0.0) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    return default


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _id(value: Any) -> int | str:
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else _text(value)


def _raw(value: Any) -> msgspec.Raw:
    return _NO_RAW if value is None else msgspec.Raw(msgspec.json.encode(value))


def event_from_object(item: dict[str, Any]) -> Event:
    """Build an `Event` from a decoded JSON object whose fields may have any type.

    The slow path for chunks the typed decoder rejects: every field is coerced, a value
    that cannot be coerced takes the field's default; no event is dropped for a bad field.
    """
    args = item.get("args")
    a: dict[str, Any] = args if isinstance(args, dict) else {}
    return Event(
        ph=_text(item.get("ph")),
        name=_text(item.get("name")),
        cat=_text(item.get("cat")),
        pid=_id(item.get("pid", 0)),
        tid=_id(item.get("tid", 0)),
        ts=_float(item.get("ts"), math.nan),
        dur=_float(item.get("dur")),
        id=_id(item.get("id", -1)),
        args=Args(
            external_id=_int(a.get("External id")),
            external_id_v1=_int(a.get("external id")),
            correlation=_int(a.get("correlation")),
            device=_int(a.get("device")),
            stream=_int(a.get("stream")),
            input_dims=_raw(a.get("Input Dims")),
            input_dims_v1=_raw(a.get("Input dims")),
            concrete_inputs=_raw(a.get("Concrete Inputs")),
            mem_bytes=_int(a.get("Bytes"), 0),
            mem_addr=_int(a.get("Addr")),
            copy_bytes=_int(a.get("bytes"), 0),
            mem_device_type=_int(a.get("Device Type")),
            total_allocated=_int(a.get("Total Allocated")),
            total_reserved=_int(a.get("Total Reserved")),
            finished=a.get("finished") is not False,
            input_type=_raw(a.get("Input type")),
            sequence_nr=_int(a.get("Sequence number")),
            fwd_thread=_int(a.get("Fwd thread id")),
            call_stack=_text(a.get("Call stack")),
            in_msg_nelems=_int(a.get("In msg nelems")),
            out_msg_nelems=_int(a.get("Out msg nelems")),
            msg_dtype=_text(a.get("dtype")),
            group_size=_int(a.get("Group size")),
            collective_name=_text(a.get("Collective name")),
            process_group=_text(a.get("Process Group Name")),
            rank=_int(a.get("rank")),
            wait_on_stream=_int(a.get("wait_on_stream")),
            wait_on_record=_int(a.get("wait_on_cuda_event_record_corr_id")),
            hadd=_float(a.get("smsp__sass_thread_inst_executed_op_hadd_pred_on.sum")),
            hmul=_float(a.get("smsp__sass_thread_inst_executed_op_hmul_pred_on.sum")),
            hfma=_float(a.get("smsp__sass_thread_inst_executed_op_hfma_pred_on.sum")),
            fadd=_float(a.get("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum")),
            fmul=_float(a.get("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum")),
            ffma=_float(a.get("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")),
            dadd=_float(a.get("smsp__sass_thread_inst_executed_op_dadd_pred_on.sum")),
            dmul=_float(a.get("smsp__sass_thread_inst_executed_op_dmul_pred_on.sum")),
            dfma=_float(a.get("smsp__sass_thread_inst_executed_op_dfma_pred_on.sum")),
            name=_text(a.get("name")),
            labels=_text(a.get("labels")),
        ),
    )
