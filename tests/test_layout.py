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


#: The layers, top first (docs: design.md, "Layers"): a module imports only from its own
#: layer and the layers below it, TYPE_CHECKING imports and the command line's deferred
#: imports included. The longest matching prefix names a module's layer.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cli", ("profsight", "profsight.__main__", "profsight.cli")),
    (
        "integrations",
        ("profsight.integrations", "profsight.lightning", "profsight.demo", "profsight.tune"),
    ),
    ("api", ("profsight.api", "profsight.front_door")),
    ("renderers", ("profsight.renderers",)),
    ("job", ("profsight.job", "profsight.slicing")),
    ("compare", ("profsight.compare",)),
    ("report", ("profsight.report",)),
    # the inside of analyses, by stage: the pipeline runs the verdict over the findings, the
    # replay prices them, the findings read the context, which holds the step model and the
    # per-op views
    ("analyses.pipeline", ("profsight.analyses.pipeline",)),
    ("analyses.physics", ("profsight.analyses.physics",)),
    ("analyses.verdict", ("profsight.analyses.verdict",)),
    ("analyses.replay", ("profsight.analyses.replay",)),
    ("analyses.findings", ("profsight.analyses.findings",)),
    ("analyses.context", ("profsight.analyses.context", "profsight.analyses.lead_in")),
    (
        "analyses.views",
        (
            "profsight.analyses.roofline",
            "profsight.analyses.op_costs",
            "profsight.analyses.device_work",
            "profsight.analyses.memory_peak",
            "profsight.analyses.source_lines",
            "profsight.analyses.snapshot_peak",
        ),
    ),
    ("analyses.step", ("profsight.analyses.step", "profsight.analyses")),
    ("loaders", ("profsight.loaders",)),
    ("model", ("profsight.model",)),
    ("knowledge", ("profsight.knowledge",)),
    (
        "base",
        (
            "profsight.units",
            "profsight.names",
            "profsight.errors",
            "profsight.malloc_trim",
            "profsight.lazy",
            "profsight.json_text",
            "profsight.paths",
            "profsight.regex_needle",
            "profsight.stats",
        ),
    ),
)


def _layer(module: str) -> int:
    matches = [
        (len(prefix), rank)
        for rank, (_, prefixes) in enumerate(LAYERS)
        for prefix in prefixes
        if module == prefix or module.startswith(prefix + ".")
    ]
    assert matches, f"{module} is in no layer of LAYERS"
    return max(matches)[1]


def _imports(module: str) -> set[str]:
    """The package's modules `module` imports, anywhere in it (a name imported from a
    package that is a module of it counts as that module)."""
    path = PACKAGE.joinpath(*module.split(".")[1:])
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("profsight")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            if not base.startswith("profsight"):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
    return {m for m in found if m in MODULES and m != module}


IMPORTS = {m: _imports(m) for m in MODULES}


def test_imports_go_down_the_layers() -> None:
    upward = [
        f"{m} ({LAYERS[_layer(m)][0]}) imports {t} ({LAYERS[_layer(t)][0]})"
        for m, targets in IMPORTS.items()
        for t in sorted(targets)
        if _layer(t) < _layer(m)
    ]
    assert upward == []


def test_lazy_targets_resolve_and_go_down_the_layers() -> None:
    """The registries of lazily imported targets (`profsight.lazy`) declare their
    dependencies: each target exists, and none lies in a layer above its registry's."""
    from profsight.cli.main import COMMANDS
    from profsight.front_door import EXPLAINERS
    from profsight.lazy import resolve
    from profsight.loaders import TEXT_LOADER
    from profsight.renderers.explained import FORMATS, RENDERERS
    from profsight.tune.trial import LIGHTNING_TRIAL

    registries = {
        "profsight.front_door": list(EXPLAINERS.values()),
        "profsight.loaders": [TEXT_LOADER],
        "profsight.renderers.explained": [t for t, _ in RENDERERS.values()],
        "profsight.cli.main": list(COMMANDS.values()),
        "profsight.tune.trial": [LIGHTNING_TRIAL],
    }
    kinds = {kind for kind, _ in RENDERERS}
    assert set(RENDERERS) == {(k, f) for k in kinds for f in FORMATS}
    for owner, targets in registries.items():
        for target in targets:
            assert callable(resolve(target)), target
            module = target.partition(":")[0]
            assert _layer(module) >= _layer(owner), f"{owner} names {target}, a layer above"


def test_no_import_circle() -> None:
    """No circle in the import graph, TYPE_CHECKING and deferred imports included (a circle
    within a layer is as much a tangle as one across layers)."""
    seen: dict[str, int] = {}  # 1: on the current path, 2: done
    circles: list[str] = []

    def walk(m: str, path: list[str]) -> None:
        seen[m] = 1
        for t in sorted(IMPORTS[m]):
            if seen.get(t) == 1:
                circles.append(" -> ".join([*path[path.index(t) :], t]))
            elif t not in seen:
                walk(t, [*path, t])
        seen[m] = 2

    for m in MODULES:
        if m not in seen:
            walk(m, [m])
    assert circles == []


def test_no_module_name_is_used_twice() -> None:
    """A module's name says what it holds, once in the package; the command line's commands
    (``cli/commands/``) are each named as the command they run, and are left out."""
    names: dict[str, list[str]] = {}
    for p in PACKAGE.rglob("*.py"):
        if p.name not in ("__init__.py", "__main__.py") and p.parent.name != "commands":
            names.setdefault(p.stem, []).append(str(p.relative_to(PACKAGE)))
    assert {n: where for n, where in names.items() if len(where) > 1} == {}


def test_the_layer_check_reads_real_edges() -> None:
    """The checks read real edges: the model imports knowledge (down), and the renderers'
    report document comes from the report layer, not the other way round."""
    assert "profsight.knowledge.trace_schema" in IMPORTS["profsight.model.tree"]
    assert "profsight.report.document" in IMPORTS["profsight.renderers.report_json"]
    assert _layer("profsight.renderers.report_json") < _layer("profsight.report.document")


def test_each_finding_category_is_judged_in_one_family_module() -> None:
    """A rule is written once, for traces and tables alike: the findings of a category are
    built in one module of `analyses.findings` (the job's cross-rank findings aside), and the
    table's filling (`findings.from_table`) builds none itself."""
    built: dict[str, set[str]] = {}
    for path in (PACKAGE / "analyses").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Finding":
                for kw in node.keywords:
                    if kw.arg == "category" and isinstance(kw.value, ast.Constant):
                        built.setdefault(kw.value.value, set()).add(path.stem)
    assert {c: m for c, m in built.items() if len(m) > 1} == {}
    assert len(built) >= 12  # (the phases and compute categories come from a variable)
    assert "from_table" not in set().union(*built.values())
    assert built["host_device_sync"] == {"sync_copies"}


#: The most lines a module of the package holds (issue 37).
MODULE_LINES = 600
#: The most lines a function holds without a comment saying why it must be one
#: (``# one function: ...`` in its body).
FUNCTION_LINES = 80


def test_modules_and_functions_stay_small() -> None:
    long_modules, long_functions = [], []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        if text.count("\n") > MODULE_LINES:
            long_modules.append(f"{path.relative_to(PACKAGE)}: {text.count(chr(10))} lines")
        lines = text.splitlines()
        for fn in ast.walk(ast.parse(text)):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            length = (fn.end_lineno or fn.lineno) - fn.lineno + 1
            body = lines[fn.lineno - 1 : fn.end_lineno]
            if length > FUNCTION_LINES and not any("# one function:" in b for b in body):
                long_functions.append(f"{path.relative_to(PACKAGE)}:{fn.lineno} {fn.name}")
    assert long_modules == []
    assert long_functions == []


def test_renderers_import_no_analysis() -> None:
    """The renderers draw reports, documents and the records of the model layer: no module
    of `renderers` imports one of `analyses` (TYPE_CHECKING imports included)."""
    found = [
        f"{m} imports {t}"
        for m, targets in IMPORTS.items()
        if m.startswith("profsight.renderers")
        for t in sorted(targets)
        if t.startswith("profsight.analyses")
    ]
    assert found == []
