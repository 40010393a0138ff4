"""Printed tables by others in the shapes issue 36 names (tests/data/tables, provenance in its
README): communication, a sharding framework's own syncs, Markdown bold cells and tables cut
to their CUDA columns. Each expectation was written before profsight ran on the file
(tests/data/tables/README.md, "Issue 36"); a miss stays a strict expected failure."""

from __future__ import annotations

import pytest

import profsight
from profsight.analyses.step.table_comms import printed_comms
from profsight.analyses.step.table_device import printed_device
from profsight.analyses.step.table_step import printed_step
from profsight.loaders.table_text import parse_tables
from profsight.model.findings import Severity
from profsight.model.table import ProfilerTable

from conftest import DATA

TABLES = DATA / "tables"
ZERO3 = "Unispac__Adaptive-Finetuning-Attacks__1.txt"
CUDA_ONLY = "HFAiLab__alphafold-optimized__1.txt"
BOLD = "louieunnie__transformer-inference-gpu-profiling__1.txt"
GENSLM = "lightning-pytorchprofiler-genslm-deepspeed-1.txt"


def _explain(name: str) -> profsight.Report:
    return profsight.explain(str(TABLES / name))


def _table(name: str) -> ProfilerTable:
    return parse_tables((TABLES / name).read_text(encoding="utf-8"), name)[0].table


def test_a_step_spent_mostly_in_collectives_is_communication_bound() -> None:
    """DeepSpeed ZeRO-3 on 4 A100s: 11.7 s of NCCL all-gather and reduce-scatter kernels
    against ~10 s of every other device work: communication first, and the verdict says so."""
    report = _explain(ZERO3)
    first = report.findings[0]
    assert first.category == "communication"
    assert report.verdict is not None and report.verdict.bound == "communication"
    assert "memcpy" in {f.category for f in report.findings}  # the pageable copies, 2.4 s


def test_collectives_are_counted_once_and_labels_are_not_work() -> None:
    """record_param_comms (11.741 s), the NCCL kernels (6.968 + 4.745 s) and the nccl:
    labels count the same transfers; torch 2.4's device total also counts the labels'
    spans (model_inference 28.247 s, nccl: 11.713 s), which are not work."""
    table = _table(ZERO3)
    step = printed_step(table)
    assert step is not None
    device = printed_device(table, step)
    assert device is not None
    assert device.labels_us == pytest.approx(28247000.0 + 6968000.0 + 4745000.0)
    comms = printed_comms(table, step, device)
    assert comms is not None
    assert comms.device_us == pytest.approx(11741000.0)
    assert comms.framework == "DeepSpeed's ZeRO"
    # 62.03 s total less 39.96 s of labels: 22.07 s of work, 11.74 s of it collectives
    assert comms.other_us == pytest.approx(table.self_device_total_us - 39960000.0 - 11741000.0)


def test_hidden_collectives_are_information_with_what_the_table_cannot_tell() -> None:
    """Alphafold DDP on 128 GPUs (the author: all-reduce ~0.4 s of a 12.6 s iteration): the
    NCCL kernel is 4% of the device's time, reported as information, never as compute."""
    report = _explain(CUDA_ONLY)
    comm = [f for f in report.findings if f.category == "communication"]
    assert len(comm) == 1 and comm[0].severity is Severity.INFO
    assert "cannot tell" in comm[0].explanation
    assert report.findings[0].category == "compute_other"  # layer norm and elementwise


def test_a_table_cut_to_its_cuda_columns_is_read_and_not_judged_busy() -> None:
    """No CPU column: the device's own total (12.52 s from the Self CUDA % column, the
    author's 12.6 s iteration) is the window; how busy the device was is not claimed."""
    table = _table(CUDA_ONLY)
    assert table.has_device and not table.self_cpu_total_us
    assert table.self_device_total_us == pytest.approx(2105000.0 * 100 / 16.81)
    report = _explain(CUDA_ONLY)
    assert report.verdict is not None and report.verdict.device_busy_pct is None
    assert not {"gpu_idle", "host_device_sync", "launch_overhead", "data_loading"} & {
        f.category for f in report.findings
    }


def test_markdown_bold_cells_are_read() -> None:
    """GPT-2 batch-1 decoding on an RTX 3060, pasted with **bold** figures: 2400 addmm of
    25 µs on a GPU busy at most 17% of the step (the label: launch_overhead, gpu_idle fair)."""
    table = _table(BOLD)
    assert len(table.rows) == 10
    assert [r.calls for r in table.rows[:5]] == [2400, 50, 50, 50, 50]
    report = _explain(BOLD)
    assert report.findings and report.findings[0].category in {"launch_overhead", "gpu_idle"}


def test_a_frameworks_own_syncs_are_not_the_users_item() -> None:
    """Lightning + DeepSpeed (GenSLM): cudaDeviceSynchronize (354.9 ms) sits inside
    record_param_comms (355.5 ms CPU total) among ZeRO's Pre/PostBackwardFunction rows: the
    sync finding names DeepSpeed and its settings, not .item()."""
    report = _explain(GENSLM)
    sync = next(f for f in report.findings if f.category == "host_device_sync")
    assert sync.title.startswith("DeepSpeed's ZeRO's own syncs")
    assert ".item()" not in sync.recommendation
    assert "overlap_comm" in sync.recommendation
