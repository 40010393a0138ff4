"""What the verdict reads about the step: the facts a trace's timeline or a printed table's
step model fill alike (`analyses.verdict.trace_facts`, `findings.table_setup.printed_facts`)."""

from __future__ import annotations

import msgspec

from profsight.knowledge import advice
from profsight.knowledge.advice import CPU_ONLY
from profsight.knowledge.phases import Phase


class StepFacts(msgspec.Struct, frozen=True):
    """What the verdict reads about the step, from a trace's timeline or a table's rows."""

    step_us: float
    steps: int
    phase_pct: dict[str, float]
    """Phase id -> % of the step."""
    device_busy_pct: float | None
    """None when no device work was recorded."""
    device_idle_pct: dict[str, float]
    """Idle device time by cause (``sync``, ``input``, ``host``), % of the step."""
    compute: tuple[str, ...]
    """FLOPs and utilisation evidence."""
    mfu_pct: float | None = None
    busy_basis: str = "busy"
    """How the device figure was measured (``busy``; a table gives ``busy at most``)."""
    unknown: frozenset[str] = frozenset()
    """Phases the input may hide (a partial table prints none of their rows)."""
    host_only: str = ""
    """Why a run without device figures is not known to be CPU-only ("" when it is): a
    Lightning Simple/Advanced report, a torch <= 1.6 table's unreadable device times."""

    timeline: bool = False
    """Read from a trace's timeline (every phase seen), not a table's rows."""
    unrecorded: tuple[str, ...] = ()
    """What shows a GPU whose work the profile did not record (`analyses.unrecorded`): then
    the run is not judged."""
    measured_kernels: int = 0
    """Kernels CUPTI's range profiler measured (counters, no run times): what is unrecorded
    is their timing, which a second profile without ``profiler_metrics`` records."""
    queue_full_pct: float = 0.0
    """% of the step the host waited on a full launch queue (a table's ``Command Buffer
    Full``; a trace's replay prices its waits instead)."""
    captured: tuple[str, ...] = ()
    """Why the window is a CUDA-graph capture, not steps (`findings.capture`): then the run
    is not judged."""
    stall_pct: float = 0.0
    """% of the window a one-pass range holds outside every recorded op, more than per-op
    overhead explains (`analyses.step.table_stall`): dominant, the run is not judged."""

    @property
    def inference(self) -> bool:
        """A trace with no backward, optimizer step or zero_grad in its window: inference."""
        training = (Phase.BACKWARD, Phase.OPTIMIZER, Phase.ZERO_GRAD)
        return self.timeline and not any(self.phase(p) > 0 for p in training)

    @property
    def cpu_only(self) -> bool:
        return not self.host_only

    @property
    def run(self) -> str:
        """How the verdict names a run judged on host times alone."""
        return CPU_ONLY if self.cpu_only else advice.HOST_TIMES_RUN.format(reason=self.host_only)

    def phase(self, phase: Phase) -> float:
        return self.phase_pct.get(phase.value, 0.0)


__all__ = ["StepFacts"]
