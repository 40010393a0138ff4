"""Record each class of GPU timing issue 22 names, on the machine it runs on, for
`tests/data/gpu_recorded/`: one short run per class, its trace (gzipped) and its printed
table, and `timings.json` with the wall time of each run's steps measured by the script
itself (synchronised, outside the profiler), to check profsight's step against.

    python scripts/record_gpu_classes.py OUT_DIR          # about a minute on a GPU

The classes (each a small conv net's training step unless said):

* ``batch4_nosync`` and ``batch32_nosync``: no sync in the step (the GPU runs behind);
* ``sync_every_step``: ``loss.item()`` at the end of each step;
* ``cuda_graph``: the step captured as a CUDA graph and replayed;
* ``two_streams``: a GEMM on one stream, a second stream made to wait for it by an event,
  then a GEMM on that stream (the replay's wait between streams);
* ``cpu_activity_only``: ``batch4_nosync`` profiled with ``activities=[CPU]``.

Without CUDA it records what runs on a CPU (the same loops, no graph, no streams), so the
script is tested before a GPU is lent; those traces are not GPU data and are not kept.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, schedule

WAIT, WARMUP, ACTIVE = 1, 2, 4
STEPS = WAIT + WARMUP + ACTIVE


def _model(device: torch.device) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(64, 64, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(64, 10),
    ).to(device)


def _activities(device: torch.device, cpu_only: bool = False) -> list[ProfilerActivity]:
    if device.type == "cuda" and not cpu_only:
        return [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    return [ProfilerActivity.CPU]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def _record(
    out: Path,
    name: str,
    device: torch.device,
    step: Callable[[], None],
    cpu_only: bool = False,
) -> dict[str, Any]:
    """Profile `STEPS` calls of `step` (the schedule keeps the last `ACTIVE`), write the
    trace and the table, and time the active steps apart (synchronised)."""
    trace = out / f"{name}.pt.trace.json"
    with profile(
        activities=_activities(device, cpu_only),
        schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE),
        record_shapes=True,
        on_trace_ready=lambda p: p.export_chrome_trace(str(trace)),
    ) as prof:
        for _ in range(STEPS):
            step()
            prof.step()
    _sync(device)
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=40)
    (out / f"{name}.table.txt").write_text(table + "\n")
    with trace.open("rb") as src, gzip.open(f"{trace}.gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    trace.unlink()
    # the same steps without the profiler, timed between syncs: the steady step
    _sync(device)
    t0 = time.perf_counter()
    for _ in range(ACTIVE):
        step()
    _sync(device)
    return {"step_ms": (time.perf_counter() - t0) * 1000.0 / ACTIVE, "device": str(device)}


def _training(device: torch.device, batch: int, sync: bool) -> Callable[[], None]:
    model = _model(device)
    fused = device.type == "cuda"
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=fused)
    x = torch.randn(batch, 3, 64, 64, device=device)
    y = torch.randint(0, 10, (batch,), device=device)

    def step() -> None:
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if sync:
            loss.item()

    return step


def _graphed(device: torch.device, batch: int) -> Callable[[], None]:
    """A forward and backward captured as a CUDA graph (torch.cuda.make_graphed_callables),
    the optimizer outside it."""
    model = _model(device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(batch, 3, 64, 64, device=device)
    y = torch.randint(0, 10, (batch,), device=device)
    graphed = torch.cuda.make_graphed_callables(model, (x,))

    def step() -> None:
        loss = nn.functional.cross_entropy(graphed(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=False)

    return step


def _two_streams(device: torch.device) -> Callable[[], None]:
    n = 4096
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    side = torch.cuda.Stream()

    def step() -> None:
        c = a @ b  # the awaited GEMM, on the current stream
        done = torch.cuda.Event()
        done.record()
        with torch.cuda.stream(side):
            side.wait_event(done)  # cudaStreamWaitEvent: the side stream waits for c
            d = c @ b
        torch.cuda.current_stream().wait_stream(side)
        d.sum()

    return step


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    timings: dict[str, Any] = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
    }
    runs: list[tuple[str, Callable[[], None], bool]] = [
        ("batch4_nosync", _training(device, 4, sync=False), False),
        ("batch32_nosync", _training(device, 32, sync=False), False),
        ("sync_every_step", _training(device, 4, sync=True), False),
        ("cpu_activity_only", _training(device, 4, sync=False), True),
    ]
    if device.type == "cuda":
        runs += [
            ("cuda_graph", _graphed(device, 32), False),
            ("two_streams", _two_streams(device), False),
        ]
    for name, step, cpu_only in runs:
        timings[name] = _record(out, name, device, step, cpu_only)
        print(name, timings[name], flush=True)
    (out / "timings.json").write_text(json.dumps(timings, indent=2) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "gpu_recorded"))
