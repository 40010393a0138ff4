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
from profsight.loaders.input_files import read_errors, read_input
from profsight.model.memory_snapshot import (
    AllocatorEvent,
    Annotation,
    DeviceSnapshot,
    Frame,
    HeldBlock,
    MemorySnapshot,
)

#: Pickle's PROTO opcode and the protocols that begin with it (2 to 5).
_PROTO = 0x80


def looks_like_pickle(head: bytes | bytearray) -> bool:
    return len(head) >= 2 and head[0] == _PROTO and 2 <= head[1] <= 5


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
        return _Reader(source).read(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(source, f"is a memory snapshot of an unknown layout ({exc!r})") from None


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
        raise InputError(source, f"is not a readable pickle ({exc})") from None
    except (EOFError, ValueError, IndexError, MemoryError) as exc:
        raise InputError(source, f"is a pickle cut short or damaged ({exc!r})") from None


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
        segments: list[Mapping[str, Any]] = data["segments"]
        count = max([len(traces)] + [int(s.get("device", 0)) + 1 for s in segments])
        devices = []
        for device in range(count):
            own = [s for s in segments if int(s.get("device", 0)) == device]
            events = self._events(traces[device] if device < len(traces) else [])
            if not events and not own:
                continue
            held = tuple(b for seg in own for b in self._held(seg))
            reserved = sum(int(s["total_size"]) for s in own)
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
                addr=int(e.get("addr", 0)),
                size=int(e.get("size", 0)),
                stack=self._stack(e.get("frames") or ()),
                time_us=int(e["time_us"]) if e.get("time_us") is not None else None,
            )
            for e in trace
        )

    def _held(self, segment: Mapping[str, Any]) -> list[HeldBlock]:
        """Blocks the segment holds allocated; their addresses follow from the segment's
        and the sizes before them when a block does not state its own (older torch)."""
        held, addr = [], int(segment["address"])
        for block in segment.get("blocks") or []:
            at = int(block.get("address", addr))
            size = int(block["size"])
            if block.get("state") == "active_allocated":
                requested = block.get("requested_size")
                frames = block.get("frames")
                if frames is None and block.get("history"):  # torch 2.0's layout
                    frames = block["history"][0].get("frames")
                    requested = requested or block["history"][0].get("real_size")
                held.append(HeldBlock(at, int(requested or size), self._stack(frames or ())))
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
        key = (str(f.get("name", "")), str(f.get("filename", "")), int(f.get("line", 0) or 0))
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
            open_at.setdefault(name, []).append(int(at))
        elif stage == "END" and open_at.get(name):
            done.append(Annotation(name, open_at[name].pop(), int(at)))
    return tuple(sorted(done, key=lambda a: a.start_us))
