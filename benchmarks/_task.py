"""One measured task, in a fresh process: prints {"seconds", "peak_rss"} as JSON.

    python benchmarks/_task.py TASK TRACE   (TASK: a key of TASKS)

Run by bench_load.py and bench_real.py; each task gets its own interpreter so that peak
memory is its own. A task that fails part-way (a peer that cannot read a trace) still
prints its time, with what failed in "failed".
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


def hta_analyses(path: str) -> list[str]:
    """What HTA users run: load, then its temporal, idle-time and kernel breakdowns."""
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
    "decode": bare_decode,
    "schema": schema_decode,
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
    # a forked decoding worker, if any: its pages shared with us are counted in both
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(
        json.dumps({"seconds": seconds, "peak_rss": peak, "child_rss": children, "failed": failed})
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
