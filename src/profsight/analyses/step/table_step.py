"""The training step as far as a printed table's rows allow.

A printed table (torch's ``key_averages().table()``, Lightning's ``fit-*.txt`` or
``SimpleProfiler`` report) holds totals over the profiled window, not a timeline. Two facts
make a step model possible anyway:

* **Totals are durations.** A range's CPU total is the sum of its calls' lengths, whatever
  torch made of its nesting, so totals per step are the phases' durations. Self times are
  not: Lightning steps the profiler inside ``optimizer_step`` (ranges overlap without
  nesting) and torch then gives ``ProfilerStep*`` and ``Optimizer.step#`` the self time of
  ops that ran in other ranges. So phases come from totals, with Lightning's nesting
  (`profsight.knowledge.lightning_names.NESTED_IN`) subtracted, never from a range's self time.
* **Self times add up.** Over all rows they sum to ``Self CPU time total``, so the self time
  of the ops of one family (`profsight.knowledge.op_families`) is that family's share.

What a table cannot tell (overlap of host and device, order, one step from another) is said
in `PrintedStep.limits`.
"""

from __future__ import annotations

from collections.abc import Sequence

from profsight.analyses.step.printed_parts import (
    DEVICE_ONLY_BASIS,
    ENGINE_PREFIX,
    EPOCH_ACTION,
    FORWARD_ACTION,
    OPTIMIZER_ACTION,
    OPTIMIZER_STEP_PREFIX,
    PHASE_HOW,
    RESIDUAL,
    STEP_ACTION,
    ZERO_GRAD_PREFIX,
    PhasePart,
    PrintedStep,
    is_device_only,
    metric_rows,
    printed_action,
    printed_capped_update,
    printed_fit,
    printed_module_path,
    within_holders,
)
from profsight.knowledge import advice
from profsight.knowledge.advice import (
    EVALUATION_ONLY,
    MANUAL_OPTIMIZATION_FRACTION,
    METRIC_HOLDER_SLACK,
    OVERSHOOT_NOTED,
    PARTIAL_TABLE_PCT,
    PHASE_RULES_BY_PHASE,
)
from profsight.knowledge.lightning_names import (
    CUT_MARK,
    EVALUATION_ACTIONS,
    EVALUATION_FETCHES,
    FETCH_ACTIONS,
    LIGHTNING_ACTION_PREFIX,
    LIGHTNING_MODULE_PREFIX,
    NESTED_IN,
    ONCE_PER_RUN,
    action_of,
)
from profsight.knowledge.op_families import OPTIMIZER, op_family
from profsight.knowledge.ops import lookup_op
from profsight.knowledge.phases import Phase, declared_phase
from profsight.knowledge.rows import (
    LIGHTNING_ACTION_EVENT,
    METRIC_EVENT,
    METRIC_IN,
    PROFILER_OVERHEAD_ROWS,
    THREAD_WAIT_FRAMES,
    RowKind,
)
from profsight.model.row_kind import row_kind
from profsight.model.table import ProfilerTable, Row
from profsight.units import short_time


#: Lightning's step action in its reports (SimpleProfiler) and ranges.
def printed_step(table: ProfilerTable, exclusive: bool = False) -> PrintedStep | None:
    """The step model of a printed table; None when the rows hold nothing to build it on.
    `exclusive`: the rows' times exclude the rows inside them (AdvancedProfiler's actions),
    so they add up instead of nesting."""
    return _Builder(table, exclusive).build()


class _Builder:
    def __init__(self, table: ProfilerTable, exclusive: bool) -> None:
        self.table = table
        self.exclusive = exclusive
        self.rows = [r for r in table.rows if r.cpu_total_us > 0 and not r.is_device]
        self.kinds = {id(r): row_kind(r, table) for r in self.rows}
        self.actions = {id(r): printed_action(r, self.kinds[id(r)]) for r in self.rows}
        # a negative total (a profiler clock fault, kept as printed) measures nothing
        self.self_total = max(table.self_cpu_total_us, 0.0)
        # Lightning's action ranges, or its module ranges (a table cut to the rows of most
        # self time keeps those and drops the actions, whose self time is tiny)
        self.lightning = any(a is not None for a in self.actions.values()) or any(
            r.name.startswith(LIGHTNING_MODULE_PREFIX) for r in self.rows
        )
        self.backward_thread = table.has_device and not self._action_rows("backward")
        self.limits: list[str] = []

    @property
    def device_only(self) -> bool:
        """The table prints device columns only (its author cut the CPU columns)."""
        return is_device_only(self.table)

    # ---------------------------------------------------------------- lookups

    def _action_rows(self, action: str) -> list[Row]:
        return [r for r in self.rows if self.actions[id(r)] == action]

    def _total(self, rows: Sequence[Row]) -> float:
        return sum(r.cpu_total_us for r in rows)

    def _kind_rows(self, kind: RowKind) -> list[Row]:
        return [r for r in self.rows if self.kinds[id(r)] is kind]

    # ---------------------------------------------------------------- the step

    def _step(self) -> tuple[int, float, str] | None:
        if self.device_only:
            # no host clock: the window is the device's own time, and nothing says how long
            # the host took or how much of it the device idled
            self.limits.append(advice.DEVICE_ONLY_TABLE_NOTE)
            return (1, self.table.self_device_total_us, DEVICE_ONLY_BASIS)
        if not self.rows:
            return None  # nothing but totals (a SimpleProfiler report's Total row alone)
        step_row = next((r for r in self._kind_rows(RowKind.STEP) if r.calls), None)
        if step_row is not None:
            return (
                step_row.calls,
                step_row.cpu_total_us / step_row.calls,
                f"{step_row.name} CPU total / its {step_row.calls} calls",
            )
        if self.exclusive:
            return self._exclusive_step()
        batches = [r for r in self._action_rows(STEP_ACTION) if r.calls]
        if batches:
            steps = batches[0].calls
            epoch = self._action_rows(EPOCH_ACTION)
            if epoch:
                return (
                    steps,
                    self._total(epoch) / steps,
                    f"{EPOCH_ACTION} total / {steps} {STEP_ACTION} calls (all a training "
                    "batch costs, validation and hooks included)",
                )
            fetch = [r for a in FETCH_ACTIONS for r in self._action_rows(a)]
            return (
                steps,
                (self._total(batches) + self._total(fetch)) / steps,
                f"{STEP_ACTION} plus the batch fetch, per call",
            )
        for rows, what in (
            (self._action_rows(FORWARD_ACTION), FORWARD_ACTION),
            (self._prefixed(OPTIMIZER_STEP_PREFIX), OPTIMIZER_STEP_PREFIX + "..."),
        ):
            if rows and rows[0].calls and self.self_total:
                steps = rows[0].calls
                self.limits.append(advice.NO_STEP_ROW_NOTE.format(steps=steps, what=what))
                window, basis = self._window()
                return (steps, window / steps, f"{basis} / {steps} steps")
        phased = [r for r in self.rows if self._phase(r) is not None and r.calls > 1]
        if phased and all(r.event_kind == LIGHTNING_ACTION_EVENT for r in self.rows):
            # Lightning 1.0/1.1 reports (or a report cut before its batch action): the
            # phases' calls count the steps, the evaluation loops' not (a val fetch's 19
            # calls against 16 training fetches), and the step is the sum of the recorded
            # phases (what else ran is unknown)
            evaluation = EVALUATION_FETCHES.union(EVALUATION_ACTIONS)
            training = [r for r in phased if self.actions[id(r)] not in evaluation]
            steps = max(r.calls for r in training or phased)
            # the optimizer step and metric rows are phases too, counted in `_parts`
            counted = [r for r in self.rows if r.calls > 1 and self._counted_elsewhere(r)]
            timed = [*phased, *counted]
            present = {self.actions[id(r)] for r in timed}
            outer = [r for r in timed if NESTED_IN.get(self.actions[id(r)] or "") not in present]
            self.limits.append(advice.NO_STEP_ACTION_NOTE)
            return (steps, self._total(outer) / steps, "the sum of the recorded phases per step")
        if self.self_total:
            self.limits.append(advice.WHOLE_WINDOW_NOTE)
            window, basis = self._window()
            return (1, window, f"{basis} (the whole window as one step)")
        return None

    def _window(self) -> tuple[float, str]:
        """The window's wall time from ``Self CPU time total``, which sums the self times of
        every thread: less the profiler's own rows (`PROFILER_OVERHEAD_ROWS`: Kineto records
        them apart from the program's threads, no step holds them), less the main thread's
        wait in a frame that waited for backward on autograd's device thread (that time is
        the backward's, counted on its own thread), and never shorter than the longest row
        (one range on one thread)."""
        profiler = sum(r.self_cpu_us for r in self.rows if r.name in PROFILER_OVERHEAD_ROWS)
        total = self.self_total - profiler
        waits = [
            r
            for r in self.rows
            if THREAD_WAIT_FRAMES.match(r.name)
            and r.self_cpu_us >= advice.THREAD_WAIT_SELF_FRACTION * r.cpu_total_us
        ]
        engine = sum(r.cpu_total_us for r in self.rows if r.name.startswith(ENGINE_PREFIX))
        repeated = min(sum(r.self_cpu_us for r in waits), engine)
        longest = max(
            (r.cpu_total_us for r in self.rows if r.name not in PROFILER_OVERHEAD_ROWS),
            default=0.0,
        )
        window = max(total - repeated, longest)
        basis = "Self CPU time total" + (" less the profiler's own rows" if profiler else "")
        if window >= total:
            return total, basis
        self.limits.append(
            advice.THREAD_WAIT_NOTE.format(
                waited=short_time(total - window),
                frame=waits[0].name.split(" of ")[0] + ">",
                window=short_time(window),
                total=short_time(total),
            )
        )
        return window, basis + " less the wait for autograd's device thread"

    def _exclusive_step(self) -> tuple[int, float, str] | None:
        """AdvancedProfiler: the steps from its batch action's calls (its time may read 0);
        the step as the sum of the actions that run every batch (their times add up)."""
        marker = [
            r for r in self.table.rows if printed_action(r, row_kind(r, self.table)) == STEP_ACTION
        ]
        marker = marker or self._action_rows(FORWARD_ACTION)
        if not marker or not marker[0].calls:
            return None
        steps = marker[0].calls
        self.limits.append(advice.ADVANCED_PROFILER_NOTE)
        actions = [
            r
            for r in self.rows
            if r.event_kind == LIGHTNING_ACTION_EVENT and self.actions[id(r)] not in ONCE_PER_RUN
        ]
        return (
            steps,
            self._total(actions) / steps,
            "the sum of the actions' times per training batch, once-per-run hooks left out "
            "(AdvancedProfiler's profilers cannot nest: an action stops counting when one "
            "inside it starts, so its times add up)",
        )

    def _prefixed(self, prefix: str) -> list[Row]:
        return [r for r in self.rows if r.name.startswith(prefix)]

    # ---------------------------------------------------------------- phases

    def build(self) -> PrintedStep | None:
        found = self._step()
        if found is None:
            return None
        steps, step_us, basis = found
        if self.device_only:
            return PrintedStep(
                steps=steps,
                step_us=step_us,
                basis=basis,
                # no host row: the window is one part no phase can be told from
                parts=(PhasePart(Phase.OTHER.value, step_us, (), DEVICE_ONLY_BASIS),),
                family_self_us={},
                family_rows={},
                coverage_pct=100.0,
                lightning=False,
                evaluation_only=False,
                backward_thread=False,
                limits=tuple(self.limits),
            )
        if self.rows and all(r.event_kind == LIGHTNING_ACTION_EVENT for r in self.rows):
            self.limits.append(advice.LIGHTNING_HOST_TIMING_NOTE)
        parts = self._parts(steps, step_us)
        if self.evaluation_only:
            self.limits.append(EVALUATION_ONLY)
        families, family_rows = self._families(steps)
        shown = sum(r.self_cpu_us for r in self.table.rows)
        coverage = min(100.0, shown * 100.0 / self.self_total) if self.self_total else 100.0
        if self.table.rows and all(r.event_kind == LIGHTNING_ACTION_EVENT for r in self.table.rows):
            coverage = 100.0  # a Lightning report lists every action (and no self times)
        if (
            coverage < PARTIAL_TABLE_PCT
            and any(p.how.startswith(RESIDUAL) for p in parts)
            and not any(p.phase == Phase.BACKWARD.value for p in parts)
        ):
            self.limits.append(advice.FORWARD_HOLDS_BACKWARD_NOTE)
        if coverage < PARTIAL_TABLE_PCT:
            self.limits.append(advice.PARTIAL_TABLE_NOTE.format(coverage=coverage))
        return PrintedStep(
            steps=steps,
            step_us=step_us,
            basis=basis,
            parts=tuple(parts),
            family_self_us=families,
            family_rows=family_rows,
            coverage_pct=coverage,
            lightning=self.lightning,
            evaluation_only=self.evaluation_only,
            backward_thread=self.backward_thread,
            model_us=self._model_total() / steps,
            limits=tuple(self.limits),
        )

    def _parts(self, steps: int, step_us: float) -> list[PhasePart]:
        # one function: its phases are taken in an order (each takes its rows from what the
        # earlier ones left), through the one `add` that records them
        parts: list[PhasePart] = []
        nested: dict[str, float] = {}  # action -> total of rows nested in its range

        def add(phase: Phase, total_us: float, rows: Sequence[Row], how: str) -> None:
            if total_us > 0:
                names = tuple(r.name for r in rows)
                parts.append(PhasePart(phase.value, total_us / steps, names, how))

        present = {a for a in self.actions.values() if a}
        for row in [] if self.exclusive else self.rows:  # exclusive times: nothing nests
            holder = NESTED_IN.get(self.actions[id(row)] or "")
            if holder is not None and (holder in present or holder == OPTIMIZER_ACTION):
                nested[holder] = nested.get(holder, 0.0) + row.cpu_total_us

        used: set[int] = set()
        # the optimizer's own update: Optimizer.step minus what Lightning's closure ran in it
        update, how, rows = self._update(steps, step_us)
        used.update(id(r) for r in rows)
        add(Phase.OPTIMIZER, update * steps, rows, how)
        closure_estimate = bool(parts) and self._closure_subtracted(rows)
        # metrics: their own phase, taken out of the step they ran in (training_step's or
        # validation_step's, told by their calls), then forward
        metrics = metric_rows(self.rows, self.kinds)
        used.update(id(r) for r in metrics)
        add(Phase.METRICS, self._total(metrics), metrics, "metric rows' totals")
        for row in metrics:
            for holder, us in self._metric_holders(row, nested):
                nested[holder] = nested.get(holder, 0.0) + us
        forward = self._action_rows(FORWARD_ACTION)
        used.update(id(r) for r in forward)
        if forward:
            inner = nested.get(FORWARD_ACTION, 0.0)
            add(
                Phase.FORWARD,
                max(self._total(forward) - inner, 0.0),
                forward,
                "training_step total" + (" less the metrics it ran" if inner else ""),
            )
        elif self.lightning and self._model_total():
            model = self._model_rows()
            used.update(id(r) for r in model)
            add(
                Phase.FORWARD,
                self._total(model),
                model,
                "the model's top-level module rows' totals (training_step is not printed)",
            )
        # every other row that names a phase, its total less what nests in it
        evaluating = self.evaluation_only
        for row in self.rows:
            if id(row) in used:
                continue
            phase = self._phase(row)
            if phase is None:
                continue
            if evaluating and phase is Phase.VALIDATION:
                phase = Phase.FORWARD  # the window's own model work
            action = self.actions[id(row)]
            own = row.cpu_total_us - nested.get(action or "", 0.0)
            add(phase, max(own, 0.0), (row,), PHASE_HOW.get(phase, "row total"))
        if closure_estimate:
            capped = printed_capped_update(parts[0], parts[1:], step_us)
            parts[:1] = [capped] if capped.us > 0 else []
        # what ran in no phase row: the step's self time (plain torch nests properly)
        named = sum(p.us for p in parts)
        other = max(step_us - named, 0.0)
        if not any(p.phase == Phase.FORWARD.value for p in parts) and not self.lightning:
            other = self._unranged(steps, parts)
            forward_us = max(step_us - named - other, 0.0)
            if forward_us > 0:
                parts.append(
                    PhasePart(
                        Phase.FORWARD.value,
                        forward_us,
                        (),
                        RESIDUAL + " (the ops between recorded ranges: the model's forward)",
                    )
                )
        named = sum(p.us for p in parts)
        if named > step_us * (1 + OVERSHOOT_NOTED):
            self.limits.append(advice.OVERSHOOT_NOTE.format(ratio=named / step_us))
        parts = printed_fit(parts, step_us)
        other = max(step_us - sum(p.us for p in parts), 0.0)
        if other > 0:
            parts.append(
                PhasePart(
                    Phase.OTHER.value,
                    other,
                    (),
                    "the step less every phase the rows name (Python between ranges, "
                    "framework code, ranges that name no phase)",
                )
            )
        return parts

    @property
    def evaluation_only(self) -> bool:
        """A Lightning window of validation (or test, predict) steps only: Lightning writes
        its report from the last recorded window, which after fit is often validation."""
        training = self._action_rows(FORWARD_ACTION) or self._action_rows("backward")
        training = training or self._prefixed(OPTIMIZER_STEP_PREFIX)
        evaluating = [r for r in self.rows if self._phase(r) is Phase.VALIDATION]
        return self.lightning and bool(evaluating) and not training

    def _phase(self, row: Row) -> Phase | None:
        """The phase a row's total counts for here; None for rows counted elsewhere (the
        optimizer, metrics, training_step) or inside another phase row."""
        kind = self.kinds[id(row)]
        name = row.name
        if row.event_kind == LIGHTNING_ACTION_EVENT:
            name = LIGHTNING_ACTION_PREFIX + name
        phase = declared_phase(name, kind)
        if phase in (None, Phase.FRAMEWORK, Phase.OTHER, Phase.METRICS, Phase.OPTIMIZER):
            return None
        if self.actions[id(row)] in ONCE_PER_RUN:
            return None  # setup and teardown hooks run once, not in every step
        if kind is RowKind.DATALOADER and not self.actions[id(row)] and self._fetch_rows():
            return None  # enumerate(DataLoader) runs inside Lightning's fetch range
        if kind is RowKind.BACKWARD and (
            not name.startswith(ENGINE_PREFIX) or self._action_rows("backward")
        ):
            return None  # nodes sit in the engine's rows, which sit in Lightning's backward
        if name.startswith(ZERO_GRAD_PREFIX) and self._action_rows("optimizer_zero_grad"):
            return None  # inside Lightning's optimizer_zero_grad
        return phase

    def _counted_elsewhere(self, row: Row) -> bool:
        """A row of a phase `_phase` leaves to its own rule: the optimizer step, a metric."""
        name = row.name
        if row.event_kind == LIGHTNING_ACTION_EVENT:
            name = LIGHTNING_ACTION_PREFIX + name
        return declared_phase(name, self.kinds[id(row)]) in (Phase.OPTIMIZER, Phase.METRICS)

    def _fetch_rows(self) -> list[Row]:
        return [r for a in FETCH_ACTIONS for r in self._action_rows(a)]

    def _metric_holders(self, row: Row, taken: dict[str, float]) -> list[tuple[str, float]]:
        """The Lightning steps a metric row ran in, with its time in each: named in an
        AdvancedProfiler metric row; else one metric call per call of each step long enough
        to hold one (of every step when the calls match one to one), training_step's first,
        then the evaluation steps', until the metric's calls are used up; each step's share
        at most its own total (`within_holders`)."""
        if row.event_kind == METRIC_EVENT:
            return [(action_of(row.name.rsplit(METRIC_IN, 1)[-1]), row.cpu_total_us)]
        if not row.calls:
            return []
        per_call = row.cpu_total_us / row.calls
        left = row.calls
        holders = []
        steps = [
            (action, rows)
            for action in (FORWARD_ACTION, *EVALUATION_ACTIONS)
            if (rows := self._action_rows(action)) and rows[0].calls
        ]
        # as many metric calls as step calls: one ran in each, however long the average
        every = sum(rows[0].calls for _, rows in steps) == row.calls
        for action, rows in steps:
            if not every and self._total(rows) / rows[0].calls < METRIC_HOLDER_SLACK * per_call:
                continue  # a step shorter than one metric call cannot hold it
            calls = min(rows[0].calls, left)
            holders.append((action, calls * per_call))
            left -= calls
            if not left:
                break
        return within_holders(holders, taken, lambda action: self._total(self._action_rows(action)))

    def _update(self, steps: int, step_us: float) -> tuple[float, str, list[Row]]:
        """The optimizer's own update per step: ``Optimizer.step#`` (or Lightning's
        optimizer_step) less the closure Lightning runs inside it (training_step, zero_grad,
        backward, hooks), per call, times the calls per step (fewer with gradient
        accumulation, more with several optimizers)."""
        rows = self._prefixed(OPTIMIZER_STEP_PREFIX)
        if not rows:
            rows = self._action_rows(OPTIMIZER_ACTION)  # Lightning reports name no optimizer
            if not rows:
                return 0.0, "", []
        total = self._total(rows)
        calls = max(max(r.calls for r in rows), 1)
        forward_rows = self._action_rows(FORWARD_ACTION)
        forward = self._total(forward_rows)
        manual = forward and total < MANUAL_OPTIMIZATION_FRACTION * forward
        if self.exclusive or not self.lightning or manual:
            # AdvancedProfiler's exclusive times, plain torch (or Lightning's manual
            # optimisation, where the optimizer runs inside training_step): the update itself
            return total / steps, f"{rows[0].name} total per step", rows
        known = "training_step"
        forward_avg = forward / forward_rows[0].calls if forward_rows else 0.0
        if not forward and self._model_total():
            model = self._model_rows()
            forward_avg = self._total(model) / max(max(r.calls for r in model), 1)
            known = "the model's top-level module rows (training_step is not printed)"
        closure_avg = sum(
            r.cpu_total_us / r.calls
            for r in self.rows
            if r.calls
            and NESTED_IN.get(self.actions[id(r)] or "") == OPTIMIZER_ACTION
            and self.actions[id(r)] != FORWARD_ACTION
        )
        # the window shape (one optimizer range per training_step, the first one begun
        # before the window): not with gradient accumulation (fewer optimizer ranges)
        forward_calls = forward_rows[0].calls if forward_rows else calls
        windowed = bool(self._kind_rows(RowKind.STEP)) and calls == forward_calls
        if windowed and calls == 1:
            self.limits.append(advice.ONE_LIGHTNING_STEP_NOTE)
            return 0.0, "", rows
        if windowed:
            # Lightning with a schedule: the window opens inside an optimizer_step, so of the
            # `calls` recorded ranges `calls - 1` are complete and the last holds only its
            # training_step
            per = (total - forward_avg - (calls - 1) * (forward_avg + closure_avg)) / (calls - 1)
        else:
            per = total / calls - forward_avg - closure_avg
        how = (
            f"{rows[0].name} less the closure Lightning runs in it ({known}, zero_grad, "
            f"backward, hooks), per {'complete ' if windowed else ''}call, {calls} calls in "
            f"{steps} steps"
        )
        per_step = per * calls / steps
        if not forward_avg or not self._action_rows("backward"):
            # the closure is not all printed: this is an upper bound, usable only when small
            if per_step * 100.0 / step_us >= PHASE_RULES_BY_PHASE[Phase.OPTIMIZER].threshold_pct:
                self.limits.append(advice.CLOSURE_NOT_PRINTED_NOTE)
                return 0.0, "", rows
            how += "; the closure is not all printed, so this is at most the update"
        if per < 0:
            self.limits.append(advice.UPDATE_IN_NOISE_NOTE)
        return max(per_step, 0.0), how, rows

    def _closure_subtracted(self, rows: Sequence[Row]) -> bool:
        """Whether `_update` took the update as the optimizer step less Lightning's closure
        (the estimate that carries one call's noise)."""
        forward = self._total(self._action_rows(FORWARD_ACTION))
        manual = forward and self._total(rows) < MANUAL_OPTIMIZATION_FRACTION * forward
        return self.lightning and not self.exclusive and not manual

    def _model_total(self) -> float:
        return self._total(self._model_rows())

    def _model_rows(self) -> list[Row]:
        """The top-level module rows (those whose path no other row's path holds): the
        model's forward. When the table cut names before their paths, only the largest
        module row is known to be at the top: it alone (a lower bound) stands for them."""
        modules = [r for r in self._kind_rows(RowKind.MODULE) if r.cpu_total_us]
        if any(r.name.endswith(CUT_MARK) or not printed_module_path(r.name) for r in modules):
            return [max(modules, key=lambda r: r.cpu_total_us)] if modules else []
        paths = [printed_module_path(r.name) for r in modules]
        return [
            r
            for r, p in zip(modules, paths, strict=True)
            if not any(q != p and p.startswith(q + ".") for q in paths)
        ]

    def _unranged(self, steps: int, parts: Sequence[PhasePart]) -> float:
        """Per step, the step row's self time: ops and Python outside every recorded range.
        On a device run without Lightning, autograd runs backward on a thread of its own
        while the main thread waits in no op, so that wait is backward, not 'other'."""
        step_rows = self._kind_rows(RowKind.STEP)
        if not step_rows:
            return 0.0
        own = sum(r.self_cpu_us for r in step_rows) / steps
        if self.backward_thread:
            backward = sum(p.us for p in parts if p.phase == Phase.BACKWARD.value)
            own = max(own - backward, 0.0)
        return own

    # ---------------------------------------------------------------- op families

    def _families(self, steps: int) -> tuple[dict[str, float], dict[str, tuple[Row, ...]]]:
        spent: dict[str, float] = {}
        rows: dict[str, list[Row]] = {}
        for row in self.rows:
            kind = self.kinds[id(row)]
            if kind not in (RowKind.ATEN, RowKind.SYNC, RowKind.RUNTIME, RowKind.COMMUNICATION):
                continue
            info = lookup_op(row.name)
            family = op_family(info.category if info else None)
            if family == OPTIMIZER and kind is not RowKind.ATEN:
                continue
            spent[family] = spent.get(family, 0.0) + row.self_cpu_us / steps
            rows.setdefault(family, []).append(row)
        ordered = {f: tuple(sorted(rs, key=lambda r: -r.self_cpu_us)) for f, rs in rows.items()}
        return spent, ordered
