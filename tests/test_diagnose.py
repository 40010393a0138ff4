"""Diagnosis: breakdown, findings and verdict on planted bottlenecks, real GPU traces, and
every threshold on both of its sides."""

from __future__ import annotations

from pathlib import Path

import pytest

import profsight
from agreement import RUNS
from profsight.analyses.findings.host import from_breakdown
from profsight.analyses.pipeline import diagnose
from profsight.analyses.step.breakdown import breakdown
from profsight.knowledge import advice
from profsight.knowledge.advice import NO_DEVICE_ACTIVITY_TITLE
from profsight.model.findings import CATEGORIES, Severity
from profsight.model.step_windows import Breakdown, StepBreakdown
from profsight.samples import sample_trace
from scenarios import SCENARIOS
from tracebuilder import TraceBuilder

from conftest import DATA, SHARED_REAL, KnownMiss, known_miss

#: Runs read from a committed recording (tests/data/recorded/README.md) instead of the
#: session's: every planted run recorded once on a quiet machine (the tiny_batch pair, and
#: each run with a fixed twin). On a loaded 2-core machine one live recording reads
#: something else often enough that no claim about it holds: tiny_batch beside two busy
#: loops in 3 of 18 recordings (data_loading or callbacks_logging first, or start-up; once no
#: finding at all), expensive_skip with Lightning per_step_overhead first in a `make test`
#: (2026-12-05, b93c378), where the loaded readings measured before were start-up first.
#: The runs without one (healthy and seed models) keep their measured `LOADED_FIRST`.
COMMITTED = {
    (name, how): DATA / "recorded" / f"{name}.{how}.pt.trace.json.gz"
    for name in SCENARIOS
    for how in ("plain", "lightning")
    if (DATA / "recorded" / f"{name}.{how}.pt.trace.json.gz").exists()
}
#: The committed plain tiny_batch recording (one recording, kept as it came) reads the wrong
#: bottleneck: its first profiled step's batch took 3.4 ms against steps of 0.45-0.67 ms, so
#: data loading leads and the fixed cost falls under its bar. Three sub-ms steps are too few
#: for one recording to say (1 in 4 recordings beside a busy loop read per_step_overhead
#: first): the scenario needs more profiled steps. Strict: another reading fails.
TINY_PLAIN_MISS = "the committed tiny_batch plain recording reads data_loading (one slow batch)"
#: (top finding, verdict) of that known miss.
TINY_PLAIN_READS = ("data_loading", "starved_by_data")


def _runs() -> list[object]:
    miss = pytest.mark.xfail(strict=True, raises=KnownMiss, reason=TINY_PLAIN_MISS)
    return [
        pytest.param(n, h, id=f"{n}-{h}", marks=[miss] if (n, h) == ("tiny_batch", "plain") else [])
        for n, h in RUNS
    ]


#: Runs whose planted finding one recording on a loaded 2-core machine did not always put
#: first, with the findings that came first instead: there the planted finding must be
#: second after one of them, at worst. Measured by `scripts/accuracy_spread.py` (4 recordings
#: of each run beside one busy loop, 4-9 beside two) and two `tests/agreement.py` runs
#: (docs/measurements.md, "Accuracy over several recordings"); on a quiet machine each came
#: first. Every other run must put it first.
LOADED_FIRST: dict[tuple[str, str], set[str]] = {
    ("seed_resnet18", "lightning"): {"profiler_setup"},  # 1 of 8
    # first in one of the two agreement runs beside two busy loops (rank not kept)
    ("seed_resnet18", "plain"): {"profiler_setup"},
    # both agreement runs; and data_loading in a `make test` beside two busy loops
    # (2026-12-06, f484146: the loader's wait 1st, the matrix multiplies 2nd)
    ("large_mlp", "plain"): {"profiler_setup", "data_loading"},
    # a 2-core machine of 2026-12-02: the for-loop Adam (CPU's default) took 6.5% of the
    # step, over its finding's 5% bar, and came first, the matrix multiplies second (3 of 3
    # recordings, both ways, before and after that day's changes)
    ("healthy_transformer", "plain"): {"profiler_setup", "optimizer"},
    ("healthy_transformer", "lightning"): {"optimizer"},
}


@pytest.mark.parametrize(("name", "how"), _runs())
def test_planted_bottleneck_is_the_top_finding(
    name: str, how: str, scenario_traces: dict[tuple[str, str], Path]
) -> None:
    """The planted bottleneck comes first in one recording of the run, the session's (or the
    committed one, `COMMITTED`): it is not recorded again until it does. Where a loaded
    machine measurably put another first (`LOADED_FIRST`), it may come second after that one.
    How often it comes first over several recordings is docs/measurements.md's "Accuracy
    over several recordings" (`scripts/accuracy_spread.py`)."""
    diagnosis = diagnose(profsight.load(COMMITTED.get((name, how), scenario_traces[(name, how)])))
    ranked = [f.category for f in diagnosis.findings]
    expected = SCENARIOS[name].expected
    if (name, how) == ("tiny_batch", "plain"):
        known_miss(name, ranked[0] if ranked else None, {expected}, TINY_PLAIN_READS[0])
    assert expected in ranked, ranked
    if ranked[0] != expected:
        assert ranked[0] in LOADED_FIRST.get((name, how), set()), ranked
        assert ranked[1] == expected, ranked
    top = diagnosis.findings[0]
    assert top.evidence and top.recommendation and top.trigger
    assert all(f.category in CATEGORIES for f in diagnosis.findings)


@pytest.mark.parametrize(
    ("name", "judgement", "how"),
    [
        pytest.param(
            name,
            judgement,
            how,
            marks=[pytest.mark.xfail(strict=True, raises=KnownMiss, reason=TINY_PLAIN_MISS)]
            if (name, how) == ("tiny_batch", "plain")
            else [],
        )
        for name, judgement in (
            ("slow_dataset", "starved_by_data"),
            ("tiny_batch", "too_small_for_hardware"),
            ("healthy_conv", "too_heavy_for_hardware"),
            ("heavy_metric", "balanced"),
        )
        for how in ("plain", "lightning")
    ],
)
def test_verdicts(
    name: str, judgement: str, how: str, scenario_traces: dict[tuple[str, str], Path]
) -> None:
    """The verdict of one recording of the run, as for the top finding (`COMMITTED`): no
    recording is made again."""
    verdict = diagnose(profsight.load(COMMITTED.get((name, how), scenario_traces[(name, how)])))
    verdict = verdict.verdict
    assert verdict is not None
    if (name, how) == ("tiny_batch", "plain"):
        known_miss(name, verdict.judgement, {judgement}, TINY_PLAIN_READS[1])
    assert verdict.judgement == judgement, verdict.summary


def test_breakdown_parts_add_up_to_each_step(scenario_traces: dict[tuple[str, str], Path]) -> None:
    for path in [sample_trace(), *scenario_traces.values()]:
        for step in breakdown(profsight.load(path)).steps:
            assert sum(step.host_us.values()) == pytest.approx(step.wall_us, rel=1e-6), path


def test_flops_of_the_sample_resnet() -> None:
    """ResNet-18 at 32x32 (stem stride 2, max pool): 74 MFLOP forward per image."""
    verdict = diagnose(profsight.load(sample_trace())).verdict
    assert verdict is not None
    per_sample = next(e for e in verdict.evidence if "per sample" in e)
    assert per_sample.startswith("217 MFLOP per sample (batch 16, 3,072 input values")
    from profsight.analyses.step.flops import op_flops

    profile = profsight.load(sample_trace())
    flops = op_flops(profile)
    ev = profile.events
    forward = sum(
        f
        for e, f in zip(flops.events.tolist(), flops.flops.tolist(), strict=True)
        if ev.strings[ev.name[e]] == "aten::convolution"
    )
    assert forward / 3 / 16 == pytest.approx(74e6, rel=0.01)  # 3 steps of 16 images
    assert flops.complete


# --- real GPU traces: the findings they plainly show -------------------------------------

REAL = SHARED_REAL / "traces"
GPU_CASES = [
    (
        "kineto_tb_plugin/2021-06/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
        {"data_loading", "low_precision"},
        set(),
    ),
    (
        "kineto_tb_plugin/2021-06/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz",
        {"low_precision"},
        {"data_loading"},
    ),
    # the CPU waits in syncs, but for a GPU that is 92% busy: that costs the step nothing
    (
        "tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
        {"compute_other"},
        {"host_device_sync"},
    ),
    ("hta/negative_queue_length_values_check/rank0.json.gz", {"communication"}, set()),
    ("hta/trace_diff/control/control.json.gz", {"communication"}, set()),
    ("kineto_docs/before_fix_trace.json", {"launch_overhead"}, set()),
    # the host waits 463 ms in a device-to-host copy_ (filling CUDA-graph inputs) while the
    # device runs nothing of the process: the read-back waits for work the trace does not
    # show (queued before the window), held, not a sync of its own work; with CUDA graphs (14
    # launches for 555 kernels) launches are not the cost (this case read launch_overhead
    # before reads counted as syncs, and host_device_sync before held work was told apart)
    (
        "tracelens/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
        {"gpu_held"},
        {"launch_overhead", "host_device_sync"},
    ),
]


@pytest.mark.parametrize(("path", "present", "absent"), GPU_CASES, ids=[c[0] for c in GPU_CASES])
def test_real_gpu_traces(path: str, present: set[str], absent: set[str]) -> None:
    categories = {f.category for f in diagnose(profsight.load(REAL / path)).findings}
    assert present <= categories
    assert not (absent & categories)


# --- thresholds, both sides ----------------------------------------------------------------


def _breakdown(wall: float, **phases: float) -> Breakdown:
    host = dict(phases)
    host["other"] = wall - sum(phases.values())
    return Breakdown((StepBreakdown("s", 0.0, wall, host, None),), "t", "profiler steps")


@pytest.mark.parametrize("rule", advice.PHASE_RULES, ids=lambda r: r.phase.value)
def test_phase_rule_thresholds(rule: advice.PhaseRule) -> None:
    wall = 100_000.0
    below = _breakdown(
        wall, forward=60_000.0, **{rule.phase.value: (rule.threshold_pct - 0.5) * wall / 100}
    )
    above = _breakdown(
        wall, forward=60_000.0, **{rule.phase.value: (rule.threshold_pct + 0.5) * wall / 100}
    )
    assert rule.category not in {f.category for f in from_breakdown(below)}
    assert rule.category in {f.category for f in from_breakdown(above)}


def test_per_step_overhead_thresholds() -> None:
    short, long = advice.SHORT_STEP_US - 1000, advice.SHORT_STEP_US + 1000
    pct = advice.PER_STEP_OVERHEAD_PCT

    def fires(wall: float, non_model_pct: float) -> bool:
        bd = _breakdown(wall, forward=wall * (100 - non_model_pct) / 100)
        return "per_step_overhead" in {f.category for f in from_breakdown(bd)}

    assert not fires(short, pct - 1)
    assert fires(short, pct + 1)
    assert not fires(long, pct + 20)


def _gpu_trace(
    tmp_path: Path,
    busy_pct: float,
    kernel_us: float = 50.0,
    sync_us: float = 0.0,
    nccl_us: float = 0.0,
    fp32: bool = False,
) -> Path:
    """One 10 ms step on an A100: one op launching kernels that keep the GPU `busy_pct` busy."""
    tb = TraceBuilder()
    tb.gpu()
    tb.step(1, 0.0, 10_000.0)
    tb.host("aten::mm", 10.0, 9_000.0)
    busy = 10_000.0 * busy_pct / 100
    name = "ampere_sgemm_128x64_nn" if fp32 else "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_nn"
    n = max(int(busy // kernel_us), 1)
    for i in range(n):
        tb.kernel(name, 20.0 + i * 3.0, 100.0 + i * kernel_us, min(kernel_us, busy))
    if nccl_us:
        tb.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 5_000.0, 8_000.0, nccl_us)
    if sync_us:
        tb.host("cudaDeviceSynchronize", 9_020.0, sync_us, cat="cuda_runtime")
    return tb.write(tmp_path / "gpu.json")


def _categories(path: Path) -> set[str]:
    return {f.category for f in diagnose(profsight.load(path)).findings}


def test_gpu_idle_threshold(tmp_path: Path) -> None:
    assert "gpu_idle" in _categories(_gpu_trace(tmp_path, advice.GPU_IDLE_PCT - 5))
    assert "gpu_idle" not in _categories(_gpu_trace(tmp_path, advice.GPU_IDLE_PCT + 5))


def _launches(tmp_path: Path, every_us: float, kernel_us: float, op_us: float) -> Path:
    """One 10 ms step on an A100: a loop of ops of `op_us`, each launching one kernel,
    `every_us` apart for the first 4 ms (Python between them); each kernel starts when
    launched or when the one before it ends."""
    tb = TraceBuilder()
    tb.gpu()
    tb.step(1, 0.0, 10_000.0)
    free = 0.0
    for i in range(int(4_000.0 // every_us)):
        at = 10.0 + i * every_us
        tb.host("aten::add", at, op_us)
        start = max(at + 5.0, free)
        tb.kernel("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_nn", at + 1.0, start, kernel_us)
        free = start + kernel_us
    return tb.write(tmp_path / "launches.json")


def test_launch_overhead_threshold(tmp_path: Path) -> None:
    """Launch overhead is kernels the launches outrun: each shorter than the time to the next
    launch, launches a launch's cost apart (issue 36: "thousands of 2 µs kernels launched
    back to back are launch overhead")."""
    # 8 µs kernels launched every 30 µs by ops of 24 µs: the device idles between them
    assert "launch_overhead" in _categories(_launches(tmp_path, 30.0, 8.0, 24.0))
    # 40 µs kernels launched every 30 µs: they queue, the launches keep up
    assert "launch_overhead" not in _categories(_launches(tmp_path, 30.0, 40.0, 24.0))
    # 8 µs kernels 200 µs apart from ops of 20 µs: the host is in Python between them (the
    # idle finding's), not dispatching
    found = _categories(_launches(tmp_path, 200.0, 8.0, 20.0))
    assert "launch_overhead" not in found and "gpu_idle" in found


def test_sync_threshold(tmp_path: Path) -> None:
    step = 10_000.0
    below = (advice.SYNC_PCT - 0.5) * step / 100
    above = (advice.SYNC_PCT + 0.5) * step / 100
    assert "host_device_sync" not in _categories(_gpu_trace(tmp_path, 60, sync_us=below))
    assert "host_device_sync" in _categories(_gpu_trace(tmp_path, 60, sync_us=above))


def test_communication_threshold(tmp_path: Path) -> None:
    step = 10_000.0
    below = (advice.COMMUNICATION_PCT - 1) * step / 100
    above = (advice.COMMUNICATION_PCT + 1) * step / 100
    assert "communication" not in _categories(_gpu_trace(tmp_path, 60, nccl_us=below))
    assert "communication" in _categories(_gpu_trace(tmp_path, 60, nccl_us=above))


def test_fp32_on_tensor_cores(tmp_path: Path) -> None:
    assert "low_precision" in _categories(_gpu_trace(tmp_path, 60, fp32=True))
    assert "low_precision" not in _categories(_gpu_trace(tmp_path, 60, fp32=False))


def test_memory_threshold(tmp_path: Path) -> None:
    def trace(fraction: float) -> Path:
        tb = TraceBuilder()
        tb.gpu(memory=1000 * 2**20)
        tb.step(1, 0.0, 1000.0)
        tb.host("aten::empty", 10.0, 5.0)
        tb.kernel("ampere_sgemm_128x64_nn", 20.0, 30.0, 900.0)
        tb.memory(12.0, 2**20, int(1000 * 2**20 * fraction))
        return tb.write(tmp_path / "mem.json")

    assert "memory" not in _categories(trace(advice.MEMORY_PEAK_FRACTION - 0.02))
    assert "memory" in _categories(trace(advice.MEMORY_PEAK_FRACTION + 0.02))


def _module_trace(tmp_path: Path, own_pct: float, own_fraction: float) -> Path:
    """A 10 ms step with one module whose own time (outside its layers) is set."""
    tb = TraceBuilder()
    tb.step(1, 0.0, 10_000.0)
    total = 10_000.0 * own_pct / 100 / own_fraction
    own = total * own_fraction
    tb.host("[pl][module]my.Block: block", 0.0, total, cat="user_annotation")
    tb.host(
        "[pl][module]torch.nn.modules.conv.Conv2d: block.conv",
        0.0,
        total - own,
        cat="user_annotation",
    )
    tb.host("aten::conv2d", 1.0, total - own - 2.0)
    tb.host("aten::add", total - own + 1.0, own - 2.0)  # the skip connection
    return tb.write(tmp_path / "module.json")


def test_module_own_time_thresholds(tmp_path: Path) -> None:
    pct, fraction = advice.MODULE_OWN_PCT, advice.MODULE_OWN_FRACTION
    assert "module_overhead" in _categories(_module_trace(tmp_path, pct + 1, fraction + 0.1))
    assert "module_overhead" not in _categories(_module_trace(tmp_path, pct - 1, fraction + 0.1))
    assert "module_overhead" not in _categories(_module_trace(tmp_path, pct + 1, fraction - 0.1))


def test_tiny_ops_threshold(tmp_path: Path) -> None:
    def trace(ops: int) -> Path:
        tb = TraceBuilder()
        tb.step(1, 0.0, 10_000.0)
        for i in range(ops):
            tb.host("aten::select", 100.0 + i * 20.0, advice.TINY_OP_US - 10)
        return tb.write(tmp_path / "tiny.json")

    assert "module_overhead" not in _categories(trace(advice.TINY_OPS_PER_STEP - 5))
    assert "module_overhead" in _categories(trace(advice.TINY_OPS_PER_STEP + 5))


def test_conv_bias_before_batch_norm(tmp_path: Path) -> None:
    def trace(bias: bool) -> Path:
        tb = TraceBuilder()
        tb.step(1, 0.0, 1000.0)
        tb.host("aten::conv2d", 10.0, 100.0)
        dims = [[8, 3, 32, 32], [16, 3, 3, 3], [16] if bias else []]
        tb.host("aten::convolution", 11.0, 98.0, **{"Input Dims": dims})
        tb.host("aten::batch_norm", 120.0, 50.0)
        return tb.write(tmp_path / "bias.json")

    def titles(path: Path) -> list[str]:
        return [f.title for f in diagnose(profsight.load(path)).findings]

    assert any("bias that BatchNorm removes" in t for t in titles(trace(True)))
    assert not any("bias that BatchNorm removes" in t for t in titles(trace(False)))


def test_device_idle_split_by_host_activity(tmp_path: Path) -> None:
    """Idle time under a sync call, a blocking copy call, a data fetch, or nothing."""
    tb = TraceBuilder()
    tb.gpu()
    tb.step(1, 0.0, 1000.0)
    tb.host("aten::mm", 0.0, 100.0)
    tb.kernel("ampere_sgemm_128x64_nn", 1.0, 10.0, 90.0)  # busy 10..100
    tb.host("cudaDeviceSynchronize", 100.0, 100.0, cat="cuda_runtime")  # sync 100..200
    tb.host("cudaMemcpy", 200.0, 200.0, cat="cuda_runtime")  # copy 200..400
    tb.host(
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        400.0,
        300.0,
        cat="user_annotation",
    )  # data 400..700, then nothing until 1000
    step = breakdown(profsight.load(tb.write(tmp_path / "idle.json"))).steps[0]
    assert step.device_busy_us == pytest.approx(90.0)
    assert step.device_idle_us == pytest.approx(
        {
            "ahead": 0.0,
            "startup": 0.0,
            "held": 0.0,
            "sync": 100.0,
            "copy": 200.0,
            "input": 300.0,
            "host": 310.0,
        }
    )


@pytest.mark.parametrize(
    ("offset", "judgement"), [(-2.0, "too_heavy_for_hardware"), (2.0, "starved_by_data")]
)
def test_input_bound_verdict_threshold(offset: float, judgement: str, tmp_path: Path) -> None:
    from profsight.knowledge.advice import INPUT_BOUND_PCT

    # a 100 ms step: long enough that a compute-bound CPU step reads as heavy for the CPU
    data = (INPUT_BOUND_PCT + offset) * 1000.0  # µs of a 100,000 µs step
    tb = TraceBuilder()
    tb.step(1, 0.0, 100_000.0)
    tb.host(
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        0.0,
        data,
        cat="user_annotation",
    )
    tb.host("aten::mm", data, 100_000.0 - data)
    verdict = diagnose(profsight.load(tb.write(tmp_path / "v.json"))).verdict
    assert verdict is not None and verdict.judgement == judgement


def test_for_loop_optimizer_is_named(scenario_traces: dict[tuple[str, str], Path]) -> None:
    """Adam(foreach=False) over 300 tensors: the single-tensor implementation is reported."""
    for how in ("plain", "lightning"):
        titles = [
            f.title
            for f in diagnose(profsight.load(scenario_traces[("huge_optimizer", how)])).findings
        ]
        assert any("one tensor at a time" in t for t in titles), how


def test_allocation_churn_threshold(tmp_path: Path) -> None:
    from profsight.knowledge.advice import ALLOCATIONS_PER_STEP

    def trace(n: int) -> Path:
        tb = TraceBuilder()
        tb.step(1, 0.0, 10_000.0)
        tb.host("aten::empty", 0.0, 9_000.0)
        for i in range(n):
            tb.memory(1.0 + i * 0.004, 64, 64 * (i + 1), device_type=0)
        return tb.write(tmp_path / "alloc.json")

    assert "memory" not in _categories(trace(ALLOCATIONS_PER_STEP - 10))
    assert "memory" in _categories(trace(ALLOCATIONS_PER_STEP + 10))


@pytest.mark.parametrize(
    "path", sorted((Path(__file__).parent / "data/tables").glob("*.txt")), ids=lambda p: p.name
)
def test_table_breakdowns_add_up_to_the_step(path: Path) -> None:
    from profsight.analyses.pipeline import diagnose_table

    profile = profsight.load(path)
    assert isinstance(profile, profsight.TextProfile)
    for step in diagnose_table(profile.run()).breakdown.steps:
        assert sum(step.host_us.values()) == pytest.approx(step.wall_us, rel=1e-6)


def _setup_titles(path: Path) -> list[str]:
    findings = diagnose(profsight.load(path)).findings
    return [f.title for f in findings if f.category == "profiler_setup"]


def _record(
    tmp_path: Path, steps: int, record_shapes: bool, use_schedule: bool, with_stack: bool = False
) -> Path:
    """A real torch CPU profile of a small MLP: `steps` active steps of a schedule (with a
    warm-up step), or the same loop without a schedule or prof.step()."""
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    x = torch.randn(32, 64)
    plan = schedule(wait=0, warmup=1, active=steps, repeat=1) if use_schedule else None
    path = tmp_path / f"run_{steps}_{record_shapes}_{use_schedule}_{with_stack}.json"
    with profile(
        activities=[ProfilerActivity.CPU],
        record_shapes=record_shapes,
        with_stack=with_stack,
        schedule=plan,
        on_trace_ready=lambda p: p.export_chrome_trace(str(path)) if use_schedule else None,
    ) as prof:
        for _ in range(steps + 1):
            model(x).sum().backward()
            if use_schedule:
                prof.step()
    if not use_schedule:
        prof.export_chrome_trace(str(path))
    return path


def test_profile_setup_problems_are_named(tmp_path: Path) -> None:
    """Each way the profiler call itself is wrong gives its own note; a good call gives none."""
    good = _setup_titles(_record(tmp_path, 4, record_shapes=True, use_schedule=True))
    assert not [t for t in good if "ProfilerStep" in t or "shapes" in t or "step was" in t]
    no_steps = _setup_titles(_record(tmp_path, 3, record_shapes=True, use_schedule=False))
    assert any("No ProfilerStep ranges" in t for t in no_steps)
    one_step = _setup_titles(_record(tmp_path, 1, record_shapes=True, use_schedule=True))
    assert "Only 1 step was profiled" in one_step
    no_shapes = _setup_titles(_record(tmp_path, 4, record_shapes=False, use_schedule=True))
    assert "Input shapes were not recorded" in no_shapes
    stack = "Python stack tracing (with_stack=True) adds to the host times"
    assert stack not in good
    assert stack in _setup_titles(
        _record(tmp_path, 4, record_shapes=True, use_schedule=True, with_stack=True)
    )


@pytest.mark.parametrize(("share", "noted"), [(1.0, False), (5.0, True)])
def test_profiler_overhead_in_the_steps(share: float, noted: bool, tmp_path: Path) -> None:
    """Kineto's Activity Buffer Request (as a real run records it) taking `share` % of the
    real H100 trace's window: noted from PROFILER_OVERHEAD_PCT (2%) on."""
    import json

    doc = json.loads((DATA / "real/before_fix_trace.json").read_text())
    timed = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    lo = min(e["ts"] for e in timed)
    hi = max(e["ts"] + e["dur"] for e in timed)
    doc["traceEvents"].append(
        {
            "ph": "X", "cat": "overhead", "name": "Activity Buffer Request",
            "pid": timed[0]["pid"], "tid": timed[0]["tid"] + 1,
            "ts": lo, "dur": (hi - lo) * share / 100,
        }
    )  # fmt: skip
    path = tmp_path / "overhead.json"
    path.write_text(json.dumps(doc))
    titles = _setup_titles(path)
    assert any("The profiler's own work" in t for t in titles) is noted


def test_gpu_run_profiled_without_device_activity(tmp_path: Path) -> None:
    """A real H100 trace (Kineto's docs) with its device activity removed, as a run profiled
    with activities=[ProfilerActivity.CPU] looks: launch calls, no kernels."""
    import json

    doc = json.loads((DATA / "real/before_fix_trace.json").read_text())
    assert any(e.get("cat") == "kernel" for e in doc["traceEvents"])
    doc["traceEvents"] = [
        e for e in doc["traceEvents"] if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset")
    ]
    listed = tmp_path / "gpus_listed.json"
    listed.write_text(json.dumps(doc))
    diagnosis = diagnose(profsight.load(listed))
    top = diagnosis.findings[0]
    assert top.title == NO_DEVICE_ACTIVITY_TITLE and top.blocks
    assert top.severity is Severity.HIGH
    assert "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]" in top.recommendation
    shown = [e.value for e in top.evidence]
    assert any(v.startswith("devices listed: NVIDIA H100") for v in shown)
    assert any("cudaLaunchKernel" in v for v in shown)
    verdict = diagnosis.verdict
    assert verdict is not None and verdict.judgement == "not_judged"
    assert verdict.bound == "unrecorded" and "CPU-only" not in verdict.summary
    assert not any("achieved" in e or "device busy" in e for e in verdict.evidence)
    doc["deviceProperties"] = []  # the runtime calls alone still show the GPU
    path = tmp_path / "no_devices_listed.json"
    path.write_text(json.dumps(doc))
    assert NO_DEVICE_ACTIVITY_TITLE in _setup_titles(path)
    assert NO_DEVICE_ACTIVITY_TITLE not in _setup_titles(DATA / "real/before_fix_trace.json")


@pytest.mark.parametrize(("warmup", "noted"), [(0, True), (1, False)])
def test_first_step_without_warm_up(warmup: int, noted: bool) -> None:
    """A one-off cost in the first iteration (200 ms, as lazy initialisation or autotuning
    takes): named when that iteration is profiled (no warm-up), absent when a warm-up step
    took it. Read from two committed recordings (tests/data/recorded/README.md), each made
    once: recorded live, the check depends on the machine. Over 8 recordings of each beside
    two busy loops on 2 cores (and the rest of a test run), with the warm-up the first
    profiled step read 0.35-2.13x the others (2 of 8 over the 1.5x bar: the load's blips, not
    the code), without it 1.8-8.65x (steps stretched by the load, the sleep not)."""
    path = DATA / "recorded" / f"first_step_warmup{warmup}.pt.trace.json.gz"
    diagnosis = diagnose(profsight.load(path))
    walls = [s.wall_us for s in diagnosis.breakdown.steps]
    assert len(walls) == 4
    others = sorted(walls[1:])[1]
    titles = [f.title for f in diagnosis.findings if f.category == "profiler_setup"]
    named = [t for t in titles if t.startswith("The first profiled step took")]
    assert bool(named) is noted, (walls, titles)
    if noted:  # the planted 200 ms is in the first step, and the title gives its ratio
        assert walls[0] - others > 200_000
        assert named == [f"The first profiled step took {walls[0] / others:.1f}x the others"]
    else:
        assert walls[0] < 1.5 * others
