"""Traces of torch's legacy Chrome exporter (no ``cat``, ``pid`` "CPU functions"): read, never
an empty report (tests/data/legacy_traces/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import profsight
from profsight.cli.main import main
from profsight.knowledge.trace_schema import EventKind
from profsight.loaders import load
from profsight.model.overview import overview
from profsight.model.profile import Profile

from conftest import DATA

ISSUE_33961 = DATA / "legacy_traces" / "pytorch_issue_33961.json"


def _profile() -> Profile:
    profile = load(str(ISSUE_33961))
    assert isinstance(profile, Profile)
    return profile


def test_a_legacy_trace_is_read_as_ops_and_device_time() -> None:
    """The op ``add`` on its thread, and its 134.18 µs of CUDA-event time on device 0 as its
    device time, linked to it although the flow's end was lost with the damaged line."""
    profile = _profile()
    ev = profile.events
    kinds = sorted(
        (ev.strings[n], EventKind(k).name) for n, k in zip(ev.name, ev.kind, strict=True)
    )
    assert kinds == [("add", "CPU_OP"), ("add", "KERNEL")]
    row = next(r for r in profile.table().rows if r.name == "add")
    assert row.calls == 1
    assert row.self_cpu_us == pytest.approx(134.49, abs=0.01)
    assert row.self_device_us == pytest.approx(134.176, abs=0.01)
    assert int(ev.device[ev.kind == EventKind.KERNEL][0]) == 0
    assert "legacy exporter" in overview(profile).torch_era
    assert any(d.code == "legacy_exporter" for d in profile.diagnostics)


def test_explain_of_a_legacy_trace_is_no_empty_report(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    assert main(["explain", str(ISSUE_33961), "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    # the op with its device time, and its device range as a device row (as kernels are)
    rows = [(r["name"], r["kind"], r["self_cpu_us"], r["self_device_us"]) for r in doc["table"]]
    assert rows == [("add", "aten", 134.49, 134.176), ("add", "kernel", 0.0, 134.176)]
    assert "legacy exporter" in doc["source"]["torch_era"]
    assert doc["source"]["device_busy_us"] == pytest.approx(134.176, abs=0.01)


def test_a_legacy_ops_work_after_the_ops_inside_it_is_its_own() -> None:
    """bonlime's FP16 convolutions: each cudnn_convolution range holds its contiguous/empty
    ranges, then 15 ms of the convolution itself. torch's own table of that run gives it a
    Self CUDA of 1.536 s; read as a mere span (before), the device did 0.85 ms in all and
    the blocked host read as 99% start-up."""
    profile = load(str(DATA / "legacy_traces" / "bonlime_fp16_conv.json.gz"))
    assert isinstance(profile, Profile)
    row = next(r for r in profile.table().rows if r.name == "aten::cudnn_convolution")
    assert row.calls == 100
    assert row.self_device_us == pytest.approx(1.536e6, rel=1e-3)
    wrapper = next(r for r in profile.table().rows if r.name == "aten::conv2d")
    assert wrapper.self_device_us == 0.0  # its range spans the ops inside it
    report = profsight.explain(str(DATA / "legacy_traces" / "bonlime_fp16_conv.json.gz"))
    assert report.findings[0].category == "compute_conv"
    assert not any(f.category == "profiler_setup" and f.blocks for f in report.findings)
