"""torch.compile compiling inside the profiled window: recorded here, on the CPU."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import profsight
from profsight.analyses.pipeline import diagnose
from profsight.knowledge.phases import Phase


def _record(out: Path) -> Path:
    """A compiled layer's first calls under the profiler: its first call compiles."""
    torch._dynamo.reset()
    layer = torch.compile(torch.nn.Linear(16, 4))
    x = torch.randn(8, 16)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(4):
            with torch.no_grad():
                layer(x)
            prof.step()
    path = out / "compiled.json"
    prof.export_chrome_trace(str(path))
    return path


def test_compilation_in_the_window_is_one_time_startup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compiling takes almost all of the window (hundreds of ms against a few ms of calls):
    it is start-up, first and named as compilation, not the model's compute, and the verdict
    asks for a warm-up instead of calling the model heavy."""
    import torch._inductor.config as inductor

    # compile for real, whatever an earlier run cached (torch's own patch: monkeypatch's
    # undo hides the option from the config module for the tests after this one)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", os.fspath(tmp_path / "inductor"))
    with inductor.patch(fx_graph_cache=False):
        trace = _record(tmp_path)
    diagnosis = diagnose(profsight.load(trace))
    top = diagnosis.findings[0]
    assert top.category == "profiler_setup"
    assert "torch.compile compiled the model" in top.explanation
    average = diagnosis.breakdown.average()
    assert average.host_us[Phase.STARTUP.value] > 0.9 * average.wall_us
    assert not [f for f in diagnosis.findings if f.category.startswith("compute_")]
    assert diagnosis.verdict is not None and diagnosis.verdict.judgement == "not_judged"
    assert "one-time start-up" in diagnosis.verdict.summary
