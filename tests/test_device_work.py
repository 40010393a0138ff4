"""Short kernels, launch delays and copy bandwidth (issue 26, item 4), on real GPU traces.

GIVEN real traces by others (a V100 DDP step, a T4 run, an A100 run whose device lags),
WHEN profsight reads how their device work was launched and fed,
THEN the launch delays equal Holistic Trace Analysis's ``get_cuda_kernel_launch_stats`` on
the same trace, a lagging device's delay is its queue (not slow launching), and the copy
rates are bytes over copying time.
"""

from __future__ import annotations

import numpy as np
import pytest

import profsight
from profsight.analyses.device_work import device_work
from profsight.knowledge.trace_schema import EventKind

from conftest import DATA

PARAM = DATA / "gpu_traces/facebookresearch__param/worker0_step_12.1694128201545.pt.trace.json.gz"
LAGGING = DATA / "gpu_lagging/JeremyMorlier__GPUModel/trace.json.gz"
FP32 = DATA / "gpu_traces/incredere__gpu-profiling-pytorch-lab/fp32.pt.trace.json.gz"


def test_launch_delays_equal_htas() -> None:
    """HTA (PyPI ``traceinsight`` 0.6.1, ``get_cuda_kernel_launch_stats``, its default
    frame: kernel and memory launches) on this trace gives 261 items, launch delay median
    2.0 µs, p90 171.0 µs, max 1,482 µs: every launch call of the trace queued one item, so
    the frames are the same."""
    work = device_work(profsight.load(PARAM))
    assert work is not None and work.delays is not None
    d = work.delays
    assert d.items == 261
    assert d.median_us == pytest.approx(2.0, abs=0.05)
    assert d.p90_us == pytest.approx(171.0, abs=0.5)
    assert d.max_us == pytest.approx(1482.0, abs=0.5)


@pytest.mark.parametrize(
    ("path", "items", "median", "p90", "most"),
    [
        (FP32, 105, 594.0, 1450.0, 1983.0),
        (DATA / "real/nccl_data.json.gz", 3774, 3.0, 75.0, 966.0),
    ],
    ids=["fp32", "nccl_data"],
)
def test_launch_delays_equal_htas_with_its_last_step(
    path: object, items: int, median: float, p90: float, most: float
) -> None:
    """HTA drops the last profiler step by default; with ``include_last_profiler_step=True``
    its frame holds the same items as profsight's. HTA reads timestamps as whole
    microseconds, so its delays are within 2 µs of profsight's (its figures written in)."""
    work = device_work(profsight.load(path))  # type: ignore[arg-type]
    assert work is not None and work.delays is not None
    d = work.delays
    assert d.items == items
    assert d.median_us == pytest.approx(median, abs=2.0)
    assert d.p90_us == pytest.approx(p90, abs=2.0)
    assert d.max_us == pytest.approx(most, abs=2.0)


def test_a_lagging_devices_delay_is_its_queue() -> None:
    """The host queued five long kernels ahead of a busy A100: each waits behind the one
    before it (tens of ms), and its launch path's own latency is about a microsecond."""
    work = device_work(profsight.load(LAGGING))
    assert work is not None and work.delays is not None
    d = work.delays
    assert d.median_us > 10_000
    assert d.behind_median_us > 0.99 * d.median_us
    assert d.latency_median_us < 5.0


def test_short_kernels_are_shorter_than_their_launch() -> None:
    profile = profsight.load(FP32)
    work = device_work(profile)
    assert work is not None and work.short is not None
    ev = profile.events
    kernels = np.flatnonzero(ev.kind == int(EventKind.KERNEL))
    call = profile.attribution.launcher[kernels].astype(np.int64)
    linked = kernels[call >= 0]
    call = call[call >= 0]
    short = ev.dur[linked] < ev.dur[call]
    s = work.short
    assert (s.count, s.kernels) == (int(short.sum()), len(linked)) == (24, 87)
    assert s.device_us == pytest.approx(ev.dur[linked[short]].sum() / 1000)
    assert 0 < s.share_pct < 100
    assert sum(x.kernels for x in s.launchers) <= s.count
    assert s.launchers[0].op == "aten::fill_"


def test_copy_rate_is_bytes_over_copying_time() -> None:
    """Six pinned host-to-device copies of 4.8 MB on a T4 (PCIe gen 3 x16: 16 GB/s a
    direction): 11.9 GB/s while copying."""
    profile = profsight.load(FP32)
    work = device_work(profile)
    assert work is not None
    (copy,) = work.copies
    ev = profile.events
    copies = np.flatnonzero(ev.kind == int(EventKind.MEMCPY))
    assert copy.direction == "HtoD pinned" and copy.copies == len(copies) == 6
    assert copy.nbytes == int(ev.nbytes[copies].sum())
    assert copy.gbps == pytest.approx(ev.nbytes[copies].sum() / ev.dur[copies].sum())
    assert 10.0 < copy.gbps < 16.0
    assert copy.series and max(v for _, v in copy.series) < 16.0


def test_a_cpu_trace_has_no_device_work() -> None:
    from profsight.samples import sample_trace

    assert device_work(profsight.load(sample_trace())) is None
    assert profsight.explain(str(sample_trace())).device_work is None


@pytest.mark.parametrize("fmt", ["markdown", "json", "text"])
def test_every_format_shows_it(fmt: str) -> None:
    report = profsight.explain(str(FP32))
    out = {"markdown": report.markdown, "json": report.json, "text": report.text}[fmt]()
    assert ("short kernels" in out) if fmt != "json" else ('"short_kernels"' in out)
    assert "11.9 GB/s" in out if fmt != "json" else '"HtoD pinned"' in out
