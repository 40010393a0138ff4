"""Rebuild the pastes in this folder from the real tables beside them (byte-reproducible).

Each paste is a real printed table (from tests/data/tables or tests/data/gpu_tables, see
their READMEs) put through what a terminal, a pager, a diff, a test runner or PowerShell
does to it on its way into an issue. Run: python tests/data/pastes/make_pastes.py
"""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent
GPU = DATA / "gpu_tables" / "JonathanHourany__pytorch-sandbox__1.txt"
CPU = DATA / "tables" / "issue-pytorch-60146-1.txt"
LEGACY = DATA / "tables" / "torchprof-3.txt"


def _first_table(path: Path) -> list[str]:
    """The first table of a file: from its first rule to its footer."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("-----"))
    end = next(i for i, line in enumerate(lines) if line.startswith("Self CUDA time total"))
    return lines[start : end + 1]


def pager() -> str:
    """`less` in a narrow terminal: its position marker lands between cells of one row, and
    copying a wrapped screen joins two rows on one line."""
    lines = _first_table(GPU)
    rows = list(lines)
    cells = rows[5].split("  ")
    cells.insert(6, "[21/77]")
    rows[5] = "  ".join(cells)
    rows[7] = rows[7].rstrip() + rows[8]
    del rows[8]
    return "\n".join(rows) + "\n"


def diff() -> str:
    """The table committed to a repository's docs and quoted from a pull request's diff:
    every line starts with '+', and the docs' reStructuredText wants '=' rules."""
    lines = _first_table(GPU)
    out = []
    for line in lines:
        if set(line.strip()) <= {"-", " "}:
            line = line.replace("-", "=")
        out.append("+" + line)
    return "\n".join(out) + "\n"


def headerless() -> str:
    """Rows pasted without the header and rules above them (a fragment from the middle)."""
    lines = _first_table(GPU)
    return "\n".join(lines[5:11]) + "\n"


def test_runner() -> str:
    """pytest's progress output ends without a newline, so the table printed by the test
    starts on its line: the first rule carries the runner's text in front of it."""
    lines = _first_table(GPU)
    lines[0] = "tests/test_train.py::test_profile_step " + lines[0]
    lines[1] = "PASSED" + lines[1][6:]
    return "\n".join(lines) + "\n"


def blank_trailing() -> str:
    """Rows of ops that launched nothing with their CUDA cells left blank, as torch 1.0-1.3
    printed them (and as tools that drop zero cells leave them): the cells keep their
    place, empty."""
    lines = _first_table(GPU)
    spans = [m.span() for m in re.finditer(r"-+", lines[0])]
    start, end = spans[6][0], spans[9][1]  # Self CUDA .. CUDA time avg
    out = []
    for line in lines:
        cells = line[start:end].split()
        if cells and all(c in ("0.000us", "0.00%") for c in cells):
            line = line[:start] + " " * (end - start) + line[end:]
        out.append(line)
    return "\n".join(out) + "\n"


def _cells(line: str) -> list[str]:
    return re.split(r" {2,}", line.strip())


def pipe_table() -> str:
    """A table copied from a rendered page (an issue's preview, a notebook) into GitHub's
    editor: its rows become a Markdown pipe table, ``Name | Self CPU % | ...`` over
    ``-- | --``, without outer pipes; the footer stays text below it."""
    lines = _first_table(GPU)
    rows = [line for line in lines if line.strip() and not set(line.strip()) <= {"-", " "}]
    table = [r for r in rows if "time total" not in r]
    footer = [r for r in rows if "time total" in r]
    header = _cells(table[0])
    out = [" | ".join(header), " | ".join("--" for _ in header)]
    out += [" | ".join(_cells(r)) for r in table[1:]]
    return "\n".join([*out, "", *footer]) + "\n"


def html_cell() -> str:
    """A table pasted into one cell of a Markdown table: its lines joined by ``<br/>`` and
    its spaces written as ``&nbsp;``, between the cell's pipes."""
    lines = [line.replace("  ", "&nbsp; ") for line in _first_table(GPU)]
    return "| profile of one step |\n|---|\n|" + "<br/>".join(lines) + "|\n"


def utf16() -> bytes:
    """Windows PowerShell's `python profile.py > table.txt` writes UTF-16 with a BOM."""
    return ("\r\n".join(_first_table(GPU)) + "\r\n").encode("utf-16")


def main() -> None:
    for name, text in (
        ("pager.txt", pager()),
        ("diff_rst.txt", diff()),
        ("headerless.txt", headerless()),
        ("test_runner.txt", test_runner()),
        ("blank_trailing.txt", blank_trailing()),
        ("pipe_table.txt", pipe_table()),
        ("html_cell.txt", html_cell()),
    ):
        (HERE / name).write_text(text)
    (HERE / "powershell_utf16.txt").write_bytes(utf16())


if __name__ == "__main__":
    main()
