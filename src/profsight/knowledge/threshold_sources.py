"""Where each threshold of the rules comes from: one typed entry per numeric constant of
`profsight.knowledge.advice`, saying which finding category (or other judgement) it gates and
on what it rests.

The value is read from `advice`, where the analyses read it, so it is written once; this
registry only declares its basis. A threshold is one of:

* ``measured``: a figure a script or test in this repository measures (`where`); a script
  under ``scripts/`` where one exists, else the test that holds the measurement;
* ``peer``: a peer tool's rule (the TensorBoard profiler plugin's);
* ``documented``: a vendor's documentation or a paper (`where` names it);
* ``own``: profsight's own choice, with its reason in `advice` beside the constant;
* ``derived``: set from another threshold (`where` names it).

`tests/test_threshold_sources.py` holds every numeric constant of `advice` declared here once,
every ``measured`` entry naming a file that exists, and each script's docstring naming what it
measures; the catalogue page lists the table (`threshold_rows`).
"""

from __future__ import annotations

from typing import Final, Literal

import msgspec

from profsight.knowledge import advice

Basis = Literal["measured", "peer", "documented", "own", "derived"]

MARGINS: Final = "scripts/threshold_margins.py"
SPREAD: Final = "scripts/accuracy_spread.py"
LATENCY: Final = "scripts/launch_latency.py"
PLUGIN: Final = "TensorBoard profiler plugin"
CUDA_GRAPHS: Final = "CUDA programming guide, CUDA Graphs"
CUDA_SYNC: Final = 'CUDA runtime API, "API synchronization behavior"'

#: What a threshold gates when it is no finding category's.
VERDICT: Final = "(verdict)"
SEVERITY: Final = "(severity)"
TABLE: Final = "(reading tables)"


class Threshold(msgspec.Struct, frozen=True):
    """One threshold: its constant, what it gates and on what it rests."""

    name: str
    """The constant's name in `profsight.knowledge.advice`, or the threshold's name in the
    `catalogue.Rule` that declares it with its value (`given`)."""
    category: str
    """The finding category it gates (or `VERDICT`, `SEVERITY`, `TABLE`)."""
    basis: Basis
    where: str = ""
    """The script, test, document or threshold it rests on ("" for ``own`` and ``peer``
    where the constant's comment says it all)."""
    given: float | None = None
    """Its value, where a rule declares it (a new category's threshold lives in its `Rule`,
    read with `catalogue.limit`); None: the constant of `advice` of that name."""
    reason: str = ""
    """Why this value, where a rule declares it (an `advice` constant's comment says it)."""

    @property
    def value(self) -> float:
        if self.given is not None:
            return self.given
        value: float = getattr(advice, self.name)
        return value


def _t(name: str, category: str, basis: Basis, where: str = "") -> Threshold:
    return Threshold(name, category, basis, where)


THRESHOLDS: Final[tuple[Threshold, ...]] = (
    # severity and ranking
    _t("HIGH_SEVERITY_PCT", SEVERITY, "own"),
    _t("MEDIUM_SEVERITY_PCT", SEVERITY, "own"),
    _t("MINOR_PCT", SEVERITY, "own"),
    _t("BORDERLINE_FRACTION", VERDICT, "measured", SPREAD),
    # data
    _t("LEAD_IN_INPUT_FRACTION", "data_loading", "own"),
    # host
    _t("PER_STEP_OVERHEAD_PCT", "per_step_overhead", "measured", MARGINS),
    _t("PER_STEP_HIGH_PCT", "per_step_overhead", "own"),
    _t("SHORT_STEP_US", "per_step_overhead", "own"),
    _t("BATCH_SCALE", "per_step_overhead", "own"),
    _t("LEAD_IN_PCT", "host_lead_in", "own"),
    _t("LEAD_IN_UNNAMED_FRACTION", "host_lead_in", "own"),
    _t("MODULE_OWN_PCT", "module_overhead", "measured", MARGINS),
    _t("MODULE_OWN_FRACTION", "module_overhead", "own"),
    _t("TINY_OP_US", "module_overhead", "own"),
    _t("TINY_OPS_PER_STEP", "module_overhead", "own"),
    _t("HOT_FUNCTION_PCT", "module_overhead", "own"),
    _t("HOT_FUNCTION_SHARE", "module_overhead", "own"),
    _t("STACK_FRAMES_PER_STEP", "profiler_setup", "measured", "tests/test_diagnose.py"),
    # training loop
    _t("FOR_LOOP_OPS_PER_STEP", "optimizer", "own"),
    _t("FOR_LOOP_MIN_PCT", "optimizer", "derived", "MINOR_PCT"),
    _t("FOR_LOOP_MEDIUM_PCT", "optimizer", "derived", "MEDIUM_SEVERITY_PCT"),
    _t("MANUAL_OPTIMIZATION_FRACTION", "optimizer", "own"),
    _t("METRIC_HOLDER_SLACK", "metrics", "own"),
    # device
    _t("GPU_IDLE_PCT", "gpu_idle", "peer", PLUGIN),
    _t("IDLE_LARGEST_MIN_PCT", "gpu_idle", "derived", "INPUT_BOUND_PCT"),
    _t("SHORT_KERNEL_US", "launch_overhead", "own"),
    _t("LAUNCH_BOUND_FRACTION", "launch_overhead", "own"),
    _t("LAUNCH_DISPATCH_FRACTION", "launch_overhead", "own"),
    _t(
        "GRAPH_MIN_LAUNCHES", "launch_overhead", "documented", "CUDA programming guide, CUDA Graphs"
    ),
    _t("HELD_BACK_US", "gpu_held", "measured", LATENCY),
    _t("HELD_PCT", "gpu_held", "derived", "SYNC_PCT"),
    _t("HELD_DOMINANT_PCT", "gpu_held", "own"),
    # sync and copies
    _t("SYNC_PCT", "host_device_sync", "own"),
    _t("ITEM_LOOP_PER_STEP", "host_device_sync", "own"),
    _t("READ_BACK_OP_US", "host_device_sync", "own"),
    _t("COPY_PCT", "memcpy", "peer", PLUGIN),
    _t("BLOCKING_CALL_US", "memcpy", "measured", "tests/data/gpu_tables"),
    _t("BLOCKING_COPY_FRACTION", "memcpy", "documented", CUDA_SYNC),
    _t("PCIE_SPEED_FRACTION", "memcpy", "own"),
    # compute and precision
    _t("COMPUTE_PCT", "compute_matmul", "own"),
    _t("FP32_ON_TENSOR_CORES_PCT", "low_precision", "own"),
    # communication
    _t("COMMUNICATION_PCT", "communication", "peer", PLUGIN),
    _t("COMMUNICATION_BOUND_SHARE", "communication", "own"),
    _t("COMMUNICATION_NOTED_PCT", "communication", "own"),
    _t("STRAGGLER_PCT", "straggler", "measured", "tests/test_job.py"),
    _t("STRAGGLER_CAUSE_SHARE", "straggler", "own"),
    # memory
    _t("MEMORY_PEAK_FRACTION", "memory", "peer", PLUGIN),
    _t("PEAK_OPS_IN_EVIDENCE", "memory", "own"),
    _t("OPTIMIZER_STATE_SHARE", "memory", "own"),
    _t("ALLOCATIONS_PER_STEP", "memory", "own"),
    _t("COPY_CHURN_PCT", "memory", "derived", "MODULE_OWN_PCT"),
    # setup
    _t("WARMUP_OUTLIER", "profiler_setup", "derived", "BORDERLINE_FRACTION"),
    _t("MIN_STEPS", "profiler_setup", "own"),
    _t("WARMUP_MIN_STEPS", "profiler_setup", "own"),
    _t("WARMED_UP_STEPS", "profiler_setup", "documented", "torch/profiler/profiler.py"),
    _t("STARTUP_FACTOR", "profiler_setup", "own"),
    _t("STARTUP_MIN_CALLS", "profiler_setup", "own"),
    _t("STARTUP_MIN_US", "profiler_setup", "own"),
    _t("STARTUP_DOMINANT_PCT", "profiler_setup", "own"),
    _t("STARTUP_MAX_BUSY", "profiler_setup", "own"),
    _t("PROFILER_OVERHEAD_PCT", "profiler_setup", "own"),
    _t("STEP_TRACK_BUSY_FRACTION", "profiler_setup", "own"),
    # the verdict
    _t("INPUT_BOUND_PCT", VERDICT, "own"),
    _t("EFFICIENT_MFU_PCT", VERDICT, "documented", "PaLM and Megatron-LM papers"),
    _t("STARVED_PCT", VERDICT, "peer", PLUGIN),
    _t("SATURATED_PCT", VERDICT, "own"),
    _t("CPU_COMPUTE_PCT", VERDICT, "own"),
    _t("DOMINANT_PCT", VERDICT, "own"),
    _t("BUSY_SPLIT_SHOWN_PCT", VERDICT, "own"),
    _t("TOO_LITTLE_WORK_US", VERDICT, "own"),
    _t("QUEUE_FULL_PCT", VERDICT, "own"),
    # reading printed tables
    _t("THREAD_WAIT_SELF_FRACTION", TABLE, "own"),
    _t("THREAD_WAIT_PCT", TABLE, "own"),
    _t("NESTED_HOLDS", TABLE, "measured", "tests/test_advanced_nesting.py"),
    _t("FULL_TABLE_PCT", TABLE, "own"),
    _t("PARTIAL_TABLE_PCT", TABLE, "own"),
    _t("READABLE_TABLE_PCT", TABLE, "own"),
    _t("OVERSHOOT_NOTED", TABLE, "own"),
)

BY_NAME: Final[dict[str, Threshold]] = {t.name: t for t in THRESHOLDS}


def measured_by(where: str) -> tuple[Threshold, ...]:
    """The thresholds a script or test measures."""
    return tuple(t for t in THRESHOLDS if t.basis == "measured" and t.where == where)


def threshold_rows(
    thresholds: tuple[Threshold, ...] = THRESHOLDS,
) -> list[tuple[str, str, str, str]]:
    """The catalogue page's table: constant and value, what it gates, basis, where."""
    return [(f"{t.name} = {t.value:g}", t.category, t.basis, t.where) for t in thresholds]


__all__ = ["BY_NAME", "THRESHOLDS", "Basis", "Threshold", "measured_by", "threshold_rows"]
