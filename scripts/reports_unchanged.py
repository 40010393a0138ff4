"""Whether a change left every report as it was: ``profsight explain FILE --format json`` from
two source trees on every input under the given folders, compared.

    python scripts/reports_unchanged.py BASE_TREE [--jobs 2] [--format json] [--ignore KEY ...]
        [FOLDER ...]

BASE_TREE is another checkout (``git worktree add /tmp/base COMMIT``), never a commit's name:
a path without ``src/profsight`` is refused (the runs would import this checkout's package and
compare it with itself). This checkout is the other side. Both run with this checkout's
virtual environment, each with its own ``src`` first on the path. A job's wall times
(``seconds``) differ from run to run and are left out, and so are the keys named by
``--ignore`` (a change that words every finding's ``trigger`` anew). Prints each input whose
report (or exit code) differs, and the count; exits 1 when any does.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = (ROOT / "tests" / "data", ROOT.parent / "shared" / "data" / "real")
#: Files that are no profiler output (notes, provenance, code).
SKIP_SUFFIXES = (".md", ".py", ".ipynb", ".sh", ".csv", ".html", ".png", ".yaml", ".toml")


def inputs(folders: list[Path]) -> list[Path]:
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.name.endswith(SKIP_SUFFIXES):
                found.append(path)
    return found


def _report(tree: Path, path: Path, ignore: frozenset[str], fmt: str) -> tuple[int, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "PROFSIGHT_DEBUG": "", "COLUMNS": "120"}
    out = subprocess.run(
        [sys.executable, "-m", "profsight", "explain", str(path), "--format", fmt],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if fmt != "json":  # text, Markdown and the page are compared as they are, wall times aside
        return out.returncode, re.sub(r"\b[0-9.]+ s\b|\"seconds\": ?[0-9.]+", "_", out.stdout)
    try:
        return out.returncode, _without(json.loads(out.stdout), ignore)
    except json.JSONDecodeError:
        return out.returncode, out.stderr.strip().splitlines()[-1:] or out.stdout[:200]


def _without(doc: Any, ignore: frozenset[str]) -> Any:
    """`doc` without the wall times and the `ignore` keys, at any depth."""
    if isinstance(doc, dict):
        return {
            k: _without(v, ignore) for k, v in doc.items() if k != "seconds" and k not in ignore
        }
    if isinstance(doc, list):
        return [_without(v, ignore) for v in doc]
    return doc


def _first_difference(a: Any, b: Any, at: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{at}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{at}[{i}]")
    if isinstance(a, list) and isinstance(b, list):
        added = [x for x in b if x not in a]
        gone = [x for x in a if x not in b]
        return f"{at}: {len(a)} -> {len(b)} items; added {str(added)[:200]}; gone {str(gone)[:200]}"
    return f"{at}: {str(a)[:160]!r} -> {str(b)[:160]!r}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--ignore", action="append", default=[], metavar="KEY")
    parser.add_argument("--format", default="json", choices=("json", "text", "markdown", "html"))
    args = parser.parse_args(argv)
    if not (args.base / "src" / "profsight" / "__init__.py").is_file():
        # without it each run would import this checkout's package: the tree against itself
        parser.error(
            f"{args.base} is no checkout of profsight (no src/profsight): make one "
            "with `git worktree add DIR COMMIT`"
        )
    files = inputs([f.resolve() for f in args.folders] or list(FOLDERS))

    def both(path: Path) -> tuple[Path, tuple[int, Any], tuple[int, Any]]:
        ignore = frozenset(args.ignore)
        return (
            path,
            _report(args.base, path, ignore, args.format),
            _report(ROOT, path, ignore, args.format),
        )

    changed = 0
    with ThreadPoolExecutor(args.jobs) as pool:
        for path, before, after in pool.map(both, files):
            if before != after:
                changed += 1
                where = _first_difference(before[1], after[1])
                print(f"{path.relative_to(ROOT.parent)}: exit {before[0]} -> {after[0]}; {where}")
    print(f"{changed} of {len(files)} reports differ")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
