"""A memory snapshot (``torch.cuda.memory._dump_snapshot``) as data: per device, the
caching allocator's events in order and the blocks its segments held when it was taken.

Stacks are stored once each (`MemorySnapshot.stacks`) and named by index: a training step's
thousands of allocations come from a few hundred call sites.
"""

from __future__ import annotations

import msgspec


class Frame(msgspec.Struct, frozen=True):
    name: str
    """The function (C++: its signature)."""
    filename: str
    """``.py`` for Python frames; a ``.cpp`` file, ``??`` or empty for C++ ones."""
    line: int


class AllocatorEvent(msgspec.Struct, frozen=True):
    action: str
    """``alloc``, ``free_requested``, ``free_completed``, ``segment_alloc``, ``segment_free``,
    ``segment_map``, ``segment_unmap``, ``snapshot``, ``oom``."""
    addr: int
    size: int
    stack: int
    """Index into `MemorySnapshot.stacks` (0: no frames)."""
    time_us: int | None
    """The wall clock in µs (torch ≥ 2.1 records it); None before."""


class HeldBlock(msgspec.Struct, frozen=True):
    """A block the snapshot's segments held allocated when it was taken."""

    addr: int
    requested_size: int
    stack: int


class DeviceSnapshot(msgspec.Struct, frozen=True):
    device: int
    events: tuple[AllocatorEvent, ...]
    held: tuple[HeldBlock, ...]
    """Blocks in state ``active_allocated`` at the end."""
    reserved_bytes: int
    """The segments' total size at the end: what the allocator had from the driver."""


class Annotation(msgspec.Struct, frozen=True):
    """A range torch marked while recording (``external_annotations``: the optimizer's step
    and other ``record_function`` ranges)."""

    name: str
    start_us: int
    end_us: int


class MemorySnapshot(msgspec.Struct, frozen=True):
    source: str
    devices: tuple[DeviceSnapshot, ...]
    stacks: tuple[tuple[Frame, ...], ...]
    """Index 0 is the empty stack."""
    annotations: tuple[Annotation, ...] = ()
    diagnostics: list[str] = msgspec.field(default_factory=list)
