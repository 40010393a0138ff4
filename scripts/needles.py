"""Write ``src/profsight/regex_needles.json``: the needle (`profsight.regex_needle`) of every
lazy pattern in the package, scanned once here instead of at each run's first use of the
pattern.

    .venv/bin/python scripts/needles.py [--check]

A 3-event ``explain`` scanned 184 needles, ~4 ms of its start-up. A pattern missing from the
table (edited since the script ran) is scanned at its first use, as before: the table only
saves time. ``--check`` exits 1 where the table is not the scan of the package's patterns
(`tests/test_startup.py` runs it).
"""

from __future__ import annotations

import gc
import importlib
import json
import sys
from pathlib import Path

from profsight.lazy import NEEDLES_FILE, _LazyPattern, read_needles
from profsight.regex_needle import needle

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "profsight"


#: The packages that import torch and Lightning, and hold no pattern: left out, so that the
#: check runs where torch is not installed.
_WITH_TORCH = ("profsight.integrations", "profsight.lightning", "profsight.tune", "profsight.demo")


def package_patterns() -> list[tuple[str, int]]:
    """Every lazy pattern the package's modules hold (`_WITH_TORCH` aside), sorted."""
    for module in sorted(PACKAGE.rglob("*.py")):
        dotted = ".".join(module.relative_to(PACKAGE.parent).with_suffix("").parts)
        if "__main__" not in dotted and not dotted.startswith(_WITH_TORCH):
            importlib.import_module(dotted.removesuffix(".__init__"))
    found = {(p.pattern, int(p._flags)) for p in gc.get_objects() if type(p) is _LazyPattern}
    return sorted(found)


def table_text(patterns: list[tuple[str, int]]) -> str:
    """One pattern a line: ``[source, flags, needles or null, ignoring case]``."""
    rows = []
    for source, flags in patterns:
        found = needle(source, flags)
        needles, folded = (None, False) if found is None else (list(found[0]), found[1])
        rows.append(json.dumps([source, flags, needles, folded], ensure_ascii=False))
    return "[\n" + ",\n".join(rows) + "\n]\n"


def main() -> int:
    patterns = package_patterns()
    where = Path(NEEDLES_FILE).relative_to(ROOT)
    if sys.argv[1:] == ["--check"]:
        if read_needles() != {key: needle(*key) for key in patterns}:
            print(f"{where} is out of date: run scripts/needles.py")
            return 1
        print(f"{where} is up to date")
        return 0
    Path(NEEDLES_FILE).write_text(table_text(patterns), "utf-8")
    print(f"wrote {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
