"""bench_real.py's results as Markdown, to paste into the README as they are, and its
targets (issue 39's "Done when") as held, missed or not known.

Sizes are in MB of 10^6 bytes, rounded as printed: a trace printed as "10 MB" counts as
one of 10 MB or more.
"""

from __future__ import annotations

import datetime
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from _rounds import Result

#: Issue 39: a 3-event `explain` against `import numpy, msgspec`, as whole processes.
STARTUP_TARGET = 1.5
#: Issue 39, on every trace of `LARGE_MB` or more: against the one-process typed decode.
EXPLAIN_TARGET, TABLE_TARGET = 2.5, 1.5
#: ... and peak memory of all processes, as a multiple of the file's size.
MEMORY_TARGET = 1.0
LARGE_MB = 50
#: Issue 39, on every trace of `HTA_MB` or more where HTA loads it: HTA's time / explain's.
HTA_TARGET, HTA_MB = 5.0, 10


@dataclass
class Row:
    label: str
    kind: str
    path: Path
    size: int = 0
    results: dict[str, Result] = field(default_factory=dict)

    @property
    def mb(self) -> int:
        return round(self.size / 1e6)

    def seconds(self, task: str) -> float | None:
        result = self.results.get(task)
        return result.seconds if result is not None else None

    @property
    def peak(self) -> int:
        """Bytes: peak memory of all processes, the larger of `table`'s and `explain`'s."""
        return max(
            (self.results[t].peak for t in ("table", "explain") if t in self.results), default=0
        )


def header(root: Path, repeat: int) -> str:
    """When, which commit, on what: the line above the tables."""
    commit = _git(root, "rev-parse", "--short", "HEAD") or "?"
    if _git(root, "status", "--porcelain", "--", "src"):
        commit += " (with uncommitted changes in src/)"
    model = "?"
    with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"{day}, commit {commit}, {os.cpu_count()} CPUs ({model}), {memory:.0f} GiB; "
        f"whole processes, medians of {repeat}, the tasks of each trace interleaved, each "
        "warmed by one untimed run"
    )


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def trace_table(rows: list[Row]) -> list[str]:
    lines = [
        "| trace (plain JSON) | read | decode, 1 process | decode, 2 processes | `table` "
        "| `explain` | HTA | TraceLens | peak memory, all processes |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        d = row.seconds("decode")
        e = row.seconds("explain")
        cells = [
            f"{row.label}, {row.mb} MB",
            _time(row.results.get("read")),
            _time(row.results.get("decode")),
            _time(row.results.get("decode2"), d),
            _time(row.results.get("table"), d),
            _time(row.results.get("explain"), d),
            _peer(row.results.get("hta"), e),
            _peer(row.results.get("tracelens"), e),
            f"{row.peak / row.size:.2f}x the file ({row.peak / 1e6:.0f} MB)" if row.size else "–",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _time(result: Result | None, base: float | None = None) -> str:
    if result is None:
        return "–"
    s = result.seconds
    if s is None:
        return "failed"
    return f"{s:.2f} s" + (f" ({s / base:.2f}x)" if base else "")


def _peer(result: Result | None, explain: float | None) -> str:
    """A peer's time and its multiple of `explain`'s; ">" where it is a lower bound."""
    if result is None:
        return "–"
    s = result.seconds
    if s is None:
        return "fails to load ²"
    multiple = f"{s / explain:.1f}x" if explain else "?"
    if result.timed_out:
        return f"> {multiple} (stopped at {s:.0f} s)"
    if result.failed:
        return f"> {multiple} ¹"
    return f"{s:.2f} s ({multiple})"


def peer_notes(rows: list[Row]) -> list[str]:
    lines = [
        "",
        "Every time is a whole process (start-up and exit included). Decode: msgspec's typed "
        "decode of exactly the fields profsight reads (a copy of its schema, no profsight "
        "import), the whole file read at once; with 2 processes, the file split as "
        "profsight's loader splits it (it forks a second decoding process above 16 MB). "
        "Ratios are to the one-process decode; HTA's and TraceLens's to `explain`. Peak "
        "memory: the larger of `table`'s and `explain`'s, counting every process of the run "
        "(the main process's RSS and the forked worker's private pages, sampled in the untimed "
        "warm-up run; at least the `ru_maxrss` of every run). ¹ the peer failed part-way (its "
        "time up to the failure: a lower bound). ² it could not load the trace.",
    ]
    for row in rows:
        for peer in ("hta", "tracelens"):
            result = row.results.get(peer)
            if result is not None and result.failed:
                lines.append(f"- {peer} on {row.label}: {'; '.join(result.failed)}")
    return lines


def startup_table(startup: dict[str, Result], rounds: int) -> list[str]:
    base = startup["imports"].seconds
    lines = [
        f"| whole process | median of {rounds} | vs `import numpy, msgspec` | peak memory |",
        "|---|---:|---:|---:|",
    ]
    labels = {
        "imports": '`python -c "import numpy, msgspec"`',
        "explain3": "`profsight explain` a 3-event trace (`--format json -o ...`)",
    }
    for name, label in labels.items():
        result = startup[name]
        s = result.seconds
        vs = f"{s / base:.2f}x" if s is not None and base else "–"
        lines.append(f"| {label} | {_time(result)} | {vs} | {result.peak / 1e6:.0f} MB |")
    return lines


def targets(rows: list[Row], startup: dict[str, Result]) -> list[str]:
    """Each of issue 39's targets: held, missed, or not known (and why)."""
    verdicts = [
        _verdict(
            "3-event `explain` / `import numpy, msgspec`",
            _ratio(startup["explain3"].seconds, startup["imports"].seconds),
            STARTUP_TARGET,
        )
    ]
    for row in rows:
        d, e = row.seconds("decode"), row.seconds("explain")
        if row.mb >= LARGE_MB:
            verdicts += [
                _verdict(f"{row.label}: `explain` / decode", _ratio(e, d), EXPLAIN_TARGET),
                _verdict(
                    f"{row.label}: `table` / decode", _ratio(row.seconds("table"), d), TABLE_TARGET
                ),
                _verdict(f"{row.label}: peak memory / file", row.peak / row.size, MEMORY_TARGET),
            ]
        hta = row.results.get("hta")
        if row.mb >= HTA_MB and hta is not None and hta.seconds is not None:
            what = f"{row.label}: HTA / `explain`"
            bound = _ratio(hta.seconds, e)
            if (hta.failed or hta.timed_out) and bound is not None and bound < HTA_TARGET:
                verdicts.append(
                    (
                        "not known",
                        f"{what} > {bound:.2f}x (HTA stopped early; target >= {HTA_TARGET}x)",
                    )
                )
            else:
                verdicts.append(_verdict(what, bound, HTA_TARGET, at_least=True))
    lines = [
        f"- {'**missed**' if status == 'missed' else status}: {text}" for status, text in verdicts
    ]
    counts = {s: sum(v[0] == s for v in verdicts) for s in ("held", "missed", "not known")}
    lines += ["", ", ".join(f"{n} {s}" for s, n in counts.items()) + f" of {len(verdicts)}"]
    return lines


def _verdict(
    what: str, value: float | None, target: float, at_least: bool = False
) -> tuple[str, str]:
    sign = ">=" if at_least else "<="
    if value is None:
        return "not known", f"{what} (a task failed; target {sign} {target}x)"
    held = value >= target if at_least else value <= target
    return "held" if held else "missed", f"{what} {value:.2f}x (target {sign} {target}x)"


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def markdown(
    head: str, rows: list[Row], startup: dict[str, Result] | None, startup_rounds: int = 5
) -> str:
    lines = [head, ""]
    if startup is not None:
        lines += [*startup_table(startup, startup_rounds), ""]
    if rows:
        lines += [*trace_table(rows), *peer_notes(rows), ""]
    if startup is not None:
        lines += ["Targets (issue 39):", "", *targets(rows, startup)]
    return "\n".join(lines) + "\n"
