"""The columnar event store: one numpy array per field, names interned in a string table.

A trace can hold tens of millions of events, so they are never kept as Python objects.
Times are integer nanoseconds relative to `EventStore.origin_us`, which makes the nesting
comparisons exact (a trace's fractional microseconds carry nanosecond precision).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, overload

import msgspec
import numpy as np

from profsight.knowledge.trace_schema import EventKind

# (numpy's generic array type, as the type checker reads it; ``numpy.typing.NDArray`` would
# import numpy.typing at start-up)
I8 = np.ndarray[Any, np.dtype[np.int8]]
I16 = np.ndarray[Any, np.dtype[np.int16]]
I32 = np.ndarray[Any, np.dtype[np.int32]]
I64 = np.ndarray[Any, np.dtype[np.int64]]
F64 = np.ndarray[Any, np.dtype[np.float64]]
Bool = np.ndarray[Any, np.dtype[np.bool_]]
Indices = I32 | I64
"""Event indices: int32 where a huge trace keeps them, int64 where numpy makes them."""

#: Value of an integer column where the event has no such field.
MISSING = -1


class Track(msgspec.Struct, frozen=True):
    """A timeline of the trace: a host thread, or a device stream."""

    pid: int | str
    tid: int | str
    name: str = ""
    """``thread_name`` / process label from the trace's metadata, if any."""

    @property
    def label(self) -> str:
        return self.name or f"pid {self.pid} tid {self.tid}"


class EventStore(msgspec.Struct):
    """All timed events of one trace, as parallel numpy arrays (one entry per event).

    The columns are not changed after loading. A column whose every value is the same (a
    field no event of the trace carries) is that one value broadcast: read-only, and no
    memory per event.
    """

    kind: I8
    """`EventKind` of each event."""
    name: I32
    """Index into `strings`."""
    track: I8 | I16 | I32
    """Index into `tracks` (in the smallest integer type that holds them all)."""
    start: I64
    """Start, ns after `origin_us`."""
    dur: I64
    """Duration in ns (0 for instant events)."""
    external_id: I32 | I64
    """``External id`` (``external id`` before torch 1.9): links device work to its CPU op.
    int32 when every id of the trace fits."""
    correlation: I32 | I64
    """CUPTI/roctracer ``correlation``: links a runtime call to the device work it launched
    (int32 when every one fits)."""
    device: I32
    stream: I64
    shapes: I32
    """Index into `strings` of the op's ``Input Dims`` as torch prints them, or MISSING."""
    nbytes: I64
    """``Bytes`` of a ``[memory]`` event, ``bytes`` of a memcpy/memset."""
    mem_device_type: I8
    """c10 ``DeviceType`` of a ``[memory]`` event."""
    unfinished: Bool
    """Ranges still open when the profiler stopped (``"finished": false``)."""
    strings: list[str]
    tracks: list[Track]
    origin_us: float = 0.0
    """Absolute trace time (µs, as in the file) of ``start == 0``."""
    category: I8 | I16 | I32 = msgspec.field(default_factory=lambda: np.zeros(0, np.int32))
    """Index into `strings` of the raw trace category (kept for reporting; in the smallest
    integer type that holds them all)."""
    allocated: I64 = msgspec.field(default_factory=lambda: np.zeros(0, np.int64))
    """``Total Allocated`` on the device of a ``[memory]`` event after it, or MISSING."""
    reserved: I64 = msgspec.field(default_factory=lambda: np.zeros(0, np.int64))
    """``Total Reserved`` (the caching allocator's hold) of a ``[memory]`` event, or MISSING."""
    concrete: I16 | I32 = msgspec.field(default_factory=lambda: np.zeros(0, np.int32))
    """Index into `strings` of the ``Concrete Inputs`` of the ops whose FLOPs or bytes need
    them (`knowledge.roofline_ops.needs_concrete`), or MISSING."""
    block: I16 | I32 = msgspec.field(default_factory=lambda: np.zeros(0, np.int32))
    """The memory block a ``[memory]`` record allocates or frees (its ``Addr``, as a dense
    id: the same id for an allocation and the free of its block), or MISSING."""
    types: I16 | I32 = msgspec.field(default_factory=lambda: np.zeros(0, np.int32))
    """Index into `strings` of the ``Input type`` of the ops placed on the roofline
    (`knowledge.roofline_ops.needs_types`), or MISSING."""
    sequence: I16 | I32 | I64 = msgspec.field(default_factory=lambda: np.zeros(0, np.int32))
    """An op's autograd ``Sequence number`` (a backward node carries its forward op's), or
    MISSING; kept in traces with Python frames or call stacks only (empty otherwise)."""
    fwd_thread: I8 | I16 | I32 | I64 = msgspec.field(default_factory=lambda: np.zeros(0, np.int32))
    """An op's ``Fwd thread id`` (above 0 on the backward side's ops), or MISSING; kept in
    traces with Python frames or call stacks only."""
    stack: I16 | I32 = msgspec.field(default_factory=lambda: np.zeros(0, np.int32))
    """Index into `strings` of a host event's ``Call stack`` (``;``-separated frames,
    innermost first; traces recorded with ``_ExperimentalConfig(verbose=True)``), or
    MISSING."""
    comm_bytes: I64 = msgspec.field(default_factory=lambda: np.zeros(0, np.int64))
    """Message bytes of a collective (`knowledge.collectives`), or MISSING."""
    collective: I32 = msgspec.field(default_factory=lambda: np.zeros(0, np.int32))
    """Index into `strings` of a collective's ``Collective name``, or MISSING."""
    group_size: I32 = msgspec.field(default_factory=lambda: np.zeros(0, np.int32))
    """``Group size`` of a collective, or MISSING."""
    process_group: I32 = msgspec.field(default_factory=lambda: np.zeros(0, np.int32))
    """Index into `strings` of a collective's ``Process Group Name``, or MISSING."""
    wait_stream: I64 = msgspec.field(default_factory=lambda: np.zeros(0, np.int64))
    """A device-side ``Stream Wait Event`` (`EventKind.SYNC`): the stream the awaited event
    was recorded on, or MISSING."""
    wait_record: I32 | I64 = msgspec.field(default_factory=lambda: np.zeros(0, np.int64))
    """... and the correlation of the ``cudaEventRecord`` call that recorded it, or MISSING."""
    measured_flops_half: F64 = msgspec.field(default_factory=lambda: np.zeros(0, np.float64))
    """Half-precision FLOPs CUPTI's range profiler counted in a kernel (`EventKind.COUNTERS`,
    `knowledge.flop_counters`); 0 on every other event."""
    measured_flops_single: F64 = msgspec.field(default_factory=lambda: np.zeros(0, np.float64))
    """... single precision."""
    measured_flops_double: F64 = msgspec.field(default_factory=lambda: np.zeros(0, np.float64))
    """... double precision."""

    def __len__(self) -> int:
        return int(self.kind.shape[0])

    @overload
    def end_of(self, index: int) -> int: ...
    @overload
    def end_of(self, index: Sequence[int] | I32 | I64 | Bool | slice) -> I64: ...
    def end_of(self, index: Any) -> Any:
        """Start plus duration of the events at `index`. Not kept as a column: on a huge trace
        it would take 8 bytes per event through every stage."""
        return self.start[index] + self.dur[index]

    def lane(self, index: Sequence[int] | I64 | I32) -> I64:
        """Each device event's stream as one key: its device and its stream."""
        lane: I64 = self.device[index].astype(np.int64) * (1 << 32) + self.stream[index]
        return lane

    def names(self, index: Sequence[int] | I64) -> list[str]:
        strings = self.strings
        return [strings[i] for i in np.asarray(self.name)[index]]

    def names_where(self, index: Sequence[int] | I64, test: Callable[[str], bool]) -> Bool:
        """Which events at `index` have a name that passes `test`: the test runs once per
        distinct name among them, never once per event."""
        ids = np.asarray(self.name)[index]
        if not len(ids):
            return np.zeros(0, bool)
        distinct, inverse = np.unique(ids, return_inverse=True)
        strings = self.strings
        passed = np.array([test(strings[i]) for i in distinct.tolist()], bool)
        where: Bool = passed[inverse.reshape(-1)]
        return where

    def mask(self, kinds: frozenset[EventKind] | set[EventKind]) -> Bool:
        """Which events are of one of `kinds`."""
        lut = np.zeros(len(EventKind), dtype=bool)
        for k in kinds:
            lut[int(k)] = True
        return lut[self.kind]

    @classmethod
    def empty(cls) -> EventStore:
        z64 = np.zeros(0, np.int64)
        z32 = np.zeros(0, np.int32)
        z8 = np.zeros(0, np.int8)
        return cls(
            z8, z32, z32, z64, z64, z64, z64, z32, z64, z32, z64, z8, np.zeros(0, bool), [], []
        )


class Flows(msgspec.Struct):
    """Flow events (``ph`` ``s``/``f``) that link a host launch to device activity."""

    flow_id: I64
    is_start: Bool
    track: I32
    start: I64
    """Same clock as `EventStore.start`."""
