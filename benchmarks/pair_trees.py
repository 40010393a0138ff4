"""Two checkouts of profsight, paired: the same commands from each, as whole processes,
interleaved round by round on one machine, against yardsticks measured in the same rounds.

    .venv/bin/python benchmarks/pair_trees.py BASE_SRC NEW_SRC [--trace T ...] [--rounds N]

``BASE_SRC`` and ``NEW_SRC`` are the ``src`` folders of two checkouts (``git worktree add
DIR COMMIT``); each runs through this interpreter's console script with ``PYTHONPATH``
naming it and its own bytecode cache. Start-up: ``explain`` of the 3-event trace against
``python -c "import numpy, msgspec"``. Each ``--trace``: ``table`` and ``explain`` against
the one-process typed decode (`_task.py schema`, which imports nothing of profsight). The
rounds are `_rounds.measure`'s, as `bench_real.py` runs them: each command warmed once, then
interleaved, every other round backwards; the figures are medians. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from _rounds import Task, measure

HERE = Path(__file__).resolve().parent
PY = sys.executable
SCRIPT = str(Path(PY).with_name("profsight"))
TINY = HERE.parent / "tests" / "data" / "minimal" / "minimal.pt.trace.json"


def _env(src: str, scratch: Path) -> dict[str, str]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": src}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache" / src.strip("/").replace("/", "_"))
    return env


def _tasks(args: argparse.Namespace, scratch: Path) -> list[Task]:
    base, new = _env(args.base, scratch), _env(args.new, scratch)
    report = str(scratch / "report.json")
    explain = ["explain", "--format", "json", "-o", report, "--force", "--no-progress"]
    tasks = [Task("imports", [PY, "-c", "import numpy, msgspec"], base)]
    for side, env in (("base", base), ("new", new)):
        tasks.append(Task(f"start-up {side}", [SCRIPT, explain[0], str(TINY), *explain[1:]], env))
    for trace in args.trace:
        name = trace.name
        tasks.append(
            Task(f"decode {name}", [PY, str(HERE / "_task.py"), "schema", str(trace)], base)
        )
        for side, env in (("base", base), ("new", new)):
            table = [SCRIPT, "table", str(trace), "--limit", "20", "--no-progress"]
            tasks.append(Task(f"table {name} {side}", table, env))
            argv = [SCRIPT, explain[0], str(trace), *explain[1:]]
            tasks.append(Task(f"explain {name} {side}", argv, env))
    return tasks


def _medians(tasks: list[Task], rounds: int) -> dict[str, float]:
    """Each task's median seconds, from `_rounds.measure` (warmed, interleaved, every other
    round backwards); its rounds are reported on stderr."""
    results = measure(tasks, rounds, math.inf, say=lambda line: print(line, file=sys.stderr))
    medians = {name: result.seconds for name, result in results.items()}
    failed = [name for name, seconds in medians.items() if seconds is None]
    if failed:
        raise SystemExit(f"failed: {', '.join(failed)}")
    return {name: float(seconds) for name, seconds in medians.items() if seconds is not None}


def _table(args: argparse.Namespace, m: dict[str, float]) -> str:
    lines = [
        f"{args.rounds} rounds; base {args.base}, new {args.new}",
        "",
        "| command | yardstick | base | new | base / yardstick | new / yardstick |",
        "|---|---:|---:|---:|---:|---:|",
    ]

    def row(label: str, yard: float, base: float, new: float) -> None:
        lines.append(
            f"| {label} | {yard * 1e3:.1f} ms | {base * 1e3:.1f} ms | {new * 1e3:.1f} ms "
            f"| {base / yard:.3f}x | {new / yard:.3f}x |"
        )

    row("3-event `explain` (yardstick: `import numpy, msgspec`)", m["imports"],
        m["start-up base"], m["start-up new"])  # fmt: skip
    for trace in args.trace:
        yard = m[f"decode {trace.name}"]
        for command in ("table", "explain"):
            label = f"`{command}` {trace.name} (yardstick: the decode)"
            row(label, yard, m[f"{command} {trace.name} base"], m[f"{command} {trace.name} new"])
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--trace", type=Path, action="append", default=[])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    scratch = HERE / "out" / "pair_trees"
    scratch.mkdir(parents=True, exist_ok=True)
    print(_table(args, _medians(_tasks(args, scratch), args.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
