"""Every threshold the rules judge by is declared once with its basis
(`profsight.knowledge.threshold_sources`), and what it cites exists."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from profsight.knowledge import advice
from profsight.knowledge.catalogue import RULES, all_thresholds, limit
from profsight.knowledge.threshold_sources import BY_NAME, THRESHOLDS, VERDICT, threshold_rows

ROOT = Path(__file__).resolve().parent.parent
ADVICE = ROOT / "src" / "profsight" / "knowledge" / "advice"


def _numeric_constants() -> set[str]:
    names = set()
    for path in ADVICE.glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                value = node.value
                if isinstance(value, ast.Constant) and type(value.value) in (int, float):
                    names.add(node.target.id)
    return names


def test_every_numeric_threshold_is_declared_once() -> None:
    declared = [t.name for t in THRESHOLDS]
    assert len(declared) == len(set(declared))
    assert set(declared) == _numeric_constants()


def test_each_threshold_gates_a_known_category_and_cites_what_exists() -> None:
    categories = {r.category for r in RULES} | {VERDICT, "(severity)", "(reading tables)"}
    names = [t.name for t in all_thresholds()]
    assert len(names) == len(set(names))
    for t in all_thresholds():
        assert t.category in categories, t
        assert isinstance(t.value, int | float), t
        if t.basis == "measured":
            assert (ROOT / t.where).exists(), t
        if t.basis == "derived":
            assert t.where in names, t
        if t.basis in ("documented", "peer"):
            assert t.where, t


def test_a_measuring_script_names_what_it_measures() -> None:
    """Each script cited as measuring a threshold says so in its own text (it prints the
    thresholds it measures, or its docstring names the figure)."""
    for t in THRESHOLDS:
        if t.basis == "measured" and t.where.startswith("scripts/"):
            text = (ROOT / t.where).read_text()
            assert "measured_by" in text or t.name in text, t


def test_the_comment_beside_a_measured_constant_names_its_source() -> None:
    """A constant whose comment says "measured" is declared measured, and the reverse."""
    for path in ADVICE.glob("*.py"):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            name = line.split(":")[0]
            if name not in BY_NAME:
                continue
            comment = []
            for above in reversed(lines[:i]):
                if not above.startswith("#"):
                    break
                comment.insert(0, above)
            said = "measured" in " ".join(comment)
            t = BY_NAME[name]
            if said and t.basis not in ("measured", "derived"):
                raise AssertionError(f"{name}: its comment says measured, declared {t.basis}")


def test_the_catalogue_table_lists_each_value() -> None:
    rows = threshold_rows()
    assert len(rows) == len(THRESHOLDS)
    assert ("HELD_BACK_US = 1000", "gpu_held", "measured", "scripts/launch_latency.py") in rows
    assert advice.GPU_IDLE_PCT == BY_NAME["GPU_IDLE_PCT"].value == 50.0


def test_a_rule_declares_its_own_thresholds_with_their_values() -> None:
    """A rule's own threshold: its value and basis in the rule, read with `limit`; one of an
    older category is refused by name (it is `advice`'s)."""
    for rule in RULES:
        for t in rule.thresholds:
            assert t.given is not None and t.category == rule.category, t
            assert t.reason or t.basis != "own", t
            assert limit(rule.category, t.name) == t.given
    with pytest.raises(KeyError):
        limit("gpu_idle", "GPU_IDLE_PCT")
