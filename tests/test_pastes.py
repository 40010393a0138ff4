"""Printed tables as people paste them (tests/data/pastes, made from real tables by its
make_pastes.py), and the seed tutorial's reading of a table."""

from __future__ import annotations

from pathlib import Path

import pytest

import profsight
from profsight.model.text_profile import TextProfile

from conftest import DATA

PASTES = DATA / "pastes"
#: Every paste is the first table of this real file, so it must read the same.
ORIGINAL = DATA / "gpu_tables" / "JonathanHourany__pytorch-sandbox__1.txt"


def _first_table(path: Path) -> TextProfile:
    profile = profsight.load(path)
    assert isinstance(profile, TextProfile)
    return profile


@pytest.mark.parametrize(
    ("name", "warning"),
    [
        ("pager.txt", "repaired_rows"),
        ("diff_rst.txt", None),
        ("test_runner.txt", None),
        ("blank_trailing.txt", None),
        ("powershell_utf16.txt", None),
        ("pipe_table.txt", None),
        ("html_cell.txt", None),
    ],
)
def test_pastes_read_as_the_table_they_came_from(name: str, warning: str | None) -> None:
    original = _first_table(ORIGINAL).tables[0].table
    pasted = _first_table(PASTES / name)
    table = pasted.tables[0].table
    assert [r.name for r in table.rows] == [r.name for r in original.rows]
    assert [r.calls for r in table.rows] == [r.calls for r in original.rows]
    assert [r.cpu_total_us for r in table.rows] == [r.cpu_total_us for r in original.rows]
    assert table.self_cpu_total_us == original.self_cpu_total_us
    codes = {d.code for d in pasted.warnings}
    assert (warning in codes) if warning else not codes - {"no_footer"}
    report = profsight.explain(str(PASTES / name))
    assert report.findings[0].category == profsight.explain(str(ORIGINAL)).findings[0].category


def test_blank_device_cells_read_as_no_device_time() -> None:
    table = _first_table(PASTES / "blank_trailing.txt").tables[0].table
    loader = table.row("enumerate(DataLoader)#_SingleProcessDataLoaderIter._...")
    assert loader.self_device_us == 0.0 and loader.device_total_us == 0.0
    assert loader.cpu_mem == round(385.69 * 1024)


def test_rows_without_header_are_read_with_a_warning() -> None:
    profile = _first_table(PASTES / "headerless.txt")
    table = profile.table()
    assert len(table) == 6
    assert table.row("cudaLaunchKernel").calls == 108
    assert table.has_device and table.has_memory
    (note,) = [d for d in profile.warnings if d.code == "no_header"]
    assert "modern, CPU and CUDA with memory" in note.message
    report = profsight.explain(str(PASTES / "headerless.txt"))
    # too little to judge: an honest "not judged", with what to paste (issue 36)
    assert report.verdict is None
    assert [f.category for f in report.findings] == ["profiler_setup"]
    assert report.findings[0].title.startswith("Not judged: the table is a fragment")
    assert any(n.startswith("Too little to judge") for n in report.notes)


def test_text_that_is_no_table_is_still_one_line(tmp_path: Path) -> None:
    prose = tmp_path / "prose.txt"
    prose.write_text("The model trained for 3 epochs.\nLoss went down.\n")
    with pytest.raises(profsight.InputError, match="neither a profiler trace"):
        profsight.load(prose)
    utf16 = tmp_path / "broken.txt"
    utf16.write_bytes(b"\xff\xfeN\x00a\x00\x00\xd8")  # a lone surrogate: not UTF-16
    with pytest.raises(profsight.InputError, match="starts as UTF-16 text"):
        profsight.load(utf16)


def test_the_seed_reading_of_a_lightning_table() -> None:
    """The tutorial's walk through a table: columns, tags with this table's rows, the
    BasicBlock rule (low self, high total: the time is in its convolutions), and the answer
    to its question with the evidence. The table is the seed's Lightning run recorded on a
    quiet machine (tests/data/recorded): in a session's recording beside busy loops one
    block's own Python reached 43% of its total (3-5% quiet), and the walk then says so,
    rightly, for that table."""
    report = profsight.explain(str(DATA / "recorded" / "seed_resnet18.lightning.full.txt"))
    lines = report.walkthrough
    assert lines[0].startswith("Self CPU is the time spent in the row itself")
    assert any(line.startswith("[pl] rows are Lightning's execution engine") for line in lines)
    assert any(line.startswith("[module] rows are your nn.Modules") for line in lines)
    assert any(line.startswith("aten:: rows") for line in lines)
    blocks = next(line for line in lines if "BasicBlock rows" in line)
    assert "Low self, high total" in blocks and "convolutions" in blocks
    assert any("Lightning steps the profiler inside optimizer_step" in line for line in lines)
    assert lines[-1].startswith("Is this model too complex for its data and its hardware?")
    assert report.verdict is not None and report.verdict.summary in lines[-1]
    block = next(e for e in report.rows if "BasicBlock" in e.row.name)
    assert "the time is inside, in its layers" in block.explanation.reading
    assert "Reading the table, step by step" in report.text()
    assert "## Reading the table, step by step" in report.markdown()


def test_a_pipe_table_cut_mid_row_is_read_as_a_fragment() -> None:
    """pytorch#84336: torch 1.12's table pasted as a Markdown pipe table, cut mid-row."""
    profile = _first_table(PASTES / "real" / "pytorch__pytorch__84336-1.txt")
    table = profile.tables[0].table
    assert len(table.rows) == 9
    first = table.rows[0]
    assert (first.name, first.calls) == ("aten::convolution_backward", 4200)
    assert first.self_device_us == pytest.approx(132.998e6)
    assert {d.code for d in profile.warnings} == {"fragment"}
    report = profsight.explain(str(PASTES / "real" / "pytorch__pytorch__84336-1.txt"))
    assert report.findings[0].category == "compute_conv"


def test_a_legacy_table_in_a_markdown_cell_shows_cudnns_first_use() -> None:
    """2horse9sun's lab report: torch 1.5's table joined by <br/> in one Markdown cell. Its
    two cudnn_convolution calls hold the host 540 ms each (device times in this layout are
    the time between CUDA events around each op: host time included): cuDNN's first use,
    80% of the window, so the profile is not judged."""
    path = PASTES / "real" / "2horse9sun__coursework__1.txt"
    profile = _first_table(path)
    assert profile.tables[0].layout == "legacy"
    assert len(profile.tables[0].table.rows) == 10
    assert profile.tables[0].table.self_cpu_total_us == pytest.approx(1.342e6)
    top = profsight.explain(str(path)).findings[0]
    assert top.category == "profiler_setup"
    assert top.blocks
    assert top.at_stake_pct == pytest.approx(80.5, abs=0.1)
