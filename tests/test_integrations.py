"""Profiling for the user: ``ExplainingProfiler``, ``profsight.profile`` and ``profsight demo``.

Every run here is recorded inside the test session, on the CPU, with few small steps.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("lightning")
pytest.importorskip("torchmetrics")

import lightning as L
import torch
from lightning.pytorch.utilities import rank_zero_only

import profsight
from profsight.cli.exit_codes import EXIT_USAGE
from profsight.cli.main import main
from profsight.demo.training import DemoResult, run_demo
from profsight.errors import UsageError
from profsight.lightning import ExplainingProfiler

ROW_FIELDS = {
    "name",
    "kind",
    "calls",
    "self_cpu_us",
    "cpu_total_us",
    "self_device_us",
    "device_total_us",
}
CONV_ROWS = ("aten::convolution", "aten::mkldnn_convolution", "aten::convolution_backward")


@contextmanager
def quiet() -> Iterator[None]:
    """Lightning warns about the toy setup (few workers, small dataset): not under test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


class Tiny(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.net(x)
        return out

    def training_step(self, batch: Any, _: int) -> torch.Tensor:
        x, y = batch
        return torch.nn.functional.cross_entropy(self(x), y)

    def validation_step(self, batch: Any, _: int) -> None:
        x, y = batch
        self.log("val_loss", torch.nn.functional.cross_entropy(self(x), y))

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)


def tiny_loader(batches: int) -> torch.utils.data.DataLoader[Any]:
    data = torch.utils.data.TensorDataset(
        torch.randn(batches * 4, 16), torch.randint(0, 4, (batches * 4,))
    )
    return torch.utils.data.DataLoader(data, batch_size=4)


def trainer(profiler: Any, out: Path, train_steps: int = 6, val_steps: int = 4) -> L.Trainer:
    return L.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=1,
        limit_train_batches=train_steps,
        limit_val_batches=val_steps,
        num_sanity_val_steps=0,
        profiler=profiler,
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        enable_progress_bar=False,
        default_root_dir=out,
    )


def assert_contract(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    assert doc["schema"] == "profsight/1"
    assert doc["source"]["path"].endswith((".pt.trace.json", ".pt.trace.json.gz"))
    assert doc["table"] and all(set(row) >= ROW_FIELDS for row in doc["table"])
    assert isinstance(doc["findings"], list)
    assert doc["verdict"] is not None and doc["verdict"]["bound"]
    return doc


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    with quiet():
        return run_demo(
            out=tmp_path_factory.mktemp("demo"),
            device="cpu",
            steps=5,
            batch_size=8,
            progress_bar=False,
        )


def test_demo_names_the_resnet_convolutions_as_the_main_cost(demo: DemoResult) -> None:
    # GIVEN the demo's ResNet-18 trained for 5 steps on the CPU
    # THEN its report points at the convolutions of the ResNet blocks
    assert {p.name for p in demo.fit.files} == {
        "fit-report.html",
        "fit-report.md",
        "fit-report.json",
    }
    assert "training_step" in demo.fit.trace.name
    doc = assert_contract(demo.out / "fit-report.json")
    categories = {f["category"] for f in doc["findings"]}
    top_ops = [name for name in doc["top"] if name.startswith("aten::")][:6]
    assert "compute_conv" in categories or any(op in CONV_ROWS for op in top_ops)
    assert any(op in CONV_ROWS for op in top_ops), top_ops
    assert any("BasicBlock" in row["name"] for row in doc["table"])
    assert (demo.out / "fit-report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_explaining_profiler_fit_and_validate(tmp_path: Path) -> None:
    # GIVEN ExplainingProfiler with its defaults, in a fit and then a validate
    profiler = ExplainingProfiler(dirpath=tmp_path, log_explanation=False)
    model = Tiny()
    with quiet():
        run = trainer(profiler, tmp_path)
        run.fit(model, tiny_loader(6), tiny_loader(4))
        run.validate(model, tiny_loader(4), verbose=False)
    # THEN each stage left Lightning's traces and its own three reports
    names = {p.name for p in tmp_path.iterdir()}
    assert any(
        n.startswith("fit-") and "training_step" in n and n.endswith(".pt.trace.json.gz")
        for n in names
    )
    assert any(n.startswith("validate-") and n.endswith(".pt.trace.json.gz") for n in names)
    for stage in ("fit", "validate"):
        assert {f"{stage}-report.html", f"{stage}-report.md", f"{stage}-report.json"} <= names
        assert_contract(tmp_path / f"{stage}-report.json")
    assert "training_step" in profiler.reports["fit"].trace.name
    assert "validation_step" in profiler.reports["validate"].trace.name
    assert profiler.reports["fit"].report.table.row("aten::addmm").calls > 0


def test_explaining_profiler_logs_the_explanation(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Lightning stops its logger's propagation when the root logger had no handler at import
    monkeypatch.setattr(logging.getLogger("lightning.pytorch"), "propagate", True)
    with quiet(), caplog.at_level(logging.INFO):
        trainer(ExplainingProfiler(dirpath=tmp_path), tmp_path, 5, 0).fit(Tiny(), tiny_loader(5))
    assert any(
        "Verdict" in r.getMessage() and "fit-report.html" in r.getMessage() for r in caplog.records
    )


def test_explaining_profiler_never_stops_training(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN an explanation that fails
    def broken(_: Any) -> None:
        raise ValueError("boom\nsecond line")

    monkeypatch.setattr("profsight.integrations.lightning_profiler.explain_profile", broken)
    profiler = ExplainingProfiler(dirpath=tmp_path)
    with quiet(), caplog.at_level(logging.WARNING, logger="profsight.lightning"):
        trainer(profiler, tmp_path, 5, 0).fit(Tiny(), tiny_loader(5))
    # THEN the fit ends, with one line saying why there is no report
    [record] = [r for r in caplog.records if r.name == "profsight.lightning"]
    assert (
        record.getMessage()
        == "profsight: could not explain the fit profile: ValueError: boom second line"
    )
    assert profiler.reports == {}
    assert not list(tmp_path.glob("*-report.*"))


def test_explaining_profiler_reports_on_rank_zero_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the process is rank 1 of a distributed run
    monkeypatch.setattr(rank_zero_only, "rank", 1, raising=False)
    profiler = ExplainingProfiler(dirpath=tmp_path)
    with quiet():
        trainer(profiler, tmp_path, 5, 0).fit(Tiny(), tiny_loader(5))
    # THEN it records its trace as usual and writes no report
    assert list(tmp_path.glob("fit-*.pt.trace.json.gz"))
    assert not list(tmp_path.glob("*-report.*"))


def test_profile_context_manager(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a plain training loop under profsight.profile()
    model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    x = torch.randn(8, 32)
    with profsight.profile() as prof:
        for _ in range(6):
            model(x).sum().backward()
            prof.step()
        with pytest.raises(UsageError, match="still running"):
            prof.report()
    # THEN its report has the loop's ops, and renders
    report = prof.report()
    assert prof.report() is report
    names = {row.name for row in report.table.rows}
    assert {"aten::linear", "aten::addmm", "aten::relu", "ProfilerStep*"} <= names
    assert report.table.row("ProfilerStep*").calls == 3  # the schedule's three active steps
    doc = json.loads(report.json())
    assert doc["schema"] == "profsight/1"
    assert prof.explain(width=100) is report
    assert "Verdict" in capsys.readouterr().out


def test_profile_without_steps_says_why() -> None:
    with profsight.profile() as prof:
        torch.randn(4, 4).sum()
    with pytest.raises(UsageError, match=r"prof\.step\(\)"):
        prof.report()


def test_import_profsight_stays_light() -> None:
    code = (
        "import sys, profsight; "
        "assert 'torch' not in sys.modules; "
        "assert 'profsight.integrations.lightning_profiler' not in sys.modules; "
        "assert 'profile' in profsight.__all__"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_demo_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with quiet():
        code = main(
            ["demo", "--device", "cpu", "--steps", "4", "--batch-size", "4", "--out", str(tmp_path)]
        )
    out, _ = capsys.readouterr()
    assert code == 0
    assert "Verdict" in out
    assert f"Report: {tmp_path / 'fit-report.html'}" in out
    assert (tmp_path / "fit-report.json").exists()


def test_demo_command_usage_errors(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if not torch.cuda.is_available():
        assert main(["demo", "--device", "cuda"]) == EXIT_USAGE
        assert capsys.readouterr().err.strip().endswith("sees no CUDA device")
    # without Lightning: one line with the install hint
    monkeypatch.setitem(sys.modules, "lightning", None)
    assert main(["demo"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "pip install torch==2.13.0 && pip install 'profsight[torch]'" in err


# ---- ExplainingProfiler's trace size ------------------------------------------------------


class SmallGRU(L.LightningModule):
    """A 2-layer GRU over 50 time steps: on a CPU its time loop is ~12,000 ops a step."""

    def __init__(self) -> None:
        super().__init__()
        self.gru = torch.nn.GRU(32, 64, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(64, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(x)
        logits: torch.Tensor = self.head(out[:, -1])
        return logits

    def training_step(self, batch: Any, _: int) -> torch.Tensor:
        x, y = batch
        return torch.nn.functional.cross_entropy(self(x), y)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def _gru_fit(out: Path, steps: int, **kwargs: Any) -> tuple[Path, int]:
    """The trace ExplainingProfiler explained after `steps` steps, and all the bytes of
    traces it wrote."""
    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(
        torch.randn(steps * 16, 50, 32), torch.randint(0, 4, (steps * 16,))
    )
    profiler = ExplainingProfiler(dirpath=out, log_explanation=False, **kwargs)
    with quiet():
        trainer(profiler, out, steps, 0).fit(
            SmallGRU(), torch.utils.data.DataLoader(data, batch_size=16)
        )
    traces = sorted(out.glob("*.pt.trace.json*"))
    return profiler.reports["fit"].trace, sum(p.stat().st_size for p in traces)


def test_explaining_profiler_writes_a_compressed_trace_of_the_profiled_steps(
    tmp_path: Path,
) -> None:
    # GIVEN a small GRU trained 3 steps (Lightning then records every step) and 5 steps
    # (one wait, one warm-up, three recorded), with ExplainingProfiler's defaults
    for steps in (3, 5):
        trace, size = _gru_fit(tmp_path / f"gz{steps}", steps)
        # THEN one compressed trace of the profiled steps, well under 5 MB (measured: about
        # 0.9 MB; the same trace uncompressed, as before, about 20 MB)
        assert trace.name.endswith(".pt.trace.json.gz")
        assert size < 5_000_000, size
        profile = profsight.load(trace)
        steps_seen = [n for n in profile.table().rows if n.name == "ProfilerStep*"]
        assert steps_seen and steps_seen[0].calls == 3
    # compress_traces=False writes what PyTorchProfiler writes: the same steps, uncompressed
    plain, plain_size = _gru_fit(tmp_path / "plain", 5, compress_traces=False)
    assert plain.name.endswith(".pt.trace.json")
    assert plain_size > 8 * size, (plain_size, size)
