"""What every analysis reads: the profile, its table with row kinds, the step breakdown."""

from __future__ import annotations

from functools import cached_property

import msgspec

from profsight.analyses.roofline import Roofline, roofline
from profsight.analyses.step.breakdown import breakdown
from profsight.analyses.step.comms import communication
from profsight.analyses.step.flops import OpFlops, op_flops
from profsight.analyses.step.startup import dominates
from profsight.analyses.step.unrecorded import unrecorded_device
from profsight.knowledge.advice import PHASE_RULES_BY_PHASE
from profsight.knowledge.hardware import Accelerator, accelerator, architecture
from profsight.knowledge.phases import Phase
from profsight.knowledge.rows import RowKind
from profsight.model.collectives_seen import Communication
from profsight.model.profile import Profile
from profsight.model.row_kind import row_kind
from profsight.model.step_windows import Breakdown, StepBreakdown
from profsight.model.table import ProfilerTable, Row


class Context(msgspec.Struct, dict=True):
    profile: Profile
    table: ProfilerTable
    breakdown: Breakdown

    @cached_property
    def average(self) -> StepBreakdown:
        return self.breakdown.average()

    @property
    def steps(self) -> int:
        return max(len(self.breakdown.steps), 1)

    @property
    def step_us(self) -> float:
        return self.average.wall_us

    @property
    def startup_us(self) -> float:
        """One-time start-up per step (the ``startup`` phase)."""
        return self.average.host_us.get(Phase.STARTUP.value, 0.0)

    @property
    def startup_pct(self) -> float:
        """One-time start-up, % of the profiled window."""
        return self.share(self.startup_us * self.steps)

    @property
    def startup_dominates(self) -> bool:
        """Start-up fills the window: its steady state cannot be judged (`dominates`)."""
        return dominates(self.startup_pct)

    @property
    def held_us(self) -> float:
        """Device idle time per step while launched work was held back (`analyses.held`)."""
        return self.average.device_idle_us.get("held", 0.0)

    @property
    def ahead_us(self) -> float:
        """Device time per step spent on the work queued ahead of the steps (launched before
        the first, `clocks.queued_ahead`): busy, but with no step's work."""
        return self.average.device_idle_us.get("ahead", 0.0)

    @property
    def steady_us(self) -> float:
        """The step without its one-time start-up, the time launched work was held back by
        something the trace does not show, and the time its device ran the work of steps
        before the window: what the recorded steady state takes."""
        return max(self.step_us - self.startup_us - self.held_us - self.ahead_us, 0.0)

    @property
    def steady_note(self) -> str:
        """What the steady state leaves out, as the evidence says it ("" when nothing)."""
        parts = [
            label
            for label, us in (
                ("one-time start-up", self.startup_us),
                ("held work", self.held_us),
                ("earlier steps' work", self.ahead_us),
            )
            if us
        ]
        return f" outside {' and '.join(parts)}" if parts else ""

    @property
    def steady_busy_us(self) -> float | None:
        """Device busy time outside the one-time start-up (None without device work)."""
        busy = self.average.device_busy_us
        if busy is None:
            return None
        during = self.startup_us - self.average.device_idle_us.get("startup", 0.0)
        return max(busy - max(during, 0.0), 0.0)

    def share(self, us: float) -> float:
        """`us` of the whole profiled window, as a % of the average step. Not clamped: a
        figure above 100% counts time outside the steps' windows or work that ran at once
        as if in series, and `analyses.physics` shows it rather than hiding it."""
        return us / self.steps * 100.0 / self.step_us if self.step_us else 0.0

    def host_at_stake(self, share: float) -> float:
        """What host-side time can cost the step: on a GPU run, no more than the device
        idles (host work that overlaps device work is hidden by it)."""
        busy = self.average.device_busy_us
        if busy is None or not self.step_us:
            return share
        busy += self.ahead_us  # the device ran the earlier steps' work then: not idle either
        return min(share, max(0.0, 100.0 - busy * 100.0 / self.step_us))

    def phase_share(self, phase: str) -> float:
        return self.average.host_us.get(phase, 0.0) * 100.0 / self.step_us if self.step_us else 0.0

    @property
    def input_named(self) -> bool:
        """Data loading is a finding of its own (past its rule's share of the step): the
        device's idle time while the input loads is that finding's, not the idle one's."""
        rule = PHASE_RULES_BY_PHASE[Phase.DATA_LOADING]
        return self.phase_share(Phase.DATA_LOADING.value) >= rule.threshold_pct

    @cached_property
    def kinds(self) -> dict[int, RowKind]:
        return {id(r): row_kind(r, self.table) for r in self.table.rows}

    def rows(self, *kinds: RowKind) -> list[Row]:
        return [r for r in self.table.rows if self.kinds[id(r)] in kinds]

    @property
    def has_device(self) -> bool:
        return self.table.has_device

    @cached_property
    def device(self) -> Accelerator | None:
        devices = self.profile.meta.devices
        return accelerator(devices[0]) if devices else None

    @cached_property
    def unrecorded(self) -> tuple[str, ...]:
        """What shows a GPU whose work the profile did not record (`analyses.unrecorded`)."""
        return unrecorded_device(self.profile)

    @cached_property
    def comms(self) -> Communication | None:
        return communication(self.profile, self.breakdown)

    @cached_property
    def flops(self) -> OpFlops:
        return op_flops(self.profile)

    @cached_property
    def roofline(self) -> Roofline | None:
        return roofline(self.profile, self.device)

    @cached_property
    def arch(self) -> str | None:
        devices = self.profile.meta.devices
        return architecture(devices[0]) if devices else None


def context(profile: Profile) -> Context:
    return Context(profile, profile.table(), breakdown(profile))
