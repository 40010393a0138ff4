"""Budgets for CI: limits on a run's step time, phases, device use and findings.

A budget is ``NAME=LIMIT`` with a bound (``max`` or ``min``):

* a breakdown phase id (`Phase`: ``data_loading``, ``forward``, ...) as a share of the step:
  ``data_loading=10%``;
* ``step_time``, a time: ``120ms``, ``0.12s``, ``120000us``;
* ``device_busy``, the device's busy share of the step: ``60%`` (usually a ``min``);
* a finding category (`CATEGORIES`) as the share of the step at stake: ``host_device_sync=5%``
  (``finding:NAME`` where a category is also a phase, e.g. ``finding:data_loading``).

``severity>=high|medium|low`` fails on any finding at or above that severity (informational
findings never fail). `check` gives one `Outcome` per budget (per offending finding for a
severity gate), each with a one-line message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from profsight.compare.facts import RunFacts
from profsight.errors import UsageError
from profsight.knowledge.phases import Phase
from profsight.lazy import regex
from profsight.model.findings import CATEGORIES, Severity
from profsight.units import short_time

if TYPE_CHECKING:
    from profsight.report.build import ReportData

Bound = Literal["max", "min"]
Metric = Literal["phase", "step_time", "device_busy", "finding"]

STEP_TIME = "step_time"
DEVICE_BUSY = "device_busy"
FINDING_PREFIX = "finding:"
_PHASES = frozenset(p.value for p in Phase)
_TIME_UNITS = {"us": 1.0, "µs": 1.0, "ms": 1000.0, "s": 1_000_000.0}
_LIMIT = regex(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(%|us|µs|ms|s)?\s*$")
#: ``high``, or ``severity>=high`` (quoted in a shell: ``>`` redirects), or ``severity:high``.
_FAIL_ON = regex(r"^\s*(?:severity\s*(?:>=|:)\s*)?(\w+)\s*$")
_GATES = {s.name.lower(): s for s in Severity if s is not Severity.INFO}


class Budget(msgspec.Struct, frozen=True):
    bound: Bound
    metric: Metric
    name: str
    """The phase id or finding category; `STEP_TIME` or `DEVICE_BUSY` for those."""
    limit: float
    """A % of the step, or µs for the step time."""
    text: str
    """The limit as given (``120ms``)."""


class Outcome(msgspec.Struct, frozen=True):
    holds: bool
    message: str


def parse_budget(argument: str, bound: Bound) -> Budget:
    """``NAME=LIMIT`` as a budget; `UsageError` naming the argument when it is not one."""
    flag = f"--{bound} {argument}"
    name, sep, limit = argument.partition("=")
    name = name.strip()
    if not sep or not name:
        raise UsageError(f"bad budget {flag!r}: write NAME=LIMIT, like data_loading=10%")
    match = _LIMIT.match(limit)
    if match is None:
        raise UsageError(f"bad budget {flag!r}: {limit!r} is not a number with a unit")
    value, unit = float(match.group(1)), match.group(2)
    metric = _metric(name, flag)
    if metric == "step_time":
        if unit not in _TIME_UNITS:
            raise UsageError(f"bad budget {flag!r}: step_time takes a time, like 120ms or 0.12s")
        value *= _TIME_UNITS[unit]
    elif unit != "%":
        raise UsageError(f"bad budget {flag!r}: {name} takes a share of the step, like 10%")
    return Budget(bound, metric, name.removeprefix(FINDING_PREFIX), value, limit.strip())


def _metric(name: str, flag: str) -> Metric:
    if name == STEP_TIME:
        return "step_time"
    if name == DEVICE_BUSY:
        return "device_busy"
    if name in _PHASES:
        return "phase"
    if name.removeprefix(FINDING_PREFIX) in CATEGORIES:
        return "finding"
    # a phase and a finding category can share a name (data_loading): each is listed once
    known = ", ".join(dict.fromkeys([STEP_TIME, DEVICE_BUSY, *sorted(_PHASES), *CATEGORIES]))
    raise UsageError(f"bad budget {flag!r}: unknown name {name!r}; use one of: {known}")


def parse_fail_on(argument: str) -> Severity:
    """``LEVEL`` (or ``severity>=LEVEL``, ``severity:LEVEL``) as the lowest severity that
    fails."""
    match = _FAIL_ON.match(argument)
    level = _GATES.get(match.group(1).lower()) if match else None
    if level is None:
        raise UsageError(
            f"bad budget '--fail-on {argument}': write LEVEL (or 'severity>=LEVEL') with "
            f"LEVEL one of {', '.join(_GATES)}"
        )
    return level


def check(
    source: ReportData | Mapping[str, Any],
    budgets: list[Budget],
    fail_on: Severity | None = None,
) -> list[Outcome]:
    """Each budget checked against a report (or its ``profsight/1`` document). A budget the
    input has no numbers for (a phase of a table without step rows, device busy of a CPU run)
    does not hold: it cannot be checked."""
    run = RunFacts.of(source)
    outcomes = [_check(run, b) for b in budgets]
    if fail_on is not None:
        gate = fail_on.name.lower()
        bad = [f for f in run.findings if f.level is not Severity.INFO and f.level >= fail_on]
        outcomes += [
            Outcome(False, f"finding {f.category} is {f.severity}, at or above {gate}: {f.title}")
            for f in bad
        ]
        if not bad:
            outcomes.append(Outcome(True, f"no finding is {gate} or above"))
    return outcomes


def _check(run: RunFacts, budget: Budget) -> Outcome:
    name = budget.name
    if budget.metric == "step_time":
        if run.step_us is None:
            return _unchecked(name, "the input has no step breakdown")
        return _compare(budget, run.step_us, f"step_time is {short_time(run.step_us)}")
    if budget.metric == "phase":
        pct = run.phase_pct(name)
        if pct is None:
            return _unchecked(name, "the input has no step breakdown")
        return _compare(budget, pct, f"{name} is {pct:.1f}% of the step")
    if budget.metric == "device_busy":
        pct = run.device_busy_pct()
        if pct is None:
            return _unchecked(name, "the input has no device activity or no step breakdown")
        return _compare(budget, pct, f"device_busy is {pct:.1f}% of the step")
    at_stake = max((f.at_stake_pct for f in run.findings if f.category == name), default=0.0)
    return _compare(budget, at_stake, f"{name} has {at_stake:.1f}% of the step at stake")


def _compare(budget: Budget, value: float, said: str) -> Outcome:
    limit = budget.text if budget.metric == "step_time" else f"{budget.limit:g}%"
    if budget.bound == "max":
        holds = value <= budget.limit
        return Outcome(holds, f"{said}, {'within' if holds else 'above'} {limit}")
    holds = value >= budget.limit
    return Outcome(holds, f"{said}, {'at least' if holds else 'below'} {limit}")


def _unchecked(name: str, reason: str) -> Outcome:
    return Outcome(False, f"{name} cannot be checked: {reason}")
