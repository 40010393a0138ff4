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

import ctypes
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import torch

from profsight.loaders.native_log import NativeLog

__all__ = ["CapturingProfile", "captured_stderr"]

_STDERR = 2


@contextmanager
def captured_stderr(log: NativeLog) -> Iterator[None]:
    """Descriptor 2 into a temporary file for the block; then `log` reads what came, and
    the lines it does not keep go back to descriptor 2."""
    sys.stderr.flush()
    try:
        saved = os.dup(_STDERR)
    except OSError:  # no descriptor 2 to point elsewhere: nothing to catch
        yield
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), _STDERR)
        try:
            yield
        finally:
            sys.stderr.flush()
            _flush_c_streams()
            os.dup2(saved, _STDERR)
            os.close(saved)
            sink.seek(0)
            other = log.read(sink.read().decode("utf-8", errors="replace"))
            if other:
                os.write(_STDERR, ("\n".join(other) + "\n").encode("utf-8"))


def _flush_c_streams() -> None:
    """C's ``stderr`` is unbuffered, but a library may print to a buffered stream of its own."""
    with suppress(OSError, AttributeError):  # no C library to call (not POSIX)
        ctypes.CDLL(None).fflush(None)


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
