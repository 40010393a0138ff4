"""One measured task, in a fresh process: prints {"seconds", "peak_rss"} as JSON.

    python benchmarks/_task.py decode|profsight|hta TRACE

Run by bench_load.py; each task gets its own interpreter so that peak memory is its own.
"""

import json
import os
import resource
import sys
import tempfile
import time


def bare_decode(path: str) -> None:
    """The floor: msgspec's typed decode of the events' top-level fields, nothing else.

    (No ``from __future__ import annotations`` in this file: these local classes need their
    annotations evaluated, and the HTA environment has no msgspec to import at the top.)
    """
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
    """A typed decode of exactly the fields profsight reads (its own schema), nothing else."""
    import msgspec

    from profsight.loaders.kineto_schema import Event

    class Trace(msgspec.Struct, gc=False):
        traceEvents: list[Event]

    with open(path, "rb") as fh:
        trace = msgspec.json.decode(fh.read(), type=Trace)
    assert trace.traceEvents


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
    from profsight.cli.entry import run

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        assert run(["explain", path, "--format", "json", "-o", out, "--no-progress"]) == 0


def hta_load(path: str) -> None:
    from hta.trace_analysis import TraceAnalysis

    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(os.path.abspath(path), os.path.join(tmp, "rank-0.pt.trace.json"))
        analysis = TraceAnalysis(trace_dir=tmp)
        assert analysis.t.is_parsed


TASKS = {
    "decode": bare_decode,
    "schema": schema_decode,
    "profsight": profsight_table,
    "explain": profsight_explain,
    "hta": hta_load,
}


def main() -> int:
    task, path = sys.argv[1], sys.argv[2]
    start = time.perf_counter()
    TASKS[task](path)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    # a forked decoding worker, if any: its pages shared with us are counted in both
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(json.dumps({"seconds": seconds, "peak_rss": peak, "child_rss": children}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
