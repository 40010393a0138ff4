"""Interval sets (`analyses.intervals`): each operation equals its definition on an integer
timeline, whatever the order of its input and however small the chunks it works in; and a
diagnosis made in tiny chunks equals the one made whole, on real traces."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import profsight
from profsight.analyses.pipeline import diagnose
from profsight.analyses.step import intervals
from profsight.analyses.step.breakdown import breakdown
from profsight.knowledge.phases import Phase
from profsight.model import nesting

DATA = Path(__file__).parent / "data"

spans = st.lists(st.tuples(st.integers(0, 60), st.integers(-3, 15)), max_size=30)


def _arrays(spec: list[tuple[int, int]], ordered: bool) -> tuple[np.ndarray, np.ndarray]:
    pairs = sorted(spec) if ordered else spec
    start = np.array([s for s, _ in pairs], np.int64)
    return start, start + np.array([n for _, n in pairs], np.int64)


def _covered(start: np.ndarray, end: np.ndarray) -> set[int]:
    return {t for s, e in zip(start.tolist(), end.tolist(), strict=True) for t in range(s, e)}


@settings(max_examples=300, deadline=None)
@given(spans, st.booleans())
def test_union_is_the_time_covered_in_any_order(spec: list[tuple[int, int]], ordered: bool) -> None:
    """Ordered input skips the sort: it must give what the sort gives."""
    start, end = _arrays(spec, ordered)
    s, e = intervals.union(start, end)
    assert _covered(s, e) == _covered(start, end)
    assert np.all(e > s) and np.all(s[1:] > e[:-1])  # sorted, disjoint, touching merged
    shuffled = intervals.union(*_arrays(spec, not ordered))
    assert np.array_equal(shuffled[0], s) and np.array_equal(shuffled[1], e)


@settings(max_examples=300, deadline=None)
@given(spans, st.lists(st.floats(0, 4), min_size=30, max_size=30), st.booleans())
def test_weighted_sums_in_chunks_equal_the_definition(
    spec: list[tuple[int, int]], weights: list[float], complement: bool
) -> None:
    start, end = intervals.union(*_arrays(spec, ordered=False))
    weight = np.array(weights[: len(start)], np.float64)
    x = np.arange(-2, 80, dtype=np.int64)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(intervals, "CHUNK", 2)  # running sums carried across chunks
        got = intervals.Weighted(start, end, weight, complement=complement).below(x)
    w = 1.0 - weight if complement else weight
    expected = [
        sum(wk * min(max(t - s, 0), e - s) for s, e, wk in zip(start, end, w, strict=True))
        for t in x.tolist()
    ]
    assert got == pytest.approx(expected, abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(spans, st.booleans(), st.integers(0, 70), st.integers(1, 20))
def test_bisection_finds_every_interval_of_a_window(
    spec: list[tuple[int, int]], ordered: bool, lo: int, width: int
) -> None:
    start, end = _arrays(spec, ordered)
    hi = lo + width
    found = intervals.Bisected(start, end).around(lo, hi)
    overlapping = np.flatnonzero((np.minimum(end, hi) - np.maximum(start, lo)) > 0)
    assert set(overlapping.tolist()) <= set(found.tolist())
    assert np.all(np.diff(found) > 0)  # in the inputs' order


@settings(max_examples=200, deadline=None)
@given(spans, spans)
def test_overlap_tests_in_chunks_equal_the_measure(
    queries: list[tuple[int, int]], spec: list[tuple[int, int]]
) -> None:
    start, end = _arrays(queries, ordered=False)
    disjoint = intervals.union(*_arrays(spec, ordered=False))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(intervals, "CHUNK", 3)
        found = intervals.overlaps(start, end, disjoint)
        measure = intervals.overlap_each(start, end, disjoint)
    covered = _covered(*disjoint)
    expected = [len(covered & set(range(s, e))) for s, e in zip(start, end, strict=True)]
    assert measure.tolist() == expected
    assert found.tolist() == [m > 0 for m in expected]


def _summary(path: Path) -> tuple[object, ...]:
    d = diagnose(profsight.load(path))
    findings = tuple((f.category, f.gain_pct, f.severity) for f in d.findings)
    verdict = None if d.verdict is None else (d.verdict.bound, d.verdict.judgement)
    return findings, verdict, d.breakdown.steps


@pytest.mark.parametrize(
    "name",
    [
        "gpu_traces/JonathanHourany__pytorch-sandbox/trace-num-workers-0-batch-size-16.json.gz",
        "gpu_traces/incredere__gpu-profiling-pytorch-lab/amp.pt.trace.json.gz",
        "real/backward_thread.json",
    ],
)
def test_a_diagnosis_in_tiny_chunks_equals_the_whole(name: str) -> None:
    """The chunked passes (overlaps, running sums, the nesting's containment test) work a
    million events at a time on a huge trace; at 7 they must give the same findings, savings
    to the last bit, verdict and step breakdown."""
    whole = _summary(DATA / name)
    assert whole[0], "a trace with findings"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(intervals, "CHUNK", 7)
        patch.setattr(nesting, "_CHUNK", 7)
        chunked = _summary(DATA / name)
    assert chunked == whole


def test_segments_are_in_order_of_start_and_rows_keep_their_phase() -> None:
    """The breakdown keeps the step thread's segments in order of start (the replay's merges
    rely on it) and one phase byte per row, which `rows_in` reads."""
    path = (
        DATA
        / "gpu_traces/JonathanHourany__pytorch-sandbox/trace-num-workers-0-batch-size-16.json.gz"
    )
    bd = breakdown(profsight.load(path))
    assert bd.segments is not None
    seg_s, _, seg_phase, owner = bd.segments
    assert len(seg_s) > 1000 and np.all(np.diff(seg_s) >= 0)
    assert owner.dtype == np.int32 and bd.row_events.dtype == np.int32
    forward = bd.rows_in(Phase.FORWARD)
    assert 0 < forward.sum() < len(forward)
    # a segment's phase is its row's: the forward rows own exactly the forward segments
    code = list(Phase).index(Phase.FORWARD)
    mine = np.isin(owner, bd.row_events[forward])
    assert np.array_equal(mine, seg_phase == code)
