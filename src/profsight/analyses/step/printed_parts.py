"""A printed table's step as data: the step's time, count and basis, and its phases' parts
(`PrintedStep`, `PhasePart`); `analyses.step.table_step` reads them from the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec
from msgspec.structs import replace

from profsight.knowledge import advice
from profsight.knowledge.lightning_names import (
    LIGHTNING_1X_ACTIONS,
    LIGHTNING_ACTION_PREFIX,
    NESTED_IN,
    OPTIMIZER_INDEX,
    action_candidates,
    module_class,
)
from profsight.knowledge.phases import ACTION_PHASES, Phase, declared_phase
from profsight.knowledge.rows import (
    LIGHTNING_ACTION_EVENT,
    RowKind,
)
from profsight.model.table import ProfilerTable, Row
from profsight.units import short_time

STEP_ACTION = "run_training_batch"
EPOCH_ACTION = "run_training_epoch"
FORWARD_ACTION = "training_step"
OPTIMIZER_ACTION = "optimizer_step"
OPTIMIZER_STEP_PREFIX = "Optimizer.step#"
ZERO_GRAD_PREFIX = "Optimizer.zero_grad#"
ENGINE_PREFIX = "autograd::engine::evaluate_function"
RESIDUAL = "the step less its named phases and its own self time"
#: `PrintedStep.basis` of a table that prints only device columns.
DEVICE_ONLY_BASIS = "the device's time total (the table prints no host columns)"


class PhasePart(msgspec.Struct, frozen=True):
    """How much of a step one phase takes, and the rows that say so."""

    phase: str
    us: float
    """Per step."""
    rows: tuple[str, ...]
    how: str
    """How the figure was derived from the rows."""


class PrintedStep(msgspec.Struct, frozen=True):
    steps: int
    """Steps the rows cover (1 when the table names none: the whole window is one)."""
    step_us: float
    basis: str
    """How the step time was found."""
    parts: tuple[PhasePart, ...]
    """Per phase, adding up to `step_us` with `Phase.OTHER`."""
    family_self_us: dict[str, float]
    """Self CPU time per step of the ops of each family (`op_families`)."""
    family_rows: dict[str, tuple[Row, ...]]
    """The printed ops of each family, largest self time first."""
    coverage_pct: float
    """The printed rows' share of ``Self CPU time total`` (100 for a full table)."""
    lightning: bool
    """Lightning's ranges are in the table."""
    evaluation_only: bool
    """The steps are validation (test, predict) steps: the table holds no training."""
    backward_thread: bool
    """Backward ran on autograd's own thread (a device run without Lightning's ranges)."""
    model_us: float = 0.0
    """Per step, the totals of the model's top-level module rows (0 without module rows)."""
    limits: tuple[str, ...] = msgspec.field(default_factory=tuple)

    @property
    def phases(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for part in self.parts:
            out[part.phase] = out.get(part.phase, 0.0) + part.us
        return out

    def share(self, us: float) -> float:
        """Per-step `us` as a % of the step."""
        return us * 100.0 / self.step_us if self.step_us else 0.0

    def phase_share(self, phase: Phase) -> float:
        return self.share(self.phases.get(phase.value, 0.0))

    def part(self, phase: Phase) -> PhasePart | None:
        """The phase's first part (its first row or group of rows in the table)."""
        return next((p for p in self.parts if p.phase == phase.value), None)

    def merged(self, phase: Phase) -> PhasePart | None:
        """The phase's parts (one per row or group of rows) as one: their time, and their
        rows, those of the largest part first."""
        mine = sorted((p for p in self.parts if p.phase == phase.value), key=lambda p: -p.us)
        if len(mine) < 2:
            return mine[0] if mine else None
        rows = tuple(dict.fromkeys(r for p in mine for r in p.rows))
        return PhasePart(phase.value, sum(p.us for p in mine), rows, mine[0].how)


def device_bound(step: PrintedStep, device_us: float) -> PrintedStep:
    """The step when the device's work per step (`device_us`, the device total over the
    steps) outlasts the host's range: the device runs behind the host and its clock bounds
    the step (one stream; an upper bound when streams overlap). The difference is the
    device's lag, a phase of its own as on a trace's two clocks."""
    if device_us <= step.step_us:
        return step
    lag = PhasePart(
        Phase.DEVICE_LAG.value,
        device_us - step.step_us,
        (),
        "the device's work per step less the host's range: the device ran behind",
    )
    note = advice.DEVICE_BOUND_TABLE_NOTE.format(
        device=short_time(device_us), host=short_time(step.step_us)
    )
    return replace(
        step,
        step_us=device_us,
        basis=f"the device's work per step (the host's range: {step.basis})",
        parts=(*step.parts, lag),
        limits=(*step.limits, note),
    )


def is_device_only(table: ProfilerTable) -> bool:
    """A table with device times and no host time at all: its CPU columns were cut."""
    return (
        table.has_device
        and table.self_device_total_us > 0
        and not table.self_cpu_total_us
        and not any(r.self_cpu_us or r.cpu_total_us for r in table.rows)
    )


PHASE_HOW: dict[Phase, str] = {
    Phase.DATA_LOADING: "fetch and transfer rows' totals",
    Phase.BACKWARD: "backward rows' totals, less the hooks inside them",
    Phase.ZERO_GRAD: "zero_grad rows' totals",
    Phase.VALIDATION: "validation rows' totals",
    Phase.CALLBACKS_LOGGING: "hook and callback rows' totals",
    Phase.COMMUNICATION: "collective rows' totals",
}


def printed_action(row: Row, kind: RowKind) -> str | None:
    """The Lightning action a row times, when its (possibly cut) name tells one."""
    if kind not in (
        RowKind.LIGHTNING,
        RowKind.STRATEGY,
        RowKind.OPTIMIZER,
        RowKind.DATALOADER,
        RowKind.CALLBACK,
    ):
        return None
    name = row.name
    if row.event_kind == LIGHTNING_ACTION_EVENT:
        name = LIGHTNING_ACTION_PREFIX + name
    if not name.startswith(LIGHTNING_ACTION_PREFIX):
        return None
    candidates = tuple(OPTIMIZER_INDEX.sub("", a) for a in action_candidates(name))
    known = [a for a in candidates if a in ACTION_PHASES or a in NESTED_IN]
    if len(known) > 1:  # a cut name: the 2.x action rather than the 1.x one it begins
        known = [a for a in known if a not in LIGHTNING_1X_ACTIONS]
    if len(known) == 1:
        return known[0]
    return candidates[0] if len(candidates) == 1 else None


def printed_capped_update(
    update: PhasePart, others: Sequence[PhasePart], step_us: float
) -> PhasePart:
    """The closure estimate capped by the step's time that no other phase holds.

    Optimizer.step less the closure subtracts one closure call by its average: with a
    schedule the first recorded backward runs in an optimizer range begun before the window,
    so an estimate of a small update carries that one call's deviation (a slow backward on a
    loaded machine read as 11.7% of the step). The update is also at most the step less
    every other phase, and that bound is made of totals only (each the sum of its calls), so
    no single call's noise enters it. When the other phases already add up to more than the
    step (rows that nest in ways the table does not show), the bound says nothing: the
    estimate is left to `printed_fit`, which scales every phase down alike."""
    free = step_us - sum(p.us for p in others)
    if update.us <= free or free < 0:
        return update  # other rows overshoot the step: `printed_fit` scales every phase down
    return replace(
        update,
        us=free,
        how=update.how + "; capped by the step less every other phase (totals only)",
    )


def printed_module_path(name: str) -> str:
    return name.partition(": ")[2] if module_class(name) != name else ""


def printed_fit(parts: list[PhasePart], step_us: float) -> list[PhasePart]:
    """Scale the parts down to the step when they overshoot it: totals of rows that nest in
    ways the table does not show, or (rounded) rows outside the steps."""
    named = sum(p.us for p in parts)
    if named <= step_us or named <= 0:
        return parts
    scale = step_us / named
    return [PhasePart(p.phase, p.us * scale, p.rows, p.how) for p in parts]


def within_holders(
    holders: list[tuple[str, float]],
    taken: dict[str, float],
    total_of: Callable[[str], float],
) -> list[tuple[str, float]]:
    """Each holder's share of the metric at most the holder's own total: a metric's calls
    are not all as long as their average (one slow call in validation_step), and what
    one step cannot hold ran in the others. The excess goes to the holders with room,
    in order, so that no phase is left at 0 while another counts the metric again."""
    room = [
        max(total_of(action) - taken.get(action, 0.0), 0.0) for action, _ in holders
    ]  # less what the metric rows before this one already took of it
    shares = [min(us, r) for (_, us), r in zip(holders, room, strict=True)]
    excess = sum(us for _, us in holders) - sum(shares)
    for i, r in enumerate(room):
        if excess <= 0:
            break
        take = min(r - shares[i], excess)
        shares[i] += take
        excess -= take
    if excess > 0 and shares:
        shares[-1] += excess  # more than every holder: the table's own inconsistency
    return [(action, us) for (action, _), us in zip(holders, shares, strict=True)]


def metric_rows(rows: Sequence[Row], kinds: dict[int, RowKind]) -> list[Row]:
    """The outermost metric rows (a MetricCollection's members sit inside it)."""
    metrics = [
        r
        for r in rows
        if kinds[id(r)] is RowKind.METRIC
        or (kinds[id(r)] is RowKind.USER and declared_phase(r.name, RowKind.USER) is Phase.METRICS)
    ]
    paths = {printed_module_path(r.name) for r in metrics} - {""}
    return [
        r
        for r in metrics
        if not any(
            p and printed_module_path(r.name).startswith(p + ".")
            for p in paths
            if p != printed_module_path(r.name)
        )
    ]
