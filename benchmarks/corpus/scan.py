"""A plain scan of a Kineto/Chrome trace for writing a corpus label: no profsight code.

    python benchmarks/corpus/scan.py TRACE [TRACE ...]

It prints the figures a label's ``why`` is written from: the devices, the window (first to last
complete event, without the profiler's own ``Trace`` span), each device's busy time (the union
of its kernels, copies and memsets), device time by kernel family, the top kernels, the runtime
calls that wait or launch, the ``ProfilerStep`` ranges, the longest host ops (start-up shows
there), the data loader's ranges and the gaps between device items. Everything is computed
here from the JSON, so that a label never rests on the tool it scores.
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
FAMILIES = [
    (
        "communication",
        re.compile(
            r"nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|alltoall|"
            r"deep_?ep|dispatch_kernel|combine_kernel|cross_device",
            re.I,
        ),
    ),
    ("attention", re.compile(r"flash|fmha|attention|attn|sdpa", re.I)),
    (
        "conv",
        re.compile(r"conv|cudnn|winograd|implicit_?gemm|miopen|igemm|dgrad|wgrad|fprop", re.I),
    ),
    (
        "gemm",
        re.compile(
            r"gemm|sgemm|hgemm|cutlass|xmma|Cijk_|matmul|nvjet|gemv|dot_kernel|"
            r"wmma|mma_|cublas",
            re.I,
        ),
    ),
    ("optimizer", re.compile(r"multi_tensor_apply|adam|sgd_|fused_adam", re.I)),
    ("norm", re.compile(r"norm", re.I)),
    ("reduce", re.compile(r"reduce_kernel|softmax|reduction", re.I)),
    ("elementwise", re.compile(r"elementwise|vectorized|unrolled|triton_|copy_kernel|fill", re.I)),
]
WAITS = re.compile(
    r"^(cuda|hip)(StreamSynchronize|DeviceSynchronize|EventSynchronize|StreamWaitEvent|"
    r"Memcpy|MemcpyAsync|MemcpyWithStream|LaunchKernel|GraphLaunch|Malloc|Free|HostAlloc|"
    r"ModuleLoadData|FuncGetAttributes|StreamIsCapturing|GraphInstantiate|StreamBeginCapture|"
    r"ExtModuleLaunchKernel|LaunchCooperativeKernel)|^cuLaunchKernel|^cudaLaunchKernelExC"
)


def load(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw)
    return {"traceEvents": doc} if isinstance(doc, list) else doc


def union(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for s, e in sorted(intervals):
        if e <= end:
            continue
        total += e - max(s, end)
        end = e
    return total


def family(name: str) -> str:
    for fam, pat in FAMILIES:
        if pat.search(name):
            return fam
    return "other"


def ms(us: float) -> str:
    return f"{us / 1000:.3f} ms"


def scan(path: Path) -> None:
    doc = load(path)
    events = [e for e in doc.get("traceEvents", []) if isinstance(e, dict)]
    print(f"== {path}  ({path.stat().st_size:,} bytes, {len(events):,} events)")
    props = doc.get("deviceProperties") or []
    names = Counter(p.get("name", "?") for p in props if isinstance(p, dict))
    print(
        "devices:",
        dict(names) or "none listed",
        "| keys:",
        [k for k in doc if k not in ("traceEvents", "deviceProperties")][:14],
    )
    if doc.get("distributedInfo"):
        print("distributedInfo:", json.dumps(doc["distributedInfo"])[:200])
    cats = Counter((e.get("ph"), e.get("cat")) for e in events)
    print("events by (ph, cat):", dict(cats.most_common(14)))
    xs = [e for e in events if e.get("ph") == "X" and isinstance(e.get("ts"), (int, float))]
    xs = [e for e in xs if e.get("cat") not in ("Trace",) and e.get("name") != "PyTorch Profiler"]
    if not xs:
        print("no complete events")
        return
    t0 = min(float(e["ts"]) for e in xs)
    t1 = max(float(e["ts"]) + float(e.get("dur", 0) or 0) for e in xs)
    window = t1 - t0
    print(f"window {ms(window)}")
    dev = [e for e in xs if e.get("cat") in DEVICE_CATS]
    by_pid: dict[Any, list[tuple[float, float]]] = defaultdict(list)
    for e in dev:
        by_pid[e.get("pid")].append((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0) or 0)))
    for pid, iv in sorted(by_pid.items(), key=lambda kv: str(kv[0])):
        busy = union(iv)
        print(
            f"device pid {pid}: {len(iv)} items, busy {ms(busy)} = {100 * busy / window:.1f}% "
            f"of window, span {ms(max(e for _, e in iv) - min(s for s, _ in iv))}"
        )
        gaps = []
        srt = sorted(iv)
        end = srt[0][1]
        for s, e in srt[1:]:
            if s > end:
                gaps.append(s - end)
            end = max(end, e)
        if gaps:
            print(
                f"   gaps: {len(gaps)}, median {statistics.median(gaps):.1f} us, "
                f"total {ms(sum(gaps))}"
            )
    fam_time: Counter[str] = Counter()
    kern: dict[str, list[float]] = defaultdict(list)
    for e in dev:
        name = str(e.get("name", ""))
        d = float(e.get("dur", 0) or 0)
        if e.get("cat") in ("gpu_memcpy", "Memcpy"):
            fam_time["memcpy " + name.replace("Memcpy ", "")] += d
        elif e.get("cat") in ("gpu_memset", "Memset"):
            fam_time["memset"] += d
        else:
            fam_time[family(name)] += d
        kern[name].append(d)
    tot = sum(fam_time.values()) or 1.0
    print(
        "device time by family:",
        ", ".join(f"{k} {ms(v)} ({100 * v / tot:.0f}%)" for k, v in fam_time.most_common()),
    )
    durs = [
        d
        for e in dev
        if e.get("cat") in ("kernel", "Kernel")
        for d in [float(e.get("dur", 0) or 0)]
    ]
    if durs:
        print(
            f"kernels: {len(durs)}, median {statistics.median(durs):.1f} us, "
            f"{100 * sum(d < 10 for d in durs) / len(durs):.0f}% under 10 us"
        )
    print("top device items:")
    for name, ds in sorted(kern.items(), key=lambda kv: -sum(kv[1]))[:10]:
        print(
            f"   {ms(sum(ds)):>13} {len(ds):>6}x med {statistics.median(ds):9.1f} us  {name[:110]}"
        )
    rt: dict[str, list[float]] = defaultdict(list)
    for e in xs:
        name = str(e.get("name", ""))
        if WAITS.search(name):
            rt[name].append(float(e.get("dur", 0) or 0))
    if rt:
        print("runtime calls (count, total, max):")
        for name, ds in sorted(rt.items(), key=lambda kv: -sum(kv[1]))[:14]:
            print(
                f"   {name:<32} {len(ds):>6} {ms(sum(ds)):>13} max {ms(max(ds))} "
                f"= {100 * sum(ds) / window:.1f}% of window"
            )
    steps = [e for e in xs if str(e.get("name", "")).startswith("ProfilerStep#")]
    if steps:
        print(
            f"ProfilerStep: {len(steps)}:",
            ", ".join(f"{e['name'][13:]}={ms(float(e.get('dur', 0)))}" for e in steps[:12]),
        )
    host = [
        e
        for e in xs
        if e.get("cat") in ("cpu_op", "Operator", "user_annotation", "python_function", None)
    ]
    pf = sum(1 for e in xs if e.get("cat") == "python_function")
    print(f"host ops: {len(host)} (python_function {pf})")
    for e in sorted(host, key=lambda e: -float(e.get("dur", 0) or 0))[:12]:
        print(
            f"   {ms(float(e.get('dur', 0))):>13} at +{ms(float(e['ts']) - t0):>12}  "
            f"[{e.get('cat')}] tid {e.get('tid')} {str(e.get('name'))[:90]}"
        )
    for key in (
        "enumerate(DataLoader)",
        "Optimizer.step",
        "autograd::engine",
        "nccl:",
        "record_param_comms",
        "c10d::",
        "cudaGraphLaunch",
        "CompiledFunction",
        "Torch-Compiled Region",
        "aten::to",
        "aten::copy_",
        "aten::item",
        "aten::_local_scalar_dense",
    ):
        hit = [e for e in host if key in str(e.get("name", ""))]
        if hit:
            print(f"   '{key}': {len(hit)} ranges, {ms(sum(float(e.get('dur', 0)) for e in hit))}")
    pids = Counter(e.get("pid") for e in xs)
    print("pids:", dict(pids.most_common(10)))


def main(argv: list[str]) -> int:
    for arg in argv:
        try:
            scan(Path(arg))
        except (OSError, ValueError) as exc:
            print(f"== {arg}: cannot read ({exc.__class__.__name__}: {str(exc)[:120]})")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
