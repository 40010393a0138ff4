"""Every real trace of the shared collection loads, and the model's invariants hold on it.

GIVEN traces written by others (torch 1.8 to 2.9; V100 to B200, MI250/MI300X, MTIA),
WHEN profsight loads them, THEN nothing is lost without a diagnostic and the accounting
adds up: self times sum to the root totals, every device event is attributed at most once,
and a step's device time is the device work launched inside it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import profsight
from profsight.knowledge.trace_schema import DEVICE_WORK_KINDS, EventKind

from conftest import DATA, real_traces

NOT_TRACES = {"benchmark_simple_add_et.json.gz", "memory_timeline.raw.gz"}
LOCAL = sorted((DATA / "real").glob("*.json*"))
SHARED = real_traces()


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(p.parents[2])) for p in paths]


@pytest.mark.parametrize("path", LOCAL, ids=[p.name for p in LOCAL])
def test_local_copies_load(path: Path) -> None:
    profile = profsight.load(path)
    assert len(profile.events) > 0
    check_invariants(profile)


@pytest.mark.parametrize("path", SHARED, ids=_ids(SHARED))
def test_shared_trace(path: Path) -> None:
    if path.name in NOT_TRACES:
        with pytest.raises(profsight.InputError):
            profsight.load(path)
        return
    profile = profsight.load(path)
    assert len(profile.events) > 0
    check_invariants(profile)


def check_invariants(profile: profsight.Profile) -> None:
    # the typed decoder takes every variant real traces write (ROCm's string "bytes" of a
    # hipMemcpyWithStream sent 29,746 events of a 62k-event trace through Python one by one)
    assert profile.load_stats.lax_events == 0
    ev = profile.events
    at = profile.attribution
    table = profile.table()
    roots = at.is_row & (at.parent < 0) & ~at.is_async
    # self times of all rows add up to the time of the top-level rows
    assert table.self_cpu_total_us == pytest.approx(float(at.cpu_total_of(roots).sum()), rel=1e-9)
    # each piece of device work is owned by at most one row, and owned work is self device time
    work = ev.mask(DEVICE_WORK_KINDS)
    owned = work & (at.owner >= 0)
    assert np.all(at.is_row[at.owner[owned]])
    host_self_dev = float(at.device_self[at.is_row].sum())
    assert host_self_dev == pytest.approx(float(ev.dur[owned].sum()) / 1000.0, rel=1e-9, abs=1e-6)
    # the table's device total is all device work (kernels, copies, memsets) and the syncs
    # the device recorded, as torch's: each its own row
    synced = work | (ev.kind == EventKind.SYNC)
    assert table.self_device_total_us == pytest.approx(
        float(ev.dur[synced].sum()) / 1000.0, rel=1e-9
    )
    # torch's table credits device time only by External id: no op row holds more than
    # the analyses credit it with (they add work linked only by its launch call)
    host_rows = at.is_row & ~at.is_table_device_row
    linked = float(at.table_device_self[host_rows].sum())
    syncs = float(ev.dur[ev.kind == EventKind.SYNC].sum()) / 1000.0
    assert linked <= host_self_dev + syncs + 1e-6
    # the tree's invariants: total = self + children, for CPU and device time
    tree = profile.tree()
    assert tree.root.check(tolerance_us=1e-3) == []
    assert tree.root.cpu_total_us == pytest.approx(float(at.cpu_total_of(roots).sum()), rel=1e-9)
    check_step_device_time(profile)


def check_step_device_time(profile: profsight.Profile) -> None:
    """A step's device total equals the device work launched by calls inside the step."""
    ev = profile.events
    at = profile.attribution
    step_names = [i for i, s in enumerate(ev.strings) if s.startswith("ProfilerStep#")]
    steps = np.flatnonzero(at.is_row & ~at.is_async & np.isin(ev.name, step_names))
    work = np.flatnonzero(ev.mask(DEVICE_WORK_KINDS) & (at.owner >= 0))
    # the row each piece of work belongs to, walked up to the top: which step holds it
    top = at.owner[work].copy()
    holder = np.full(len(work), -1)
    for _ in range(int(at.depth.max()) + 2 if len(at.depth) else 1):
        is_step = np.isin(top, steps)
        holder[(holder < 0) & is_step] = top[(holder < 0) & is_step]
        top = np.where(top >= 0, at.parent[np.maximum(top, 0)], -1)
    for s in steps:
        expected = float(ev.dur[work[holder == s]].sum()) / 1000.0
        assert at.device_total[s] == pytest.approx(expected, rel=1e-9, abs=1e-6)


def test_kinds_cover_the_schema_eras() -> None:
    """torch 1.9 categories (Operator/Runtime/Kernel) and 2.x ones map to the same kinds."""
    old = profsight.load(DATA / "real/gpu_metrics_input.json")
    new = profsight.load(DATA / "real/before_fix_trace.json")
    for profile in (old, new):
        kinds = set(profile.events.kind.tolist())
        assert EventKind.KERNEL in kinds
        assert EventKind.RUNTIME in kinds
        assert EventKind.CPU_OP in kinds
    assert profile.table().has_device


def test_device_columns_follow_torchs_rules() -> None:
    """torch 2.x turns the device's syncs into CUDA rows of their own (Kineto's CUDA_SYNC is
    a CUDA activity) and credits device activity to an op only by its External id
    (`_parse_kineto_results`). Read from torch's source: no CUDA run was recorded here."""
    table = profsight.load(DATA / "real/event_sync_trace.json.gz").table()
    syncs = {r.name: r for r in table.rows if r.event_kind == "sync"}
    assert {n: (r.calls, r.self_device_us) for n, r in syncs.items()} == {
        "Stream Sync": (1, 5.0),
        "Event Sync": (2, 35.0),
        "Context Sync": (1, 6.0),
    }
    assert table.self_device_total_us == 97.0
    # a memset whose External id names no op (its launch's own id): no op's CUDA total in
    # the table holds it; the analyses credit it to the op around its launch, and say so
    simple_add = "shared/traces/hta/critical_path/simple_add/"
    profile = profsight.load(DATA / simple_add / "benchmark_result_493459_1694039959_trace.json.gz")
    note = next(d for d in profile.warnings if d.code == "linked_by_launch")
    assert note.message.startswith("81 kernels/copies (21.4% of device time) carry no External")
    conv = profile.table().row("aten::cudnn_convolution")
    at = profile.attribution
    ops = np.flatnonzero(np.isin(profile.events.name, [profile.events.strings.index(conv.name)]))
    assert conv.device_total_us < float(at.device_total[ops].sum())


def test_damaged_fields_are_read_one_by_one_and_counted() -> None:
    """A trace whose `dur` and `ts` are null (tests/data/malformed) is read by the lax path,
    event by event, and the load says how many events took it."""
    profile = profsight.load(DATA / "malformed" / "nan_times.json")
    assert profile.load_stats.lax_events > 0
