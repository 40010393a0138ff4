"""The package's layout: every module imports on its own, first, and no module imports
another inside a function to dodge a cycle (issue 14, item 17).

The command line is the one exception, and not for cycles: its commands import what they
run only when they run (``profsight --help`` stays fast) and its entry point sets the BLAS
thread count before numpy loads (`profsight.cli.entry`).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import profsight

PACKAGE = Path(profsight.__file__).parent
MODULES = sorted(
    ".".join(("profsight", *p.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")
    for p in PACKAGE.rglob("*.py")
    if p.name != "__main__.py"  # running it runs the command line
)

_EACH_FIRST = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "profsight" or m.startswith("profsight.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed.append(f"{name}: {type(exc).__name__}: {exc}")
print("\\n".join(failed))
"""


def test_every_module_imports_first() -> None:
    """Each module imported before any other of the package (a cycle hidden by import order
    shows up as an ImportError or an AttributeError of a half-built module)."""
    out = subprocess.run(
        [sys.executable, "-c", _EACH_FIRST, *MODULES],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == ""
    assert len(MODULES) > 100


def test_no_function_imports_a_module_of_the_package() -> None:
    local = []
    for path in PACKAGE.rglob("*.py"):
        if "cli" in path.relative_to(PACKAGE).parts:
            continue
        for fn in ast.walk(ast.parse(path.read_text())):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                names = (
                    [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else []
                )
                local += [
                    f"{path.name}:{node.lineno} {n}" for n in names if n.startswith("profsight")
                ]
    assert local == []
