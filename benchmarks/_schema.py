"""The decode yardstick's schema: a copy of the fields profsight's loader decodes.

A copy of ``profsight.loaders.kineto_schema``'s `Args` and `Event` (names, JSON keys, types,
defaults and struct options), so that the yardstick's process imports msgspec and nothing of
profsight: importing profsight's schema module costs about 0.09 s of profsight's own
imports, which would be counted in the floor the targets are read against.
`bench_real.check_schema_copy` holds the copy equal to profsight's structs before anything
is timed, and stops the benchmark when they drift.
"""

import math

import msgspec

_NO_RAW = msgspec.Raw()
_COUNTER = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"


class Args(msgspec.Struct, frozen=True, gc=False):
    external_id: int = msgspec.field(default=-1, name="External id")
    external_id_v1: int = msgspec.field(default=-1, name="external id")
    correlation: int = -1
    device: int = -1
    stream: int | str = -1
    input_dims: msgspec.Raw = msgspec.field(default=_NO_RAW, name="Input Dims")
    input_dims_v1: msgspec.Raw = msgspec.field(default=_NO_RAW, name="Input dims")
    concrete_inputs: msgspec.Raw = msgspec.field(default=_NO_RAW, name="Concrete Inputs")
    mem_bytes: int = msgspec.field(default=0, name="Bytes")
    mem_addr: int = msgspec.field(default=-1, name="Addr")
    copy_bytes: int | str = msgspec.field(default=0, name="bytes")
    mem_device_type: int = msgspec.field(default=-1, name="Device Type")
    total_allocated: int = msgspec.field(default=-1, name="Total Allocated")
    total_reserved: int = msgspec.field(default=-1, name="Total Reserved")
    finished: bool = True
    input_type: msgspec.Raw = msgspec.field(default=_NO_RAW, name="Input type")
    sequence_nr: int = msgspec.field(default=-1, name="Sequence number")
    fwd_thread: int = msgspec.field(default=-1, name="Fwd thread id")
    call_stack: str = msgspec.field(default="", name="Call stack")
    in_msg_nelems: int = msgspec.field(default=-1, name="In msg nelems")
    out_msg_nelems: int = msgspec.field(default=-1, name="Out msg nelems")
    msg_dtype: str = msgspec.field(default="", name="dtype")
    group_size: int = msgspec.field(default=-1, name="Group size")
    collective_name: str = msgspec.field(default="", name="Collective name")
    process_group: str = msgspec.field(default="", name="Process Group Name")
    rank: int = -1
    wait_on_stream: int = -1
    wait_on_record: int = msgspec.field(default=-1, name="wait_on_cuda_event_record_corr_id")
    hadd: float = msgspec.field(default=0.0, name=_COUNTER.format("hadd"))
    hmul: float = msgspec.field(default=0.0, name=_COUNTER.format("hmul"))
    hfma: float = msgspec.field(default=0.0, name=_COUNTER.format("hfma"))
    fadd: float = msgspec.field(default=0.0, name=_COUNTER.format("fadd"))
    fmul: float = msgspec.field(default=0.0, name=_COUNTER.format("fmul"))
    ffma: float = msgspec.field(default=0.0, name=_COUNTER.format("ffma"))
    dadd: float = msgspec.field(default=0.0, name=_COUNTER.format("dadd"))
    dmul: float = msgspec.field(default=0.0, name=_COUNTER.format("dmul"))
    dfma: float = msgspec.field(default=0.0, name=_COUNTER.format("dfma"))
    name: str = ""
    labels: str = ""


class Event(msgspec.Struct, gc=False):
    ph: str = ""
    name: str = ""
    cat: str = ""
    pid: int | str = 0
    tid: int | str = 0
    ts: float = math.nan
    dur: float = 0.0
    id: int | str = -1
    args: Args = Args()


class Trace(msgspec.Struct, gc=False):
    """A trace document: its other top-level fields are skipped, as the loader skips them."""

    traceEvents: list[Event]


#: A document that is a bare event array (one legacy exporter writes it).
EVENTS = msgspec.json.Decoder(list[Event])
TRACE = msgspec.json.Decoder(Trace)
