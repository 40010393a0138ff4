"""Regenerate the malformed-input corpus from real files: ``python make_corpus.py``.

Every file here is derived from `../real/before_fix_trace.json` (pytorch/kineto docs, an H100
trace) or `../tables/triton_practice-1.txt` (three tables printed into a README), damaged
the way profiler output is damaged in the wild. `expected.json` says what profsight must do
with each: ``ok`` (a result, with the listed warning codes) or ``error`` (one line holding
the listed text, exit code 1). `tests/test_malformed.py` runs every file through every
command.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

HERE = Path(__file__).parent
TRACE = (HERE.parent / "real/before_fix_trace.json").read_bytes()
TABLE = (HERE.parent / "tables/triton_practice-1.txt").read_text()


def _events() -> tuple[dict[str, object], list[dict[str, object]]]:
    doc = json.loads(TRACE)
    return doc, doc["traceEvents"]


def _dump(doc: object) -> bytes:
    return json.dumps(doc, indent=1).encode()


def _nth(pattern: bytes, n: int, after: bytes = b"") -> int:
    """Offset of the n-th match of `pattern` in the trace (after the first `after`)."""
    start = TRACE.index(after) if after else 0
    return [m.start() for m in re.finditer(re.escape(pattern), TRACE) if m.start() >= start][n]


def _with_events(change: callable) -> bytes:  # type: ignore[valid-type]
    doc, events = _events()
    doc["traceEvents"] = change(events)
    return _dump(doc)


def _x_events(events: list[dict[str, object]]) -> list[dict[str, object]]:
    return [e for e in events if e.get("ph") == "X"]


def _duplicate(events: list[dict[str, object]]) -> list[dict[str, object]]:
    return events + [dict(e) for e in _x_events(events)]


def _overlap(events: list[dict[str, object]]) -> list[dict[str, object]]:
    x = next(e for e in _x_events(events) if e.get("cat") == "cpu_op")
    half = float(x["dur"]) / 2  # type: ignore[arg-type]
    ts = float(x["ts"]) + half  # type: ignore[arg-type]
    return [*events, {**x, "name": "overlapping_range", "ts": ts}]


def _negative(events: list[dict[str, object]]) -> list[dict[str, object]]:
    for e in _x_events(events)[::3]:
        e["dur"] = -abs(float(e["dur"]))  # type: ignore[arg-type]
    return events


def _nan(events: list[dict[str, object]]) -> list[dict[str, object]]:
    """Python's json module writes these (as NaN, Infinity), which JSON does not allow."""
    for i, e in enumerate(_x_events(events)[::2]):
        e["dur" if i % 2 else "ts"] = float("nan") if i % 3 else float("inf")
    return events


def _missing(events: list[dict[str, object]]) -> list[dict[str, object]]:
    for i, e in enumerate(_x_events(events)):
        e.pop(("ts", "dur", "name", "ph", "pid", "tid")[i % 6], None)
    return events


def _unpaired_flows(events: list[dict[str, object]]) -> list[dict[str, object]]:
    return [e for e in events if e.get("ph") != "f"]


def _gigantic(events: list[dict[str, object]]) -> list[dict[str, object]]:
    _x_events(events)[0]["name"] = "huge_" + "x" * 2_000_000
    return events


def _deep(events: list[dict[str, object]]) -> list[dict[str, object]]:
    base = {"ph": "X", "cat": "user_annotation", "pid": 1, "tid": 1}
    return events + [
        {**base, "name": f"nest_{i}", "ts": 1000.0 + i, "dur": 20000.0 - 2 * i} for i in range(3000)
    ]


def _table_junk() -> str:
    lines = TABLE.splitlines()
    junk = ["<<< paste error >>>", "  | | | ", "Traceback (most recent call last):", "😀 🔥"]
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if 3 < i < len(lines) - 3 and i % 4 == 0:
            out.append(junk[(i // 4) % len(junk)])
    return "\n".join(out) + "\n"


def build() -> dict[str, bytes]:
    timed = b'"ph": "X"'  # cut among the timed events (metadata comes first)
    in_string = _nth(b'"name": "', 4, timed) + 12
    in_args = _nth(b'"args": {', 4, timed) + 12
    between = _nth(b"},\n", 4, timed) + 3
    zipped = gzip.compress(TRACE, mtime=0)
    na_at = _nth(b'"dur": ', 4)
    na_end = TRACE.index(b",", na_at)
    quote_at = _nth(b'"name": "', 25) + len(b'"name": "')
    ctrl_at = _nth(b'"name": "', 40) + len(b'"name": "')
    lines = TABLE.splitlines()
    args_at = _nth(b'"args": {', 6, timed) + len(b'"args": ')
    deep = b'{"a": ' * 100_000 + b"1" + b"}" * 100_000
    return {
        "truncated_in_string.json": TRACE[:in_string],
        "truncated_in_args.json": TRACE[:in_args],
        "truncated_between_events.json": TRACE[:between],
        "truncated_gzip.json.gz": zipped[: len(zipped) * 2 // 3],
        "corrupt_gzip.json.gz": zipped[:20] + bytes(range(256)) * 4,
        "empty.json": b"",
        "binary.json": bytes(range(256)) * 8,
        "memory_timeline.json": json.dumps([[1, 2, 3], [[0, 1024], [0, 2048]]]).encode(),
        "execution_trace.json": json.dumps(
            {
                "schema": "1.1.1-chakra.0.0.4",
                "pid": 1,
                "nodes": [{"id": 1, "name": "[pytorch|profiler|execution_trace|process]"}],
            }
        ).encode(),
        "plain_list.json": b"[1, 2, 3]",
        "no_events.json": b'{"schemaVersion": 1, "traceEvents": []}',
        "unquoted_na.json": TRACE[: na_at + 7] + b"N/A" + TRACE[na_end:],
        "control_chars.json": TRACE[:ctrl_at] + b"bad\x01\x02name " + TRACE[ctrl_at:],
        "unescaped_quote.json": TRACE[:quote_at] + b'my "quoted" range ' + TRACE[quote_at:],
        "non_utf8.json": TRACE[:quote_at] + b"caf\xe9\xff " + TRACE[quote_at:],
        "duplicate_events.json": _with_events(_duplicate),
        "overlapping_events.json": _with_events(_overlap),
        "negative_durations.json": _with_events(_negative),
        "missing_fields.json": _with_events(_missing),
        "nan_times.json": _with_events(_nan),
        "unpaired_flows.json": _with_events(_unpaired_flows),
        "gigantic_name.json.gz": gzip.compress(_with_events(_gigantic), mtime=0),
        "deep_nesting.json.gz": gzip.compress(_with_events(_deep), mtime=0),
        # an args value nested 100,000 levels deep (deeper than any JSON decoder recurses)
        "deep_args.json.gz": gzip.compress(
            TRACE[:args_at] + b'{"nested": ' + deep + b", " + TRACE[args_at + 1 :], mtime=0
        ),
        "table_junk_rows.txt": _table_junk().encode(),
        "table_half_rows.txt": ("\n".join(lines[: len(lines) // 2]) + "\n").encode(),
    }


if __name__ == "__main__":
    for name, data in build().items():
        (HERE / name).write_bytes(data)
        print(f"{name}: {len(data)} bytes")
