"""Small training runs, each with ONE planted performance bottleneck, recorded with the real
profilers for tests of profsight's bottleneck analyses.

Every `Scenario` records the same run two ways: with plain ``torch.profiler`` (one
``prof.step()`` per training step) and with ``lightning.Trainer(profiler=PyTorchProfiler(...))``.
Both use the schedule ``wait=1, warmup=1, active=3``, so a trace holds three training steps.
The planted cost is sized to be the clearly dominant cause (at least twice the next one) on a
2-core CPU, and each recording takes a few seconds. Recordings run with one intra-op thread
(restored afterwards): with two, a busy machine (other tests on the same 2 cores) turns every
small op into a multi-millisecond OpenMP barrier wait and buries the planted cost.

Lightning notes:

* ``PyTorchProfiler`` runs ONE torch profiler for training and validation steps alike and
  names the trace file after the step action whose ``stop`` saved it; `record_lightning`
  returns the ``*training_step*.pt.trace.json`` file.
* In ``validation_heavy`` validation runs inside that file's profiled window: with
  ``val_check_interval=3`` the validation loop runs after the third training batch (training
  steps 2-4 are recorded), each of its 3 batches is a ``ProfilerStep`` window of its own and
  shows ``[pl][profile][Strategy]SingleDeviceStrategy.validation_step``. Lightning counts
  validation steps on the same schedule, so a fourth validation batch would end the recording
  and save it under the validation_step name; the val batches are large instead of many.
* Lightning's ``ProfilerStep`` windows run from one ``training_step`` end to the next, so each
  batch straddles two windows; the first window's backward and optimizer ops have no
  ``Optimizer.step#``, ``optimizer_step`` or ``run_training_batch`` row above them (those ranges
  began before recording started).
* Without ``with_stack`` plain torch records no ``nn.Module`` rows (``with_modules`` only
  covers TorchScript), so in plain traces the metric, the callback and validation are marked
  with ``record_function`` labels: ``metrics: MulticlassAUROC``, ``callback: heavy_logging``
  and ``validation``.
"""

from __future__ import annotations

import itertools
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightning as L
import torch
import torch.nn.functional as F
import torchmetrics
from lightning.pytorch.profilers import AdvancedProfiler, PyTorchProfiler, SimpleProfiler
from torch import Tensor, nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule
from torch.utils.data import DataLoader, Dataset, TensorDataset

Batch = tuple[Tensor, Tensor]
OptimizerFactory = Callable[[Iterable[nn.Parameter]], torch.optim.Optimizer]

PLAIN_STEPS = 5
"""Training steps of a plain run: wait 1 + warmup 1 + active 3 (the 5th ``prof.step()``
exports the trace)."""
TINY_BATCH_SCALE = 4
"""The tiny-batch run's fixed twin uses this many times its batch (the replay's
``BATCH_SCALE``)."""
LIGHTNING_BATCHES = 6
"""``limit_train_batches`` of a Lightning run (the trace is saved at the 5th batch's end)."""
REPORT_BATCHES = 30
"""``limit_train_batches`` of a run under Lightning's SimpleProfiler or AdvancedProfiler: they
record the whole fit, first batch included, and 30 batches keep its one-time costs (oneDNN
primitives, allocator growth: about 10x a warm batch of the tiny-batch MLP on this CPU, which
read as data loading in 1 of 5 recordings of 6 batches) to a few % of the averages."""
CALLBACK_LABEL = "callback: heavy_logging"
METRIC_LABEL = "metrics: MulticlassAUROC"
VALIDATION_LABEL = "validation"


@dataclass(frozen=True)
class Scenario:
    name: str
    expected: str
    """The finding category the planted bottleneck should produce."""
    description: str
    """One line: what is planted."""
    plain: Callable[[Path], Path]
    """Records the scenario with plain ``torch.profiler`` into a directory; returns the trace."""
    lightning: Callable[..., Path]
    """Records it with Lightning's ``PyTorchProfiler``; returns the training_step trace.
    With ``profiler="simple"`` or ``"advanced"``, with that Lightning profiler instead;
    returns its report."""
    text_profilers: tuple[str, ...] = ()
    """The Lightning report profilers (``simple``, ``advanced``) whose actions can show the
    planted cost (they time Lightning's actions, not ops)."""
    fixed: Callable[[Path], Path] | None = None
    """Records the same run with the planted cost fixed as the finding recommends (plain
    ``torch.profiler``): the measured saving the what-if replay must predict."""
    fixed_lightning: Callable[[Path], Path] | None = None
    """The fixed twin under Lightning's ``PyTorchProfiler``."""
    fix: str = ""
    """One line: what the fixed twin changes."""
    per_sample: int = 1
    """The fixed twin's batch over the planted run's: savings are compared per sample."""


# --------------------------------------------------------------------------- recording

#: The printed tables users paste, as `write_tables` names them beside a trace: torch's
#: ``key_averages().table(...)`` with these arguments, and Lightning's own report.
TABLE_FORMS: dict[str, dict[str, Any]] = {
    "self_cpu_top20": {"sort_by": "self_cpu_time_total", "row_limit": 20},
    "cpu_total_top20": {"sort_by": "cpu_time_total", "row_limit": 20},
    "full": {"sort_by": "cpu_time_total", "row_limit": -1},
}
LIGHTNING_REPORT = "lightning_report"
#: Lightning's report profilers, by the name `Scenario.text_profilers` uses.
REPORT_PROFILERS: dict[str, Any] = {"simple": SimpleProfiler, "advanced": AdvancedProfiler}
"""Lightning's ``fit-*.txt`` (``PyTorchProfiler(dirpath=..., filename=...)``)."""


def table_path(trace: Path, form: str) -> Path:
    """Where the printed table `form` of the run recorded in `trace` is kept."""
    if form == LIGHTNING_REPORT:
        return trace.parent / "fit-fit.txt"
    return trace.parent / f"{trace.name.split('.')[0]}.{form}.txt"


def write_tables(trace: Path, averages: Any) -> None:
    """Print `averages` (an ``EventList.key_averages()``) in every form of `TABLE_FORMS`."""
    for form, kwargs in TABLE_FORMS.items():
        table_path(trace, form).write_text(averages.table(**kwargs) + "\n")


def _schedule() -> Any:
    return schedule(wait=1, warmup=1, active=3, repeat=1)


@contextmanager
def _one_thread() -> Iterator[None]:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _sgd(params: Iterable[nn.Parameter]) -> torch.optim.Optimizer:
    return torch.optim.SGD(params, lr=0.01)


def _adam(params: Iterable[nn.Parameter]) -> torch.optim.Optimizer:
    return torch.optim.Adam(params, lr=1e-3)


def _adam_fused(params: Iterable[nn.Parameter]) -> torch.optim.Optimizer:
    """Adam's fused kernel (torch >= 2.4 on CPU): one op over all parameters. (foreach=True
    gains nothing under the profiler on CPU, where _foreach_ ops run one op per tensor, each
    recorded: measured 14.4 ms vs 14.1 ms a step; unprofiled, foreach 3.4 ms and fused 1.0 ms
    against the for-loop's 6.1 ms.)"""
    return torch.optim.Adam(params, lr=1e-3, fused=True)


def _adam_single_tensor(params: Iterable[nn.Parameter]) -> torch.optim.Optimizer:
    return torch.optim.Adam(params, lr=1e-3, foreach=False)


def _data(n: int, shape: tuple[int, ...], classes: int = 10) -> TensorDataset:
    return TensorDataset(torch.randn(n, *shape), torch.randint(0, classes, (n,)))


def _loader(dataset: Dataset[Any], batch: int) -> DataLoader[Any]:
    return DataLoader(dataset, batch_size=batch, num_workers=0)


def record_plain(
    out: Path,
    name: str,
    model: nn.Module,
    loader: Iterable[Batch],
    make_optimizer: OptimizerFactory,
    after_step: Callable[[], None] | None = None,
) -> Path:
    """A plain training loop of `PLAIN_STEPS` steps under ``torch.profiler.profile``.

    `after_step` runs inside each step, after ``optimizer.step()`` and before ``prof.step()``.
    """
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.plain.pt.trace.json"

    def export(prof: profile) -> None:
        prof.export_chrome_trace(str(path))
        write_tables(path, prof.key_averages())

    optimizer = make_optimizer(model.parameters())
    model.train()
    with (
        _one_thread(),
        profile(
            activities=[ProfilerActivity.CPU],
            record_shapes=True,
            profile_memory=True,
            with_modules=True,
            schedule=_schedule(),
            on_trace_ready=export,
        ) as prof,
    ):
        for x, y in itertools.islice(loader, PLAIN_STEPS):
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()  # type: ignore[no-untyped-call]
            optimizer.step()
            if after_step is not None:
                after_step()
            prof.step()
    if not path.exists():
        raise RuntimeError(f"torch.profiler exported no trace for {name}")
    return path


class LitClassifier(L.LightningModule):
    """Wraps a classifier ``net``: cross-entropy training and validation steps."""

    def __init__(self, net: nn.Module, make_optimizer: OptimizerFactory) -> None:
        super().__init__()
        self.net = net
        self.make_optimizer = make_optimizer

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)  # type: ignore[no-any-return]

    def training_step(self, batch: Batch, batch_idx: int) -> Tensor:
        x, y = batch
        return F.cross_entropy(self(x), y)

    def validation_step(self, batch: Batch, batch_idx: int) -> Tensor:
        x, y = batch
        return F.cross_entropy(self(x), y)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return self.make_optimizer(self.parameters())


def record_lightning(
    out: Path,
    module: L.LightningModule,
    train: DataLoader[Any],
    *,
    val: DataLoader[Any] | None = None,
    callbacks: list[L.Callback] | None = None,
    limit_train_batches: int = LIGHTNING_BATCHES,
    profiler_kind: str = "pytorch",
    **trainer_kwargs: Any,
) -> Path:
    """``Trainer.fit`` with ``PyTorchProfiler``; returns the training_step trace it wrote.
    `profiler_kind` ``simple`` or ``advanced``: with that profiler, returning its report."""
    out.mkdir(parents=True, exist_ok=True)
    pattern = "*training_step*.pt.trace.json"
    before = set(out.glob(pattern))
    profiler: Any
    if profiler_kind in REPORT_PROFILERS:
        profiler = REPORT_PROFILERS[profiler_kind](dirpath=str(out), filename="fit")
        if limit_train_batches == LIGHTNING_BATCHES:
            limit_train_batches = REPORT_BATCHES
    else:
        profiler = PyTorchProfiler(
            dirpath=str(out),
            filename="fit",
            record_module_names=True,
            record_shapes=True,
            profile_memory=True,
            schedule=_schedule(),
        )
    with _one_thread(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = L.Trainer(
            max_epochs=1,
            limit_train_batches=limit_train_batches,
            limit_val_batches=trainer_kwargs.pop("limit_val_batches", 0 if val is None else 1.0),
            num_sanity_val_steps=0,
            callbacks=callbacks,
            profiler=profiler,
            accelerator="cpu",
            devices=1,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            **trainer_kwargs,
        )
        trainer.fit(module, train_dataloaders=train, val_dataloaders=val)
    if profiler_kind in REPORT_PROFILERS:
        return out / "fit-fit.txt"
    new = sorted(set(out.glob(pattern)) - before)
    if len(new) != 1:
        raise RuntimeError(f"expected one new training_step trace in {out}, found {new}")
    if profiler.function_events is not None:
        write_tables(new[0], profiler.function_events.key_averages())
    return new[0]


# --------------------------------------------------------------------------- models


def _mlp(features: int, hidden: int, classes: int = 10) -> nn.Module:
    return nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, classes))


class PerFeatureNorm(nn.Module):
    """A hand-rolled batch norm that handles each feature separately in a Python loop: ~15
    tiny ops per feature forward (the running statistics need no backward), 3 backward
    nodes."""

    def __init__(self, features: int, momentum: float = 0.1, eps: float = 1e-5) -> None:
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        self.running_mean: Tensor
        self.running_var: Tensor
        self.register_buffer("running_mean", torch.zeros(features))
        self.register_buffer("running_var", torch.ones(features))

    def forward(self, x: Tensor) -> Tensor:
        columns = []
        for i, column in enumerate(x.unbind(1)):
            with torch.no_grad():
                mean, var = self.running_mean[i], self.running_var[i]
                if self.training:
                    mean.mul_(1 - self.momentum).add_(column.mean(), alpha=self.momentum)
                    var.mul_(1 - self.momentum).add_(column.var(), alpha=self.momentum)
                inv_std = torch.rsqrt(var + self.eps)
            columns.append(torch.tanh((column - mean) * inv_std))
        return torch.stack(columns, dim=1)


class VectorNorm(PerFeatureNorm):
    """PerFeatureNorm's math on all features at once (the fixed twin)."""

    def forward(self, x: Tensor) -> Tensor:
        with torch.no_grad():
            if self.training:
                self.running_mean.mul_(1 - self.momentum).add_(x.mean(0), alpha=self.momentum)
                self.running_var.mul_(1 - self.momentum).add_(x.var(0), alpha=self.momentum)
            inv_std = torch.rsqrt(self.running_var + self.eps)
        return torch.tanh((x - self.running_mean) * inv_std)


class LoopyNet(nn.Module):
    def __init__(
        self, features: int = 32, width: int = 128, classes: int = 10, vectorised: bool = False
    ) -> None:
        super().__init__()
        self.inp = nn.Linear(features, width)
        self.loop = VectorNorm(width) if vectorised else PerFeatureNorm(width)
        self.head = nn.Linear(width, classes)

    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.loop(self.inp(x)))  # type: ignore[no-any-return]


class ExpensiveSkipBlock(nn.Module):
    """A residual block whose skip connection does many elementwise ops in Python."""

    def __init__(self, channels: int, skip_ops: int, fused: bool = False) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.skip_ops = skip_ops
        self.fused = fused

    def forward(self, x: Tensor) -> Tensor:
        out = self.conv2(F.relu(self.conv1(x)))
        if self.fused:  # the loop's closed form: the fixed twin
            decay = 0.9**self.skip_ops
            skip = x * decay + x * (1 - decay)
        else:
            skip = x.clone()
            for _ in range(self.skip_ops):
                skip = skip * 0.9 + x * 0.1
        return F.relu(out + skip)


class SkipNet(nn.Module):
    def __init__(
        self, channels: int = 4, skip_ops: int = 60, classes: int = 10, fused: bool = False
    ) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1, bias=False)
        self.block = ExpensiveSkipBlock(channels, skip_ops, fused)
        self.head = nn.Linear(channels, classes)

    def forward(self, x: Tensor) -> Tensor:
        x = self.block(self.stem(x))
        return self.head(x.mean(dim=(2, 3)))  # type: ignore[no-any-return]


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x: Tensor) -> Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.down(x))


class SmallResNet(nn.Module):
    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32))
        self.layer1 = BasicBlock(32, 32)
        self.layer2 = BasicBlock(32, 64, stride=2)
        self.layer3 = BasicBlock(64, 64)
        self.head = nn.Linear(64, classes)

    def forward(self, x: Tensor) -> Tensor:
        x = F.relu(self.stem(x))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.head(x.mean(dim=(2, 3)))  # type: ignore[no-any-return]


class SmallTransformer(nn.Module):
    def __init__(self, d_model: int = 256, layers: int = 2, classes: int = 10) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(
                d_model, nhead=8, dim_feedforward=1024, dropout=0.0, batch_first=True
            )
            for _ in range(layers)
        )
        self.head = nn.Linear(d_model, classes)

    def forward(self, x: Tensor) -> Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.head(x.mean(dim=1))  # type: ignore[no-any-return]


class ManyParams(nn.Module):
    """A linear layer whose weight is stored as many separate one-row parameters."""

    def __init__(self, features: int = 32, rows: int = 300, classes: int = 10) -> None:
        super().__init__()
        self.rows = nn.ParameterList(
            nn.Parameter(torch.randn(features) / features**0.5) for _ in range(rows)
        )
        self.head = nn.Linear(rows, classes)

    def forward(self, x: Tensor) -> Tensor:
        weight = torch.stack(list(self.rows))
        return self.head(F.relu(x @ weight.T))  # type: ignore[no-any-return]


class SlowDataset(Dataset[Batch]):
    """Synthetic samples that take `delay_s` each to 'load'."""

    def __init__(self, n: int, features: int, delay_s: float = 0.003, classes: int = 10) -> None:
        self.x = torch.randn(n, features)
        self.y = torch.randint(0, classes, (n,))
        self.delay_s = delay_s

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int) -> Batch:
        time.sleep(self.delay_s)
        return self.x[i], self.y[i]


class PreBatched(Dataset[Batch]):
    """Ready-made batches, served whole by ``DataLoader(batch_size=None)`` (cheap to load)."""

    def __init__(self, batches: int, batch: int, shape: tuple[int, ...], classes: int = 10) -> None:
        self.x = torch.randn(batches, batch, *shape)
        self.y = torch.randint(0, classes, (batches, batch))

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int) -> Batch:
        return self.x[i], self.y[i]


# --------------------------------------------------------------------------- scenarios


def _n_samples(batch: int) -> int:
    return batch * max(PLAIN_STEPS, LIGHTNING_BATCHES, REPORT_BATCHES)


# 1. slow_dataset -----------------------------------------------------------------------


def _slow_dataset_loader() -> DataLoader[Any]:
    return _loader(SlowDataset(_n_samples(8), 32), 8)


def slow_dataset_plain(out: Path) -> Path:
    torch.manual_seed(0)
    return record_plain(out, "slow_dataset", _mlp(32, 64), _slow_dataset_loader(), _sgd)


def slow_dataset_lightning(out: Path, profiler: str = "pytorch") -> Path:
    torch.manual_seed(0)
    return record_lightning(
        out, LitClassifier(_mlp(32, 64), _sgd), _slow_dataset_loader(), profiler_kind=profiler
    )


def slow_dataset_fixed(out: Path) -> Path:
    torch.manual_seed(0)
    loader = _loader(SlowDataset(_n_samples(8), 32, delay_s=0.0), 8)
    return record_plain(out, "slow_dataset_fixed", _mlp(32, 64), loader, _sgd)


def slow_dataset_fixed_lightning(out: Path) -> Path:
    torch.manual_seed(0)
    loader = _loader(SlowDataset(_n_samples(8), 32, delay_s=0.0), 8)
    return record_lightning(out, LitClassifier(_mlp(32, 64), _sgd), loader)


# 2. tiny_batch -------------------------------------------------------------------------


def _tiny_batch_loader() -> DataLoader[Any]:
    return _loader(_data(_n_samples(4), (32,)), 4)


def tiny_batch_plain(out: Path) -> Path:
    torch.manual_seed(0)
    return record_plain(out, "tiny_batch", _mlp(32, 64), _tiny_batch_loader(), _sgd)


def tiny_batch_lightning(out: Path, profiler: str = "pytorch") -> Path:
    torch.manual_seed(0)
    return record_lightning(
        out, LitClassifier(_mlp(32, 64), _sgd), _tiny_batch_loader(), profiler_kind=profiler
    )


def tiny_batch_fixed(out: Path) -> Path:
    torch.manual_seed(0)
    loader = _loader(_data(_n_samples(4 * TINY_BATCH_SCALE), (32,)), 4 * TINY_BATCH_SCALE)
    return record_plain(out, "tiny_batch_fixed", _mlp(32, 64), loader, _sgd)


def tiny_batch_fixed_lightning(out: Path) -> Path:
    torch.manual_seed(0)
    loader = _loader(_data(_n_samples(4 * TINY_BATCH_SCALE), (32,)), 4 * TINY_BATCH_SCALE)
    return record_lightning(out, LitClassifier(_mlp(32, 64), _sgd), loader)


# 3. heavy_metric -----------------------------------------------------------------------

_METRIC_SAMPLES = 50_000


def _auroc() -> torchmetrics.Metric:
    return torchmetrics.classification.MulticlassAUROC(num_classes=10, thresholds=None)


def _metric_inputs() -> Batch:
    """50k held-out predictions and targets, scored with the metric every step."""
    preds = torch.randn(_METRIC_SAMPLES, 10).softmax(dim=-1)
    return preds, torch.randint(0, 10, (_METRIC_SAMPLES,))


class LitWithMetric(LitClassifier):
    def __init__(self, net: nn.Module, make_optimizer: OptimizerFactory) -> None:
        super().__init__(net, make_optimizer)
        self.auroc = _auroc()
        self.eval_preds, self.eval_target = _metric_inputs()

    def training_step(self, batch: Batch, batch_idx: int) -> Tensor:
        loss = super().training_step(batch, batch_idx)
        self.auroc(self.eval_preds, self.eval_target)
        self.log("auroc", self.auroc, on_step=True, on_epoch=False)
        return loss


def _metric_loader() -> DataLoader[Any]:
    return _loader(_data(_n_samples(16), (32,)), 16)


def heavy_metric_plain(out: Path) -> Path:
    torch.manual_seed(0)
    model = _mlp(32, 64)
    metric = _auroc()
    preds, target = _metric_inputs()

    def score() -> None:
        with record_function(METRIC_LABEL):
            metric(preds, target)  # update + compute of the batch value

    return record_plain(out, "heavy_metric", model, _metric_loader(), _sgd, after_step=score)


def heavy_metric_lightning(out: Path, profiler: str = "pytorch") -> Path:
    torch.manual_seed(0)
    return record_lightning(
        out, LitWithMetric(_mlp(32, 64), _sgd), _metric_loader(), profiler_kind=profiler
    )


def heavy_metric_fixed(out: Path) -> Path:
    """The metric computed outside the profiled steps (every N steps, N past the window)."""
    torch.manual_seed(0)
    return record_plain(out, "heavy_metric_fixed", _mlp(32, 64), _metric_loader(), _sgd)


def heavy_metric_fixed_lightning(out: Path) -> Path:
    torch.manual_seed(0)
    return record_lightning(out, LitClassifier(_mlp(32, 64), _sgd), _metric_loader())


# 4. huge_optimizer ---------------------------------------------------------------------


def _optimizer_loader() -> DataLoader[Any]:
    return _loader(_data(_n_samples(16), (32,)), 16)


def huge_optimizer_plain(out: Path) -> Path:
    torch.manual_seed(0)
    return record_plain(
        out, "huge_optimizer", ManyParams(), _optimizer_loader(), _adam_single_tensor
    )


def huge_optimizer_lightning(out: Path, profiler: str = "pytorch") -> Path:
    torch.manual_seed(0)
    module = LitClassifier(ManyParams(), _adam_single_tensor)
    return record_lightning(out, module, _optimizer_loader(), profiler_kind=profiler)


def huge_optimizer_fixed(out: Path) -> Path:
    torch.manual_seed(0)
    return record_plain(out, "huge_optimizer_fixed", ManyParams(), _optimizer_loader(), _adam_fused)


def huge_optimizer_fixed_lightning(out: Path) -> Path:
    torch.manual_seed(0)
    return record_lightning(out, LitClassifier(ManyParams(), _adam_fused), _optimizer_loader())


# 5. python_loop_forward ----------------------------------------------------------------


def _loop_loader() -> DataLoader[Any]:
    return _loader(_data(_n_samples(16), (32,)), 16)


def python_loop_forward_plain(out: Path) -> Path:
    torch.manual_seed(0)
    return record_plain(out, "python_loop_forward", LoopyNet(), _loop_loader(), _sgd)


def python_loop_forward_lightning(out: Path, profiler: str = "pytorch") -> Path:
    torch.manual_seed(0)
    return record_lightning(
        out, LitClassifier(LoopyNet(), _sgd), _loop_loader(), profiler_kind=profiler
    )


def python_loop_forward_fixed(out: Path) -> Path:
    torch.manual_seed(0)
    return record_plain(
        out, "python_loop_forward_fixed", LoopyNet(vectorised=True), _loop_loader(), _sgd
    )


def python_loop_forward_fixed_lightning(out: Path) -> Path:
    torch.manual_seed(0)
    return record_lightning(out, LitClassifier(LoopyNet(vectorised=True), _sgd), _loop_loader())


# 6. expensive_skip ---------------------------------------------------------------------


def _skip_loader() -> DataLoader[Any]:
    return _loader(_data(_n_samples(8), (3, 16, 16)), 8)


def expensive_skip_plain(out: Path) -> Path:
    torch.manual_seed(0)
    return record_plain(out, "expensive_skip", SkipNet(), _skip_loader(), _sgd)


def expensive_skip_lightning(out: Path, profiler: str = "pytorch") -> Path:
    torch.manual_seed(0)
    return record_lightning(
        out, LitClassifier(SkipNet(), _sgd), _skip_loader(), profiler_kind=profiler
    )


def expensive_skip_fixed(out: Path) -> Path:
    torch.manual_seed(0)
    return record_plain(out, "expensive_skip_fixed", SkipNet(fused=True), _skip_loader(), _sgd)


def expensive_skip_fixed_lightning(out: Path) -> Path:
    torch.manual_seed(0)
    return record_lightning(out, LitClassifier(SkipNet(fused=True), _sgd), _skip_loader())


# 7. heavy_callback ---------------------------------------------------------------------

_CALLBACK_SLEEP_S = 0.02


class HeavyLoggingCallback(L.Callback):
    def on_train_batch_end(
        self,
        trainer: L.Trainer,
        pl_module: L.LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
    ) -> None:
        time.sleep(_CALLBACK_SLEEP_S)


def _callback_loader() -> DataLoader[Any]:
    return _loader(_data(_n_samples(16), (32,)), 16)


def heavy_callback_plain(out: Path) -> Path:
    torch.manual_seed(0)

    def heavy_logging() -> None:
        with record_function(CALLBACK_LABEL):
            time.sleep(_CALLBACK_SLEEP_S)

    return record_plain(
        out, "heavy_callback", _mlp(32, 64), _callback_loader(), _sgd, after_step=heavy_logging
    )


def heavy_callback_lightning(out: Path, profiler: str = "pytorch") -> Path:
    torch.manual_seed(0)
    return record_lightning(
        out,
        LitClassifier(_mlp(32, 64), _sgd),
        _callback_loader(),
        callbacks=[HeavyLoggingCallback()],
        profiler_kind=profiler,
    )


def heavy_callback_fixed(out: Path) -> Path:
    """The logging done asynchronously (off the step)."""
    torch.manual_seed(0)
    return record_plain(out, "heavy_callback_fixed", _mlp(32, 64), _callback_loader(), _sgd)


def heavy_callback_fixed_lightning(out: Path) -> Path:
    torch.manual_seed(0)
    return record_lightning(out, LitClassifier(_mlp(32, 64), _sgd), _callback_loader())


# 8. validation_heavy -------------------------------------------------------------------

_VAL_TRAIN_BATCH = 32
_VAL_PLAIN_BATCHES = 5
_VAL_PLAIN_BATCH = 256
_VAL_LIGHTNING_BATCHES = 3
_VAL_LIGHTNING_BATCH = 512


def _val_net() -> nn.Module:
    return nn.Sequential(
        nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)
    )


def _val_train_loader() -> DataLoader[Any]:
    return _loader(_data(_n_samples(_VAL_TRAIN_BATCH), (256,)), _VAL_TRAIN_BATCH)


def validation_heavy_plain(out: Path) -> Path:
    torch.manual_seed(0)
    model = _val_net()
    val_batches = PreBatched(_VAL_PLAIN_BATCHES, _VAL_PLAIN_BATCH, (256,))

    def validate() -> None:
        with record_function(VALIDATION_LABEL), torch.no_grad():
            model.eval()
            for i in range(len(val_batches)):
                x, y = val_batches[i]
                F.cross_entropy(model(x), y)
            model.train()

    return record_plain(
        out, "validation_heavy", model, _val_train_loader(), _sgd, after_step=validate
    )


def validation_heavy_lightning(out: Path, profiler: str = "pytorch") -> Path:
    torch.manual_seed(0)
    val = DataLoader(
        PreBatched(_VAL_LIGHTNING_BATCHES, _VAL_LIGHTNING_BATCH, (256,)), batch_size=None
    )
    # validation after the 3rd training batch, inside the recorded steps 2-4; 5 batches so
    # the end of the epoch does not validate again
    return record_lightning(
        out,
        LitClassifier(_val_net(), _sgd),
        _val_train_loader(),
        profiler_kind=profiler,
        val=val,
        limit_train_batches=5,
        limit_val_batches=_VAL_LIGHTNING_BATCHES,
        val_check_interval=3,
    )


def validation_heavy_fixed(out: Path) -> Path:
    """Validation at the end of the epoch, outside the profiled steps."""
    torch.manual_seed(0)
    return record_plain(out, "validation_heavy_fixed", _val_net(), _val_train_loader(), _sgd)


def validation_heavy_fixed_lightning(out: Path) -> Path:
    torch.manual_seed(0)
    return record_lightning(
        out, LitClassifier(_val_net(), _sgd), _val_train_loader(), limit_train_batches=5
    )


# 9. healthy_conv -----------------------------------------------------------------------


def _conv_loader() -> DataLoader[Any]:
    return _loader(_data(_n_samples(32), (3, 32, 32)), 32)


def healthy_conv_plain(out: Path) -> Path:
    torch.manual_seed(0)
    return record_plain(out, "healthy_conv", SmallResNet(), _conv_loader(), _sgd)


def healthy_conv_lightning(out: Path, profiler: str = "pytorch") -> Path:
    torch.manual_seed(0)
    return record_lightning(
        out, LitClassifier(SmallResNet(), _sgd), _conv_loader(), profiler_kind=profiler
    )


# 10. healthy_transformer ---------------------------------------------------------------


def _transformer_loader() -> DataLoader[Any]:
    return _loader(_data(_n_samples(16), (64, 256)), 16)


def healthy_transformer_plain(out: Path) -> Path:
    torch.manual_seed(0)
    return record_plain(
        out, "healthy_transformer", SmallTransformer(), _transformer_loader(), _adam
    )


def healthy_transformer_lightning(out: Path, profiler: str = "pytorch") -> Path:
    torch.manual_seed(0)
    return record_lightning(
        out, LitClassifier(SmallTransformer(), _adam), _transformer_loader(), profiler_kind=profiler
    )


# 11. large_mlp -------------------------------------------------------------------------


def _large_mlp() -> nn.Module:
    return nn.Sequential(
        nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 10)
    )


def _large_mlp_loader() -> DataLoader[Any]:
    return _loader(_data(_n_samples(128), (1024,)), 128)


def large_mlp_plain(out: Path) -> Path:
    torch.manual_seed(0)
    return record_plain(out, "large_mlp", _large_mlp(), _large_mlp_loader(), _sgd)


def large_mlp_lightning(out: Path, profiler: str = "pytorch") -> Path:
    torch.manual_seed(0)
    return record_lightning(
        out, LitClassifier(_large_mlp(), _sgd), _large_mlp_loader(), profiler_kind=profiler
    )


# 12. python_collate --------------------------------------------------------------------


def python_collate(batch: list[Batch]) -> Batch:
    """A collate_fn that converts every value through Python floats (a common slow path)."""
    rows = [[float(v) for v in x.tolist()] for x, _ in batch]
    return torch.tensor(rows), torch.stack([y for _, y in batch])


def _collate_loader() -> DataLoader[Any]:
    return DataLoader(_data(_n_samples(32), (512,)), batch_size=32, collate_fn=python_collate)


def python_collate_plain(out: Path) -> Path:
    torch.manual_seed(0)
    return record_plain(out, "python_collate", _mlp(512, 64), _collate_loader(), _sgd)


def python_collate_lightning(out: Path, profiler: str = "pytorch") -> Path:
    torch.manual_seed(0)
    return record_lightning(
        out, LitClassifier(_mlp(512, 64), _sgd), _collate_loader(), profiler_kind=profiler
    )


def python_collate_fixed(out: Path) -> Path:
    """torch's default collate (stacks the tensors)."""
    torch.manual_seed(0)
    loader = DataLoader(_data(_n_samples(32), (512,)), batch_size=32)
    return record_plain(out, "python_collate_fixed", _mlp(512, 64), loader, _sgd)


def python_collate_fixed_lightning(out: Path) -> Path:
    torch.manual_seed(0)
    loader = DataLoader(_data(_n_samples(32), (512,)), batch_size=32)
    return record_lightning(out, LitClassifier(_mlp(512, 64), _sgd), loader)


# 13. allocation_churn ------------------------------------------------------------------


class FeatureBank(nn.Module):
    """Keeps every batch's features by growing one tensor with torch.cat: each step copies
    the whole bank into a new, larger allocation."""

    def __init__(self, features: int = 64, start_rows: int = 100_000, append: bool = False) -> None:
        super().__init__()
        self.net = _mlp(features, 64)
        self.bank = torch.zeros(start_rows, features)
        self.append = append
        self.pending: list[Tensor] = []

    def forward(self, x: Tensor) -> Tensor:
        if self.append:  # the fixed twin: concatenated once, when the bank is read
            self.pending.append(x.detach())
        else:
            self.bank = torch.cat([self.bank, x.detach()])
        return self.net(x)  # type: ignore[no-any-return]


def _churn_loader() -> DataLoader[Any]:
    return _loader(_data(_n_samples(16), (64,)), 16)


def allocation_churn_plain(out: Path) -> Path:
    torch.manual_seed(0)
    return record_plain(out, "allocation_churn", FeatureBank(), _churn_loader(), _sgd)


def allocation_churn_lightning(out: Path, profiler: str = "pytorch") -> Path:
    torch.manual_seed(0)
    return record_lightning(
        out, LitClassifier(FeatureBank(), _sgd), _churn_loader(), profiler_kind=profiler
    )


def allocation_churn_fixed(out: Path) -> Path:
    """Features appended to a list (concatenated once, when needed)."""
    torch.manual_seed(0)
    return record_plain(
        out, "allocation_churn_fixed", FeatureBank(append=True), _churn_loader(), _sgd
    )


def allocation_churn_fixed_lightning(out: Path) -> Path:
    torch.manual_seed(0)
    return record_lightning(out, LitClassifier(FeatureBank(append=True), _sgd), _churn_loader())


# 14. seed_resnet18 ---------------------------------------------------------------------


def _seed_net() -> nn.Module:
    """The seed tutorial's model: a ResNet-18 feature extractor of BasicBlocks and a linear
    classifier (profsight's copy of torchvision's, module names as torchvision's)."""
    from profsight.demo.resnet import resnet18_backbone

    return nn.Sequential(resnet18_backbone(), nn.Linear(512, 10))


def _seed_loader() -> DataLoader[Any]:
    return _loader(_data(_n_samples(16), (3, 32, 32)), 16)


def _seed_sgd(params: Iterable[nn.Parameter]) -> torch.optim.Optimizer:
    """Plain SGD, multi-tensor: a healthy run's optimizer. (For-loop SGD over ResNet-18's 62
    tensors is 62 small ops per step, 4-5% of the step on a quiet machine and past the
    optimizer rule's 15% on a loaded one; momentum adds two passes over its 11M parameters,
    10-11% of the step on this CPU.)"""
    return torch.optim.SGD(params, lr=0.01, foreach=True)


def seed_resnet18_plain(out: Path) -> Path:
    torch.manual_seed(0)
    return record_plain(out, "seed_resnet18", _seed_net(), _seed_loader(), _seed_sgd)


def seed_resnet18_lightning(out: Path, profiler: str = "pytorch") -> Path:
    torch.manual_seed(0)
    return record_lightning(
        out, LitClassifier(_seed_net(), _seed_sgd), _seed_loader(), profiler_kind=profiler
    )


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "slow_dataset",
            "data_loading",
            "Dataset.__getitem__ sleeps 3 ms per sample; DataLoader(num_workers=0), batch 8",
            slow_dataset_plain,
            slow_dataset_lightning,
            ("simple", "advanced"),
            fixed=slow_dataset_fixed,
            fixed_lightning=slow_dataset_fixed_lightning,
            fix="the same samples, ready without the 3 ms delay (workers and prefetching hide it)",
        ),
        Scenario(
            "tiny_batch",
            "per_step_overhead",
            "batch 4 on a 32-64-10 MLP: the per-step fixed cost dwarfs the compute",
            tiny_batch_plain,
            tiny_batch_lightning,
            ("simple",),
            fixed=tiny_batch_fixed,
            fixed_lightning=tiny_batch_fixed_lightning,
            fix="batch 16 instead of 4 (compared per sample)",
            per_sample=TINY_BATCH_SCALE,
        ),
        Scenario(
            "heavy_metric",
            "metrics",
            "MulticlassAUROC(thresholds=None) updated and computed on 50k predictions each step",
            heavy_metric_plain,
            heavy_metric_lightning,
            ("advanced",),
            fixed=heavy_metric_fixed,
            fixed_lightning=heavy_metric_fixed_lightning,
            fix="the metric computed outside the profiled steps",
        ),
        Scenario(
            "huge_optimizer",
            "optimizer",
            "300 separate one-row parameters with Adam(foreach=False)",
            huge_optimizer_plain,
            huge_optimizer_lightning,
            ("simple",),
            fixed=huge_optimizer_fixed,
            fixed_lightning=huge_optimizer_fixed_lightning,
            fix="Adam(fused=True)",
        ),
        Scenario(
            "python_loop_forward",
            "module_overhead",
            "PerFeatureNorm.forward loops in Python over 128 features (~2000 tiny ops)",
            python_loop_forward_plain,
            python_loop_forward_lightning,
            fixed=python_loop_forward_fixed,
            fixed_lightning=python_loop_forward_fixed_lightning,
            fix="the norm vectorised over all features",
        ),
        Scenario(
            "expensive_skip",
            "module_overhead",
            "a residual block's skip connection runs 180 elementwise ops in a Python loop",
            expensive_skip_plain,
            expensive_skip_lightning,
            fixed=expensive_skip_fixed,
            fixed_lightning=expensive_skip_fixed_lightning,
            fix="the skip loop's closed form (three ops)",
        ),
        Scenario(
            "heavy_callback",
            "callbacks_logging",
            "a callback sleeps 20 ms at every training batch end",
            heavy_callback_plain,
            heavy_callback_lightning,
            ("simple",),
            fixed=heavy_callback_fixed,
            fixed_lightning=heavy_callback_fixed_lightning,
            fix="the logging off the step",
        ),
        Scenario(
            "validation_heavy",
            "validation",
            "large validation batches run inside the profiled training steps",
            validation_heavy_plain,
            validation_heavy_lightning,
            ("simple",),
            fixed=validation_heavy_fixed,
            fixed_lightning=validation_heavy_fixed_lightning,
            fix="validation outside the profiled steps",
        ),
        Scenario(
            "healthy_conv",
            "compute_conv",
            "a small ResNet on 32x32 images, batch 32: convolutions dominate",
            healthy_conv_plain,
            healthy_conv_lightning,
        ),
        Scenario(
            "healthy_transformer",
            "compute_matmul",
            "two TransformerEncoderLayers (d_model 256, seq 64, batch 16): matmuls dominate",
            healthy_transformer_plain,
            healthy_transformer_lightning,
        ),
        Scenario(
            "large_mlp",
            "compute_matmul",
            "a 1024-2048-2048-10 MLP, batch 128: its matrix multiplies dominate",
            large_mlp_plain,
            large_mlp_lightning,
        ),
        Scenario(
            "python_collate",
            "data_loading",
            "a collate_fn that converts every value through Python floats, num_workers=0",
            python_collate_plain,
            python_collate_lightning,
            ("simple", "advanced"),
            fixed=python_collate_fixed,
            fixed_lightning=python_collate_fixed_lightning,
            fix="torch's default collate",
        ),
        Scenario(
            "allocation_churn",
            "memory",
            "a 100k-row feature bank grown by torch.cat every step (profile_memory=True)",
            allocation_churn_plain,
            allocation_churn_lightning,
            fixed=allocation_churn_fixed,
            fixed_lightning=allocation_churn_fixed_lightning,
            fix="features appended to a list, concatenated once",
        ),
        Scenario(
            "seed_resnet18",
            "compute_conv",
            "the seed tutorial's ResNet-18 of BasicBlocks and a classifier, batch 16, 32x32",
            seed_resnet18_plain,
            seed_resnet18_lightning,
        ),
    )
}
