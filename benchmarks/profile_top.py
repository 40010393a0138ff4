"""Where `explain`'s time goes on a trace: cProfile's top costs, as Markdown for the docs.

    python benchmarks/profile_top.py TRACE [TRACE ...] [--top 12]

Runs ``profsight explain TRACE --format json`` in this process under cProfile (the forked
decoding worker's own time is not seen: the main process waits for it in ``_receive``),
then prints, per trace, the stages' cumulative times and the functions with the most time
of their own. cProfile adds a cost per Python call, so read the shares, not the seconds.
The package's bytecode is compiled first (`compileall`), as an installed package has it.
"""

from __future__ import annotations

import argparse
import compileall
import cProfile
import os
import pstats
import sys
import tempfile
from pathlib import Path

#: (label, function key as pstats names it: file suffix and function name)
STAGES = [
    ("load (decode, columns)", "loaders/kineto.py", "load_kineto"),
    ("diagnose", "analyses/pipeline.py", "diagnose"),
    ("  context (breakdown, attribution, table)", "analyses/context.py", "context"),
    ("  the analyses' rules", "analyses/pipeline.py", "_run_all"),
    ("  the what-if replays", "analyses/replay/savings.py", "with_savings"),
    ("build_report", "report/build.py", "build_report"),
]


def _short(path: str) -> str:
    for marker in ("/src/", "/site-packages/", "/lib/python3"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def profile(trace: Path, top: int) -> str:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from profsight.cli.entry import run

    with tempfile.TemporaryDirectory() as scratch:
        out = str(Path(scratch) / "report.json")
        prof = cProfile.Profile()
        prof.enable()
        run(["explain", str(trace), "--format", "json", "-o", out])
        prof.disable()
    stats = pstats.Stats(prof)
    raw = stats.stats  # type: ignore[attr-defined]
    total = max(v[3] for v in raw.values())
    lines = [
        f"**{trace.name}** ({trace.stat().st_size / 1e6:,.0f} MB): {total:.2f} s in this "
        "process under cProfile",
        "",
        "| stage | cumulative | share |",
        "|---|---:|---:|",
    ]
    for label, suffix, name in STAGES:
        found = [v[3] for (f, _, n), v in raw.items() if f.endswith(suffix) and n == name]
        if found:
            lines.append(f"| {label} | {max(found):.2f} s | {max(found) / total:.0%} |")
    lines += ["", "| own time | calls | function |", "|---:|---:|---|"]
    ranked = sorted(raw.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    for (f, line, name), (_, calls, own, _, _) in ranked:
        where = name if f == "~" else f"{_short(f)}:{line} {name}"
        lines.append(f"| {own:.3f} s ({own / total:.0%}) | {calls:,} | `{where}` |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("traces", nargs="+", type=Path)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    import profsight

    compileall.compile_dir(Path(profsight.__file__).parent, quiet=1)
    for trace in args.traces:
        print(profile(trace, args.top), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
