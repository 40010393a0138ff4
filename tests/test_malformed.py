"""Every file of the malformed-input corpus through every command.

The promise (README, "When the input is damaged"): a result with warnings that say what
was salvaged and lost, or one line naming the file and the problem with exit code 1. Never
a traceback, never an internal error, never a change to the input.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

import profsight
from profsight.cli.exit_codes import EXIT_BUDGET, EXIT_INPUT, EXIT_OK, EXIT_USAGE
from profsight.cli.main import main
from profsight.model.diagnostics import Diagnostic, Level
from profsight.model.text_profile import TextProfile

from conftest import DATA

CORPUS = DATA / "malformed"
EXPECTED: dict[str, dict[str, object]] = json.loads((CORPUS / "expected.json").read_text())
BASE = DATA / "real/before_fix_trace.json"
TABLES = {name for name in EXPECTED if name.endswith(".txt")}


def test_corpus_is_complete() -> None:
    on_disk = {p.name for p in CORPUS.iterdir()} - {"make_corpus.py", "expected.json", "README.md"}
    assert on_disk == set(EXPECTED)
    assert len(EXPECTED) >= 24


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_load_salvages_or_names_the_problem(name: str) -> None:
    path = CORPUS / name
    expected = EXPECTED[name]
    if "error" in expected:
        with pytest.raises(profsight.InputError) as info:
            profsight.load(path)
        assert info.value.reason.startswith(str(expected["error"]))
        assert str(path) in str(info.value)
        return
    profile = profsight.load(path)
    profile.table()  # analysis adds its own warnings (overlaps, unlinked device work)
    assert sorted({d.code for d in profile.warnings}) == expected["warnings"]
    for diagnostic in profile.warnings:
        assert diagnostic.message  # each says what was salvaged or lost


def _warnings(profile: profsight.Profile | TextProfile) -> list[Diagnostic]:
    profile.table()
    return profile.warnings


def _commands(name: str, path: str, tmp: Path) -> list[tuple[list[str], set[int]]]:
    is_table = name in TABLES
    return [
        (["table", path], {EXIT_OK}),
        (["tree", path], {EXIT_USAGE} if is_table else {EXIT_OK}),  # a table has no tree
        (["explain", path, "--format", "json", "-o", str(tmp / "r.json")], {EXIT_OK}),
        (["explain", path, "--format", "html", "-o", str(tmp / "r.html")], {EXIT_OK}),
        (["check", path, "--fail-on", "severity>=high"], {EXIT_OK, EXIT_BUDGET}),
        (["diff", str(BASE), path, "-o", str(tmp / "d.md")], {EXIT_OK}),
    ]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_command_keeps_the_promise(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = CORPUS / name
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    error = EXPECTED[name].get("error")
    must_warn = error is None and any(
        d.level is Level.WARNING for d in _warnings(profsight.load(path))
    )
    for argv, allowed in _commands(name, str(path), tmp_path):
        code = main([*argv, "--force"] if "-o" in argv else argv)
        _, err = capsys.readouterr()
        lines = [line for line in err.splitlines() if not line.startswith("USDT:")]
        assert not any(
            line.startswith(("Traceback", "profsight: internal error")) for line in lines
        )
        if error is not None:
            assert code == EXIT_INPUT, (argv, err)
            [line] = lines  # exactly one line, naming the file and the problem
            assert str(path) in line and str(error) in line
        else:
            assert code in allowed, (argv, err)
            if must_warn:  # info notes stay in the reports; warnings also go to stderr
                assert any(f"profsight: {path}: warning:" in line for line in lines), (argv, err)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "[click me](javascript:alert(3))",
    "![pic](http://evil.example/x.png)",
    "a|b` *bold* _it_ \\ end",
]


def test_hostile_names_are_inert_in_markdown(tmp_path: Path) -> None:
    """record_function names from someone else's trace, through the Markdown report and diff,
    rendered by a CommonMark renderer (markdown-it, GFM tables): no element, no link, no image
    comes out of them, and each name's text survives."""
    import torch
    from markdown_it import MarkdownIt
    from torch.profiler import profile, record_function

    with profile() as prof:
        for name in HOSTILE:
            with record_function(name):
                torch.ones(256, 256).matmul(torch.ones(256, 256))
    trace = tmp_path / "hostile.json"
    prof.export_chrome_trace(str(trace))
    md = MarkdownIt("commonmark").enable("table")
    for argv in (
        ["explain", str(trace), "--format", "markdown", "-o", str(tmp_path / "r.md")],
        ["diff", str(BASE), str(trace), "-o", str(tmp_path / "d.md")],
        ["table", str(trace), "--format", "markdown", "-o", str(tmp_path / "t.md")],
    ):
        assert main(argv) == EXIT_OK
        out = Path(argv[argv.index("-o") + 1]).read_text()
        html = md.render(out)
        assert not re.search(r"<(script|img|a|iframe)\b", html), argv  # no element, link, image
        if argv[0] != "diff":  # the diff lists only rows that changed most
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html, argv


@pytest.mark.parametrize(
    "name",
    [
        "../minimal/minimal.pt.trace.json",
        "truncated_between_events.json",
        "truncated_in_string.json",
        "truncated_in_args.json",
        "unescaped_quote.json",
        "unquoted_na.json",
        "gigantic_name.json.gz",
    ],
)
def test_no_decision_reads_the_decoders_wording(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the event array ends and whether a file was cut off are found from the bytes,
    not from msgspec's error messages: with every decode error reworded, each file loads
    as before (the same events, the same diagnostics)."""
    import msgspec

    from profsight.loaders import kineto_salvage, kineto_stream

    path = CORPUS / name
    before = profsight.load(path)
    real = kineto_salvage.decode_events

    def reworded(doc: bytes | memoryview, builder: object) -> object:
        try:
            return real(doc, builder)  # type: ignore[arg-type]
        except msgspec.DecodeError:
            raise msgspec.DecodeError("the decoder says something else now") from None

    monkeypatch.setattr(kineto_salvage, "decode_events", reworded)
    monkeypatch.setattr(kineto_stream, "decode_events", reworded)
    after = profsight.load(path)
    assert len(after.events) == len(before.events) > 0
    assert [d.code for d in after.diagnostics] == [d.code for d in before.diagnostics]
    assert after.meta.header == before.meta.header


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n not in TABLES))
def test_slice_of_damaged_input_is_one_line_or_a_slice(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`slice` needs the whole trace: what is no trace gets the loader's own error, damaged
    JSON one line saying so, and a readable trace without the steps one line naming them."""
    path = CORPUS / name
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    out = tmp_path / "s.json"
    code = main(["slice", str(path), "--steps", "1", "-o", str(out)])
    lines = [x for x in capsys.readouterr().err.splitlines() if not x.startswith("USDT:")]
    assert code in (EXIT_OK, EXIT_INPUT, EXIT_USAGE)
    if code != EXIT_OK:
        [line] = lines
        assert line.startswith("profsight: error: ") and not out.exists()
        if "error" in EXPECTED[name]:
            assert str(EXPECTED[name]["error"]) in line
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
