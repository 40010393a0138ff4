"""Lightning reports read phase by phase: a host wait outside the training step's code (the
progress bar reading logged tensors), every row of a phase named as its evidence, and the
innermost of a chain of calls of equal time named as where an action's time goes."""

from __future__ import annotations

import pytest

import profsight

from conftest import DATA

RNA_GS = DATA / "heldout" / "Lu-Zhan__RNA_GS__fit-perf_logs.txt"
RECORDED = DATA / "recorded"


def test_a_callback_that_reads_gpu_values_is_a_sync() -> None:
    """RNA_GS: the progress bar's on_train_batch_end spends 19.9 s of a 39.3 s epoch in
    .item() (3.98 s of a 7.86 s step): a host-device sync, beside the callbacks finding."""
    report = profsight.explain(str(RNA_GS))
    sync = next(f for f in report.findings if f.category == "host_device_sync")
    assert "on_train_batch_end" in sync.title and ".item()" in sync.title
    assert sync.at_stake_pct == pytest.approx(50.6, abs=0.2)
    callbacks = next(f for f in report.findings if f.category == "callbacks_logging")
    where = [e.value for e in callbacks.evidence if e.label == "where its Python time goes"]
    assert where[0].startswith("apply_func.py:122(to_item): 100% of [Callback]TQDMProgressBar")


def test_a_phase_names_all_its_rows() -> None:
    """The input phase of a SimpleProfiler report is the batch's fetch and its transfer: the
    evidence names every row it was summed from, not the first alone."""
    report = profsight.explain(str(RECORDED / "slow_dataset.simple.txt"))
    loading = next(f for f in report.findings if f.category == "data_loading")
    rows = next(e.rows for e in loading.evidence if e.label == "from the rows")
    assert "[_TrainingEpochLoop].train_dataloader_next" in rows
    assert "[Strategy]SingleDeviceStrategy.batch_to_device" in rows
    assert len(rows) == 5


def test_the_innermost_of_equal_calls_is_named() -> None:
    """optimizer_zero_grad's listing: LightningModule.optimizer_zero_grad calls the
    optimizer's zero_grad, both holding all of its time; the inner one is named."""
    report = profsight.explain(str(RECORDED / "heavy_metric.advanced.txt"))
    note = next(n for n in report.notes if "optimizer_zero_grad," in n)
    assert "optimizer.py:1023(zero_grad) holds 100%" in note
