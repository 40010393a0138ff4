"""The device-inclusive step of GPU traces, from a plain JSON scan (no profsight code): the
figure issue 22 holds profsight's step time to, computed independently of it.

    .venv/bin/python scripts/device_inclusive_steps.py TRACE...   # a Markdown table

Per ``ProfilerStep#N`` (the whole span of host events without steps): its host range, and
the end of the device items (kernel, memcpy, memset) whose launch call (same
``correlation``) started inside it; a step completes when both are done, never before the
one before it. The device-inclusive step is the mean interval between consecutive
completions (one step: from its host start to its completion); `host_step` is the mean host
range; the device runs behind when its work ends after the host range in most steps.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

DEVICE = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
LAUNCH = {"cuda_runtime", "cuda_driver", "runtime"}


def _events(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and "ts" in e]


def steps_of(path: Path) -> dict[str, float] | None:
    events = _events(path)
    cat = [str(e.get("cat", "")).lower() for e in events]
    device = [e for e, c in zip(events, cat, strict=True) if c in DEVICE]
    if not device:
        return None
    launch = {
        e.get("args", {}).get("correlation"): float(e["ts"])
        for e, c in zip(events, cat, strict=True)
        if c in LAUNCH
    }
    # the host's ranges (a ProfilerStep also has a device-side projection, on the GPU)
    steps = sorted(
        {
            str(e["name"]): (float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)))
            for e, c in zip(events, cat, strict=True)
            if str(e.get("name", "")).startswith("ProfilerStep#") and "gpu" not in c
        }.values()
    )
    if not steps:
        host = [e for e, c in zip(events, cat, strict=True) if c not in DEVICE]
        steps = [
            (
                min(float(e["ts"]) for e in host),
                max(float(e["ts"]) + float(e.get("dur", 0)) for e in host),
            )
        ]
    ends = [-1.0] * len(steps)
    for e in device:
        at = launch.get(e.get("args", {}).get("correlation"))
        if at is None:
            continue
        for k, (lo, hi) in enumerate(steps):
            if lo <= at < hi:
                ends[k] = max(ends[k], float(e["ts"]) + float(e.get("dur", 0)))
                break
    done, last = [], -1.0
    for (_, hi), end in zip(steps, ends, strict=True):
        last = max(last, hi, end)
        done.append(last)
    n = len(steps)
    step = (done[-1] - done[0]) / (n - 1) if n >= 2 else done[0] - steps[0][0]
    behind = sum(end > hi for (_, hi), end in zip(steps, ends, strict=True))
    return {
        "steps": n,
        "host_ms": sum(hi - lo for lo, hi in steps) / n / 1000.0,
        "step_ms": step / 1000.0,
        "behind": 2 * behind > n,
    }


def main(paths: list[str]) -> None:
    print("| trace | steps | host range (ms) | device-inclusive step (ms) | device behind |")
    print("|---|---:|---:|---:|---|")
    for p in paths:
        found = steps_of(Path(p))
        if found is None:
            continue
        print(
            f"| `{Path(p).name}` | {found['steps']:.0f} | {found['host_ms']:.2f} | "
            f"{found['step_ms']:.2f} | {'yes' if found['behind'] else 'no'} |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
