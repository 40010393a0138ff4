"""Score `profsight explain` on every labelled GPU profile at once.

    python benchmarks/corpus.py [--jobs 2] [--only TEXT] [--record] [--timeout 240] [--tree DIR]

A label (written by an expert reader before any tool ran on the file) names the finding to fix
first (``expected``), readings that are also fair (``also_acceptable``), categories that must be
among the findings (``must_report``) and readings that would be wrong first (``wrong_top``, a
trap). The labelled sets:

* ``../shared/data/real/labelled/labels.json``: 63 profiles by others (the shared corpus);
* ``benchmarks/corpus/labels.json``: profiles by others that this repository added, each label
  committed before profsight's first run on its file (``git log`` shows the order); their files
  are under ``benchmarks/corpus/files/``.

Each file is explained in a fresh process (``profsight explain FILE --format json``, what a user
runs), two at a time. For each it prints the score: top finding right (``expected`` or
``also_acceptable``), top finding exactly ``expected``, every ``must_report`` present, and traps
(top finding in ``wrong_top``), by set and by expected class; then every miss with what profsight
said first; then the profiles whose reading flipped since the recorded run
(``benchmarks/corpus/last_run.json``, rewritten with ``--record``).

A file profsight refuses (exit 1) or fails on counts as a miss, never as a pass. The script reads
``../shared``: it is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared" / "data" / "real" / "labelled"
OWN = HERE / "corpus"
LAST = OWN / "last_run.json"
EXE = ROOT / ".venv" / "bin" / "profsight"


@dataclass(frozen=True)
class Label:
    """One labelled profile: where it is and what an expert reads first."""

    key: str
    path: Path
    set: str
    expected: str
    also: tuple[str, ...]
    must: tuple[str, ...]
    wrong: tuple[str, ...]
    why: str

    @property
    def fair(self) -> set[str]:
        return {self.expected, *self.also}


@dataclass
class Outcome:
    """What profsight said on one labelled profile."""

    label: Label
    exit_code: int
    categories: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    judgement: str = ""
    error: str = ""
    seconds: float = 0.0

    @property
    def top(self) -> str:
        return self.categories[0] if self.categories else "(none)"

    @property
    def right(self) -> bool:
        return self.top in self.label.fair

    @property
    def exact(self) -> bool:
        return self.top == self.label.expected

    @property
    def reported(self) -> bool:
        return all(c in self.categories for c in self.label.must)

    @property
    def trap(self) -> bool:
        return self.top in self.label.wrong


def _labels(path: Path, root: Path, prefix: str) -> list[Label]:
    rows = json.loads(path.read_text())
    return [
        Label(
            key=f"{prefix}{row['file']}",
            path=root / row["file"],
            set=row["set"],
            expected=row["expected"],
            also=tuple(row.get("also_acceptable") or ()),
            must=tuple(row.get("must_report") or ()),
            wrong=tuple(row.get("wrong_top") or ()),
            why=row.get("why", ""),
        )
        for row in rows
    ]


def all_labels() -> list[Label]:
    """Every labelled profile this machine holds: the shared corpus, then the repository's own."""
    labels: list[Label] = []
    if (SHARED / "labels.json").is_file():
        labels += _labels(SHARED / "labels.json", SHARED, "")
    else:
        print(f"note: {SHARED} is missing; scoring the repository's own labels only")
    if (OWN / "labels.json").is_file():
        labels += _labels(OWN / "labels.json", OWN / "files", "own/")
    return labels


def explain(label: Label, timeout: float, tree: Path | None = None) -> Outcome:
    """Run ``profsight explain --format json`` on one file in a fresh process (`tree`: the
    profsight of another checkout, ``PYTHONPATH=TREE/src python -m profsight``)."""
    start = time.perf_counter()
    command = [str(EXE), "explain", str(label.path), "--format", "json"]
    env = None
    if tree is not None:
        command = [str(ROOT / ".venv" / "bin" / "python"), "-m", "profsight", *command[1:]]
        env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return Outcome(label, -1, error=f"timed out after {timeout:g} s")
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [""])[-1]
        return Outcome(label, proc.returncode, error=last[:200], seconds=seconds)
    doc = json.loads(proc.stdout)
    findings = doc.get("findings") or []
    verdict = doc.get("verdict") or {}
    return Outcome(
        label,
        0,
        categories=[f["category"] for f in findings],
        titles=[f["title"] for f in findings],
        judgement=str(verdict.get("judgement") or verdict.get("bound") or ""),
        seconds=seconds,
    )


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "0/0"


def _score_lines(title: str, groups: dict[str, list[Outcome]]) -> Iterable[str]:
    yield f"{title:<28} {'n':>3}  {'top right':>13}  {'exact':>13}  {'must report':>13}  traps"
    for name in sorted(groups):
        outs = groups[name]
        n = len(outs)
        yield (
            f"{name:<28} {n:>3}  {_pct(sum(o.right for o in outs), n):>13}  "
            f"{_pct(sum(o.exact for o in outs), n):>13}  "
            f"{_pct(sum(o.reported for o in outs), n):>13}  {sum(o.trap for o in outs)}"
        )


def report(outcomes: list[Outcome]) -> list[str]:
    """The score, by set and by class, then each miss and each trap."""
    lines: list[str] = []
    everyone = {"all": outcomes}
    lines += _score_lines("corpus", everyone)
    lines.append("")
    by_set: dict[str, list[Outcome]] = defaultdict(list)
    by_class: dict[str, list[Outcome]] = defaultdict(list)
    for out in outcomes:
        by_set[out.label.set].append(out)
        by_class[out.label.expected].append(out)
    lines += _score_lines("by set", by_set)
    lines.append("")
    lines += _score_lines("by expected class", by_class)
    misses = [o for o in outcomes if not (o.right and o.reported)]
    lines.append("")
    lines.append(f"misses ({len(misses)}): expected [also fair] -> what profsight said first")
    for out in misses:
        lab = out.label
        what = out.error or " > ".join(out.categories[:3])
        flags = [
            *(["TRAP"] if out.trap else []),
            *(["top wrong"] if not out.right else []),
            *(
                ["missing " + ",".join(c for c in lab.must if c not in out.categories)]
                if not out.reported
                else []
            ),
        ]
        also = f" [{', '.join(lab.also)}]" if lab.also else ""
        lines.append(f"- {lab.key}")
        lines.append(f"    {lab.expected}{also} -> {what}   ({'; '.join(flags)})")
        if out.titles:
            lines.append(f"    first: {out.titles[0]}")
    return lines


def flips(outcomes: list[Outcome]) -> list[str]:
    """Profiles whose top finding or right/wrong changed since the recorded run."""
    if not LAST.is_file():
        return ["(no recorded run: run with --record to keep this one)"]
    last = json.loads(LAST.read_text())
    lines = [f"since the recorded run ({last.get('commit', '?')}, {last.get('date', '?')}):"]
    before = last.get("profiles", {})
    for out in outcomes:
        was = before.get(out.label.key)
        now = {"top": out.top, "right": out.right, "reported": out.reported}
        if was is None:
            lines.append(f"  new   {out.label.key}: {out.top}")
        elif (was["top"], was["right"], was["reported"]) != (
            now["top"],
            now["right"],
            now["reported"],
        ):
            turn = (
                "fixed"
                if now["right"] and now["reported"] and not (was["right"] and was["reported"])
                else "BROKE"
                if was["right"] and was["reported"] and not (now["right"] and now["reported"])
                else "moved"
            )
            lines.append(f"  {turn:<5} {out.label.key}: {was['top']} -> {out.top}")
    if len(lines) == 1:
        lines.append("  nothing flipped")
    return lines


def record(outcomes: list[Outcome]) -> None:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    doc = {
        "commit": commit,
        "date": time.strftime("%Y-%m-%d"),
        "profiles": {
            o.label.key: {
                "top": o.top,
                "categories": o.categories[:5],
                "right": o.right,
                "reported": o.reported,
                "trap": o.trap,
                "exit": o.exit_code,
            }
            for o in outcomes
        },
    }
    OWN.mkdir(exist_ok=True)
    LAST.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="", help="score the files whose path holds TEXT")
    parser.add_argument("--record", action="store_true", help="keep this run as the baseline")
    parser.add_argument("--timeout", type=float, default=240.0)
    parser.add_argument(
        "--tree", type=Path, help="score the profsight of another checkout (git worktree)"
    )
    args = parser.parse_args(argv)
    if not EXE.exists():
        print(f"{EXE} is missing: run `make setup` first", file=sys.stderr)
        return 2
    labels = [lab for lab in all_labels() if args.only in lab.key]
    missing = [lab for lab in labels if not lab.path.is_file()]
    for lab in missing:
        print(f"missing file: {lab.path}", file=sys.stderr)
    labels = [lab for lab in labels if lab.path.is_file()]
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(lambda lab: explain(lab, args.timeout, args.tree), labels))
    wall = time.perf_counter() - start
    for line in report(outcomes):
        print(line)
    print()
    for line in flips(outcomes):
        print(line)
    slowest = max(outcomes, key=lambda o: o.seconds, default=None)
    print()
    print(
        f"{len(outcomes)} profiles in {wall:.0f} s with {args.jobs} jobs"
        + (f"; slowest {slowest.seconds:.1f} s ({slowest.label.key})" if slowest else "")
    )
    if args.record and not args.only and args.tree is None:
        record(outcomes)
        print(f"recorded as the baseline: {LAST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
