"""`ExplainingProfiler` names its steps as torch numbers them, in a fit whose sanity check
runs validation steps first (Lightning's default ``num_sanity_val_steps=2``).

Lightning sets the torch profiler's ``step_num`` to the stage's own count before each step;
after the sanity check's validation steps the training count starts again at 0, and the
fit's training trace held ProfilerStep#2, #1, #2, #3, #4.
"""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
L = pytest.importorskip("lightning")

from profsight.lightning import ExplainingProfiler  # noqa: E402


class _Net(L.LightningModule):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch: Any, _: int) -> Any:
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def validation_step(self, batch: Any, _: int) -> None:
        x, y = batch
        self.log("val", torch.nn.functional.mse_loss(self.layer(x), y))

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader() -> Any:
    data = torch.utils.data.TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
    return torch.utils.data.DataLoader(data, batch_size=4)


def _step_names(trace: Path) -> list[str]:
    with gzip.open(trace, "rt") as f:
        events = json.load(f)["traceEvents"]
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
    return [e["name"] for e in sorted(steps, key=lambda e: float(e["ts"]))]


def test_a_fit_after_its_sanity_check_numbers_its_steps_in_order(tmp_path: Path) -> None:
    profiler = ExplainingProfiler(dirpath=tmp_path, log_explanation=False)
    trainer = L.Trainer(
        accelerator="cpu",
        max_epochs=1,
        limit_train_batches=8,
        limit_val_batches=4,
        num_sanity_val_steps=2,
        profiler=profiler,
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        enable_progress_bar=False,
        default_root_dir=tmp_path,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Lightning's notes on the toy setup
        trainer.fit(_Net(), _loader(), _loader())
    stage = profiler.reports["fit"]
    names = _step_names(stage.trace)
    numbers = [int(n.removeprefix("ProfilerStep#")) for n in names]
    assert len(numbers) >= 3
    # each step one more than the one before (it was [2, 1, 2, 3, 4])
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    assert [s.name for s in stage.report.breakdown.steps] == names
