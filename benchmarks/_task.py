"""One measured task, in a fresh process: prints {"seconds", "peak_rss", ...} as JSON.

    python benchmarks/_task.py TASK TRACE   (TASK: a key of TASKS)

Run by bench_load.py, bench_large.py and bench_real.py; each task gets its own interpreter
so that its time and memory are its own. "seconds" is the task's own time, in the process;
bench_real.py times the whole process from outside. A task that fails part-way (a peer that
cannot read a trace) still prints its time, with what failed in "failed".

The yardsticks (``read``, ``decode``, ``schema``, ``schema2``) import msgspec and nothing
of profsight (`_schema` is a copy of profsight's schema); this module imports only the
standard library at its top, as the peers' environments have no msgspec.
(No ``from __future__ import annotations`` in this file: `bare_decode`'s local classes
need their annotations evaluated.)
"""

import os
import resource
import sys
import time

#: The first read of a document, doubled until its event array's ``[`` is found.
_HEAD_BYTES = 64 << 10
#: How far past the middle the two-process split looks for an event boundary (the loader's).
_SPLIT_SEARCH = 1 << 20
_WHITESPACE = b" \t\r\n\xef\xbb\xbf"


def read_bytes(path: str) -> None:
    """Reading the file's bytes, nothing else: what any reader pays first."""
    with open(path, "rb") as fh:
        assert fh.read()


def bare_decode(path: str) -> None:
    """The floor: msgspec's typed decode of the events' top-level fields, nothing else."""
    import msgspec

    class Event(msgspec.Struct, gc=False):
        ph: str = ""
        name: str = ""
        cat: str = ""
        pid: int | str = 0
        tid: int | str = 0
        ts: float = 0.0
        dur: float = 0.0

    class Trace(msgspec.Struct, gc=False):
        traceEvents: list[Event]

    with open(path, "rb") as fh:
        trace = msgspec.json.decode(fh.read(), type=Trace)
    assert trace.traceEvents


def schema_decode(path: str) -> None:
    """One process: a typed decode of exactly the fields profsight reads (a copy of its
    schema, `_schema`), of the whole file read at once; nothing else."""
    import _schema

    with open(path, "rb") as fh:
        data = fh.read()
    if data[:64].lstrip(_WHITESPACE)[:1] == b"[":
        assert _schema.EVENTS.decode(data)
    else:
        assert _schema.TRACE.decode(data).traceEvents


def schema_decode_split(path: str) -> list[str]:
    """Two processes, split as profsight's loader splits a large file
    (``loaders/kineto.py``: `_split_point`, `_decode`): the first event boundary past the
    middle of the event array; a forked child reads and decodes the first half, the parent
    the second, each reading its own half from the file. The child sends back only its
    count of events: moving the decoded events to the parent is the loader's own work."""
    import re

    import _schema

    size = os.path.getsize(path)
    bare, start = _events_start(path)
    middle = (start - 1 + size) // 2  # the loader: from the array's "[" to the end
    with open(path, "rb") as fh:
        fh.seek(middle)
        probe = fh.read(_SPLIT_SEARCH)
    match = re.compile(rb"\}\s*,\s*\{").search(probe)
    if match is None:
        schema_decode(path)
        return ["no event boundary past the middle: decoded in one process"]
    first_end, second_start = middle + match.start() + 1, middle + match.end() - 1
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the first half, from the array's "[", then leave at once
        status = 1
        try:
            os.close(read_fd)
            events = _schema.EVENTS.decode(_span(path, start - 1, first_end, b"", b"]"))
            os.write(write_fd, str(len(events)).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_fd)
    if bare:
        second = len(_schema.EVENTS.decode(_span(path, second_start, size, b"[", b"")))
    else:
        doc = _span(path, second_start, size, b'{"traceEvents":[', b"")
        second = len(_schema.TRACE.decode(doc).traceEvents)
    with os.fdopen(read_fd, "rb") as pipe:
        first = int(pipe.read() or b"0")
    _, status = os.waitpid(pid, 0)
    assert status == 0 and first > 0 and second > 0
    return []


def _events_start(path: str) -> tuple[bool, int]:
    """Whether the document is a bare array, and the offset just past its events' ``[``."""
    import re

    key = re.compile(rb'"traceEvents"\s*:\s*\[')
    with open(path, "rb") as fh:
        head, want = b"", _HEAD_BYTES
        while True:
            block = fh.read(want)
            head += block
            lead = len(head) - len(head.lstrip(_WHITESPACE))
            if head[lead : lead + 1] == b"[":
                return True, lead + 1
            match = key.search(head)
            if match is not None:
                return False, match.end()
            if not block:
                raise ValueError(f"{path}: no traceEvents array")
            want *= 2


def _span(path: str, lo: int, hi: int, prefix: bytes, suffix: bytes) -> bytearray:
    """``prefix`` + the file's bytes [lo, hi) + ``suffix``, read straight into one buffer."""
    buf = bytearray(len(prefix) + hi - lo + len(suffix))
    buf[: len(prefix)] = prefix
    view = memoryview(buf)[len(prefix) : len(prefix) + hi - lo]
    with open(path, "rb", buffering=0) as fh:
        fh.seek(lo)
        done = 0
        while done < len(view):
            got = fh.readinto(view[done:])
            if not got:
                raise EOFError(f"{path}: ends before byte {hi}")
            done += got
    view.release()
    if suffix:
        buf[-len(suffix) :] = suffix
    return buf


def profsight_table(path: str) -> None:
    from profsight.cli.entry import run  # what the console script runs

    with open(os.devnull, "w") as sink:
        stdout, sys.stdout = sys.stdout, sink
        try:
            code = run(["table", path, "--limit", "20", "--no-progress"])
        finally:
            sys.stdout = stdout
    assert code == 0


def profsight_explain(path: str) -> None:
    """The whole explanation (load, table, tree, diagnosis) written as a JSON report."""
    import tempfile

    from profsight.cli.entry import run

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        assert run(["explain", path, "--format", "json", "-o", out, "--no-progress"]) == 0


def hta_load(path: str) -> None:
    import tempfile

    from hta.trace_analysis import TraceAnalysis

    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(os.path.abspath(path), os.path.join(tmp, "rank-0.pt.trace.json"))
        analysis = TraceAnalysis(trace_dir=tmp)
        assert analysis.t.is_parsed


def hta_analyses(path: str) -> list[str]:
    """What HTA users run: load, then its temporal, idle-time and kernel breakdowns."""
    import tempfile

    from hta.trace_analysis import TraceAnalysis

    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(os.path.abspath(path), os.path.join(tmp, "rank-0.pt.trace.json"))
        analysis = TraceAnalysis(trace_dir=tmp)
        for name in ("get_temporal_breakdown", "get_idle_time_breakdown"):
            try:
                getattr(analysis, name)(visualize=False)
            except Exception as exc:  # a CPU-only trace has no GPU to break down
                failed.append(f"{name}: {type(exc).__name__}")
        try:
            analysis.get_gpu_kernel_breakdown(visualize=False)
        except Exception as exc:
            failed.append(f"get_gpu_kernel_breakdown: {type(exc).__name__}")
    return failed


def tracelens(path: str) -> list[str]:
    """TraceLens's tree, GPU timeline and kernel-launcher summary (its report's core)."""
    from TraceLens import TreePerfAnalyzer

    failed = []
    analyzer = TreePerfAnalyzer.from_file(path)
    for name in ("get_df_gpu_timeline", "get_df_kernel_launchers"):
        try:
            result = getattr(analyzer, name)()
            if name == "get_df_kernel_launchers":
                TreePerfAnalyzer.get_df_kernel_launchers_summary(result)
        except Exception as exc:  # a CPU-only trace has no kernels
            failed.append(f"{name}: {type(exc).__name__}")
    return failed


TASKS = {
    "read": read_bytes,
    "decode": bare_decode,
    "schema": schema_decode,
    "schema2": schema_decode_split,
    "profsight": profsight_table,
    "explain": profsight_explain,
    "hta": hta_load,
    "hta_analyses": hta_analyses,
    "tracelens": tracelens,
}


def main() -> int:
    task, path = sys.argv[1], sys.argv[2]
    start = time.perf_counter()
    failed = TASKS[task](path) or []
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    # a forked child, if any: its pages shared with us are counted in both
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    # written by hand: json is imported only where there is a failure to quote
    listed = "[]"
    if failed:
        import json

        listed = json.dumps(failed)
    print(
        f'{{"seconds": {seconds!r}, "peak_rss": {peak}, "child_rss": {children}, '
        f'"failed": {listed}}}'
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
