"""The demo's training for ``profsight tune --demo``: the seed's Lightning classifier
(ResNet-18 features, a linear classifier, torchmetrics accuracy; `demo.training`) on
synthetic CIFAR-sized images loaded in the main process, as ``profsight demo`` trains it
(`lightning`); and the same model as a plain loop with Adam, one parameter at a time
(`training`)."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from profsight.demo.resnet import resnet18_backbone
from profsight.demo.training import DemoClassifier, synthetic_loader
from profsight.tune.loop import LightningTraining, Training

BATCH = 32
SAMPLES = 512
NUM_CLASSES = 10


def _model() -> nn.Module:
    return nn.Sequential(resnet18_backbone(), nn.Linear(512, NUM_CLASSES))


def _loader(**settings: Any) -> DataLoader[tuple[torch.Tensor, ...]]:
    generator = torch.Generator().manual_seed(0)
    images = torch.randn(SAMPLES, 3, 32, 32, generator=generator)
    labels = torch.randint(0, NUM_CLASSES, (SAMPLES,), generator=generator)
    options = {"batch_size": BATCH, "shuffle": True, "generator": generator, **settings}
    return DataLoader(TensorDataset(images, labels), **options)


def _optimizer(params: Any, **settings: Any) -> torch.optim.Optimizer:
    return torch.optim.Adam(params, lr=1e-3, **{"foreach": False, **settings})


def _step(model: nn.Module, optimizer: torch.optim.Optimizer, batch: Any) -> torch.Tensor:
    images, labels = batch
    loss = nn.functional.cross_entropy(model(images), labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    return loss


def training() -> Training:
    return Training(_model, _optimizer, _loader, _step, batch_size=BATCH)


class TunableClassifier(DemoClassifier):
    """`DemoClassifier`, its SGD taking the optimizer settings of a fix."""

    def __init__(self, **optimizer_settings: Any) -> None:
        super().__init__(resnet18_backbone())
        self.optimizer_settings = optimizer_settings

    def configure_optimizers(self) -> torch.optim.Optimizer:
        settings = {"foreach": True, **self.optimizer_settings}
        return torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9, **settings)


def _train_loader(**settings: Any) -> DataLoader[Any]:
    loader = synthetic_loader(SAMPLES, settings.pop("batch_size", BATCH), seed=0)
    return DataLoader(loader.dataset, batch_size=loader.batch_size, **settings)


def lightning() -> LightningTraining:
    """``profsight demo``'s Lightning training (without its validation: a step's cost)."""
    return LightningTraining(TunableClassifier, _train_loader, batch_size=BATCH)


def lightning_cuda() -> LightningTraining:
    """`lightning` on the first CUDA device (``scripts/tune_cuda.py``)."""
    return LightningTraining(TunableClassifier, _train_loader, batch_size=BATCH, device="cuda")
