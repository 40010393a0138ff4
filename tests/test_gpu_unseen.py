"""GPU profiles by others that profsight had not seen (tests/data/gpu_unseen): held to the
readings written in its README before profsight was run on them. A miss stays visible as a
strict expected failure with its reason (`conftest.known_miss`), never fixed by a rule that
names a file."""

from __future__ import annotations

import pytest

import profsight

from conftest import DATA, KnownMiss, known_miss

UNSEEN = DATA / "gpu_unseen"
#: file -> (top findings accepted, verdict judgements accepted, categories that must not be
#: reported)
EXPECTED: dict[str, tuple[set[str], set[str], set[str]]] = {
    # read compute_other first until the own kernels of custom autograd Functions (FP8
    # grouped GEMMs, flash attention) were classed by their names
    # communication is hidden: since issue 36 it is said, as information (tested below)
    "deepseek-ai__profile-data__1.json.gz": (
        {"compute_matmul"},
        {"too_heavy_for_hardware", "balanced"},
        {"low_precision"},
    ),
    # README.p.md: blog posts and tutorials
    "Quentin-Anthony__torch-profiling-tutorial__1.txt": (
        {"gpu_idle", "launch_overhead"},
        {"too_small_for_hardware"},
        set(),
    ),
    "duoan__playground-cuda__1.txt": ({"data_loading"}, {"starved_by_data"}, set()),
    "duoan__playground-cuda__2.txt": (
        {"launch_overhead", "gpu_idle"},
        {"too_small_for_hardware"},
        set(),
    ),
    # missed when first run: no printed row had Self CUDA time (the kernel rows fell past the
    # row limit), and the device's 9.5 ms a step outlasted the host's 964 µs range
    "Quentin-Anthony__torch-profiling-tutorial__2.txt": (
        {"compute_matmul", "compute_other"},
        {"too_heavy_for_hardware", "balanced"},
        {"gpu_idle", "launch_overhead", "host_device_sync"},
    ),
    # missed when first run: the GPU-idle finding's replay also removed the 298 ms wait for
    # the input, which is the data-loading finding's
    "duoan__playground-cuda__3.json.gz": ({"data_loading"}, {"starved_by_data"}, set()),
    # README.i.md: issue threads
    "Lightning-AI__pytorch-lightning__1.txt": (
        {"data_loading", "per_step_overhead"},
        {"starved_by_data", "too_small_for_hardware", "not_judged"},
        set(),
    ),
    # missed when first run: a footer-less paste's device total was the printed rows' sum,
    # not rebuilt from their Self CUDA %
    "ashawkey__torch-ngp__1.txt": (
        {"compute_other", "compute_matmul"},
        {"too_heavy_for_hardware", "balanced", "not_judged"},
        {"low_precision", "launch_overhead", "data_loading"},
    ),
    # README.c.md: profiles committed to repositories
    "grYe99__grYe-nano-vllm__1.txt": (
        {"compute_matmul", "launch_overhead", "gpu_idle"},
        {"too_small_for_hardware", "not_judged"},
        {"communication", "memcpy"},
    ),
    "sidnb13__torch-profiling-tutorial__1.json.gz": (
        {"gpu_idle", "launch_overhead"},
        {"too_small_for_hardware"},
        set(),
    ),
}
#: Expectations profsight misses: file -> (top findings accepted, verdict judgements accepted,
#: categories that must not be reported, the top finding it gives instead, the reason). The
#: verdict and the absent categories still hold; only the top finding is the known miss.
MISSES: dict[str, tuple[set[str], set[str], set[str], str, str]] = {
    "andrew128__andrew128.github.io__1.txt": (
        {"memcpy"},
        {"too_small_for_hardware"},
        set(),
        "gpu_idle",
        "expected the pageable host-to-device copies first (Memcpy HtoD (Pageable -> Device) "
        "1.24 s of device time; aten::copy_ 6.04 s of self CPU for 1.28 s on the device); "
        "the memcpy finding is now made from the printed Pageable row (it was not: the rule "
        "read only the copy rows of the family basis) but ranks second at 8% of the window, "
        "after 62% of device idle time in the batch-1 decode",
    ),
}


def _read(name: str) -> profsight.Report:
    return profsight.explain(str(UNSEEN / name))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_unseen_gpu_profiles_read_as_their_authors_say(name: str) -> None:
    tops, judgements, absent = EXPECTED[name]
    report = _read(name)
    assert report.findings[0].category in tops
    assert report.verdict is not None and report.verdict.judgement in judgements
    assert not absent & {f.category for f in report.findings}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, raises=KnownMiss, reason=reason))
        for name, (*_, reason) in sorted(MISSES.items())
    ],
)
def test_unseen_gpu_profiles_known_misses(name: str) -> None:
    tops, judgements, absent, wrong, _ = MISSES[name]
    report = _read(name)
    known_miss(name, report.findings[0].category, tops, wrong)
    # a fixed top finding must come with the expected verdict and absences
    assert report.verdict is not None and report.verdict.judgement in judgements
    assert not absent & {f.category for f in report.findings}


def test_unseen_collection_is_complete() -> None:
    """Every profile in tests/data/gpu_unseen is held to an expectation."""
    files = {p.name for p in UNSEEN.iterdir() if not p.name.startswith("README")}
    assert files == set(EXPECTED) | set(MISSES)


def test_hidden_communication_is_information_with_what_is_exposed() -> None:
    """DeepSeek's DualPipe chunk: DeepEP's all-to-all runs 113 ms on its own stream, 4 ms of
    it with nothing computing. The README expected no communication finding (it is no
    problem); the labelled corpus asks that it be reported (issue 36: "communication hidden
    behind compute is reported (info), with how much is exposed"): both hold."""
    report = _read("deepseek-ai__profile-data__1.json.gz")
    comms = [f for f in report.findings if f.category == "communication"]
    assert len(comms) == 1 and comms[0].severity.name == "INFO"
    assert "3% of the step exposed" in comms[0].title
