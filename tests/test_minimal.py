"""Every number of a hand-written trace, as torch's rules give it (see data/minimal/README.md)."""

from __future__ import annotations

import pytest

import profsight

from conftest import DATA

MINIMAL = DATA / "minimal/minimal.pt.trace.json"


@pytest.fixture(scope="module")
def profile() -> profsight.Profile:
    return profsight.load(MINIMAL)


@pytest.mark.parametrize(
    ("name", "calls", "self_cpu", "cpu_total", "self_dev", "dev_total"),
    [
        ("ProfilerStep*", 2, 38.0, 140.0, 0.0, 38.0),
        ("aten::linear", 2, 40.0, 80.0, 0.0, 30.0),
        ("aten::addmm", 1, 30.0, 40.0, 30.0, 30.0),
        ("cudaLaunchKernel", 2, 15.0, 15.0, 0.0, 0.0),
        # the inner aten::div_ is its parent's only child and has its name: torch drops it,
        # its launch and its kernel move up
        ("aten::div_", 1, 15.0, 20.0, 8.0, 8.0),
        ("aten::empty", 1, 2.0, 2.0, 0.0, 0.0),
        # open when the profiler stopped: async in torch, cut where collection stopped (t=140)
        ("[pl][profile]run_training_batch", 1, 0.0, 20.0, 0.0, 0.0),
        ("volta_sgemm_32x128_tn", 1, 0.0, 0.0, 30.0, 30.0),
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1, 0.0, 0.0, 4.0, 4.0),
    ],
)
def test_rows(
    profile: profsight.Profile,
    name: str,
    calls: int,
    self_cpu: float,
    cpu_total: float,
    self_dev: float,
    dev_total: float,
) -> None:
    row = profile.table().row(name)
    assert (row.calls, row.self_cpu_us, row.cpu_total_us) == (calls, self_cpu, cpu_total)
    assert (row.self_device_us, row.device_total_us) == (self_dev, dev_total)


def test_totals_and_percentages(profile: profsight.Profile) -> None:
    table = profile.table()
    assert table.self_cpu_total_us == 140.0
    assert table.self_device_total_us == 42.0
    step = table.row("ProfilerStep*")
    assert step.self_cpu_pct == pytest.approx(38 / 140 * 100)
    assert step.cpu_total_pct == pytest.approx(100.0)
    assert table.row("aten::addmm").self_device_pct == pytest.approx(30 / 42 * 100)
    assert table.row("[pl][profile]run_training_batch").cpu_total_pct == 0.0  # async, as torch


def test_memory(profile: profsight.Profile) -> None:
    table = profile.table()
    assert (table.row("aten::empty").cpu_mem, table.row("aten::empty").self_cpu_mem) == (4096, 4096)
    assert (table.row("ProfilerStep*").cpu_mem, table.row("ProfilerStep*").self_cpu_mem) == (
        4096,
        0,
    )
    free = table.row("[memory]")  # inside no op: a row of its own
    assert (free.calls, free.cpu_mem) == (1, -4096)


def test_group_by_shape(profile: profsight.Profile) -> None:
    rows = [r for r in profile.table(group_by="shape").rows if r.name == "aten::linear"]
    assert [(r.shapes, r.calls) for r in rows] == [("[[8, 16], [4, 16], [4]]", 2)]


def test_sort_and_limit(profile: profsight.Profile) -> None:
    table = profile.table(sort_by="self_cuda_time_total", limit=3)
    assert [r.name for r in table.rows] == ["aten::addmm", "volta_sgemm_32x128_tn", "aten::div_"]
    assert table.total_rows == 11


def test_module_view_adds_up(profile: profsight.Profile) -> None:
    table = profile.table(group_by="module")
    assert [r.name for r in table.rows] == ["(outside any module)"]
    assert table.rows[0].self_cpu_us == 140.0


def test_tree(profile: profsight.Profile) -> None:
    tree = profile.tree()
    assert tree.root.check() == []
    step = tree.root.children[0]
    assert (step.name, step.calls, step.cpu_total_us, step.device_total_us) == (
        "ProfilerStep*",
        2,
        140.0,
        38.0,
    )
    addmm = tree.root.find("aten::addmm")
    assert addmm is not None
    launch = addmm.children[0]
    assert launch.name == "cudaLaunchKernel"
    kernel = launch.children[0]
    assert (kernel.name, kernel.is_device, kernel.device_total_us) == (
        "volta_sgemm_32x128_tn",
        True,
        30.0,
    )
    pruned = tree.pruned(depth=1)
    assert pruned.root.children[0].children == []
    assert [c.name for c in tree.pruned(min_share=50).root.walk()] == [
        "(all threads)",
        "ProfilerStep*",
        "aten::linear",
        "aten::addmm",
    ]


def test_diagnostics(profile: profsight.Profile) -> None:
    codes = {d.code: d for d in profile.warnings}
    assert "launched_before_window" in codes
    assert codes["launched_before_window"].count == 1


def test_overview(profile: profsight.Profile) -> None:
    from profsight.model.overview import overview

    o = overview(profile)
    assert (o.steps, o.device_events, o.device_busy_us) == (2, 3, 42.0)
    assert o.devices == ("Tesla V100-SXM2-16GB",)


def test_pandas_export(profile: profsight.Profile) -> None:
    frame = profile.table().to_pandas()
    assert list(frame["name"][:2]) == ["ProfilerStep*", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"]
    assert frame.loc[frame["name"] == "aten::addmm", "self_device_us"].item() == 30.0


def test_the_model_is_not_changed_by_reading_it() -> None:
    """Building the table used to append "ProfilerStep*" to the store's strings (shared by
    the stores of a merged trace's ranks); the table is built once per grouping."""
    profile = profsight.load(DATA / "minimal/minimal.pt.trace.json")
    strings = list(profile.events.strings)
    table = profile.table()
    assert "ProfilerStep*" in {r.name for r in table.rows}
    assert profile.events.strings == strings
    assert profile.table() is table
    assert profile.table(group_by="shape") is not table
    assert profile.table(sort_by="cpu_total_us").rows[0].name == "ProfilerStep*"
