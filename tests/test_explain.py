"""Every row gets a kind and a meaning; explanations of traces, tables and live profilers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import profsight
from profsight.knowledge.ops import lookup_op
from profsight.knowledge.rows import RowKind, classify
from profsight.model.table import ProfilerTable, Row
from profsight.report.annotate import explain_row, row_kind
from profsight.samples import sample_trace

from conftest import DATA, real_traces

TABLES = DATA / "tables"
CONTRACT_ROW_FIELDS = {
    "name",
    "kind",
    "calls",
    "self_cpu_us",
    "cpu_total_us",
    "self_device_us",
    "device_total_us",
    "meaning",
}


def _weighted_other_share(table: ProfilerTable) -> float:
    """Time-weighted share of rows left as `other` (the profiler's own overhead rows aside:
    they are other, and say so)."""
    total = other = 0.0
    for r in table.rows:
        weight = r.self_cpu_us + r.self_device_us
        total += weight
        op = lookup_op(r.name)
        overhead = op is not None and op.category == "profiler"
        if row_kind(r, table) is RowKind.OTHER and not overhead:
            other += weight
    return other / total if total else 0.0


SHARED = real_traces()


def test_real_traces_rows_get_a_specific_kind() -> None:
    """In every real trace, >= 95% of the time-weighted rows get a kind other than `other`."""
    worst = 0.0
    for path in SHARED:
        try:
            profile = profsight.load(path)
        except profsight.InputError:
            continue
        share = _weighted_other_share(profile.table())
        worst = max(worst, share)
        assert share <= 0.05, (path, share)
    assert worst <= 0.05


@pytest.mark.parametrize("path", sorted(TABLES.glob("*.txt")), ids=lambda p: p.name)
def test_every_printed_row_gets_kind_and_meaning(path: Path) -> None:
    report = profsight.explain(path)
    assert report.rows
    for e in report.rows:
        assert e.explanation.meaning
        assert e.explanation.layer
    assert _weighted_other_share(report.table) <= 0.05


@pytest.mark.parametrize(
    ("name", "event_kind", "kind"),
    [
        ("ProfilerStep*", "annotation", RowKind.STEP),
        (
            "[pl][profile][Strategy]SingleDeviceStrategy.validation_step",
            "annotation",
            RowKind.STRATEGY,
        ),
        (
            "[pl][profile][_TrainingEpochLoop].train_dataloader_next",
            "annotation",
            RowKind.DATALOADER,
        ),
        ("[pl][profile]run_training_epoch", "annotation", RowKind.LIGHTNING),
        (
            "[pl][profile][Callback]ModelCheckpoint.on_train_epoch_end",
            "annotation",
            RowKind.CALLBACK,
        ),
        (
            "[pl][module]torchvision.models.resnet.BasicBlock: feature_extractor.4.0",
            "annotation",
            RowKind.MODULE,
        ),
        (
            "[pl][module]torchmetrics.classification.accuracy.MulticlassAccuracy: acc",
            "annotation",
            RowKind.METRIC,
        ),
        ("Optimizer.step#Adam.step", "annotation", RowKind.OPTIMIZER),
        (
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            "annotation",
            RowKind.DATALOADER,
        ),
        ("aten::cudnn_convolution", "cpu_op", RowKind.ATEN),
        ("autograd::engine::evaluate_function: ConvolutionBackward0", "cpu_op", RowKind.BACKWARD),
        ("cudaLaunchKernel", "runtime", RowKind.RUNTIME),
        ("cudaStreamSynchronize", "runtime", RowKind.SYNC),
        ("maxwell_sgemm_32x128_nn", "kernel", RowKind.KERNEL),
        ("Memcpy HtoD (Pageable -> Device)", "memcpy", RowKind.MEMCPY),
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "kernel", RowKind.COMMUNICATION),
        ("nccl:all_reduce", "cpu_op", RowKind.COMMUNICATION),
        ("my_label", "annotation", RowKind.USER),
        # printed tables carry no event kinds: the name alone decides
        ("cudaDeviceSynchronize", "unknown", RowKind.SYNC),
        (
            "5x_cudnn_maxwell_scudnn_winograd_128x128_ldg1_ldg4_tile148n_nt",
            "unknown",
            RowKind.KERNEL,
        ),
        ("Memset (Device)", "unknown", RowKind.MEMSET),
        ("run_training_epoch", "lightning_action", RowKind.LIGHTNING),
        ("[Strategy]SingleDeviceStrategy.training_step", "lightning_action", RowKind.STRATEGY),
    ],
)
def test_row_kinds(name: str, event_kind: str, kind: RowKind) -> None:
    assert classify(name, event_kind) is kind


def _row(name: str, self_cpu: float, total: float, kind: str = "annotation", **kw: float) -> Row:
    return Row(
        name=name,
        event_kind=kind,
        calls=int(kw.get("calls", 1)),
        self_cpu_us=self_cpu,
        cpu_total_us=total,
        self_device_us=kw.get("self_dev", 0.0),
        device_total_us=kw.get("dev", 0.0),
        self_cpu_pct=0.0,
        cpu_total_pct=0.0,
        self_device_pct=0.0,
    )


def _table(*rows: Row) -> ProfilerTable:
    return ProfilerTable(
        rows=rows,
        group_by="name",
        self_cpu_total_us=1000.0,
        self_device_total_us=100.0,
        has_device=True,
        has_memory=False,
        has_device_memory=False,
        has_shapes=False,
    )


def test_the_seeds_rows_are_explained_as_the_seed_does() -> None:
    block = _row("[pl][module]torchvision.models.resnet.BasicBlock: layer1.0", 360.0, 400.0)
    conv_block = _row("[pl][module]torchvision.models.resnet.BasicBlock: layer2.0", 10.0, 400.0)
    conv = _row("aten::conv2d", 1.0, 380.0, "cpu_op")
    sgemm = _row("maxwell_sgemm_32x128_nn", 0.0, 0.0, "kernel", self_dev=50.0, dev=50.0)
    table = _table(block, conv_block, conv, sgemm)
    high_self = explain_row(block, table)
    assert high_self.kind is RowKind.MODULE
    assert "skip connection" in high_self.meaning
    assert high_self.reading.startswith("high self, low children")
    assert "own Python in forward()" in high_self.reading
    low_self = explain_row(conv_block, table)
    assert low_self.reading.startswith("low self, high total")
    conv_info = explain_row(conv, table)
    assert "one call seen at four levels" in conv_info.meaning
    kernel = explain_row(sgemm, table)
    assert kernel.meaning.startswith("cuBLAS FP32 GEMM, tile 32x128, NN, Maxwell")
    assert "50.0% of all device time" in kernel.reading


def test_trace_explanation_names_the_children(tmp_path: Path) -> None:
    report = profsight.explain(sample_trace())
    by_name = {e.row.name: e.explanation for e in report.rows}
    backward = by_name["[pl][profile][Strategy]SingleDeviceStrategy.backward"]
    assert backward.kind is RowKind.STRATEGY
    assert "mainly autograd::engine::evaluate_function: ConvolutionBackward0" in backward.reading
    assert by_name["ProfilerStep*"].kind is RowKind.STEP
    assert any("No CUDA time" in n for n in report.notes)
    assert report.tree is not None


def test_json_contract_for_a_trace() -> None:
    doc = json.loads(profsight.explain(DATA / "minimal/minimal.pt.trace.json").json())
    assert doc["schema"] == "profsight/1"
    assert doc["source"]["format"] == "kineto"
    rows = {r["name"]: r for r in doc["table"]}
    assert set(rows["aten::addmm"]) >= CONTRACT_ROW_FIELDS
    assert rows["aten::addmm"]["kind"] == "aten"
    assert rows["volta_sgemm_32x128_tn"]["kind"] == "kernel"
    assert rows["volta_sgemm_32x128_tn"]["meaning"].startswith("cuBLAS FP32 GEMM, tile 32x128")


def test_explain_printed_table_text() -> None:
    text = (TABLES / "lightning-pytorchprofiler-genslm-deepspeed-1.txt").read_text()
    report = profsight.explain(text)
    assert report.format == "torch_table"
    assert report.tree is None
    kinds = {e.row.name: e.explanation.kind for e in report.rows}
    assert kinds["[pl][profile][Strategy]DeepSpeedStrategy.backward"] is RowKind.STRATEGY
    assert kinds["record_param_comms"] is RowKind.COMMUNICATION
    doc = json.loads(report.json())
    assert doc["tree"] is None
    assert doc["source"]["tables"][0]["title"] == "Profile stats for: records"


def test_explain_lightning_simple_report() -> None:
    report = profsight.explain(TABLES / "lightning-ai-chess-bot-1.txt")
    assert report.format == "lightning_simple"
    assert any("optimizer_step contains the closure" in n for n in report.notes)
    kinds = {e.row.name: e.explanation.kind for e in report.rows}
    assert kinds["run_training_epoch"] is RowKind.LIGHTNING


def test_explain_a_live_profiler() -> None:
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        torch.nn.functional.relu(torch.randn(64, 64) @ torch.randn(64, 64))
    report = profsight.explain(prof)
    names = {e.row.name for e in report.rows}
    assert {"aten::mm", "aten::relu"} <= names
    assert report.source.startswith("<torch.profiler")
    ours = {r.name: r for r in report.table.rows}
    theirs = {e.key: e for e in prof.key_averages()}
    assert ours["aten::mm"].calls == theirs["aten::mm"].count
    assert ours["aten::mm"].cpu_total_us == pytest.approx(
        theirs["aten::mm"].cpu_time_total, abs=2.0
    )


def test_explain_rejects_what_it_cannot_read() -> None:
    with pytest.raises(TypeError):
        profsight.explain(42)
    with pytest.raises(profsight.InputError):
        profsight.explain("no such file.json")
    with pytest.raises(profsight.InputError):
        profsight.explain("just some\nprose, not a table")
