"""Memory at the peak (issue 26, item 2, the part a trace file holds): when each memory was
fullest, and which ops' allocations it held then.

GIVEN runs recorded with ``profile_memory=True`` (a training loop in this session, the
allocation-churn scenario committed in tests/data, a T4 training run by others),
WHEN profsight pairs each ``[memory]`` record's allocation with its block's free,
THEN the blocks it finds live at the peak add up to what the allocator's own totals say the
window added by then, and the op that grows a tensor by ``torch.cat`` holds the peak.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import profsight
from profsight.analyses.memory_peak import memory_peaks
from profsight.knowledge.trace_schema import MEMORY_EVENT_NAME

from conftest import DATA
from recorders import Recorded

CHURN = DATA / "recorded/allocation_churn.plain.pt.trace.json.gz"
FP32 = DATA / "gpu_traces/incredere__gpu-profiling-pytorch-lab/fp32.pt.trace.json.gz"


def _window_added(profile: profsight.Profile, memory_types: set[int]) -> tuple[int, int]:
    """From the allocator's ``Total Allocated`` alone: the peak, and what the window added
    to the memory by then, counting back in the frees of blocks allocated before it."""
    ev = profile.events
    name = ev.strings.index(MEMORY_EVENT_NAME)
    rec = np.flatnonzero((ev.name == name) & np.isin(ev.mem_device_type, list(memory_types)))
    rec = rec[np.argsort(ev.start[rec], kind="stable")]
    allocated, nbytes, block = ev.allocated[rec], ev.nbytes[rec], ev.block[rec]
    peak = int(np.argmax(allocated))
    baseline = int(allocated[0] - nbytes[0])
    seen: set[int] = set()
    early_frees = 0
    for k in range(peak + 1):
        if nbytes[k] > 0:
            seen.add(int(block[k]))
        elif int(block[k]) not in seen:
            early_frees -= int(nbytes[k])
    return int(allocated[peak]), int(allocated[peak]) - baseline + early_frees


@pytest.mark.parametrize("source", ["recorded_plain", "churn", "fp32"])
def test_the_blocks_live_at_the_peak_are_what_the_window_added(
    source: str, request: pytest.FixtureRequest
) -> None:
    path = {"churn": CHURN, "fp32": FP32}.get(source)
    if path is None:
        recorded: Recorded = request.getfixturevalue(source)
        path = recorded.trace
    profile = profsight.load(path)
    peaks = {p.memory: p for p in memory_peaks(profile)}
    types = {"cpu": {0, 2, 5}, "device": {1, 6, 12, 20}}
    assert peaks
    for memory, p in peaks.items():
        peak, added = _window_added(profile, types[memory])
        assert p.blocks_known and p.peak_bytes == peak
        assert p.held_bytes == added, memory
        assert 0 <= p.held_bytes <= p.peak_bytes
        assert sum(h.bytes for h in p.held_by) <= p.held_bytes


def test_the_op_that_grows_a_tensor_holds_the_peak() -> None:
    """Expected before running it: the churn scenario grows one tensor with torch.cat each
    iteration, so at the host's peak the blocks cat allocated hold most of what the window
    added (the rest of the loop's temporaries are freed at once)."""
    (peak,) = memory_peaks(profsight.load(CHURN))
    top = peak.held_by[0]
    assert top.op == "aten::cat"
    assert top.bytes > 0.9 * peak.held_bytes


def test_every_format_says_the_peak() -> None:
    """The terminal and Markdown reports name the peak and its ops; the JSON carries them."""
    report = profsight.explain(FP32)
    device = next(p for p in report.memory_peaks if p.memory == "device")
    text = report.text(width=160)
    assert "Memory at the peak" in text and device.held_by[0].op in text
    assert "## Memory at the peak" in report.markdown()
    doc = json.loads(report.json())["memory_peaks"]
    assert [p["memory"] for p in doc] == [p.memory for p in report.memory_peaks]
    assert doc[-1]["held_by"][0]["op"] == device.held_by[0].op
    assert doc[-1]["before_window_bytes"] == device.peak_bytes - device.held_bytes


def test_two_runs_compare_their_peaks(capsys: pytest.CaptureFixture[str]) -> None:
    """The churn scenario and its fix (the tensor preallocated, not grown by cat): the fix
    lowers the host's peak, and ``profsight diff`` says by how much, in text and JSON."""
    from profsight.cli.main import main

    fixed = DATA / "recorded/allocation_churn_fixed.plain.pt.trace.json.gz"
    (before,) = memory_peaks(profsight.load(CHURN))
    (after,) = memory_peaks(profsight.load(fixed))
    assert after.peak_bytes < before.peak_bytes
    assert main(["diff", str(CHURN), str(fixed), "--format", "json"]) == 0
    change = json.loads(capsys.readouterr().out)["memory_peak_bytes"]["cpu"]
    assert (change["before"], change["after"]) == (before.peak_bytes, after.peak_bytes)
    assert main(["diff", str(CHURN), str(fixed)]) == 0
    assert "Memory peak (cpu): " in capsys.readouterr().out


def test_a_live_profiler_gives_torchs_categories_at_its_peak() -> None:
    """A live ``torch.profiler.profile`` recorded with ``profile_memory``, ``record_shapes``
    and ``with_stack`` (what torch's memory profiler needs): its explanation carries torch's
    categories at that profiler's peak, as ``MemoryProfile`` of the same run gives them.
    Written first: at the peak of an Adam step every parameter has its gradient, so the
    gradients hold exactly the model's parameter bytes. A trace file has no categories."""
    from torch.profiler._memory_profiler import MemoryProfile

    prof = _live_step_profile("adam")
    report = profsight.explain(prof)
    (cpu,) = [p for p in report.memory_peaks if p.memory == "cpu"]
    assert cpu.categories is not None
    params = 4 * (64 * 128 + 128 + 128 * 8 + 8)  # the MLP's fp32 parameters
    assert cpu.categories["gradient"] == params
    assert set(cpu.categories) >= {"parameter", "gradient", "optimizer_state", "activation"}
    assert MemoryProfile(prof.profiler.kineto_results).timeline  # torch's own read the run
    assert "torch's memory profiler, at its own peak: " in report.text(width=200)
    assert json.loads(report.json())["memory_peaks"][0]["torch_categories"] == cpu.categories
    assert all(p.categories is None for p in memory_peaks(profsight.load(CHURN)))


def _live_step_profile(optimizer: str) -> Any:
    """Two steps of a small MLP recorded live with what torch's memory profiler needs."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 8))
    params = list(model.parameters())
    opt = (
        torch.optim.Adam(params)
        if optimizer == "adam"
        else torch.optim.SGD(params, lr=0.1, momentum=0.9)
    )
    x, y = torch.randn(32, 64), torch.randint(0, 8, (32,))

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    step()
    with profile(
        activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True, with_stack=True
    ) as prof:
        for _ in range(2):
            step()
    return prof


def test_an_optimizer_state_larger_than_the_model_is_a_finding() -> None:
    """Written first: Adam keeps two moments per parameter, so its state is twice the
    parameters (and a 4-byte step count per tensor); SGD with momentum keeps one buffer, as
    large as the parameters: not larger, no finding. The model's size is the least torch's
    memory profiler counts as parameters: at its peak it counts 70 KB, a copy made in the
    step among them, against the model's 37 KB."""
    from profsight.loaders.live import load_live

    model = 4 * (64 * 128 + 128 + 128 * 8 + 8)  # the MLP's fp32 parameters
    adam = load_live(_live_step_profile("adam"))
    assert adam.parameter_bytes == {"cpu": model}
    state = (adam.memory_categories or {})["cpu"]["optimizer_state"]
    assert state == 2 * model + 4 * 4  # two moments, and a step count per parameter tensor
    (found,) = [
        f for f in profsight.explain(adam).findings if f.title.startswith("The optimizer's state")
    ]
    assert found.title.startswith("The optimizer's state is 2.0x the model's parameters")
    sgd = load_live(_live_step_profile("sgd"))
    assert (sgd.memory_categories or {})["cpu"]["optimizer_state"] == model
    assert not [
        f for f in profsight.explain(sgd).findings if f.title.startswith("The optimizer's state")
    ]


_FIRST_STEPS = """
import json, torch, profsight
from torch.profiler import ProfilerActivity, profile
from profsight.loaders.live import load_live
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 8))
opt = torch.optim.Adam(model.parameters())
x, y = torch.randn(32, 64), torch.randint(0, 8, (32,))
with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True,
             with_stack=True) as prof:
    for _ in range(3):
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
live = load_live(prof)
(cpu,) = [p for p in profsight.explain(live).memory_peaks if p.memory == "cpu"]
print(json.dumps({"torch": live.memory_categories["cpu"], "holders": cpu.holders,
                  "peak": cpu.peak_bytes}))
"""


def test_holders_from_the_trace_match_torchs_categories() -> None:
    """Written first: recorded from the first Adam step (its state made in the window), the
    trace's own reading, by the phase that allocated each block and whether it outlived the
    phase, gives torch's memory profiler's gradients and optimizer state within 5%. torch
    also counts what predates the window (the parameters, the batch), which the host's
    ``Total Allocated`` does not, and calls the step's temporaries parameters and
    activations; those are not compared.

    Recorded in a fresh interpreter: the host's ``Total Allocated`` keeps counting what
    earlier profiling sessions of a process allocated, and their frees inside the window
    would move its peak."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _FIRST_STEPS], capture_output=True, text=True, check=True
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    holders, categories = got["holders"], got["torch"]
    assert holders["gradients"] == pytest.approx(categories["gradient"], rel=0.05)
    assert holders["optimizer state"] == pytest.approx(categories["optimizer_state"], rel=0.05)
    assert sum(holders.values()) == got["peak"]


def test_a_trace_by_others_has_its_peak_by_holder() -> None:
    """The T4 run by others: every byte of the device's peak has one holder, and what
    predates the window is the peak less the blocks it allocated."""
    report = profsight.explain(FP32)
    (device,) = [p for p in report.memory_peaks if p.memory == "device"]
    holders = device.holders or {}
    assert sum(holders.values()) == device.peak_bytes
    assert holders["before the window"] == device.before_window_bytes
    assert "by the phase that allocated it" in report.text(width=200)
    assert json.loads(report.json())["memory_peaks"][1]["holders"] == holders
