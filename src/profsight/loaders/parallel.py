"""Running part of a load in a forked worker process, when that is safe.

Decoding is bound by Python-level work that holds the GIL, so a second core helps only in
another process. A forked child shares the input buffer with its parent (copy-on-write), so
nothing is copied to it. It writes its result, pickled with its numpy arrays out of band
(pickle protocol 5), into an anonymous in-memory file the parent made before the fork, and
then its length down a pipe; the parent reads each array from that file at memory speed.
(Through a pipe of 64 kB the child sent only as fast as the parent read, after the parent's
own half: 33-82 ms of a 54 MB trace's 0.3 s load; now 10-14 ms.) Memory: the child lets
each array go once written and gives the pages back as the file grows, and the parent cuts
the file as it reads, so the result is held about once, not twice (the file and the child's
arrays, or the file and the parent's copies).

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
import os
import pickle
import struct
import sys
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from profsight.malloc_trim import release_free_memory

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
        shared = _shared_file()
        read_fd = write_fd = -1
        try:
            read_fd, write_fd = os.pipe()
            pid = os.fork()
        except OSError:
            for fd in (shared, read_fd, write_fd):
                if fd >= 0:
                    os.close(fd)
            raise
        if pid == 0:  # the child: do the work, send it, leave without any cleanup
            status = 1
            try:
                os.close(read_fd)
                try:
                    message: tuple[str, object] = ("ok", work())
                except fallback:
                    message = ("fallback", None)
                except BaseException:
                    import traceback  # (only where the work failed: ~0.7 ms of every start-up)

                    message = ("error", traceback.format_exc())
                meta, raws = _pickled(message)
                del message  # (the arrays now live only as long as `raws` holds them)
                size = _send(meta, raws, shared)
                with os.fdopen(write_fd, "wb") as out:
                    out.write(_SIZE.pack(size))
                status = 0
            finally:
                os._exit(status)
        os.close(write_fd)
        self._pid: int | None = pid
        self._read_fd = read_fd
        self._shared = shared

    def __enter__(self) -> Worker[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def result(self) -> T | None:
        """The child's result; None when it fell back (or died: the caller redoes the work).
        Raises `WorkerError` when the work raised anything else."""
        fd, self._read_fd = self._read_fd, -1
        with os.fdopen(fd, "rb") as pipe:
            written = pipe.read(_SIZE.size)
        message = None
        try:
            if len(written) == _SIZE.size:  # all written: read it while the child exits
                message = _receive(self._shared, _SIZE.unpack(written)[0])
        finally:
            self._close_shared()
        status = self._reap(kill=False)  # (a child exits in tens of ms: its pages go)
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
        self._close_shared()
        self._reap(kill=True)

    def _close_shared(self) -> None:
        fd, self._shared = self._shared, -1
        if fd >= 0:
            os.close(fd)

    def _reap(self, kill: bool) -> int:
        pid, self._pid = self._pid, None
        if pid is None:
            return 0
        if kill:
            import signal  # (only to stop a worker: ~0.5 ms of every start-up)

            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        return status


_SIZE = struct.Struct("<Q")
#: The child gives its freed arrays' pages back after writing this many bytes of them, at
#: most `_TRIMS` times (a trim walks the whole heap).
_TRIM_EVERY = 4 << 20
_TRIMS = 16


def _shared_file() -> int:
    """A file in memory only, for the child's result: a memfd, else an unlinked temporary
    file (a kernel before 3.17)."""
    try:
        return os.memfd_create("profsight-worker", os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        import tempfile  # (here only: it imports shutil, bz2 and lzma)

        with tempfile.TemporaryFile() as fh:
            return os.dup(fh.fileno())


def _pickled(message: object) -> tuple[bytes, list[memoryview | None]]:
    """`message` pickled, and its out-of-band buffers (numpy arrays' bytes)."""
    buffers: list[pickle.PickleBuffer] = []
    meta = pickle.dumps(message, protocol=5, buffer_callback=buffers.append)
    return meta, [buffer.raw() for buffer in buffers]


def _send(meta: bytes, raws: list[memoryview | None], fd: int) -> int:
    """The pickle `meta` and its buffers `raws` into the file `fd`: the sizes of the pickle
    and of the buffer table, the pickle, the table (each buffer's offset and length), then
    the buffers. Each buffer is let go once written (its array is freed where nothing else
    holds it), so the child's arrays and the file do not both hold all of it. Returns the
    bytes written."""
    sizes = [raw.nbytes for raw in raws if raw is not None]
    offset = 2 * _SIZE.size + len(meta) + 2 * _SIZE.size * len(sizes)
    table = []
    for n in sizes:
        table += [offset, n]
        offset += n
    head = _SIZE.pack(len(meta)) + _SIZE.pack(len(sizes)) + meta
    _write_all(fd, head + struct.pack(f"<{len(table)}Q", *table), 0)
    every = max(_TRIM_EVERY, sum(sizes) // _TRIMS)
    untrimmed = 0
    for i, at in enumerate(table[::2]):
        raw, raws[i] = raws[i], None
        assert raw is not None
        _write_all(fd, raw, at)
        untrimmed += raw.nbytes
        raw.release()
        if untrimmed >= every:  # the freed arrays' pages leave as the file grows
            release_free_memory()
            untrimmed = 0
    return offset


def _write_all(fd: int, data: bytes | memoryview, at: int) -> None:
    view = memoryview(data).cast("B")
    while len(view):
        done = os.pwrite(fd, view, at)
        view, at = view[done:], at + done


def _receive(fd: int, size: int) -> Any:
    """What `_send` wrote to `fd` (`size` bytes); None where the file holds less than that.

    Each array is read into memory of its own (an array over the file's mapped pages would
    keep the whole file alive while any one of them lives), from the last, and the file is
    cut after each: it gives back what was read, so it and the copies do not both hold all
    of it."""
    if os.fstat(fd).st_size < size:
        return None
    buffers: list[bytearray] = []
    try:
        head = _read_at(fd, 0, 2 * _SIZE.size)
        meta_size, count = _SIZE.unpack_from(head, 0)[0], _SIZE.unpack_from(head, 8)[0]
        meta = _read_at(fd, 2 * _SIZE.size, meta_size + 2 * _SIZE.size * count)
        table = struct.unpack_from(f"<{2 * count}Q", meta, meta_size)
        buffers = [bytearray()] * count
        for i in reversed(range(count)):  # the file shrinks as the arrays are read
            at = table[2 * i]
            buffers[i] = _read_at(fd, at, table[2 * i + 1])
            os.ftruncate(fd, at)
    except EOFError:
        return None
    return pickle.loads(meta[:meta_size], buffers=buffers)  # our child's output, not foreign


def _read_at(fd: int, at: int, n: int) -> bytearray:
    data = bytearray(n)
    view = memoryview(data)
    while len(view):
        got = os.preadv(fd, [view], at)
        if not got:
            raise EOFError
        view, at = view[got:], at + got
    return data
