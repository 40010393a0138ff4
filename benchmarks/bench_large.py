"""Traces of 2 and 10 GB on this 24 GB machine, and a 2 GB ``.json.gz``: time and peak memory
against the 258 MB trace they are built from, measured in the same run.

    python benchmarks/bench_large.py [--copies 8 40] [--no-gzip] [--repeat 1]

A large trace is the 258 MB torch trace of bench_load.py with its event array written
`--copies` times, each copy under its own process id (as if N processes had been profiled
into one file): N times the events of a real trace, every event distinct. Such a file holds
N ranks, and profsight explains it as a job, one rank at a time; so the same events are
also written as one process (`--one-process`, default 40 copies): each copy after the one
before in time, its steps numbered on, as one rank profiled for N times as long. The gzip
file is the 8-copy trace compressed (level 1). Each task runs in a fresh process (`_task.py`):
``profsight table``, ``profsight explain --format json``, and, where the file fits this
machine's memory whole, the typed decode of the fields profsight reads (the floor).

Targets (issue 15): explain <= 2x table and <= 2.5x the typed decode; peak memory of the
10 GB trace under 4 GB; time linear in size (seconds per byte, large / small, near 1).
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
from pathlib import Path

from bench_load import OUT, PY, ensure_trace, measure

_ARRAY_OPEN = b'"traceEvents": ['
_ARRAY_CLOSE = b"\n  ],"
_STEP = "ProfilerStep#"
#: The typed decode holds the whole file and every event as a struct: ~4x the file.
_DECODE_LIMIT = 3 << 30


def build_large(source: Path, copies: int) -> Path:
    target = OUT / f"large_cpu_x{copies}.pt.trace.json"
    if target.exists():
        return target
    data = source.read_bytes()
    start = data.index(_ARRAY_OPEN) + len(_ARRAY_OPEN)
    end = data.rindex(_ARRAY_CLOSE)
    head, body, tail = data[:start], data[start:end], data[end:]
    pids = {
        line.split(b":")[1].strip(b" ,") for line in body.splitlines()[:2000] if b'"pid": ' in line
    }
    numeric = sorted(p for p in pids if p.isdigit())
    print(f"writing {copies} copies of {len(body) / 1e6:.0f} MB of events ...", flush=True)
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        out.write(head)
        for k in range(copies):
            copy = body
            for pid in numeric:
                copy = copy.replace(
                    b'"pid": ' + pid + b",", b'"pid": ' + pid + str(k).encode() + b","
                )
            out.write(copy if k == 0 else b"," + copy)
        out.write(tail)
    partial.replace(target)
    return target


def build_one_process(source: Path, copies: int) -> Path:
    """`copies` of the source's events on its own process, one after another in time, the
    step numbers going on (metadata written once)."""
    import msgspec

    target = OUT / f"large_cpu_x{copies}_one_process.pt.trace.json"
    if target.exists():
        return target
    doc = msgspec.json.decode(source.read_bytes())
    events = doc.pop("traceEvents")
    timed = [e for e in events if e.get("ph") != "M" and "ts" in e]
    first = min(float(e["ts"]) for e in timed)
    last = max(float(e["ts"]) + float(e.get("dur", 0)) for e in timed)
    shift = float(int(last - first) + 1000)  # whole µs: the copies' fractions stay exact
    steps = [e for e in timed if str(e.get("name", "")).startswith(_STEP)]
    numbers = [int(e["name"][len(_STEP) :]) for e in steps]
    count = max(numbers) - min(numbers) + 1 if numbers else 0
    rest = msgspec.json.encode(doc)[1:-1]
    head = b"{" + rest + (b", " if rest else b"") + b'"traceEvents": ['
    print(f"writing {copies} copies of {len(timed):,} events as one process ...", flush=True)
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        out.write(head)
        out.write(msgspec.json.encode(events)[1:-1])
        for _ in range(1, copies):
            for e in timed:
                e["ts"] = float(e["ts"]) + shift
            for e, n in zip(steps, numbers, strict=True):
                e["name"] = f"{_STEP}{n + count}"
            numbers = [n + count for n in numbers]
            out.write(b"," + msgspec.json.encode(timed)[1:-1])
        out.write(b"]}")
    partial.replace(target)
    return target


def build_gzip(plain: Path) -> Path:
    target = plain.with_name(plain.name + ".gz")
    if target.exists():
        return target
    print(f"compressing {plain.name} ...", flush=True)
    partial = target.with_suffix(".partial")
    with plain.open("rb") as src, gzip.open(partial, "wb", compresslevel=1) as dst:
        shutil.copyfileobj(src, dst, 16 << 20)
    partial.replace(target)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, nargs="+", default=[8, 40])
    parser.add_argument("--no-gzip", action="store_true")
    parser.add_argument("--one-process", type=int, nargs="*", default=[40])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    small = ensure_trace(250.0)
    if args.build_only:
        for copies in args.copies:
            large = build_large(small, copies)
            if copies == 8 and not args.no_gzip:
                build_gzip(large)
        for copies in args.one_process:
            build_one_process(small, copies)
        return 0
    # built in their own process: a child started from a big parent inherits its peak RSS
    build = [PY, __file__, "--build-only", "--copies", *map(str, args.copies)]
    build += ["--one-process", *map(str, args.one_process)]
    subprocess.run(build + (["--no-gzip"] if args.no_gzip else []), check=True)
    files = [small] + [build_large(small, c) for c in args.copies]
    files += [build_one_process(small, c) for c in args.one_process]
    if 8 in args.copies and not args.no_gzip:
        files.append(build_gzip(build_large(small, 8)))
    rows = []
    for path in files:
        plain = path.with_name(path.name.removesuffix(".gz"))
        # a gzip file's figures per byte are per byte of the JSON it holds
        size = plain.stat().st_size
        row = {"path": path, "size": size}
        for task in ("profsight", "explain"):
            row[task] = measure(PY, task, path, args.repeat)
        if size < _DECODE_LIMIT and not path.name.endswith(".gz"):
            row["schema"] = measure(PY, "schema", path, args.repeat)
        rows.append(row)
        _print_row(row, rows[0])
    print()
    _markdown(rows)
    return 0


def _print_row(row: dict, base: dict) -> None:  # type: ignore[type-arg]
    size, table, explain = row["size"], row["profsight"], row["explain"]
    decode = row.get("schema")
    per_byte = (explain["seconds"] / size) / (base["explain"]["seconds"] / base["size"])
    print(
        f"{row['path'].name}: {size / 1e9:.2f} GB of JSON; table {table['seconds']:.1f} s, "
        f"explain {explain['seconds']:.1f} s ({explain['seconds'] / table['seconds']:.2f}x table"
        + (f", {explain['seconds'] / decode['seconds']:.2f}x typed decode" if decode else "")
        + f"); peak {explain['peak_rss'] / 1e9:.2f} GB ({explain['peak_rss'] / size:.2f}x the "
        f"file), worker {explain['child_rss'] / 1e9:.2f} GB; time per byte {per_byte:.2f}x "
        "the 258 MB trace's",
        flush=True,
    )


def _markdown(rows: list[dict]) -> None:  # type: ignore[type-arg]
    base = rows[0]
    print(
        "| trace | table | explain | explain / table | explain / typed decode "
        "| peak (worker) | peak / file | time per byte vs 258 MB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        size, table, explain = row["size"], row["profsight"], row["explain"]
        decode = row.get("schema")
        ratio = f"{explain['seconds'] / decode['seconds']:.2f}x" if decode else "(no room)"
        per_byte = (explain["seconds"] / size) / (base["explain"]["seconds"] / base["size"])
        print(
            f"| {row['path'].name} ({size / 1e9:.2f} GB of JSON) | {table['seconds']:.1f} s "
            f"| {explain['seconds']:.1f} s | {explain['seconds'] / table['seconds']:.2f}x "
            f"| {ratio} | {explain['peak_rss'] / 1e9:.2f} GB ({explain['child_rss'] / 1e9:.2f}) "
            f"| {explain['peak_rss'] / size:.2f}x | {per_byte:.2f}x |"
        )


if __name__ == "__main__":
    sys.exit(main())
