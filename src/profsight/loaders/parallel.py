"""Running part of a load in a forked worker process, when that is safe.

Decoding is bound by Python-level work that holds the GIL, so a second core helps only in
another process. A forked child shares the input buffer with its parent (copy-on-write), so
nothing is copied to it; it sends its result back pickled through a pipe, numpy arrays out of
band (pickle protocol 5): their bytes go through the pipe straight from the child's arrays
into the parent's, with no pickled copy on either side.

Fork is used only where it is safe: on Linux, and while this process runs a single thread
(forking a process with other threads can deadlock the child on a lock those threads held).
``PROFSIGHT_SEQUENTIAL=1`` turns it off. The CLI and the Python API load through the same
code; the console script sets BLAS to one thread before numpy starts its pool, so it can
fork, while a Python session with threads (numpy's BLAS pool, torch) decodes in one
process. The child is always reaped, and an error in it that is not the expected fallback
reaches the caller with the child's traceback.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import signal
import struct
import sys
import traceback
from collections.abc import Callable
from typing import Any, BinaryIO, Generic, TypeVar

T = TypeVar("T")


def can_fork() -> bool:
    if os.environ.get("PROFSIGHT_SEQUENTIAL"):
        return False
    if not sys.platform.startswith("linux") or (os.cpu_count() or 1) < 2:
        return False
    return _threads() == 1


def _threads() -> int:
    """Native threads of this process (torch and BLAS start threads Python does not see)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 2  # unknown: assume unsafe


class WorkerError(Exception):
    """The worker failed in a way that is not the expected fallback: a bug, reported with the
    child's own traceback."""


class Worker(Generic[T]):
    """`work` running in a forked child; `result()` waits for it (None when the work raised
    one of `fallback`: the caller does it itself). The child is always reaped: `close()`
    (or leaving a ``with`` block) kills it if its result was not collected."""

    def __init__(
        self, work: Callable[[], T], fallback: tuple[type[BaseException], ...] = ()
    ) -> None:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: do the work, send it, leave without any cleanup
            status = 1
            try:
                os.close(read_fd)
                try:
                    message: tuple[str, object] = ("ok", work())
                except fallback:
                    message = ("fallback", None)
                except BaseException:
                    message = ("error", traceback.format_exc())
                with os.fdopen(write_fd, "wb") as out:
                    _send(message, out)
                status = 0
            finally:
                os._exit(status)
        os.close(write_fd)
        self._pid: int | None = pid
        self._read_fd = read_fd

    def __enter__(self) -> Worker[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def result(self) -> T | None:
        """The child's result; None when it fell back (or died: the caller redoes the work).
        Raises `WorkerError` when the work raised anything else."""
        fd, self._read_fd = self._read_fd, -1
        with os.fdopen(fd, "rb") as pipe:
            message = _receive(pipe)
        status = self._reap(kill=False)
        if status != 0 or message is None:
            return None
        kind, value = message
        if kind == "error":
            raise WorkerError(f"the decoding worker failed:\n{value}")
        if kind == "fallback":
            return None
        result: T = value
        return result

    def close(self) -> None:
        """Kill the child if it is still running, and reap it."""
        if self._read_fd >= 0:
            fd, self._read_fd = self._read_fd, -1
            with contextlib.suppress(OSError):
                os.close(fd)
        self._reap(kill=True)

    def _reap(self, kill: bool) -> int:
        pid, self._pid = self._pid, None
        if pid is None:
            return 0
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        return status


_SIZE = struct.Struct("<Q")


def _send(message: object, out: BinaryIO) -> None:
    """`message` pickled, then each out-of-band buffer: its length and its bytes."""
    buffers: list[pickle.PickleBuffer] = []
    meta = pickle.dumps(message, protocol=5, buffer_callback=buffers.append)
    out.write(_SIZE.pack(len(meta)) + _SIZE.pack(len(buffers)))
    out.write(meta)
    for buffer in buffers:
        raw = buffer.raw()
        out.write(_SIZE.pack(raw.nbytes))
        out.write(raw)


def _receive(pipe: io.BufferedReader) -> Any:
    """What `_send` wrote; None when the child died before it had written it all."""
    try:
        size, count = _SIZE.unpack(_exactly(pipe, 8)) + _SIZE.unpack(_exactly(pipe, 8))
        meta = _exactly(pipe, size)
        buffers = [_exactly(pipe, _SIZE.unpack(_exactly(pipe, 8))[0]) for _ in range(count)]
    except EOFError:
        return None
    return pickle.loads(meta, buffers=buffers)  # our own child's output, never foreign data


def _exactly(pipe: io.BufferedReader, n: int) -> bytearray:
    data = bytearray(n)
    view = memoryview(data)
    done = 0
    while done < n:
        got = pipe.readinto(view[done:])
        if not got:
            raise EOFError
        done += got
    return data
