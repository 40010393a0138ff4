"""Record a real 2-process DDP job on the CPU (gloo), one rank deliberately slowed.

Run as a script (the tests start it in a subprocess; Lightning's DDP launcher runs this same
command again for rank 1):

    python tests/ddp_job.py plain OUT_DIR [--slow-rank 1] [--delay-ms 40] [--steps 8]
    python tests/ddp_job.py lightning OUT_DIR [...]

``plain`` spawns the ranks with ``torch.multiprocessing`` and writes each rank's trace with
``tensorboard_trace_handler`` under its default worker name (host_pid, no rank in it: the
rank comes from the trace's ``distributedInfo``). ``lightning`` trains with
``Trainer(strategy="ddp", devices=2)`` and Lightning's ``PyTorchProfiler``
(``fit-ddp-{rank}-...`` names). The slowed rank sleeps in every training step before its
forward pass, so at each gradient all-reduce the other rank waits for it.
"""

from __future__ import annotations

import argparse
import os
import socket
import time
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

FEATURES, HIDDEN, CLASSES, BATCH = 64, 256, 10, 32


def _net() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(FEATURES, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, CLASSES),
    )


def _batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(step)
    return torch.randn(BATCH, FEATURES, generator=g), torch.randint(
        0, CLASSES, (BATCH,), generator=g
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _plain_rank(
    rank: int, world: int, out: str, slow_rank: int, delay: float, steps: int, port: int
) -> None:
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    model = DistributedDataParallel(_net())
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=1, warmup=1, active=steps),
        on_trace_ready=tensorboard_trace_handler(out, use_gzip=True),
        record_shapes=True,
    ) as prof:
        for step in range(steps + 2):
            x, y = _batch(step * world + rank)
            if rank == slow_rank:
                time.sleep(delay)
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()
    dist.barrier()
    dist.destroy_process_group()


def record_plain(out: Path, slow_rank: int, delay: float, steps: int, world: int = 2) -> None:
    import torch.multiprocessing as mp

    mp.spawn(
        _plain_rank,
        args=(world, str(out), slow_rank, delay, steps, _free_port()),
        nprocs=world,
        join=True,
    )


def record_lightning(out: Path, slow_rank: int, delay: float, steps: int) -> None:
    import lightning as L
    from lightning.pytorch.profilers import PyTorchProfiler
    from torch.utils.data import DataLoader, TensorDataset

    torch.set_num_threads(1)

    class Lit(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = _net()

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            if self.global_rank == slow_rank:
                time.sleep(delay)
            x, y = batch
            return nn.functional.cross_entropy(self.net(x), y)

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.01)

    g = torch.Generator().manual_seed(0)
    n = BATCH * 2 * (steps + 4)
    data = TensorDataset(
        torch.randn(n, FEATURES, generator=g), torch.randint(0, CLASSES, (n,), generator=g)
    )
    profiler = PyTorchProfiler(
        dirpath=str(out),
        filename="ddp",
        export_to_chrome=True,
        record_shapes=True,
        schedule=schedule(wait=1, warmup=1, active=steps),
    )
    trainer = L.Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_steps=steps + 3,
        profiler=profiler,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    trainer.fit(Lit(), DataLoader(data, batch_size=BATCH))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["plain", "lightning"])
    parser.add_argument("out", type=Path)
    parser.add_argument("--slow-rank", type=int, default=1)
    parser.add_argument("--delay-ms", type=float, default=40.0)
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    record = record_plain if args.mode == "plain" else record_lightning
    record(args.out, args.slow_rank, args.delay_ms / 1000.0, args.steps)


if __name__ == "__main__":
    main()
