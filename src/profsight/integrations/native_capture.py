"""What torch's C++ side prints while profsight starts, steps and stops a profiler, kept.

torch writes its C++ warnings and Kineto's log straight to file descriptor 2
(`knowledge.torch_warnings`): Python's ``warnings`` and ``sys.stderr`` never see them, so they
can only be caught by pointing descriptor 2 elsewhere for a while. profsight does that only
around the calls it makes into the profiler itself (``start``, ``step``, ``stop``: where
Kineto starts and stops and where torch post-processes the events), never around the
user's code. What it catches there is read by `loaders.native_log`: each distinct warning
becomes one diagnostic with its count; Kineto's narration is dropped; any other line (a
thread of the user's that wrote meanwhile) is written back to descriptor 2 as it was.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import IO, Any

import torch

from profsight.loaders.native_log import NativeLog

__all__ = ["CapturingProfile", "captured_stderr"]

_STDERR = 2
_lock = threading.Lock()
_depth = 0
"""Captures under way (the outer one catches what an inner one would)."""
_file: IO[bytes] | None = None
_libc: Any = None


@contextmanager
def captured_stderr(log: NativeLog) -> Iterator[None]:
    """Descriptor 2 into a temporary file for the block; then `log` reads what came, and
    the lines it does not keep go back to descriptor 2. Inside another capture, the outer
    one catches it all.

    It runs inside the profiler's own step, where its time counts to the recorded steps:
    one file for the process, made once, and no read when nothing came (about 20 µs, not
    the 115 µs of a new file each time: measured on this repository's CPU machine)."""
    global _depth
    with _lock:
        nested = _depth > 0
        _depth += 1
    try:
        if nested:
            yield
            return
        sys.stderr.flush()
        try:
            saved = os.dup(_STDERR)
        except OSError:  # no descriptor 2 to point elsewhere: nothing to catch
            yield
            return
        sink = _sink()
        os.dup2(sink.fileno(), _STDERR)
        try:
            yield
        finally:
            sys.stderr.flush()
            _flush_c_streams()
            os.dup2(saved, _STDERR)
            os.close(saved)
            _give_back(sink, log)
    finally:
        with _lock:
            _depth -= 1


def _sink() -> IO[bytes]:
    global _file
    if _file is None:
        # one file for the process's life (closed at exit), not one per capture
        _file = tempfile.TemporaryFile()  # noqa: SIM115
        atexit.register(_file.close)
    return _file


def _give_back(sink: IO[bytes], log: NativeLog) -> None:
    """What came into `sink` to `log`; the lines it does not keep back to descriptor 2."""
    if not os.fstat(sink.fileno()).st_size:
        return
    sink.seek(0)
    text = sink.read().decode("utf-8", errors="replace")
    sink.seek(0)
    sink.truncate()
    other = log.read(text)
    if other:
        os.write(_STDERR, ("\n".join(other) + "\n").encode("utf-8"))


def _flush_c_streams() -> None:
    """C's ``stderr`` is unbuffered, but a library may print to a buffered stream of its own."""
    global _libc
    with suppress(OSError, AttributeError):  # no C library to call (not POSIX)
        if _libc is None:
            _libc = ctypes.CDLL(None)
        _libc.fflush(None)


class CapturingProfile(torch.profiler.profile):
    """``torch.profiler.profile`` whose own start, step and stop keep torch's C++ warnings
    in `native_log` instead of printing them. Its ``__init__`` is torch's, unchanged:
    Lightning builds it from the arguments torch's signature names."""

    @property
    def native_log(self) -> NativeLog:
        log: NativeLog | None = self.__dict__.get("_native_log")
        if log is None:
            log = self.__dict__["_native_log"] = NativeLog()
        return log

    @native_log.setter
    def native_log(self, log: NativeLog) -> None:
        self.__dict__["_native_log"] = log

    def start(self) -> None:
        with captured_stderr(self.native_log):
            super().start()

    def step(self) -> None:
        with captured_stderr(self.native_log):
            super().step()

    def stop(self) -> None:
        with captured_stderr(self.native_log):
            super().stop()
