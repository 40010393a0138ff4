"""Record real profiles with torch / Lightning inside the test session.

Each recorder runs a small training loop under the profiler and, in ``on_trace_ready``,
exports the Chrome trace and keeps what torch itself computes from the same events
(``key_averages()``, grouped by name and by input shapes, and its printed table), so that
tests compare profsight's numbers with torch's for the very same run.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule


@dataclass(frozen=True)
class TorchRow:
    key: str
    count: int
    self_cpu: float
    cpu_total: float
    self_device: float
    device_total: float
    cpu_mem: int
    self_cpu_mem: int
    is_device: bool
    is_annotation: bool
    shapes: str
    stack: tuple[str, ...] = ()


@dataclass(frozen=True)
class Recorded:
    trace: Path
    rows: list[TorchRow]
    rows_by_shape: list[TorchRow]
    table_text: str
    """``key_averages().table(sort_by="cpu_time_total", row_limit=20)`` as torch printed it."""
    rows_by_stack: dict[int, list[TorchRow]] = field(default_factory=dict)
    """``key_averages(group_by_stack_n=N)`` for N in `STACK_FRAMES` (runs recorded with
    call stacks only)."""
    stack_table_text: str = ""
    """``key_averages(group_by_stack_n=5).table(sort_by="self_cpu_time_total",
    row_limit=12)`` as torch printed it."""


#: The frames the stack groupings are recorded with.
STACK_FRAMES = (1, 3, 5)


def _rows(averages: Any) -> list[TorchRow]:
    return [
        TorchRow(
            key=e.key,
            count=e.count,
            self_cpu=e.self_cpu_time_total,
            cpu_total=e.cpu_time_total,
            self_device=e.self_device_time_total,
            device_total=e.device_time_total,
            cpu_mem=e.cpu_memory_usage,
            self_cpu_mem=e.self_cpu_memory_usage,
            is_device=str(e.device_type) != "DeviceType.CPU",
            is_annotation=bool(getattr(e, "is_user_annotation", False)),
            shapes=str(e.input_shapes),
            stack=tuple(e.stack),
        )
        for e in averages
    ]


class Capture:
    """An ``on_trace_ready`` handler that keeps the trace and torch's own aggregates."""

    def __init__(self, path: Path, stacks: bool = False) -> None:
        self.path = path
        self.stacks = stacks
        self.recorded: Recorded | None = None

    def __call__(self, prof: Any) -> None:
        prof.export_chrome_trace(str(self.path))
        averages = prof.key_averages()
        by_stack = {}
        stack_text = ""
        if self.stacks:
            by_stack = {n: _rows(prof.key_averages(group_by_stack_n=n)) for n in STACK_FRAMES}
            stack_text = prof.key_averages(group_by_stack_n=5).table(
                sort_by="self_cpu_time_total", row_limit=12
            )
        self.recorded = Recorded(
            trace=self.path,
            rows=_rows(averages),
            rows_by_shape=_rows(prof.key_averages(group_by_input_shape=True)),
            table_text=averages.table(sort_by="cpu_time_total", row_limit=20),
            rows_by_stack=by_stack,
            stack_table_text=stack_text,
        )


class SmallNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1),
            torch.nn.BatchNorm2d(8),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
        )
        self.head = torch.nn.Linear(8 * 8 * 8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = x + x.mean()  # a skip-connection-like add
        return self.head(torch.flatten(x, 1))


def _side_work(stop: threading.Event) -> None:
    a = torch.randn(64, 64)
    while not stop.is_set():
        with record_function("side_thread_work"):
            a = torch.tanh(a @ a.T / 64)


def record_plain(
    out: Path,
    *,
    with_stack: bool = False,
    verbose: bool = False,
    side_thread: bool = False,
    batch: int = 8,
    steps: int = 3,
) -> Recorded:
    """A plain torch training loop under ``torch.profiler.profile``; `verbose`: with
    ``_ExperimentalConfig(verbose=True)``, under which torch keeps each event's call stack
    (``FunctionEvent.stack``, the trace's ``Call stack``)."""
    from torch._C._profiler import _ExperimentalConfig

    torch.manual_seed(0)
    model = SmallNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, 3, 16, 16)
    y = torch.randint(0, 10, (batch,))
    capture = Capture(out, stacks=verbose)
    stop = threading.Event()
    worker = threading.Thread(target=_side_work, args=(stop,), daemon=True)
    with profile(
        activities=[ProfilerActivity.CPU],
        record_shapes=True,
        profile_memory=True,
        with_stack=with_stack,
        with_modules=True,
        experimental_config=_ExperimentalConfig(verbose=True) if verbose else None,
        schedule=schedule(wait=1, warmup=1, active=steps, repeat=1),
        on_trace_ready=capture,
    ) as prof:
        if side_thread:
            worker.start()
        for _ in range(steps + 2):
            with record_function("train_step"):
                opt.zero_grad(set_to_none=True)
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                with record_function("metrics"):
                    _ = (model(x).argmax(1) == y).float().mean().item()
            prof.step()
    stop.set()
    if side_thread:
        worker.join()
    assert capture.recorded is not None
    return capture.recorded


def record_lightning(out_dir: Path, active: int = 3) -> Recorded:
    """A Lightning ``Trainer.fit`` with ``PyTorchProfiler``, as the seed sets it up, `active`
    steps profiled."""
    import lightning as L
    import torchmetrics
    from lightning.pytorch.profilers import PyTorchProfiler

    class LitNet(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.feature_extractor = SmallNet().features
            self.classifier = torch.nn.Linear(8 * 8 * 8, 10)
            self.accuracy = torchmetrics.classification.MulticlassAccuracy(num_classes=10)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.classifier(torch.flatten(self.feature_extractor(x), 1))

        def training_step(self, batch: Any, _: int) -> torch.Tensor:
            x, y = batch
            logits = self(x)
            self.accuracy(logits, y)
            self.log("acc", self.accuracy)
            return torch.nn.functional.cross_entropy(logits, y)

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.Adam(self.parameters(), lr=1e-3)

    torch.manual_seed(0)
    batches = active + 3
    samples = 16 * batches
    data = torch.utils.data.TensorDataset(
        torch.randn(samples, 3, 16, 16), torch.randint(0, 10, (samples,))
    )
    capture = Capture(out_dir / "lightning.pt.trace.json")
    profiler = PyTorchProfiler(
        dirpath=str(out_dir),
        filename="fit",
        record_module_names=True,
        record_shapes=True,
        profile_memory=True,
        schedule=schedule(wait=1, warmup=1, active=active, repeat=1),
        on_trace_ready=capture,
    )
    trainer = L.Trainer(
        max_epochs=1,
        limit_train_batches=batches,
        limit_val_batches=0,
        profiler=profiler,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        accelerator="cpu",
        devices=1,
    )
    trainer.fit(LitNet(), torch.utils.data.DataLoader(data, batch_size=16))
    assert capture.recorded is not None
    return capture.recorded


def record_open_range(out: Path) -> Recorded:
    """A plain loop under the profiler with a ``record_function`` still open when it stops
    (``"finished": false`` in the trace), and memory profiling on."""
    torch.manual_seed(0)
    x = torch.randn(64, 64)
    capture = Capture(out)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, on_trace_ready=capture):
        left_open = record_function("left_open")
        left_open.__enter__()
        for _ in range(20):
            x = torch.tanh(x @ x / 64)
    assert capture.recorded is not None
    return capture.recorded


def record_first_step(warmup: int, path: Path) -> Path:
    """Four profiled steps of ~15 ms (two 1024x1024 linear layers, batch 128) whose first
    iteration also sleeps 200 ms (a one-off cost, as lazy initialisation takes), with
    `warmup` warm-up steps before them; the Chrome trace is written to `path` (gzipped when it
    ends in ``.gz``). tests/data/recorded/first_step_warmup*.pt.trace.json.gz were made so."""
    import gzip
    import shutil
    import time
    import warnings

    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024)
    )
    x = torch.randn(128, 1024)
    plain = path.with_suffix("") if path.suffix == ".gz" else path
    with warnings.catch_warnings():  # torch warns that no warm-up skews results: the point
        warnings.simplefilter("ignore")
        with profile(
            activities=[ProfilerActivity.CPU],
            schedule=schedule(wait=0, warmup=warmup, active=4, repeat=1),
            on_trace_ready=lambda p: p.export_chrome_trace(str(plain)),
        ) as prof:
            for i in range(4 + warmup):
                if i == 0:
                    time.sleep(0.2)  # the one-off cost of the first iteration
                model(x).sum().backward()
                prof.step()
    if plain != path:
        with plain.open("rb") as src, gzip.open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)
        plain.unlink()
    return path


def fit_on_cpu(module: Any, profiler: object, batches: int) -> None:
    """A one-epoch Lightning fit of `module` on 16 random (4 -> 1) samples in batches of 4,
    `batches` of them, under `profiler`: nothing but the training loop (no validation,
    logger, checkpoints or progress bar)."""
    import lightning as L

    data = torch.utils.data.TensorDataset(torch.randn(16, 4), torch.randn(16, 1))
    trainer = L.Trainer(
        max_epochs=1,
        limit_train_batches=batches,
        profiler=profiler,
        enable_progress_bar=False,
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        accelerator="cpu",
        num_sanity_val_steps=0,
    )
    trainer.fit(module, torch.utils.data.DataLoader(data, batch_size=4))
