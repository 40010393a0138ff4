"""Running one task as a whole process, and measuring it from outside.

* **Time**: the parent's clock around the child, from just before it is started to when it
  has been reaped: the interpreter's start-up and teardown count, as a user waits for them.
* **Memory of every process of the run**: a thread of the parent reads
  ``/proc/PID/smaps_rollup`` of the child and of all its descendants (a forked decoding
  worker) every few milliseconds, and keeps the largest total of: the child's resident set
  (RSS), plus each descendant's *private* pages (``Private_Clean + Private_Dirty``: those no
  other process maps). That counts each page of the process tree once: a forked worker's
  copy-on-write pages still shared with its parent, and the libraries both map, are counted
  in the parent's RSS only (a plain sum of RSS would count them twice). PSS, which also
  counts each shared page once, is kept beside it (`Run.pss_peak`) but not reported: it
  also splits the libraries' pages with unrelated processes (other Pythons running on the
  machine), so a 3-event run's figure would depend on what else runs (16 MB against 34 MB
  of RSS for ``import numpy, msgspec`` on a busy machine). The sampler costs CPU and may
  miss a peak shorter than its period, so it runs only where asked (bench_real: the untimed
  warm-up run), and the child's ``ru_maxrss`` (the largest RSS of it or of any descendant
  it reaped, as ``wait4`` reports it) is kept as a floor. The in-memory files the processes
  hold open (the worker's result, written to a memfd for the parent to read) are memory no
  process's RSS shows: each one's pages count too, unless a process of the run maps it
  (then that process's pages hold them).

Linux only (``/proc``, ``wait4``), as are the targets these figures are read against.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

#: The sampler's shortest period; it waits at least twice as long as its last sample took,
#: so that reading a large process's page tables takes at most a third of a core.
SAMPLE_PERIOD_S = 0.005


@dataclass
class Run:
    """One whole-process run of a task."""

    wall: float | None
    """Seconds from start to reaped; None where it failed."""
    maxrss: int = 0
    """Bytes: ``ru_maxrss`` of the child (the largest of it and its reaped descendants)."""
    tree_peak: int = 0
    """Bytes: the largest sampled total of the child's RSS and its descendants' private
    pages (0: not sampled)."""
    pss_peak: int = 0
    """Bytes: the largest sampled sum of PSS over the child and its descendants."""
    descendant_peak: int = 0
    """Bytes: the largest sampled RSS of any one descendant (a pool's or a cluster's worker;
    0: none seen, or not sampled)."""
    inner: dict[str, object] = field(default_factory=dict)
    """What the task printed about itself (`_task.py`: its own time, what failed)."""
    failed: list[str] = field(default_factory=list)
    timed_out: bool = False

    @property
    def peak(self) -> int:
        """Peak memory of all the run's processes: the sampled total, at least its
        ``ru_maxrss``."""
        return max(self.tree_peak, self.maxrss)


def run_process(
    argv: Sequence[str],
    env: dict[str, str],
    sample: bool = False,
    timeout: float | None = None,
    preexec: Callable[[], None] | None = None,
) -> Run:
    """Run `argv` to its end; its stdout is parsed as `_task.py`'s JSON line where it is one."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv, stdout=out, stderr=err, env=env, preexec_fn=preexec, start_new_session=True
        )
        sampler = _Sampler(proc.pid) if sample else None
        expired = threading.Event()
        timer = threading.Timer(timeout, _expire, (proc.pid, expired)) if timeout else None
        if timer is not None:
            timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
        finally:
            if timer is not None:
                timer.cancel()
            if sampler is not None:
                sampler.stop()
            if proc.returncode is None and _alive(proc.pid):  # interrupted: leave none behind
                _kill_group(proc.pid)
                os.waitpid(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        run = Run(wall, maxrss=usage.ru_maxrss * 1024)
        if sampler is not None:
            run.tree_peak, run.pss_peak = sampler.tree_peak, sampler.pss_peak
            run.descendant_peak = sampler.descendant_peak
        run.timed_out = expired.is_set()
        out.seek(0)
        err.seek(0)
        _read_outcome(run, proc.returncode, out.read(), err.read())
    return run


def _read_outcome(run: Run, code: int, stdout: bytes, stderr: bytes) -> None:
    lines = stdout.decode(errors="replace").strip().splitlines()
    if lines and lines[-1].startswith("{"):
        with contextlib.suppress(ValueError):
            run.inner = json.loads(lines[-1])
        failed = run.inner.get("failed")
        if isinstance(failed, list):
            run.failed = [str(f) for f in failed]
    if run.timed_out:
        return
    if code != 0:
        last = (stderr.decode(errors="replace").strip().splitlines() or [f"exit {code}"])[-1]
        run.failed = [last[:120]]
        run.wall = None


def _expire(pid: int, expired: threading.Event) -> None:
    expired.set()
    _kill_group(pid)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False
    return done == 0


class _Sampler:
    """The largest memory of a process and its descendants, sampled by a thread."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.tree_peak = 0
        self.pss_peak = 0
        self.descendant_peak = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._done.is_set():
            began = time.perf_counter()
            tree, pss, one = tree_memory(self.pid)
            self.tree_peak = max(self.tree_peak, tree)
            self.pss_peak = max(self.pss_peak, pss)
            self.descendant_peak = max(self.descendant_peak, one)
            spent = time.perf_counter() - began
            self._done.wait(max(SAMPLE_PERIOD_S, 2 * spent))


def tree_memory(root: int) -> tuple[int, int, int]:
    """Bytes: `root`'s RSS plus its descendants' private pages, the tree's summed PSS, and
    the largest RSS of one descendant (a process gone counts 0)."""
    tree = pss = one = 0
    held: dict[int, int] = {}
    pids = descendants(root)
    for i, pid in enumerate(pids):
        rollup = _rollup(pid)
        tree += rollup.get(b"Rss", 0) if i == 0 else _private(rollup)
        pss += rollup.get(b"Pss", 0)
        if i:
            one = max(one, rollup.get(b"Rss", 0))
        held |= _memory_files(pid)
    for pid in pids:
        for inode in _mapped_memory_files(pid):
            held.pop(inode, None)
    return tree + sum(held.values()), pss, one


def _memory_files(pid: int) -> dict[int, int]:
    """The in-memory files (memfd) `pid` holds open: inode -> bytes allocated."""
    found: dict[int, int] = {}
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found
    for fd in fds:
        path = f"/proc/{pid}/fd/{fd}"
        try:
            if os.readlink(path).startswith("/memfd:"):
                info = os.stat(path)
                found[info.st_ino] = info.st_blocks * 512
        except OSError:
            continue
    return found


def _mapped_memory_files(pid: int) -> set[int]:
    """The inodes of the in-memory files `pid` maps (its own pages count them)."""
    inodes: set[int] = set()
    try:
        with open(f"/proc/{pid}/maps", "rb") as fh:
            for line in fh:
                if b"/memfd:" in line:
                    inodes.add(int(line.split()[4]))
    except (OSError, ValueError, IndexError):
        pass
    return inodes


def _private(rollup: dict[bytes, int]) -> int:
    return rollup.get(b"Private_Clean", 0) + rollup.get(b"Private_Dirty", 0)


def descendants(root: int) -> list[int]:
    """`root`, then every process below it (``/proc/PID/task/TID/children``)."""
    pids = [root]
    i = 0
    while i < len(pids):
        pid = pids[i]
        i += 1
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                    pids.extend(int(child) for child in fh.read().split())
            except OSError:
                continue
    return pids


def _rollup(pid: int) -> dict[bytes, int]:
    """``/proc/PID/smaps_rollup``'s sizes, in bytes (empty for a process gone)."""
    sizes: dict[bytes, int] = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
            for line in fh:
                key, _, rest = line.partition(b":")
                parts = rest.split()
                if len(parts) == 2 and parts[1] == b"kB":
                    sizes[key] = int(parts[0]) * 1024
    except (OSError, ValueError):
        pass
    return sizes
