"""The step breakdown as far as a printed table or a Lightning report allows.

A table holds totals aggregated over the whole run, not time windows: profsight divides the
rows that name a phase (DataLoader fetches, Lightning's actions, ``Optimizer.step#``,
autograd's backward rows, metrics and callbacks) by the number of steps. What no row
names stays "not attributed"; nested phases are subtracted where Lightning's nesting is
known (``optimizer_step`` holds ``training_step`` and ``backward``). There is no device
idle time, no per-step variation and no call tree in a table.
"""

from __future__ import annotations

from profsight.analyses.breakdown import Breakdown, StepBreakdown
from profsight.annotate import row_kind
from profsight.knowledge.lightning import action_of
from profsight.knowledge.phases import Phase, declared_phase
from profsight.knowledge.rows import RowKind
from profsight.model.table import ProfilerTable, Row

#: Rows whose phase time nests inside another phase's row (Lightning's closure and hooks).
_NESTED_IN_OPTIMIZER = {"training_step", "backward", "model_forward", "model_backward"}
_NESTED_IN_BACKWARD = {"on_before_backward", "on_after_backward"}
#: Step markers: ProfilerStep* in torch tables, run_training_batch in Lightning reports.
_STEP_ROWS = ("ProfilerStep*", "run_training_batch", "[pl][profile]run_training_batch")


def table_breakdown(table: ProfilerTable) -> Breakdown:
    step = next((r for r in table.rows if r.name in _STEP_ROWS and r.calls), None)
    phased = [r for r in table.rows if _phase(r, table) is not None and r.calls]
    if step is None and not phased:
        return Breakdown((), "", "none")
    # without a step row (Lightning 1.0 reports): steps from the phase rows' calls, and the
    # step is the sum of the recorded phases (what else ran is unknown)
    steps = step.calls if step is not None else max(r.calls for r in phased)
    wall = (step.cpu_total_us if step is not None else 0.0) / steps
    phases: dict[str, float] = {}
    optimizer_inner = backward_inner = 0.0
    lightning_backward = any(action_of(r.name) == "backward" for r in table.rows)
    for row in table.rows:
        phase = _phase(row, table)
        if phase is None or row is step:
            continue
        if lightning_backward and row.name.startswith("autograd::engine"):
            continue  # inside Lightning's backward row
        per_step = row.cpu_total_us / steps
        phases[phase.value] = phases.get(phase.value, 0.0) + per_step
        if action_of(row.name) in _NESTED_IN_OPTIMIZER:
            optimizer_inner += per_step
        if action_of(row.name) in _NESTED_IN_BACKWARD:
            backward_inner += per_step
    for phase, inner in ((Phase.OPTIMIZER, optimizer_inner), (Phase.BACKWARD, backward_inner)):
        if phase.value in phases and inner:
            phases[phase.value] = max(phases[phase.value] - inner, 0.0)
    if step is None:
        wall = sum(phases.values())
    overshoot = sum(phases.values()) - wall
    if overshoot > 0.01 * wall:  # rows nest in ways a table does not show: scale to the step
        scale = wall / sum(phases.values())
        phases = {k: v * scale for k, v in phases.items()}
    phases[Phase.OTHER.value] = max(wall - sum(phases.values()), 0.0)
    average = StepBreakdown("average", 0.0, wall, phases, None, {})
    label = (
        "table rows (totals over the run, per step)"
        if step is not None
        else ("table rows (recorded phases only: the report has no step total)")
    )
    return Breakdown((average,), "", label)


def _phase(row: Row, table: ProfilerTable) -> Phase | None:
    """A row's phase, for rows that name one and are not nested in another such row."""
    kind = row_kind(row, table)
    phase = declared_phase(
        row.name if row.event_kind != "lightning_action" else "[pl][profile]" + row.name, kind
    )
    if phase is None or phase in (Phase.FRAMEWORK, Phase.OTHER):
        return None
    if kind is RowKind.BACKWARD and not row.name.startswith("autograd::engine"):
        return None  # *Backward0 nodes sit inside the engine's rows
    return phase
