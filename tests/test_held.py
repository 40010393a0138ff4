"""Launched work the GPU held back (`analyses.held`), on real traces by others.

Expected before running profsight on them, from the traces themselves:
- sglang's decode step (MI300X): a 256-byte read-back, called 0.4 ms into the window,
  returns 463 ms later with nothing recorded on the GPU meanwhile; the step's own work (a
  CUDA-graph replay) then takes ~10 ms. The wait is for work queued before the window.
- NeuralPDE (RTX 4090): kernels launched before a sync start 1.3-2.3 ms later with the GPU
  running nothing of the process, five times in an 18 ms window.
- The traces with ordinary launches (V100 DLRM ranks, A100/3080 training and inference):
  work launched to a free GPU starts within microseconds; nothing is held.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import profsight
from profsight.analyses.pipeline import diagnose
from profsight.analyses.step.held import ready_waits
from profsight.analyses.step.startup import startup_events
from profsight.knowledge.advice import HELD_BACK_US

DATA = Path(__file__).parent / "data"
SGLANG = "real/sglang_Qwen3-8B_decode.json.gz"
PDE = "gpu_traces/eikehmueller__NeuralPDE/trace.json.gz"
ORDINARY = [
    "gpu_traces/facebookresearch__param/worker0_step_12.1694128201545.pt.trace.json.gz",
    "gpu_traces/facebookresearch__param/worker1_step_12.1694128201556.pt.trace.json.gz",
    "gpu_traces/JonathanHourany__pytorch-sandbox/trace-num-workers-0-batch-size-16.json.gz",
    "gpu_traces/JonathanHourany__pytorch-sandbox/trace-num-workers-8-batch-size-2056.json.gz",
    "gpu_traces/harryjmoss__particle_transformer/single_epoch_forward_pass_batch_size_2.json.gz",
    "gpu_traces/incredere__gpu-profiling-pytorch-lab/fp32.pt.trace.json.gz",
    "real/nccl_data.json.gz",
    "real/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
]


def test_a_read_back_waiting_for_work_before_the_window_is_held_not_a_sync() -> None:
    diagnosis = diagnose(profsight.load(DATA / SGLANG))
    top = diagnosis.findings[0]
    assert top.category == "gpu_held"
    assert top.at_stake_pct > 95
    # released, the step is its own ~10 ms of work: 463 ms of the window were the hold
    assert top.gain_pct is not None and top.gain_pct > 90
    categories = {f.category for f in diagnosis.findings}
    assert "host_device_sync" not in categories  # the read-back waited on nothing it queued
    verdict = diagnosis.verdict
    assert verdict is not None and verdict.bound == "unrecorded"
    assert verdict.summary.startswith("An inference run")
    assert "held this process's launched work back" in verdict.summary
    # the step runs until its device work is done: 473.8 ms, of which 463.3 ms the hold
    assert "launched work held back 98% of the step" in verdict.evidence


def test_work_started_late_on_a_free_gpu_is_held_and_kept_out_of_the_syncs() -> None:
    diagnosis = diagnose(profsight.load(DATA / PDE))
    held = next(f for f in diagnosis.findings if f.category == "gpu_held")
    assert 25 < held.at_stake_pct < 35
    values = {e.label: e.value for e in held.evidence}
    assert values["items waiting >= 1.00 ms with the device free"].startswith("5 per step")
    assert "the longest 2.27 ms" in values["items waiting >= 1.00 ms with the device free"]
    sync = next(f for f in diagnosis.findings if f.category == "host_device_sync")
    assert sync.at_stake_pct + held.at_stake_pct < 60  # the held time is not counted twice


@pytest.mark.parametrize("name", ORDINARY)
def test_ordinary_launches_start_within_microseconds(name: str) -> None:
    """The basis of HELD_BACK_US: launched work waits with its device free far below it."""
    profile = profsight.load(DATA / name)
    _, ready, start = ready_waits(profile, startup_events(profile))
    waits_us = (start - ready) / 1000.0
    assert np.percentile(waits_us, 99) < HELD_BACK_US / 10
    assert not any(f.category == "gpu_held" for f in diagnose(profile).findings)
