"""The demo (``profsight demo``): profile the seed's training run and explain it.

The seed's scenario: a ResNet-18 ``feature_extractor`` and a linear ``classifier``, with
torchmetrics accuracy, trained by a Lightning ``Trainer`` on synthetic CIFAR-sized data
(3x32x32 images, 10 classes; nothing is downloaded), a few training steps and a short
validation, profiled by `ExplainingProfiler`. The training-step trace, its explanation and
``fit-report.{html,md,json}`` land in the output folder.

torchvision's ResNet-18 (without its ``fc``) is the feature extractor when torchvision is
installed, profsight's own copy (`profsight.demo.resnet`, same module names) otherwise.
"""

from __future__ import annotations

import importlib
import time
import warnings
from pathlib import Path
from typing import Any

import lightning as L
import msgspec
import torch
import torchmetrics
from torch import nn

from profsight.demo.resnet import resnet18_backbone
from profsight.errors import UsageError
from profsight.integrations.lightning_profiler import ExplainingProfiler, StageReport

NUM_CLASSES = 10
IMAGE_SHAPE = (3, 32, 32)
VALIDATION_STEPS = 3
#: Warnings about a real run's setup, not the demo's (it loads in the main process on purpose,
#: and the profiler's schedule records one cycle on purpose).
_QUIET = (
    ".*does not have many workers.*",
    ".*LeafSpec.*",
    ".*GPU available but not used.*",
    ".*Profiler clears events at the end of each cycle.*",
)


class DemoClassifier(L.LightningModule):
    """The seed's model: ResNet-18 features, a linear classifier, accuracy as a metric."""

    def __init__(self, feature_extractor: nn.Module, num_classes: int = NUM_CLASSES) -> None:
        super().__init__()
        self.feature_extractor = feature_extractor
        self.classifier = nn.Linear(512, num_classes)
        self.train_accuracy = torchmetrics.classification.MulticlassAccuracy(num_classes)
        self.val_accuracy = torchmetrics.classification.MulticlassAccuracy(num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.classifier(self.feature_extractor(x))
        return logits

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], _: int) -> torch.Tensor:
        x, y = batch
        logits = self(x)
        loss = nn.functional.cross_entropy(logits, y)
        self.train_accuracy(logits, y)
        self.log("train_acc", self.train_accuracy, prog_bar=True)
        return loss

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], _: int) -> None:
        x, y = batch
        logits = self(x)
        self.val_accuracy(logits, y)
        self.log("val_acc", self.val_accuracy, prog_bar=True)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        # SGD with momentum, as torchvision's ResNet recipe trains it, multi-tensor (on a CPU
        # torch defaults to the per-parameter loop): the profile then shows the model's cost
        return torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9, foreach=True)


class DemoResult(msgspec.Struct, frozen=True):
    out: Path
    device: str
    backbone: str
    """``torchvision`` or ``profsight`` (whose ResNet-18 was used)."""
    fit: StageReport
    seconds: float
    """Wall time of the training run, explanation included."""


def feature_extractor() -> tuple[nn.Module, str]:
    """torchvision's ResNet-18 minus ``fc`` when torchvision is installed, else ours."""
    try:
        models = importlib.import_module("torchvision.models")
    except ImportError:
        return resnet18_backbone(), "profsight"
    model = models.resnet18(weights=None)
    return nn.Sequential(*list(model.children())[:-1], nn.Flatten()), "torchvision"


def resolve_device(device: str) -> str:
    """``auto`` is ``cuda`` when a CUDA device is available, else ``cpu``."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise UsageError(f"--device cuda: torch {torch.__version__} sees no CUDA device")
    if device not in ("cpu", "cuda"):
        raise UsageError(f"--device {device}: use cpu, cuda or auto")
    return device


def synthetic_loader(samples: int, batch_size: int, seed: int) -> torch.utils.data.DataLoader[Any]:
    generator = torch.Generator().manual_seed(seed)
    images = torch.randn(samples, *IMAGE_SHAPE, generator=generator)
    labels = torch.randint(0, NUM_CLASSES, (samples,), generator=generator)
    return torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(images, labels), batch_size=batch_size
    )


def run_demo(
    *,
    out: Path,
    device: str = "auto",
    steps: int = 8,
    batch_size: int = 32,
    progress_bar: bool = True,
) -> DemoResult:
    """Train and profile the seed's model; the fit stage's report is in the result."""
    if steps < 1 or batch_size < 1:
        raise UsageError("--steps and --batch-size must be 1 or more")
    device = resolve_device(device)
    started = time.perf_counter()
    torch.manual_seed(0)
    out.mkdir(parents=True, exist_ok=True)
    backbone, backbone_name = feature_extractor()
    profiler = ExplainingProfiler(dirpath=out, filename="demo", log_explanation=False)
    trainer = L.Trainer(
        accelerator="gpu" if device == "cuda" else "cpu",
        devices=1,
        max_epochs=1,
        limit_train_batches=steps,
        limit_val_batches=VALIDATION_STEPS,
        num_sanity_val_steps=0,
        profiler=profiler,
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        enable_progress_bar=progress_bar,
        default_root_dir=out,
    )
    with warnings.catch_warnings():
        for message in _QUIET:
            warnings.filterwarnings("ignore", message=message)
        trainer.fit(
            DemoClassifier(backbone),
            synthetic_loader(steps * batch_size, batch_size, seed=0),
            synthetic_loader(VALIDATION_STEPS * batch_size, batch_size, seed=1),
        )
    fit = profiler.reports.get("fit")
    if fit is None:
        raise RuntimeError(f"the profiler wrote no report of the training run into {out}")
    return DemoResult(out, device, backbone_name, fit, time.perf_counter() - started)
