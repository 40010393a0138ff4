"""Running part of a load in a forked worker process, when that is safe.

Decoding is bound by Python-level work that holds the GIL, so a second core helps only in
another process. A forked child shares the input buffer with its parent (copy-on-write), so
nothing is copied to it; it sends its result back pickled through a pipe.

Fork is used only where it is safe: on Linux, and while this process runs a single thread
(forking a process with other threads can deadlock the child on a lock those threads held).
``PROFSIGHT_SEQUENTIAL=1`` turns it off.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable
from typing import Generic, TypeVar

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


class Worker(Generic[T]):
    """`work` running in a forked child; `result()` waits for it (None if it failed)."""

    def __init__(self, work: Callable[[], T]) -> None:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: do the work, send it, leave without any cleanup
            status = 1
            try:
                os.close(read_fd)
                payload = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_fd, "wb") as out:
                    out.write(payload)
                status = 0
            finally:
                os._exit(status)
        os.close(write_fd)
        self._pid = pid
        self._read_fd = read_fd

    def result(self) -> T | None:
        with os.fdopen(self._read_fd, "rb") as pipe:
            payload = pipe.read()
        _, status = os.waitpid(self._pid, 0)
        if status != 0 or not payload:
            return None
        result: T = pickle.loads(payload)  # our own child's output, never foreign data
        return result
