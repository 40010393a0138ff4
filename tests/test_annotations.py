"""Device-side annotations are labels, and advice the user already followed is not given.

Kineto writes the device span of every ``record_function`` range as a ``gpu_user_annotation``
(``ProfilerStep#N``, ``DistributedDataParallel.forward``, torch.compile's ``## Call
CompiledFxGraph ... ##``, ``nccl:all_reduce``): it covers kernels and is none. The GPU traces
are real ones by others (tests/data/real/README.md, tests/data/gpu_traces/README.md,
tests/data/gpu_tables/README.md); the CPU traces are recorded here, with a schedule that
warms up and ``record_shapes=True``.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
import torch
from torch.profiler import ProfilerActivity, profile, schedule

import profsight
from profsight.analyses.findings.compute import compute_category
from profsight.analyses.pipeline import diagnose
from profsight.model.profile import Profile
from profsight.renderers.html import page_data

DATA = Path(__file__).parent / "data"
#: Real GPU traces holding gpu_user_annotation events, and the labels each holds.
ANNOTATED = {
    "real/torch_compile_triton_mi300x.json.gz": ("## Call CompiledFxGraph",),
    "real/nccl_data.json.gz": ("DistributedDataParallel.forward", "nccl:all_reduce"),
    "gpu_traces/incredere__gpu-profiling-pytorch-lab/amp.pt.trace.json.gz": (
        "ProfilerStep*",
        "Optimizer.step#Adam.step",
    ),
}
KERNEL_KINDS = {"kernel", "memcpy", "memset", "communication"}


def _trace(path: Path) -> Profile:
    profile = profsight.load(path)
    assert isinstance(profile, Profile)
    return profile


def _labels(path: Path) -> set[str]:
    """The names of the trace's device-side annotation rows."""
    table = profsight.load(path).table()
    return {r.name for r in table.rows if r.event_kind == "device_annotation"}


@pytest.mark.parametrize("name", sorted(ANNOTATED))
def test_device_annotations_are_in_no_kernel_list(name: str) -> None:
    """HTML's top kernels, the JSON table's kernel rows and the text's reading of the kernel
    rows name no annotation, and each annotation row reads as a label, not as kernels it
    launched or a share of the device's work."""
    path = DATA / name
    labels = _labels(path)
    for expected in ANNOTATED[name]:
        assert any(label.startswith(expected) for label in labels), (expected, labels)
    report = profsight.explain(path)
    top_kernels = [bar["name"] for bar in page_data(report)["top_kernels"]]
    assert top_kernels and not labels & set(top_kernels), top_kernels
    doc = json.loads(report.json())
    kernel_rows = {r["name"] for r in doc["table"] if r["kind"] in KERNEL_KINDS and r["is_device"]}
    assert kernel_rows and not labels & kernel_rows
    kernel_line = next(line for line in report.walkthrough if line.startswith("kernel rows"))
    assert not any(label in kernel_line for label in labels), kernel_line
    for e in report.rows:
        if e.row.name in labels and e.row.is_device:
            assert e.explanation.kind.value == "user"
            assert "a label over the kernels" in e.explanation.meaning
            assert "launches itself" not in e.explanation.reading
            assert "of all device time" not in e.explanation.reading


def test_printed_device_spans_are_labels() -> None:
    """A table torch printed (no event kinds): the device-only ProfilerStep* and
    Optimizer.step# rows are the spans of those ranges, not kernels they launch themselves."""
    report = profsight.explain(DATA / "gpu_tables/JonathanHourany__pytorch-sandbox__1.txt")
    spans = [
        e
        for e in report.rows
        if e.row.name in ("ProfilerStep*", "Optimizer.step#Adam.step") and not e.row.cpu_total_us
    ]
    assert len(spans) == 2 and all(e.row.device_total_us > 0 for e in spans)
    for e in spans:
        assert e.explanation.kind.value == "user"
        assert "launches itself" not in e.explanation.reading
        assert e.explanation.reading.startswith("spans ")


def test_compiled_regions_are_not_elementwise_compute(compiled: Path) -> None:
    """A model compiled with Inductor (its matrix multiplies as aten::addmm/mm extern calls,
    the rest fused into generated code): the compiled regions' ranges (Torch-Compiled
    Region, CompiledFunction, CompiledFunctionBackward) are not filed as elementwise ops."""
    diagnosis = diagnose(_trace(compiled))
    regions = re.compile(r"^(Torch-Compiled Region|CompiledFunction|## Call CompiledFxGraph)")
    for f in diagnosis.findings:
        if f.category == "compute_other":
            assert not [e for e in f.evidence if regions.match(e.label)], f.evidence
    # the rule itself, not only the rows shown: a loaded make test (2026-12-05) stretched
    # the step's ops until CompiledFunctionBackward's own 3.3 ms reached the finding's evidence
    names = {ev for ev in _trace(compiled).events.strings if regions.match(ev)}
    assert {"CompiledFunction", "CompiledFunctionBackward"} <= names
    assert [n for n in names if compute_category(n) is not None] == []


# ----------------------------------------------------------------- recorded here, on the CPU

#: Warm-up steps and active steps of the recording's schedule (wait=1: ProfilerStep#2 first).
WAIT, WARMUP, ACTIVE = 1, 1, 4


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small model compiled with Inductor (normalisation and activations only: no matrix
    multiply, so no op whose FLOPs profsight counts), recorded with record_shapes=True and
    schedule(wait=1, warmup=1, active=4); the first active step also sleeps ten steps' time
    (at least 200 ms: a one-off that a warm-up does not take: a recompile, a checkpoint)."""
    import torch._inductor.config as inductor

    out = tmp_path_factory.mktemp("compiled")
    path = out / "compiled.pt.trace.json"
    cache_dir = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.fspath(out / "inductor")
    try:
        with inductor.patch(fx_graph_cache=False):  # compile for real, whatever was cached
            _record_compiled(path)
    finally:
        if cache_dir is None:
            del os.environ["TORCHINDUCTOR_CACHE_DIR"]
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
        torch._dynamo.reset()
    return path


def _record_compiled(path: Path) -> None:
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = torch.compile(
        torch.nn.Sequential(torch.nn.LayerNorm(256), torch.nn.GELU(), torch.nn.LayerNorm(256)),
        backend="inductor",
    )
    x = torch.randn(512, 256, requires_grad=True)
    model(x).sum().backward()  # compile outside the window
    began = time.perf_counter()
    for _ in range(4):
        model(x).sum().backward()
    # the one-off: far longer than a step on this machine, loaded or not
    one_off = max(0.2, 10 * (time.perf_counter() - began))
    with profile(
        activities=[ProfilerActivity.CPU],
        record_shapes=True,
        schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=1),
        on_trace_ready=lambda prof: prof.export_chrome_trace(str(path)),
    ) as prof:
        for i in range(WAIT + WARMUP + ACTIVE):
            if i == WAIT + WARMUP:
                time.sleep(one_off)
            for _ in range(4):
                model(x).sum().backward()
            prof.step()


def test_no_warm_up_advice_to_a_schedule_with_one(compiled: Path) -> None:
    """The trace starts at ProfilerStep#2: two steps ran before the recorded ones, so the
    slow first step is named, but no warm-up is asked of a schedule that has one."""
    diagnosis = diagnose(_trace(compiled))
    assert diagnosis.breakdown.steps[0].name == f"ProfilerStep#{WAIT + WARMUP}"
    setup = [f for f in diagnosis.findings if f.category == "profiler_setup"]
    first = [f for f in setup if f.title.startswith("The first profiled step took")]
    assert len(first) == 1, [f.title for f in setup]
    assert "after 2 unrecorded steps" in first[0].title
    assert "ProfilerStep#2" in first[0].explanation
    for f in setup:
        assert "Add a warm-up" not in f.recommendation
        assert "Warm up before profiling" not in f.recommendation


def test_first_step_without_a_schedule_still_gets_the_warm_up_advice() -> None:
    """ProfilerStep#0 first (tests/data/recorded/README.md): nothing ran before it."""
    diagnosis = diagnose(_trace(DATA / "recorded/first_step_warmup0.pt.trace.json.gz"))
    first = [f for f in diagnosis.findings if f.title.startswith("The first profiled step")]
    assert len(first) == 1
    assert first[0].recommendation.startswith("Add a warm-up to the schedule")


def test_record_shapes_is_not_asked_of_a_trace_recorded_with_it(compiled: Path) -> None:
    """Shapes were recorded (the header's record_shapes, the ops' Input Dims), and the
    model's work runs in compiled regions: FLOPs are unknown because those regions record
    no shapes, which is what the verdict says."""
    p = _trace(compiled)
    assert p.meta.flag("record_shapes") is True
    diagnosis = diagnose(p)
    assert not [f for f in diagnosis.findings if "record_shapes=True" in f.recommendation]
    assert diagnosis.verdict is not None
    flops = [e for e in diagnosis.verdict.evidence if e.startswith("FLOPs unknown")]
    assert flops == [
        "FLOPs unknown: the shapes of compiled regions are not recorded; FLOPs for their "
        "kernels are unknown (the trace was recorded with record_shapes=True: "
        "torch.compile's generated code launches them, not aten ops)"
    ]
