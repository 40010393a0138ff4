"""The command line, run in-process through ``main(argv)``: outputs, exit codes, messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import profsight
from profsight.cli.exit_codes import EXIT_INPUT, EXIT_OUTPUT, EXIT_USAGE
from profsight.cli.main import main

from conftest import DATA

MINIMAL = str(DATA / "minimal/minimal.pt.trace.json")
SNAPSHOTS = Path(__file__).parent / "snapshots"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def snapshot(name: str, text: str) -> None:
    """Compare with tests/snapshots/NAME; PROFSIGHT_UPDATE_SNAPSHOTS=1 rewrites it."""
    path = SNAPSHOTS / name
    if os.environ.get("PROFSIGHT_UPDATE_SNAPSHOTS") or not path.exists():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_table_text_snapshot(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "table", MINIMAL)
    assert code == 0
    snapshot("minimal_table.txt", out)
    assert "Self CUDA time total: 42.000us" in out


def test_table_formats(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "table", MINIMAL, "--format", "json", "--sort", "cpu_total_us")
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == "profsight/table/1"
    first = doc["rows"][0]
    assert (first["name"], first["calls"], first["cpu_total_us"]) == ("ProfilerStep*", 2, 140.0)
    for key in ("self_cpu_us", "cpu_total_us", "self_device_us", "device_total_us"):
        assert key in first
    code, out, _ = run(capsys, "table", MINIMAL, "--format", "csv", "--limit", "2")
    assert out.splitlines()[0].startswith("name,event_kind,calls,self_cpu_us")
    assert len(out.splitlines()) == 3
    code, out, _ = run(capsys, "table", MINIMAL, "--format", "markdown", "--limit", "3")
    snapshot("minimal_table.md", out)
    target = tmp_path / "t.csv"
    assert run(capsys, "table", MINIMAL, "-o", str(target))[0] == 0
    assert target.read_text().startswith("name,")


def test_group_by(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "table", MINIMAL, "--group-by", "shape", "--format", "json")
    assert code == 0
    rows = json.loads(out)["rows"]
    assert {r["shapes"] for r in rows if r["name"] == "aten::linear"} == {"[[8, 16], [4, 16], [4]]"}


def test_tree_snapshot(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The tree wraps to the terminal's width: the snapshot is of a 120-column one (a test
    run before this one, or the shell, may have set COLUMNS)."""
    monkeypatch.setenv("COLUMNS", "120")
    code, out, _ = run(capsys, "tree", MINIMAL, "--min-share", "0", "--format", "text")
    assert code == 0
    snapshot("minimal_tree.txt", out)
    code, out, _ = run(capsys, "tree", MINIMAL, "--depth", "1", "--format", "json")
    root = json.loads(out)["root"]
    assert [c["name"] for c in root["children"]] == ["ProfilerStep*"]
    assert root["children"][0]["children"] == []


def test_explain_bundled_sample(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "explain")
    assert code == 0
    assert "resnet18_lightning_cpu" in out
    assert "Profiled: 3 step(s)" in out
    assert "[pl][module]" in out
    code, out, _ = run(capsys, "explain", MINIMAL, "--format", "json")
    doc = json.loads(out)
    assert doc["schema"] == "profsight/1"
    assert doc["source"]["steps"] == 2
    assert doc["source"]["devices"] == ["Tesla V100-SXM2-16GB"]
    assert {d["code"] for d in doc["diagnostics"]} >= {"launched_before_window"}
    code, out, _ = run(capsys, "explain", MINIMAL, "--format", "markdown")
    assert out.startswith("# profsight report")


@pytest.mark.parametrize("command", ["table", "tree", "explain"])
def test_bad_input_is_one_line_and_exit_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\x00\x01garbage")
    code, out, err = run(capsys, command, str(bad))
    assert code == EXIT_INPUT
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"profsight: error: {bad}: ")
    assert "Traceback" not in err


def test_truncated_input_warns_and_succeeds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = Path(MINIMAL).read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) * 2 // 3])
    code, out, err = run(capsys, "table", str(cut))
    assert code == 0
    assert "ends before the trace does" in err
    assert "ProfilerStep*" in out


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "table", MINIMAL, "--sort", "nonsense")
    assert code == EXIT_USAGE
    assert "unknown sort key 'nonsense'" in err
    with pytest.raises(SystemExit) as info:
        main(["table", MINIMAL, "--group-by", "colour"])
    assert info.value.code == EXIT_USAGE
    assert main([]) == EXIT_USAGE


def test_outputs_never_overwrite(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    trace = tmp_path / "trace.json"
    trace.write_text(Path(MINIMAL).read_text())
    before = trace.read_bytes()
    code, _, err = run(capsys, "table", str(trace), "-o", str(trace), "--force")
    assert code == EXIT_OUTPUT and "is an input" in err
    assert trace.read_bytes() == before
    out = tmp_path / "table.txt"
    out.write_text("keep me")
    code, _, err = run(capsys, "table", str(trace), "-o", str(out))
    assert code == EXIT_OUTPUT and "--force" in err
    assert out.read_text() == "keep me"
    assert run(capsys, "table", str(trace), "-o", str(out), "--force")[0] == 0
    assert "ProfilerStep*" in out.read_text()


def test_cli_choices_match_the_registries() -> None:
    from profsight.cli import choices
    from profsight.job.executors import EXECUTORS
    from profsight.lazy import resolve
    from profsight.model.table import GROUP_BYS
    from profsight.renderers.explained import FORMATS, RENDERERS, SUFFIXES, VIEWS
    from profsight.renderers.job_text import JOB_SUFFIXES

    kinds = {kind for kind, _ in RENDERERS}
    assert set(RENDERERS) == {(kind, fmt) for kind in kinds for fmt in FORMATS}
    assert FORMATS == choices.REPORT_FORMATS
    assert SUFFIXES == choices.REPORT_SUFFIXES
    assert choices.TABLE_FORMATS == ("text", "json", "csv", "markdown")
    assert choices.TABLE_SUFFIXES[".csv"] == "csv"
    assert choices.TREE_SUFFIXES == {".txt": "text", ".json": "json"}
    for target, _ in RENDERERS.values():
        assert callable(resolve(target))
    for formats in VIEWS.values():
        for target in formats.values():
            assert callable(resolve(target))
    assert choices.GROUP_BYS == GROUP_BYS
    assert choices.EXECUTORS == EXECUTORS
    assert set(JOB_SUFFIXES.values()) <= set(choices.REPORT_FORMATS)


@pytest.mark.parametrize(
    ("fmt", "name"), [("text", "minimal_explain.txt"), ("markdown", "minimal_explain.md")]
)
def test_explain_snapshots(
    fmt: str, name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole explanation of the hand-written trace, at a fixed width."""
    monkeypatch.chdir(DATA.parent.parent)
    monkeypatch.setenv("COLUMNS", "120")
    code, out, _ = run(
        capsys, "explain", "tests/data/minimal/minimal.pt.trace.json", "--format", fmt
    )
    assert code == 0
    snapshot(name, out)


@pytest.mark.parametrize(
    "argv",
    [
        ["table", MINIMAL, "--limit", "-3"],
        ["tree", MINIMAL, "--depth", "-1"],
        ["tree", MINIMAL, "--min-share", "500"],
    ],
)
def test_out_of_range_arguments_are_usage_errors(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == EXIT_USAGE
    assert "error" in capsys.readouterr().err


MALFORMED = {
    "empty.json": b"",
    "binary.bin": bytes(range(256)) * 4,
    "numbers.json": b"[1, 2, 3]",
    "events-not-array.json": b'{"traceEvents": {}}',
    "prose.txt": b"nothing to see here\n",
    "bad-gzip.json.gz": b"\x1f\x8b\x08\x00not really gzip",
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
@pytest.mark.parametrize("command", ["table", "tree", "explain", "check", "diff"])
def test_malformed_inputs_every_command(
    name: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / name
    bad.write_bytes(MALFORMED[name])
    before = bad.read_bytes()
    extra = {"check": ["--max", "step_time=1s"], "diff": [MINIMAL]}.get(command, [])
    code, _, err = run(capsys, command, str(bad), *extra)
    assert code == EXIT_INPUT, err
    assert err.count("\n") == 1 and str(bad) in err
    assert "Traceback" not in err
    assert bad.read_bytes() == before


def test_deeply_nested_ranges_are_cut_not_crashed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """1500 nested record_function ranges (a recursive model) once overflowed Python's
    stack in every tree view; views now stop at MAX_TREE_DEPTH and say so."""
    from contextlib import ExitStack

    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    from profsight.model.tree import MAX_TREE_DEPTH

    with profile(activities=[ProfilerActivity.CPU]) as prof, ExitStack() as stack:
        for i in range(1500):
            stack.enter_context(record_function(f"level_{i}"))
        torch.ones(4).sum()
    trace = tmp_path / "deep.json"
    prof.export_chrome_trace(str(trace))
    code, out, err = run(capsys, "tree", str(trace), "--min-share", "0")
    assert code == 0, err
    assert f"nests deeper than {MAX_TREE_DEPTH} levels" in out
    code, out, err = run(capsys, "tree", str(trace), "--format", "json", "--min-share", "0")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["cut_at"] == MAX_TREE_DEPTH
    node, names = doc["root"], []
    while node["children"]:
        node = node["children"][0]
        names.append(node["name"])
    assert names == [f"level_{i}" for i in range(MAX_TREE_DEPTH)]
    for fmt in ("text", "json", "markdown", "html"):
        target = str(tmp_path / f"r.{fmt}")
        code, out, err = run(capsys, "explain", str(trace), "--format", fmt, "-o", target)
        assert code == 0, (fmt, err)
    tree = profsight.load(trace).tree()
    assert tree.root.check() == []
    assert tree.root.find("level_1499") is not None


def test_output_into_a_missing_folder_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A folder that does not exist is the user's mistake: one line, exit 3 (was an internal
    error, exit 4)."""
    target = tmp_path / "nonexistent_dir" / "r.html"
    code, _, err = run(capsys, "explain", MINIMAL, "-o", str(target))
    assert code == EXIT_OUTPUT
    assert err.strip().splitlines() == [
        f"profsight: error: {target}: the folder {target.parent} does not exist"
    ]
    assert not target.parent.exists()


@pytest.mark.parametrize("command", ["explain", "table", "tree"])
def test_an_output_suffix_no_format_has_is_refused(
    command: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`-o report.pdf` wrote text before; now it names the suffixes the command writes."""
    target = tmp_path / "report.pdf"
    code, _, err = run(capsys, command, MINIMAL, "-o", str(target))
    assert code == EXIT_USAGE
    assert "does not write .pdf files; name the output" in err
    assert ".json" in err and len(err.strip().splitlines()) == 1
    assert not target.exists()
    # --format decides whatever the suffix, and .txt / no suffix are text
    assert run(capsys, command, MINIMAL, "-o", str(target), "--format", "json")[0] == 0
    assert json.loads(target.read_text())
    plain = tmp_path / "report.txt"
    assert run(capsys, command, MINIMAL, "-o", str(plain))[0] == 0
    assert not plain.read_text().lstrip().startswith(("{", "<"))


def test_explain_prints_torch_table_whole(capsys: pytest.CaptureFixture[str]) -> None:
    """Piped (no terminal), explain's copy of torch's table keeps every column, as `table`
    prints it (it was cut at 120 characters, losing the CUDA and Calls columns)."""
    trace = str(DATA / "real/nccl_data.json.gz")
    _, out, _ = run(capsys, "explain", trace)
    _, table, _ = run(capsys, "table", trace)
    header = next(line for line in table.splitlines() if "# of Calls" in line)
    assert header in out.splitlines()
    assert len(header) > 120


def test_print_of_a_table_is_torchs_layout() -> None:
    table = profsight.load(MINIMAL).table()
    text = str(table)
    assert text.splitlines()[1].split()[:4] == ["Name", "Self", "CPU", "%"]
    assert "Self CPU time total: 140.000us" in text
    assert repr(table).startswith("<ProfilerTable: 11 rows")


def test_notes_name_their_level_once_and_lightning_only_when_it_is_there(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """sglang's trace (no Lightning) has ranges overlapping without nesting: the info line
    says "info:" once, and the table note does not blame Lightning."""
    _, out, _ = run(capsys, "explain", str(DATA / "real/sglang_Qwen3-8B_decode.json.gz"))
    assert "note: info:" not in out
    assert any(line.startswith("info: 1 thread(s) hold ranges") for line in out.splitlines())
    assert "Ranges on one thread overlap without nesting (a range opened" in out
    assert "Lightning steps the profiler" not in out


def test_a_window_with_nothing_in_it_is_too_little_to_judge(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A real recording whose schedule exported a cycle holding one ProfilerStep and
    nothing in it (torch 2.13; tests/data/minimal/README.md): no verdict, no findings, a note
    that says so (it was judged 'too heavy for the hardware' from 22 µs of nothing)."""
    _, out, _ = run(
        capsys, "explain", str(DATA / "minimal/empty_step_cpu.json"), "--format", "json"
    )
    doc = json.loads(out)
    assert doc["verdict"] is None and doc["findings"] == []
    assert any(n.startswith("Too little to judge: the profiled steps hold") for n in doc["notes"])


def test_flops_are_printed_in_units_that_show_them() -> None:
    from profsight.units import short_flops

    assert short_flops(4.2e6) == "4.2 MFLOP"
    assert short_flops(2.17e8) == "217 MFLOP"
    assert short_flops(1.4e13, per_second=True) == "14 TFLOP/s"
    assert short_flops(0.0) == "0 FLOP"


def test_rows_that_matter_keep_ops_and_tell_long_names_apart() -> None:
    """A with_stack H100 trace: dozens of Python frames used to fill the rows that matter
    (each one's total repeats the ops below it); at most three now. Kernel names cut to the
    column read the same (``void at::native::vectorized_elementwise_k…`` thrice): each now
    shows where it differs."""
    from profsight.renderers.terminal import distinct_names

    trace = DATA / "shared/traces/tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
    report = profsight.explain(trace)
    kinds = [e.explanation.kind.value for e in report.top]
    assert kinds.count("python") == 3 and kinds.count("aten") >= 10
    names = [e.row.name for e in report.top]
    shown = distinct_names(names, 27)
    assert len(set(shown)) == len(set(names))
    assert all(len(s) <= 27 for s in shown)
    assert distinct_names(["aten::cudnn_convolution_backward_input"] * 1, 27) == [
        "aten::cudnn_convolution_ba…"
    ]
    pair = distinct_names(
        ["aten::cudnn_convolution_backward_input", "aten::cudnn_convolution_backward_weight"], 27
    )
    assert pair == ["aten::cu…ard_input", "aten::cu…ard_weight"]


def test_lightning_names_keep_the_end_that_says_what_they_are() -> None:
    """On an 80-column terminal, Lightning's ranges were cut to stubs like "[pl][pro…egy.
    traini…" (issue 38): a name that says what it is at its end keeps its end."""
    from profsight.renderers.terminal import render_terminal

    report = profsight.explain(DATA / "recorded" / "heavy_metric.lightning.pt.trace.json.gz")
    text = render_terminal(report, width=80)
    assert "[pl][pro…" not in text
    rows = [line for line in text.splitlines() if line.startswith(("strategy", "metric"))]
    assert any(line.split()[1].endswith("ategy.training_step") for line in rows), rows
    assert any("AUROC: auroc" in line for line in rows), rows


# ---- table --sort: torch's sort_by names ---------------------------------------------------


#: A real ROCm trace (tests/data/real/README.md): device time in its rows.
GPU_TRACE = str(DATA / "real" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz")


@pytest.mark.parametrize(
    ("key", "field", "gpu"),
    [
        ("self_cpu_time_total", "self_cpu_us", False),
        ("cpu_time_total", "cpu_total_us", False),
        ("self_cuda_time_total", "self_device_us", True),
        ("cuda_time_total", "device_total_us", True),
        ("self_device_time_total", "self_device_us", True),
        ("count", "calls", False),
        ("self_cpu_memory_usage", "self_cpu_mem", False),
    ],
)
def test_table_sorts_by_torch_names(
    key: str, field: str, gpu: bool, recorded_plain: object, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = GPU_TRACE if gpu else str(recorded_plain.trace)  # type: ignore[attr-defined]
    code, out, err = run(capsys, "table", trace, "--sort", key, "--format", "json")
    assert code == 0, err
    values = [r[field] for r in json.loads(out)["rows"]]
    assert values == sorted(values, reverse=True) and len(set(values)) > 1


def test_unknown_sort_key_lists_every_accepted_name(
    recorded_plain: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from profsight.cli import choices
    from profsight.model.table import SORT_KEYS

    assert set(choices.SORT_KEYS) | set(choices.TORCH_SORT_KEYS) == set(SORT_KEYS)
    trace = str(recorded_plain.trace)  # type: ignore[attr-defined]
    code, _, err = run(capsys, "table", trace, "--sort", "self_gpu_time")
    assert code == EXIT_USAGE
    assert err.count("\n") == 1 and "unknown sort key 'self_gpu_time'" in err
    listed = set(err.split("use one of", 1)[1].replace(";", ",").replace(":", ",").split(", "))
    listed = {w.strip() for w in listed}
    for name in SORT_KEYS:
        assert name in listed, name
    for torch_name in ("self_cuda_time_total", "cuda_time_total", "self_cpu_time_total", "count"):
        assert torch_name in listed


# ---- table --group-by module without module ranges ----------------------------------------


def test_module_table_without_module_ranges_says_how_to_record_them(
    recorded_plain: object, recorded_stack: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """Recorded with with_modules=True but no with_stack: torch writes no module range."""
    plain = str(recorded_plain.trace)  # type: ignore[attr-defined]
    code, out, err = run(capsys, "table", plain, "--group-by", "module", "--format", "json")
    assert code == 0
    assert [r["name"] for r in json.loads(out)["rows"]] == ["(outside any module)"]
    assert "the trace has no module ranges" in err and "with_stack=True" in err
    assert "[pl][module]" in err
    # with_stack=True: torch's nn.Module ranges, one row each, and no hint
    stack = str(recorded_stack.trace)  # type: ignore[attr-defined]
    code, out, err = run(capsys, "table", stack, "--group-by", "module", "--format", "json")
    assert code == 0 and "no module ranges" not in err
    assert len(json.loads(out)["rows"]) > 1


# ---- one kind per row: table --format markdown names it as explain does -------------------


@pytest.mark.parametrize(
    "path",
    [
        DATA / "tables" / "issue-pytorch-60146-1.txt",  # a printed table: model_inference
        DATA / "minimal" / "minimal.pt.trace.json",
        DATA / "real" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    ],
    ids=lambda p: p.name,
)
def test_markdown_table_kinds_are_explains(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, md, _ = run(capsys, "table", str(path), "--format", "markdown")
    assert code == 0
    table_kinds = [line.split(" | ")[1] for line in md.splitlines()[2:] if line.startswith("| ")]
    code, out, _ = run(capsys, "explain", str(path), "--format", "json")
    assert code == 0
    explained = [r["kind"] for r in json.loads(out)["table"]]
    assert table_kinds == explained
    assert "unknown" not in table_kinds and "cpu_op" not in table_kinds
    if path.suffix == ".txt":
        assert table_kinds[0] == "user"  # its record_function label, model_inference


def _modules_after(*argv: str) -> set[str]:
    """The modules a whole command line run has imported, in a fresh interpreter."""
    code = (
        "import sys, os\n"
        "from profsight.cli.entry import run\n"
        "sys.stdout = open(os.devnull, 'w')\n"
        f"run({list(argv)!r})\n"
        "sys.__stdout__.write(' '.join(sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_commands_import_only_what_they_use() -> None:
    """Start-up: ``table`` imports neither the analyses nor rich, nor (as text) the kernel
    patterns; ``explain --format json`` neither rich nor the HTML page (about 20 ms each on
    2 cores)."""
    table = _modules_after("table", MINIMAL)
    assert not {m for m in table if m.startswith(("rich", "profsight.analyses"))}
    assert "profsight.knowledge.kernel_patterns" not in table  # (the text table)
    explain = _modules_after("explain", "--format", "json", MINIMAL)
    assert "profsight.analyses.pipeline" in explain
    assert not {m for m in explain if m.startswith("rich") or m == "profsight.renderers.html"}


def test_the_command_list_has_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    """A command named first declares only its own arguments; ``--help``, a missing or a
    misspelt command still list them all."""
    commands = ("explain", "job", "table", "tree", "diff", "check", "slice", "demo", "tune", "mcp")
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    listed = capsys.readouterr().out
    assert all(f"    {name}" in listed for name in commands), listed
    with pytest.raises(SystemExit) as done:
        main(["expain", MINIMAL])
    assert done.value.code == EXIT_USAGE
    assert "invalid choice: 'expain' (choose from 'explain', 'job'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:
        main(["table", "--help"])
    assert done.value.code == 0
    assert "usage: profsight table" in capsys.readouterr().out
