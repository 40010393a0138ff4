"""Reading a memory snapshot: the pickle ``torch.cuda.memory._dump_snapshot`` writes (and
``pickle.dump(torch.cuda.memory._snapshot())``), plain or gzip, into `MemorySnapshot`.

The format is plain data: a dict with ``segments`` (each with its ``blocks``) and
``device_traces`` (a list of events per device), optionally ``external_annotations`` and
``allocator_settings``. A pickle can also rebuild any Python object, and so run code: the
unpickler here rebuilds none (every global is refused), so a file that needs one is
reported, not run. Nothing is written.
"""

from __future__ import annotations

import io
import os
import pickle
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from profsight.errors import InputError
from profsight.knowledge.snapshot_sites import HELD_STATES
from profsight.loaders.input_files import read_errors, read_input
from profsight.model.memory_snapshot import (
    AllocatorEvent,
    Annotation,
    DeviceSnapshot,
    Frame,
    HeldBlock,
    MemorySnapshot,
)

#: The largest value a snapshot's sizes, addresses and times can hold (int64).
_INT64 = (1 << 63) - 1


class _Refused(pickle.UnpicklingError):
    """The pickle names a global (a class, a function): rebuilding it could run code."""


class _PlainData(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise _Refused(f"{module}.{name}")


def load_snapshot(path: str | os.PathLike[str]) -> MemorySnapshot:
    """Read the snapshot at `path`. Raises `InputError` naming the file and the reason."""
    source = str(path)
    raw = read_input(Path(path))
    with read_errors(source):
        data = _unpickle(bytes(raw.data), source)
    if not isinstance(data, Mapping) or not isinstance(data.get("segments"), list):
        raise InputError(source, "is a pickle but not a torch memory snapshot (no 'segments' list)")
    try:
        snapshot = _Reader(source).read(data)
    except _Bad as exc:
        raise InputError(source, f"is a memory snapshot with {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise InputError(source, f"is a memory snapshot of an unknown layout ({exc!r})") from None
    if not snapshot.devices:
        raise InputError(
            source,
            "is a memory snapshot with nothing in it: no segment and no allocator event (was "
            "_record_memory_history() called before the code ran on a CUDA device?)",
        )
    return snapshot


class _Bad(ValueError):
    """A value no allocator writes: a negative size, a number past 64 bits, a float."""


def _int(value: Any, what: str, low: int = 0) -> int:
    """`value` as a snapshot's integer, checked: torch writes int64s, never floats."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Bad(f"a {what} that is not an integer ({value!r:.40})")
    if value < low:
        raise _Bad(f"a negative {what} ({str(value)[:40]})")
    if value > _INT64:
        raise _Bad(f"a {what} past 64 bits")
    return value


def _unpickle(data: bytes, source: str) -> Any:
    try:
        return _PlainData(io.BytesIO(data)).load()
    except _Refused as exc:
        raise InputError(
            source,
            f"is a pickle that builds Python objects ({exc}): a memory snapshot holds "
            "plain data only, and profsight runs no code from a pickle",
        ) from None
    except pickle.UnpicklingError as exc:
        reason = " ".join(str(exc).split())
        raise InputError(source, f"is not a readable pickle ({reason:.200})") from None
    except (EOFError, ValueError, IndexError, MemoryError) as exc:
        raise InputError(source, f"is a pickle cut short or damaged ({exc!r:.200})") from None
    except (TypeError, AttributeError, OverflowError, RecursionError) as exc:
        raise InputError(source, f"is a damaged pickle ({exc!r:.200})") from None


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.stacks: dict[tuple[Frame, ...], int] = {(): 0}
        self.frames: dict[tuple[str, str, int], Frame] = {}
        #: Stacks by their frames' identities: the pickle keeps each distinct frame once and
        #: refers to it (665 frame dicts in a 22,332-event history), and the data is alive
        #: while it is read, so the ids stand for the frames.
        self.by_ids: dict[tuple[int, ...], int] = {}

    def read(self, data: Mapping[str, Any]) -> MemorySnapshot:
        traces: Sequence[Any] = data.get("device_traces") or []
        by_device: dict[int, list[Mapping[str, Any]]] = {}
        for segment in data["segments"]:
            device = _int(segment.get("device", 0), "device number", low=-1)
            by_device.setdefault(device, []).append(segment)
        with_events = {i: t for i, t in enumerate(traces) if t}
        devices = []
        for device in sorted(by_device.keys() | with_events.keys()):
            own = by_device.get(device, [])
            events = self._events(with_events.get(device, []))
            held = tuple(b for seg in own for b in self._held(seg))
            reserved = sum(_int(s["total_size"], "segment size") for s in own)
            devices.append(DeviceSnapshot(device, events, held, reserved))
        ordered = sorted(self.stacks.items(), key=lambda item: item[1])
        return MemorySnapshot(
            source=self.source,
            devices=tuple(devices),
            stacks=tuple(stack for stack, _ in ordered),
            annotations=_annotations(data.get("external_annotations") or []),
        )

    def _events(self, trace: Sequence[Mapping[str, Any]]) -> tuple[AllocatorEvent, ...]:
        return tuple(
            AllocatorEvent(
                action=str(e["action"]),
                addr=_int(e.get("addr", 0), "block address"),
                size=_int(e.get("size", 0), "block size"),
                stack=self._stack(e.get("frames") or ()),
                time_us=_int(e["time_us"], "time") if e.get("time_us") is not None else None,
            )
            for e in trace
        )

    def _held(self, segment: Mapping[str, Any]) -> list[HeldBlock]:
        """Blocks the segment holds allocated; their addresses follow from the segment's
        and the sizes before them when a block does not state its own (older torch)."""
        held, addr = [], _int(segment["address"], "segment address")
        for block in segment.get("blocks") or []:
            at = _int(block.get("address", addr), "block address")
            size = _int(block["size"], "block size")
            if block.get("state") in HELD_STATES:
                requested = block.get("requested_size")
                frames = block.get("frames")
                if frames is None and block.get("history"):  # torch 2.0's layout
                    frames = block["history"][0].get("frames")
                    requested = requested or block["history"][0].get("real_size")
                size = _int(requested or size, "block size")
                held.append(HeldBlock(at, size, self._stack(frames or ())))
            addr = at + size
        return held

    def _stack(self, frames: Sequence[Mapping[str, Any]]) -> int:
        ids = tuple(map(id, frames))
        known = self.by_ids.get(ids)
        if known is None:
            known = self.by_ids[ids] = self._intern(frames)
        return known

    def _intern(self, frames: Sequence[Mapping[str, Any]]) -> int:
        stack = tuple(self._frame(f) for f in frames)
        found = self.stacks.get(stack)
        if found is None:
            found = self.stacks[stack] = len(self.stacks)
        return found

    def _frame(self, f: Mapping[str, Any]) -> Frame:
        line = f.get("line") or 0
        key = (str(f.get("name", "")), str(f.get("filename", "")), _int(line, "line number"))
        frame = self.frames.get(key)
        if frame is None:
            frame = self.frames[key] = Frame(*key)
        return frame


def _annotations(items: Sequence[Mapping[str, Any]]) -> tuple[Annotation, ...]:
    """START/END pairs of ``external_annotations``, matched by name in order."""
    open_at: dict[str, list[int]] = {}
    done = []
    for item in items:
        name, stage, at = str(item.get("name", "")), item.get("stage"), item.get("time_us")
        if at is None:
            continue
        if stage == "START":
            open_at.setdefault(name, []).append(_int(at, "time"))
        elif stage == "END" and open_at.get(name):
            done.append(Annotation(name, open_at[name].pop(), _int(at, "time")))
    return tuple(sorted(done, key=lambda a: a.start_us))
