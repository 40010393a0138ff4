"""`slice_trace`: the steps that matter of a trace, as a trace a viewer opens.

The slice is a valid Chrome / Kineto trace holding the chosen ``ProfilerStep#N`` ranges:
every event of every thread and stream that overlaps their window, the device work their
launches started (it can run after the host's step ended), the flows whose every end is
kept, the counters and instants inside, all metadata and the trace's top-level fields.
profsight's findings on the slice are added as instant events on a track of their own
(process ``profsight``), so a viewer shows them beside the step they are about.

Reading the slice with profsight gives the table of those steps.
"""

from __future__ import annotations

import gzip
import re
from typing import Any

import msgspec

from profsight.analyses.pipeline import diagnose
from profsight.errors import InputError, UsageError
from profsight.job.discover import find_traces
from profsight.loaders import load
from profsight.loaders.event_chunks import Damaged, NotATrace
from profsight.loaders.input_files import Input
from profsight.loaders.kineto import load_kineto
from profsight.slicing import passes as slice_passes

#: The pid of profsight's own track in a slice (a name: Perfetto and chrome://tracing show
#: string pids as they are).
FINDINGS_PID = "profsight"


class Slice(msgspec.Struct, frozen=True):
    document: dict[str, Any]
    steps: tuple[int, int]
    window_us: tuple[float, float]
    """The chosen steps' span on the host (µs, the trace's clock)."""
    kept: int
    dropped: int


def parse_steps(text: str) -> tuple[int, int]:
    """``3-4`` or ``3``: the first and last ``ProfilerStep#N`` to keep."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
    if m is None:
        raise UsageError(f"--steps {text!r}: write N or N-M (ProfilerStep numbers)")
    first, last = int(m.group(1)), int(m.group(2) or m.group(1))
    if last < first:
        raise UsageError(f"--steps {text!r}: the last step comes before the first")
    return first, last


def slice_trace(path: str, steps: tuple[int, int]) -> Slice:
    """The slice of the trace at `path` holding ProfilerStep#first..#last.

    The trace is read in passes, chunk by chunk (`slice_passes`): a trace of any size is
    sliced in the memory of one chunk and what is kept.
    """
    try:
        found, count = slice_passes.step_spans(path)
        if count:
            lo, hi = _window(path, found, steps)
            calls = slice_passes.launched(path, lo, hi)
            last = slice_passes.device_end(path, lo, hi, calls)
            kept, header = slice_passes.kept_events(path, lo, hi, last, calls)
    except (Damaged, NotATrace) as exc:
        load(path)  # what is no trace at all gets the loader's own one-line error
        if isinstance(exc, NotATrace):
            raise InputError(path, str(exc)) from None
        if "ends before" in str(exc) and path.endswith(".gz"):
            raise InputError(path, "the gzip stream is cut short: slice a complete trace") from None
        raise InputError(
            path,
            f"holds damaged JSON ({exc}): profsight explain reads what it can of it, a slice "
            "needs the whole trace",
        ) from None
    if not count:
        load(path)  # no trace: the loader's own one-line error
        raise InputError(path, "holds no events to slice")
    out = {**header, "traceEvents": kept}
    return Slice(out, steps, (lo, hi), len(kept), count - len(kept))


def _window(
    path: str, found: dict[int, list[tuple[float, float]]], steps: tuple[int, int]
) -> tuple[float, float]:
    if not found:
        raise InputError(path, "holds no ProfilerStep#N ranges: there are no steps to slice")
    chosen = [span for n in range(steps[0], steps[1] + 1) for span in found.get(n, [])]
    if not chosen:
        have = sorted(found)
        raise UsageError(
            f"--steps {steps[0]}-{steps[1]}: the trace holds ProfilerStep#{have[0]} to #{have[-1]}"
        )
    return min(s for s, _ in chosen), max(e for _, e in chosen)


def with_findings(piece: Slice, findings: list[dict[str, Any]]) -> Slice:
    """`piece` with `findings` (``Finding.to_dict()``) as instant events on profsight's own
    track, at the window's start, most saved by fixing first."""
    lo = piece.window_us[0]
    marks: list[dict[str, Any]] = [
        {
            "ph": "M",
            "name": "process_name",
            "pid": FINDINGS_PID,
            "tid": 0,
            "args": {"name": "profsight"},
        },
        {
            "ph": "M",
            "name": "thread_name",
            "pid": FINDINGS_PID,
            "tid": 0,
            "args": {"name": "findings"},
        },
    ]
    for k, f in enumerate(findings):
        marks.append(
            {
                "ph": "i",
                "s": "p",
                "name": f"{k + 1}. {f['title']}",
                "cat": "profsight",
                "pid": FINDINGS_PID,
                "tid": 0,
                "ts": lo,
                "args": {
                    "category": f["category"],
                    "severity": f["severity"],
                    "could_save_pct": f.get("gain_pct"),
                    "at_stake_pct": f["at_stake_pct"],
                    "evidence": [f"{e['label']}: {e['value']}" for e in f["evidence"]],
                    "fix": f["recommendation"],
                },
            }
        )
    doc = {**piece.document, "traceEvents": [*piece.document["traceEvents"], *marks]}
    return Slice(doc, piece.steps, piece.window_us, piece.kept + len(marks), piece.dropped)


def explained_slice(path: str, steps: tuple[int, int]) -> Slice:
    """The slice, with profsight's findings on it (the slice diagnosed as a trace)."""
    piece = slice_trace(path, steps)
    data = bytearray(msgspec.json.encode(piece.document))
    name = f"{path} (steps {steps})"
    profile = load_kineto(Input.from_bytes(data, name), name)
    findings = [f.to_dict() for f in diagnose(profile).findings]
    return with_findings(piece, findings)


def _meta(name: str, value: str) -> dict[str, Any]:
    return {"ph": "M", "name": name, "pid": FINDINGS_PID, "tid": 0, "args": {"name": value}}


def slice_job(paths: list[str], steps: tuple[int, int], ranks: set[int] | None) -> Slice:
    """The same steps of several ranks' traces in one file: each rank's slice with its
    findings, every event tagged with its rank (``args.rank``, which profsight reads back as
    the job), each process named ``rank N: ...``, and pids that two ranks share moved apart
    (ranks on different hosts number their processes and GPUs alike)."""
    files = find_traces(paths)
    pieces: dict[int, Slice] = {}
    for k, file in enumerate(files):
        piece = explained_slice(file.path, steps)
        info = piece.document.get("distributedInfo")
        stated = info.get("rank") if isinstance(info, dict) else None
        rank = stated if isinstance(stated, int) else file.name_rank
        pieces[k if rank is None else rank] = piece
    chosen = sorted(pieces) if ranks is None else sorted(ranks)
    missing = [r for r in chosen if r not in pieces]
    if missing:
        raise UsageError(
            f"--ranks: no trace of rank {', '.join(map(str, missing))}; the job holds "
            f"rank(s) {', '.join(map(str, sorted(pieces)))}"
        )
    events: list[dict[str, Any]] = []
    used: set[int] = set()
    for k, rank in enumerate(chosen):
        own = pieces[rank].document["traceEvents"]
        numeric = {e["pid"] for e in own if isinstance(e.get("pid"), int)}
        offset = RANK_PID_OFFSET * k if numeric & used else 0
        used |= {p + offset for p in numeric}
        events += [_ranked(e, rank, offset) for e in own]
    first = pieces[chosen[0]]
    header = {k: v for k, v in first.document.items() if k != "traceEvents"}
    doc = {**header, "traceEvents": events}
    lo = min(pieces[r].window_us[0] for r in chosen)
    hi = max(pieces[r].window_us[1] for r in chosen)
    kept = sum(pieces[r].kept for r in chosen)
    dropped = sum(pieces[r].dropped for r in chosen)
    return Slice(doc, steps, (lo, hi), kept, dropped)


#: Added to a rank's process ids when another rank of the slice uses the same ones.
RANK_PID_OFFSET = 1_000_000_000


def _ranked(event: dict[str, Any], rank: int, offset: int) -> dict[str, Any]:
    out = dict(event)
    args = dict(out.get("args") or {})
    pid = out.get("pid")
    if isinstance(pid, int):
        out["pid"] = pid + offset
    elif pid == FINDINGS_PID:
        out["pid"] = f"{FINDINGS_PID} rank {rank}"
    if out.get("ph") == "M" and out.get("name") == "process_name":
        args["name"] = f"rank {rank}: {args.get('name', '')}"
    else:
        args["rank"] = rank
    out["args"] = args
    return out


def encode(piece: Slice, gzipped: bool) -> bytes:
    text = msgspec.json.encode(piece.document)
    return gzip.compress(text, compresslevel=6) if gzipped else text


__all__ = [
    "FINDINGS_PID",
    "Slice",
    "encode",
    "explained_slice",
    "parse_steps",
    "slice_job",
    "slice_trace",
    "with_findings",
]
