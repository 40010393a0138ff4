"""Record a large CPU trace with torch: a small MLP trained for many steps.

    python benchmarks/record_large.py OUT.json [--size-mb 250]

record_shapes and profile_memory are on (as users turn them on), so events carry the
``Input Dims``/``Input Strides``/``Concrete Inputs`` args that make real traces large.
Steps are added until the exported file reaches the requested size.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

#: exported bytes per profiled step of this loop, measured once (used to size the run)
_BYTES_PER_STEP = 215_000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--size-mb", type=float, default=250.0)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        *[torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU()) for _ in range(8)]
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(4, 32)
    steps = int(args.size_mb * 1e6 / _BYTES_PER_STEP) + 1
    # a schedule makes torch record each step as a ProfilerStep#N range, as users' traces have
    every = schedule(wait=0, warmup=1, active=steps, repeat=1)
    with profile(
        activities=[ProfilerActivity.CPU],
        record_shapes=True,
        profile_memory=True,
        schedule=every,
        on_trace_ready=lambda p: p.export_chrome_trace(args.out),
    ) as prof:
        for _ in range(steps + 1):  # one warm-up step
            with record_function("train_step"):
                opt.zero_grad()
                model(x).square().mean().backward()
                opt.step()
            prof.step()
    size = os.path.getsize(args.out)
    print(f"{args.out}: {steps} steps, {size / 1e6:.0f} MB")
    return 0 if size >= args.size_mb * 1e6 * 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
