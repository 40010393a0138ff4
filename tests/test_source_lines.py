"""Time by source line (issue 26, item 3): the table grouped by call stack, as torch's
``key_averages(group_by_stack_n=N)``, and the time of the user's own functions, on runs
recorded in this session.

GIVEN a training loop profiled with ``with_stack=True`` under
``_ExperimentalConfig(verbose=True)`` (the only way torch 2.13 keeps each event's stack),
WHEN profsight groups the exported trace's rows by their first N call-stack frames,
THEN every row torch's ``key_averages(group_by_stack_n=N)`` has is there, with the same
frames, calls and times, and the printed table has torch's Source Location column.
"""

from __future__ import annotations

import json

import pytest

import profsight
from profsight.analyses.source_lines import source_lines
from profsight.knowledge.source_frames import is_user_frame
from profsight.model.table import render_torch_table
from test_fidelity import close

from recorders import STACK_FRAMES, Recorded, TorchRow


def _theirs(rows: list[TorchRow]) -> dict[tuple[object, ...], TorchRow]:
    return {(r.key, r.is_device, r.is_annotation, r.stack): r for r in rows}


@pytest.mark.parametrize("frames", STACK_FRAMES)
def test_table_by_stack_equals_key_averages_by_stack(
    frames: int, recorded_verbose: Recorded
) -> None:
    table = profsight.load(recorded_verbose.trace).table(stack=frames)
    theirs = _theirs(recorded_verbose.rows_by_stack[frames])
    ours = {
        (r.name, r.is_device, r.event_kind in ("annotation", "device_annotation"), r.stack): r
        for r in table.rows
    }
    assert set(ours) == set(theirs)
    # the grouping is finer than by name: some op is called from two places
    assert len(ours) > len(recorded_verbose.rows)
    assert any(len(k[3]) == frames for k in ours)
    for key, t in theirs.items():
        o = ours[key]
        assert o.calls == t.count, key
        assert close(o.self_cpu_us, t.self_cpu), (key, o.self_cpu_us, t.self_cpu)
        assert close(o.cpu_total_us, t.cpu_total), (key, o.cpu_total_us, t.cpu_total)
        assert o.cpu_mem == t.cpu_mem and o.self_cpu_mem == t.self_cpu_mem, key


def test_text_table_by_stack_has_torchs_layout(recorded_verbose: Recorded) -> None:
    """The header with its Source Location column, the rules, the footer, and each row's
    frames under it, one a line, as torch printed them."""
    table = profsight.load(recorded_verbose.trace).table(
        stack=5, sort_by="self_cpu_time_total", limit=12
    )
    ours = render_torch_table(table).splitlines()
    theirs = recorded_verbose.stack_table_text.splitlines()
    assert ours[:3] == theirs[:3]
    assert "Source Location" in theirs[1]
    assert ours[-1] == theirs[-1]
    assert len(ours) == len(theirs)

    def blocks(lines: list[str]) -> dict[str, list[str]]:
        """Each row's name and frames (a row's line, its frames' lines, a blank line)."""
        found: dict[str, list[str]] = {}
        name = ""
        for line in lines[3:-2]:
            head = line[:55].strip()
            if head:
                name = head + " | " + line[-77:].strip()
                found[name] = []
            elif line.strip():
                found[name].append(line.strip())
        return found

    mine, torchs = blocks(ours), blocks(theirs)
    # rows tied on the sort key may swap places; each row's frames are equal
    common = set(mine) & set(torchs)
    assert len(common) >= len(torchs) - 2
    assert all(mine[k] == torchs[k] for k in common)


def test_a_trace_without_stacks_groups_by_name_as_torch_does(recorded_stack: Recorded) -> None:
    """Plain ``with_stack=True`` keeps no stack in torch 2.13: grouped by stack, the table is
    the table by name (torch's ``key_averages(group_by_stack_n=5)`` is too)."""
    profile = profsight.load(recorded_stack.trace)
    by_stack = profile.table(stack=5)
    assert [r.stack for r in by_stack.rows] == [()] * len(by_stack.rows)
    assert [(r.name, r.calls) for r in by_stack.rows] == [
        (r.name, r.calls) for r in profile.table().rows
    ]


@pytest.mark.parametrize("run", ["recorded_verbose", "recorded_stack"])
def test_time_by_source_line_folds_library_frames(run: str, request: pytest.FixtureRequest) -> None:
    """Expected before running it: the loop's model is SmallNet, whose forward (in
    recorders.py) calls torch's Conv2d, BatchNorm, ReLU, pooling and Linear: their frames
    fold into it, so it holds the convolution's time, forward and backward (the backward
    runs under ``loss.backward()`` in record_plain, and goes back to the forward's line).
    Every microsecond of self CPU time is a function's or outside any (none is lost or
    counted twice); record_plain's total holds the forward's."""
    recorded: Recorded = request.getfixturevalue(run)
    lines = source_lines(profsight.load(recorded.trace))
    assert lines is not None and lines.functions == len(lines.rows)
    by_frame = {r.frame: r for r in lines.rows}
    (forward,) = [
        r for f, r in by_frame.items() if f.startswith("recorders.py(") and f.endswith(": forward")
    ]
    (loop,) = [r for f, r in by_frame.items() if f.endswith(": record_plain")]
    assert all(is_user_frame(f) for f in by_frame)
    assert not any(f.startswith(("torch/", "threading.py", "_pytest/")) for f in by_frame)
    assert forward.calls == 2 * 3  # the training step's forward and the metric's, 3 steps
    assert 0 < forward.backward_cpu_us < forward.self_cpu_us
    assert loop.total_cpu_us >= forward.total_cpu_us + loop.self_cpu_us - 1e-6
    total = sum(r.self_cpu_us for r in lines.rows) + lines.outside_cpu_us
    assert total == pytest.approx(lines.cpu_us)
    # the rows that matter name the line in the user's code
    conv = [n for n in lines.called_from if "convolution" in n and n.startswith("aten::")]
    assert conv and all(lines.called_from[n] == forward.frame for n in conv)
    assert lines.called_from.get("ConvolutionBackward0") == forward.frame


def test_every_format_names_the_users_lines(recorded_verbose: Recorded) -> None:
    """The terminal, Markdown and JSON report hold the section, and a row that matters
    says which of the user's functions it came from."""
    report = profsight.explain(recorded_verbose.trace)
    lines = report.source_lines
    assert lines is not None
    text = report.text(width=160)
    assert "Time by source line" in text and lines.rows[0].frame in text
    assert "from: recorders.py(" in text
    md = report.markdown()
    assert "## Time by source line" in md
    doc = json.loads(report.json())
    assert [r["frame"] for r in doc["source_lines"]["lines"]] == [r.frame for r in lines.rows]
    called = {r["name"]: r["called_from"] for r in doc["table"]}
    assert called["aten::addmm"] == lines.called_from["aten::addmm"]
    assert called["aten::addmm"].startswith("recorders.py(")


def test_the_table_by_stack_in_csv_and_markdown(
    recorded_verbose: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    """CSV gives a row's frames as one cell, innermost first; Markdown a Source Location
    column; a table by name has no stack column."""
    from profsight.cli.main import main
    from profsight.renderers.escape import markdown_cell

    trace = str(recorded_verbose.trace)
    assert main(["table", trace, "--group-by", "stack:3", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[0].split(",")
    assert "stack" in header
    table = profsight.load(recorded_verbose.trace).table(stack=3)
    framed = next(r for r in table.rows if len(r.stack) == 3)
    assert "; ".join(framed.stack) in "\n".join(lines)
    assert main(["table", trace, "--group-by", "stack:3", "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    cell = "<br>".join(markdown_cell(f) for f in framed.stack)
    assert "| Source Location |" in md and f"| {cell} |" in md
    assert main(["table", trace, "--format", "csv"]) == 0
    assert "stack" not in capsys.readouterr().out.splitlines()[0].split(",")
