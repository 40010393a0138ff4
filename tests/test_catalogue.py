"""The finding catalogue (`profsight.knowledge.catalogue`) against the finding categories,
and the docs page written from it (`docs/hooks.py`)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from profsight.knowledge import catalogue
from profsight.knowledge.phases import Phase

ROOT = Path(__file__).resolve().parents[1]


def _categories() -> tuple[str, ...]:
    for name in ("profsight.model.findings", "profsight.findings"):
        try:
            return tuple(importlib.import_module(name).CATEGORIES)
        except ImportError:
            continue
    raise AssertionError("no module of profsight defines CATEGORIES")


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("profsight_docs_hooks", ROOT / "docs/hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_category_has_exactly_one_rule() -> None:
    # GIVEN the categories findings can carry and the catalogue's rules
    categories = _categories()
    listed = [rule.category for rule in catalogue.RULES]
    # THEN each category has one rule, and no rule names a category findings cannot carry
    for category in categories:
        assert listed.count(category) == 1, category
    assert set(listed) <= set(categories)
    assert len(listed) == len(categories)


def test_every_rule_is_filled_in() -> None:
    for rule in catalogue.RULES:
        assert rule.family in catalogue.FAMILIES_ALL, rule
        assert rule.trigger and rule.fix and rule.source, rule
        # the advice's templates are filled, not left with their placeholders
        assert "{" not in rule.trigger + rule.fix + rule.source, rule


def test_thresholds_come_from_the_advice_constants() -> None:
    from profsight.knowledge import advice

    rules = catalogue.RULES_BY_CATEGORY
    assert f"{advice.GPU_IDLE_PCT:g}%" in rules["gpu_idle"].trigger
    assert f"{advice.COMMUNICATION_PCT:g}%" in rules["communication"].trigger
    assert f"{advice.SYNC_PCT:g}%" in rules["host_device_sync"].trigger
    assert rules["gpu_held"].source == advice.HELD_BASIS
    data = advice.PHASE_RULES_BY_PHASE[Phase.DATA_LOADING]
    assert rules["data_loading"].fix == data.recommendation


def test_catalogue_imports_only_knowledge_the_stdlib_and_msgspec() -> None:
    # knowledge is the bottom layer of the package; its records are msgspec Structs
    tree = ast.parse(Path(catalogue.__file__).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            module = node.module
        elif isinstance(node, ast.Import):
            module = node.names[0].name
        else:
            continue
        top = module.split(".")[0]
        assert top != "profsight" or module.startswith("profsight.knowledge"), module
        assert top in {"profsight", "__future__", "msgspec"} or top in sys.stdlib_module_names


def test_the_generated_page_lists_every_category() -> None:
    # WHEN the docs build writes the catalogue page
    hooks = _hooks()
    page = hooks.findings_page()
    # THEN every category has its section, with its trigger, fix and source
    for rule in catalogue.RULES:
        assert f"### `{rule.category}`" in page, rule.category
        for text in (*rule.conditions.values(), rule.note, rule.fix, rule.source):
            assert hooks.escape(text) in page, (rule.category, text)


def test_the_generated_cli_page_lists_every_subcommand() -> None:
    page = _hooks().cli_page()
    for command in ("explain", "job", "table", "tree", "diff", "check", "slice", "demo"):
        assert f"## `profsight {command}`" in page
    assert "--format" in page


def _real_inputs() -> list[Path]:
    data = ROOT / "tests" / "data"
    found = [
        *sorted((data / "causes").iterdir()),
        *sorted((data / "tables").glob("*.txt")),
        *sorted((data / "gpu_tables").glob("*.txt")),
        *sorted((data / "gpu_traces").glob("*/*.json.gz")),
        *sorted((data / "merged_ranks").glob("*.json.gz")),
        data / "real" / "job",
    ]
    return [p for p in found if p.suffix != ".md"]


def test_every_trigger_is_a_condition_of_its_rule() -> None:
    """Each finding's trigger is one of the conditions its category's rule declares, word for
    word: the catalogue and the analyses read the same text (on the findings of the real
    profiles of tests/data: traces, tables, merged ranks and a job)."""
    import profsight

    seen: dict[str, set[str]] = {}
    for path in _real_inputs():
        report = profsight.explain(str(path))
        for finding in getattr(report, "findings", ()):
            conditions = catalogue.RULES_BY_CATEGORY[finding.category].conditions.values()
            assert finding.trigger in conditions, (path.name, finding.category, finding.trigger)
            seen.setdefault(finding.category, set()).add(finding.trigger)
    # the check reaches most rules: a trigger of each family was met
    assert len(seen) >= 15, sorted(seen)


def test_the_catalogue_trigger_is_its_conditions() -> None:
    for rule in catalogue.RULES:
        for text in rule.conditions.values():
            assert text in rule.trigger, rule.category


def test_the_catalogue_page_shows_comparisons_as_written() -> None:
    """A trigger's "<" reaches the reader as "<", not as a literal "\\<" (Python-Markdown
    escapes ">" but not "<"), and the thresholds' table lists each one's basis."""
    import markdown

    html = markdown.markdown(_hooks().findings_page(), extensions=["tables", "attr_list"])
    assert "device busy &lt; 50% of the step" in html
    assert "\\&lt;" not in html and "\\<" not in html
    assert "<code>HELD_BACK_US = 1000</code>" in html
