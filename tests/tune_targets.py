"""Training loops for ``profsight tune``'s tests, each with one planted cause that a setting
fixes (the planted runs of `scenarios`, as `profsight.tune.Training` factories)."""

from __future__ import annotations

import time
import zlib
from typing import Any

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from profsight.tune import LightningTraining, Training

BATCH = 8
SAMPLES = 512
"""64 batches: a trial's 33 steps stay in the first epoch."""
SLEEP_S = 0.003


class SlowDataset(Dataset[tuple[torch.Tensor, torch.Tensor]]):
    """3 ms per sample, as a decode from disk would take: `scenarios`' slow_dataset."""

    def __init__(self) -> None:
        generator = torch.Generator().manual_seed(0)
        self.x = torch.randn(SAMPLES, 32, generator=generator)
        self.y = torch.randint(0, 4, (SAMPLES,), generator=generator)

    def __len__(self) -> int:
        return SAMPLES

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        time.sleep(SLEEP_S)
        return self.x[i], self.y[i]


def _classify(model: nn.Module, optimizer: torch.optim.Optimizer, batch: Any) -> torch.Tensor:
    x, y = batch
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    return loss


def starved() -> Training:
    """A small MLP fed by a loader in the main process: the step waits on `SlowDataset`."""
    return _fed_by(SlowDataset)


def _fed_by(dataset: Any) -> Training:
    """A small MLP under SGD, its batches from `dataset()` in the main process."""

    def loader(**settings: Any) -> DataLoader[Any]:
        return DataLoader(dataset(), **{"batch_size": BATCH, **settings})

    return Training(
        lambda: nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)),
        lambda params, **settings: torch.optim.SGD(params, lr=0.01, **settings),
        loader,
        _classify,
        batch_size=BATCH,
    )


ROWS = 1000


def tiny_batch() -> Training:
    """Batch 4 on a 32-64-10 MLP, data in memory: the step's fixed cost (dispatch, the
    optimizer's ops, the loader's collate) dwarfs its compute (`scenarios`' tiny_batch)."""

    def loader(**settings: Any) -> DataLoader[Any]:
        generator = torch.Generator().manual_seed(0)
        data = torch.utils.data.TensorDataset(
            torch.randn(4096, 32, generator=generator),
            torch.randint(0, 10, (4096,), generator=generator),
        )
        return DataLoader(data, **{"batch_size": 4, **settings})

    return Training(
        lambda: nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)),
        lambda params, **settings: torch.optim.Adam(params, lr=1e-3, **settings),
        loader,
        _classify,
        batch_size=4,
    )


class Classifier(L.LightningModule):
    """`starved`'s MLP as a LightningModule whose SGD takes a fix's optimizer settings."""

    def __init__(self, **optimizer_settings: Any) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
        self.optimizer_settings = optimizer_settings

    def training_step(self, batch: Any, i: int) -> torch.Tensor:
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.01, **self.optimizer_settings)


class EndsRaising(Classifier):
    """`Classifier`, whose end of training raises: what fails as a fit ends (a loader's
    workers shutting down) fails after the steps were timed."""

    def on_train_end(self) -> None:
        raise RuntimeError("the fit's end failed")


def ends_raising_lightning() -> LightningTraining:
    """`EndsRaising` on in-memory data."""
    return LightningTraining(EndsRaising, _in_memory, batch_size=BATCH)


def _in_memory(**settings: Any) -> DataLoader[Any]:
    """`SAMPLES` random samples for `Classifier`, in memory."""
    generator = torch.Generator().manual_seed(0)
    data = torch.utils.data.TensorDataset(
        torch.randn(SAMPLES, 32, generator=generator),
        torch.randint(0, 4, (SAMPLES,), generator=generator),
    )
    return DataLoader(data, **{"batch_size": BATCH, **settings})


class SlowForward(Classifier):
    """`Classifier`, whose forward sleeps 20 ms: Lightning runs it inside
    ``optimizer.step``, as the step's closure."""

    def training_step(self, batch: Any, i: int) -> torch.Tensor:
        time.sleep(0.02)
        return super().training_step(batch, i)


def slow_forward_lightning() -> LightningTraining:
    """`SlowForward` on in-memory data."""
    return LightningTraining(SlowForward, _in_memory, batch_size=BATCH)


def starved_lightning() -> LightningTraining:
    """`starved` under Lightning's Trainer: the loader in the main process."""

    def loader(**settings: Any) -> DataLoader[Any]:
        return DataLoader(SlowDataset(), **{"batch_size": BATCH, **settings})

    return LightningTraining(Classifier, loader, batch_size=BATCH)


class ManyParameters(nn.Module):
    """1000 separate one-row parameters: an unfused optimizer runs ~10 ops on each (the
    planted cost is several times the rest of the step, so that a loaded machine's noise
    cannot hide what the fused form saves)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows = nn.ParameterList(nn.Parameter(torch.randn(1, 16)) for _ in range(ROWS))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = torch.cat(list(self.rows)).sum(0)
        return x * weight


def _regress(model: nn.Module, optimizer: torch.optim.Optimizer, batch: Any) -> torch.Tensor:
    (x,) = batch
    loss = model(x).pow(2).mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    return loss


def _inputs(**settings: Any) -> DataLoader[Any]:
    data = torch.utils.data.TensorDataset(torch.randn(SAMPLES, 16))
    return DataLoader(data, **{"batch_size": 32, **settings})


def unfused() -> Training:
    """Adam over `ManyParameters`, one parameter at a time (``foreach=False``): the
    planted run of `scenarios`' huge_optimizer."""
    return Training(
        ManyParameters,
        lambda params, **settings: torch.optim.Adam(
            params, lr=1e-3, **{"foreach": False, **settings}
        ),
        _inputs,
        _regress,
        batch_size=32,
    )


def unfused_no_fused() -> Training:
    """`unfused`, with an optimizer factory that refuses ``fused`` (a trial that fails)."""

    def optimizer(params: Any, **settings: Any) -> torch.optim.Optimizer:
        if settings.get("fused"):
            raise RuntimeError("this optimizer has no fused form")
        return torch.optim.Adam(params, lr=1e-3, **{"foreach": False, **settings})

    return Training(ManyParameters, optimizer, _inputs, _regress, batch_size=32)


#: Bytes each `CompressedDataset` sample decompresses to (about 1 ms of zlib on one core).
DECODED = 256 * 1024


class CompressedDataset(Dataset[tuple[torch.Tensor, torch.Tensor]]):
    """Samples stored compressed and decoded per item, as images stored as PNG are: the
    loading is CPU work (zlib), not a wait, so workers share the cores with the training."""

    def __init__(self) -> None:
        generator = torch.Generator().manual_seed(0)
        raw = torch.randint(0, 16, (DECODED,), generator=generator, dtype=torch.uint8)
        self.blob = zlib.compress(raw.numpy().tobytes(), 6)
        self.y = torch.randint(0, 4, (SAMPLES,), generator=generator)

    def __len__(self) -> int:
        return SAMPLES

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        pixels = torch.frombuffer(bytearray(zlib.decompress(self.blob)), dtype=torch.uint8)
        return pixels[:32].float() + float(i % 7), self.y[i]


def decoding() -> Training:
    """`starved`'s MLP fed by `CompressedDataset` in the main process: the step waits on
    CPU-bound decoding."""
    return _fed_by(CompressedDataset)


def mid_adamw() -> Training:
    """Sixteen 256-wide layers under AdamW one parameter at a time: 32 parameters of up to
    65k elements, where the optimizer's time is part dispatch, part passes over memory."""

    def loader(**settings: Any) -> DataLoader[Any]:
        generator = torch.Generator().manual_seed(0)
        data = torch.utils.data.TensorDataset(
            torch.randn(SAMPLES, 256, generator=generator),
            torch.randint(0, 4, (SAMPLES,), generator=generator),
        )
        return DataLoader(data, **{"batch_size": 16, **settings})

    def model() -> nn.Module:
        layers: list[nn.Module] = []
        for _ in range(15):
            layers += [nn.Linear(256, 256), nn.ReLU()]
        return nn.Sequential(*layers, nn.Linear(256, 4))

    return Training(
        model,
        lambda params, **settings: torch.optim.AdamW(
            params, lr=1e-3, **{"foreach": False, **settings}
        ),
        loader,
        _classify,
        batch_size=16,
    )


def not_a_training() -> int:
    return 3


def factory_raises() -> Training:
    """A factory whose own code fails (its data is missing): the user's error, one line."""
    raise FileNotFoundError("data/train.csv")


class PerColumnScale(nn.Module):
    """A layer that scales each feature in a Python loop: a few tiny ops per column, a fix
    only the user's code can make (``x * self.scale`` at once)."""

    def __init__(self, features: int) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.ones(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        columns = [torch.tanh(column * self.scale[i]) for i, column in enumerate(x.unbind(1))]
        return torch.stack(columns, dim=1)


def python_loop() -> Training:
    """`PerColumnScale` over 64 features between two linear layers, batch 16: the step is
    the loop's tiny ops (`scenarios`' python_loop_forward), whose fix is advice."""

    def loader(**settings: Any) -> DataLoader[Any]:
        generator = torch.Generator().manual_seed(0)
        data = torch.utils.data.TensorDataset(
            torch.randn(SAMPLES, 32, generator=generator),
            torch.randint(0, 4, (SAMPLES,), generator=generator),
        )
        return DataLoader(data, **{"batch_size": 16, **settings})

    return Training(
        lambda: nn.Sequential(nn.Linear(32, 64), PerColumnScale(64), nn.Linear(64, 4)),
        lambda params, **settings: torch.optim.SGD(params, lr=0.01, **settings),
        loader,
        _classify,
        batch_size=16,
    )


class LitModel(L.LightningModule):
    """A model under Lightning: ``loss(net, batch)`` its training loss, ``optimizer(params,
    **settings)`` its optimizer (a fix's optimizer settings come as keywords)."""

    def __init__(self, net: nn.Module, loss: Any, optimizer: Any, **settings: Any) -> None:
        super().__init__()
        self.net = net
        self.loss = loss
        self.optimizer = optimizer
        self.optimizer_settings = settings

    def training_step(self, batch: Any, i: int) -> torch.Tensor:
        return self.loss(self.net, batch)  # type: ignore[no-any-return]

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return self.optimizer(self.parameters(), **self.optimizer_settings)  # type: ignore[no-any-return]


def _cross_entropy(net: nn.Module, batch: Any) -> torch.Tensor:
    x, y = batch
    return nn.functional.cross_entropy(net(x), y)


def _squares(net: nn.Module, batch: Any) -> torch.Tensor:
    (x,) = batch
    return net(x).pow(2).mean()  # type: ignore[no-any-return]


def tiny_batch_lightning() -> LightningTraining:
    """`tiny_batch` under Lightning's Trainer: batch 4, Adam; Lightning's own hooks add to the
    step's fixed cost."""
    plain = tiny_batch()

    def module(**settings: Any) -> LitModel:
        net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
        return LitModel(net, _cross_entropy, plain.optimizer, **settings)

    return LightningTraining(module, plain.loader, batch_size=4)


def unfused_lightning() -> LightningTraining:
    """`unfused` under Lightning's Trainer: Adam one parameter at a time over 1000 one-row
    parameters, set up in ``configure_optimizers``."""
    plain = unfused()

    def module(**settings: Any) -> LitModel:
        return LitModel(ManyParameters(), _squares, plain.optimizer, **settings)

    return LightningTraining(module, _inputs, batch_size=32)
