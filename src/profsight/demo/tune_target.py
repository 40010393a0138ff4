"""The demo's training as a plain loop for ``profsight tune --demo``: the seed's ResNet-18
features and a linear classifier on synthetic CIFAR-sized images, loaded in the main
process (the demo's setting, as the seed's tutorial has it), Adam without its fused form."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from profsight.demo.resnet import resnet18_backbone
from profsight.tune.loop import Training

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
