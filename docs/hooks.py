"""MkDocs hooks: the pages written from the code at build time.

A page holding ``<!-- generated: NAME -->`` gets that marker replaced by `PAGES[NAME]()`:

* ``findings``: the finding catalogue, from `profsight.knowledge.catalogue.RULES`;
* ``cli``: the command-line reference, from the argparse parser the ``profsight`` command
  builds.

The functions need no MkDocs, so `tests/test_catalogue.py` calls them directly.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
from collections.abc import Callable
from typing import Any

MARKER = re.compile(r"<!-- generated: (\w+) -->")


def escape(text: str) -> str:
    """Code-like text as Markdown prose: ``__getitem__`` and ``_foreach_`` stay as written."""
    # Python-Markdown escapes ``>`` but not ``<``: "\\<" would show its backslash.
    return re.sub(r"([\\`*_>\[\]])", r"\\\1", text).replace("<", "&lt;")


def _cell(text: str) -> str:
    return escape(text).replace("|", "\\|").replace("\n", " ")


def findings_page() -> str:
    """Every finding category, by family: what fires it, the fix, its thresholds' source."""
    from profsight.knowledge import catalogue

    labels: dict[str, str] = importlib.import_module("profsight.model.findings").CATEGORY_LABELS
    out = [
        f"{len(catalogue.RULES)} categories in {len(catalogue.FAMILIES_ALL)} families. "
        "Each finding names its category (`category` in the JSON report); the thresholds are "
        "the constants the analyses judge by, and each condition below is the text a finding "
        "it fires gives as its `trigger`, so this page cannot drift from them.",
        "",
        "## How findings rank",
        "",
        escape(catalogue.RANKING),
        "",
        "## Every category",
        "",
        "| category | family | fires when |",
        "|---|---|---|",
    ]
    ordered = sorted(catalogue.RULES, key=lambda r: catalogue.FAMILIES_ALL.index(r.family))
    for rule in ordered:
        out.append(
            f"| [`{rule.category}`](#{rule.category}) | {rule.family} | {_cell(rule.trigger)} |"
        )
    for family in catalogue.FAMILIES_ALL:
        rules = [r for r in ordered if r.family == family]
        if not rules:
            continue
        out += ["", f"## {family.capitalize()}", ""]
        for rule in rules:
            label = labels.get(rule.category, rule.category)
            out += [
                f"### `{rule.category}` {{#{rule.category}}}",
                "",
                f"*{escape(label)}*",
                "",
                "**Fires when** (each condition is the `trigger` its findings carry):",
                "",
                *(f"* {escape(text)}" for text in rule.conditions.values()),
                "",
                *([escape(rule.note), ""] if rule.note else []),
                f"**Fix**: {escape(rule.fix)}",
                "",
                f"**Threshold's source**: {escape(rule.source)}.",
                "",
            ]
    return "\n".join(out + _thresholds())


def _thresholds() -> list[str]:
    """Every threshold with its value, what it gates and its basis
    (`profsight.knowledge.threshold_sources`)."""
    from profsight.knowledge.catalogue import all_thresholds
    from profsight.knowledge.threshold_sources import threshold_rows

    out = [
        "",
        "## Thresholds and their basis",
        "",
        "Each constant the rules judge by (`profsight.knowledge.advice`), what it gates and on "
        "what it rests: *measured* by the script or test named (`scripts/threshold_margins.py` "
        "prints where each planted run and its fixed twin fall against the thresholds it "
        "measures), a *peer* tool's rule, *documented* by a vendor or a paper, *derived* from "
        "another threshold, or profsight's *own* choice, its reason written beside the constant.",
        "",
        "| threshold | gates | basis | where |",
        "|---|---|---|---|",
    ]
    for name, gates, basis, where in threshold_rows(all_thresholds()):
        out.append(f"| `{name}` | {_cell(gates)} | {basis} | {_cell(where)} |")
    return out


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, Any]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            return [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return []


def _argument_rows(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| argument | what it does |", "|---|---|"]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        name = ", ".join(action.option_strings) or action.dest
        if action.option_strings and action.nargs != 0:
            name += f" {action.metavar or action.dest.upper()}"
        text = action.help or ""
        if action.choices and not isinstance(action, argparse._SubParsersAction):
            text += f" (one of: {', '.join(str(c) for c in action.choices)})"
        if action.default not in (None, False, argparse.SUPPRESS) and action.option_strings:
            text += f" (default: {action.default})"
        rows.append(f"| `{_cell(name)}` | {_cell(text.strip()) or ' '} |")
    return rows


def cli_page() -> str:
    """Every subcommand of ``profsight``: its usage and arguments, from its parser."""
    from profsight.cli.main import build_parser

    os.environ["COLUMNS"] = "88"  # argparse wraps usage lines at the terminal's width
    parser = build_parser([])
    out = ["```", parser.format_usage().strip(), "```", ""]
    for name, summary, sub in _subcommands(parser):
        out += [
            f"## `profsight {name}`",
            "",
            f"{summary[:1].upper()}{summary[1:]}.",
            "",
            "```",
            sub.format_usage().strip(),
            "```",
            "",
            *_argument_rows(sub),
            "",
        ]
    return "\n".join(out)


PAGES: dict[str, Callable[[], str]] = {"findings": findings_page, "cli": cli_page}


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """MkDocs event: fill in the generated parts of a page."""
    return MARKER.sub(lambda m: PAGES[m.group(1)](), markdown)
