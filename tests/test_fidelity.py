"""profsight's table equals torch's key_averages() for the same run (issue: within 1% or 2 us).

GIVEN a run profiled inside this test session, WHEN profsight loads the exported trace,
THEN every row torch reports is there with the same calls and times, and no other row.
"""

from __future__ import annotations

import pytest

import profsight
from profsight.model.table import ProfilerTable, Row, render_torch_table
from profsight.report.annotate import explain_row

from recorders import Recorded, TorchRow, record_open_range

ABS_US = 2.0
REL = 0.01


def close(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= max(ABS_US, REL * abs(theirs))


def our_key(row: Row) -> tuple[str, bool, bool]:
    return (row.name, row.is_device, row.event_kind in ("annotation", "device_annotation"))


def torch_key(row: TorchRow) -> tuple[str, bool, bool]:
    return (row.key, row.is_device, row.is_annotation)


def assert_table_matches(table: ProfilerTable, rows: list[TorchRow], with_shapes: bool) -> None:
    ours = {(*our_key(r), r.shapes if with_shapes else ""): r for r in table.rows}
    theirs = {(*torch_key(r), r.shapes if with_shapes else ""): r for r in rows}
    assert set(ours) == set(theirs)
    for key, t in theirs.items():
        o = ours[key]
        assert o.calls == t.count, key
        assert close(o.self_cpu_us, t.self_cpu), (key, o.self_cpu_us, t.self_cpu)
        assert close(o.cpu_total_us, t.cpu_total), (key, o.cpu_total_us, t.cpu_total)
        assert close(o.self_device_us, t.self_device), key
        assert close(o.device_total_us, t.device_total), key
        assert o.cpu_mem == t.cpu_mem, (key, o.cpu_mem, t.cpu_mem)
        assert o.self_cpu_mem == t.self_cpu_mem, (key, o.self_cpu_mem, t.self_cpu_mem)


@pytest.mark.parametrize("run", ["recorded_plain", "recorded_stack", "recorded_lightning"])
def test_table_equals_key_averages(run: str, request: pytest.FixtureRequest) -> None:
    recorded: Recorded = request.getfixturevalue(run)
    profile = profsight.load(recorded.trace)
    assert_table_matches(profile.table(), recorded.rows, with_shapes=False)


@pytest.mark.parametrize("run", ["recorded_plain", "recorded_lightning"])
def test_table_by_shape_equals_key_averages_by_shape(
    run: str, request: pytest.FixtureRequest
) -> None:
    recorded: Recorded = request.getfixturevalue(run)
    profile = profsight.load(recorded.trace)
    assert_table_matches(profile.table(group_by="shape"), recorded.rows_by_shape, with_shapes=True)


def test_text_table_has_torchs_layout(recorded_plain: Recorded) -> None:
    """Same header, rules, footer and the same cells in each row as torch printed."""
    profile = profsight.load(recorded_plain.trace)
    ours = render_torch_table(profile.table(sort_by="cpu_time_total", limit=20)).splitlines()
    theirs = recorded_plain.table_text.splitlines()
    assert ours[:3] == theirs[:3]  # rule, header, rule
    assert ours[-1] == theirs[-1]  # "Self CPU time total: ..."
    assert len(ours) == len(theirs)

    def cells(line: str) -> dict[str, list[str]]:
        parts = line.split()
        return {line[:55].strip(): parts[-9:]}

    ours_rows: dict[str, list[str]] = {}
    theirs_rows: dict[str, list[str]] = {}
    for line in ours[3:-2]:
        ours_rows.update(cells(line))
    for line in theirs[3:-2]:
        theirs_rows.update(cells(line))
    # rows tied on the sort key may swap places; the set of rows and their cells are equal
    common = set(ours_rows) & set(theirs_rows)
    assert len(common) >= len(theirs_rows) - 2
    mismatched = [k for k in common if ours_rows[k][-1] != theirs_rows[k][-1]]
    assert not mismatched  # "# of Calls"


def test_profiler_step_rows_merge(recorded_plain: Recorded) -> None:
    table = profsight.load(recorded_plain.trace).table()
    step = table.row("ProfilerStep*")
    assert step.calls == 3
    assert not any(r.name.startswith("ProfilerStep#") for r in table.rows)


def test_percentages_are_shares_of_self_cpu_total(recorded_plain: Recorded) -> None:
    table = profsight.load(recorded_plain.trace).table()
    assert sum(r.self_cpu_pct for r in table.rows) == pytest.approx(100.0)
    assert table.self_cpu_total_us == pytest.approx(sum(r.self_cpu_us for r in table.rows))
    step = table.row("ProfilerStep*")
    assert step.cpu_total_pct == pytest.approx(step.cpu_total_us * 100 / table.self_cpu_total_us)


def test_side_thread_ops_are_their_own_roots(recorded_stack: Recorded) -> None:
    profile = profsight.load(recorded_stack.trace)
    tree = profile.tree()
    threads = [n for n in tree.root.children if n.kind == "thread"]
    assert len(threads) >= 2
    assert not tree.root.check()


def test_a_range_left_open_ends_where_torch_ends_it(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """torch ends a range still open at the end of Kineto's ``PyTorch Profiler (0)`` span:
    profsight ended it at the last finished op (5014 against torch's 5078 us), leaving the
    allocations freed after that op as extra ``[memory]`` rows and the range's CPU Mem off."""
    recorded = record_open_range(tmp_path_factory.mktemp("open") / "open.json")
    table = profsight.load(recorded.trace).table()
    assert_table_matches(table, recorded.rows, with_shapes=False)
    assert "[memory]" not in {r.name for r in table.rows}


def test_negative_self_times_are_torchs(recorded_stack: Recorded) -> None:
    """With with_stack=True, the Python frame around prof.step() holds ProfilerStep#N (opened
    inside it, closed in the next call) beside the step() frames it overlaps: torch's
    self time (total minus the children's totals) is negative, and profsight's equals it,
    explained as such."""
    torch_negative = {r.key: r.self_cpu for r in recorded_stack.rows if r.self_cpu < 0}
    assert torch_negative
    profile = profsight.load(recorded_stack.trace)
    table = profile.table()
    ours = {r.name: r for r in table.rows if r.self_cpu_us < 0}
    assert set(ours) == set(torch_negative)
    for name, theirs in torch_negative.items():
        assert close(ours[name].self_cpu_us, theirs)
    row = next(iter(ours.values()))
    assert "is negative, as torch prints it" in explain_row(row, table).reading
