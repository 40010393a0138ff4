"""What a step costs per 1,000 steps and per epoch, and the change to make, as diff lines."""

from __future__ import annotations

from collections.abc import Sequence

from profsight.knowledge.tuning import (
    BACKEND,
    BATCH,
    CODE_FORMS,
    MODEL,
    MODEL_FORMS,
    THREADS,
    Setting,
)
from profsight.tune.measure import Step
from profsight.tune.result import Cost

SECONDS_PER_HOUR = 3600.0


def cost_of(step: Step, steps_per_epoch: int | None, price: float | None) -> Cost:
    """One device's hours (and money, at `price` per device-hour) for `step`, an epoch being
    `steps_per_epoch` of them (the baseline's batch: a fix that changes the batch is never
    combined, so no "after" cost has another)."""
    per_1000 = step.mean_s * 1000 / SECONDS_PER_HOUR
    epoch = None
    if steps_per_epoch:
        epoch = step.mean_s * steps_per_epoch / SECONDS_PER_HOUR
    return Cost(
        hours_per_1000_steps=per_1000,
        hours_per_epoch=epoch,
        money_per_1000_steps=None if price is None else per_1000 * price,
        money_per_epoch=None if price is None or epoch is None else epoch * price,
    )


def diff_lines(settings: Sequence[Setting]) -> tuple[str, ...]:
    """``+`` lines, one per constructor or switch the settings change."""
    by_target: dict[str, list[Setting]] = {}
    for setting in settings:
        by_target.setdefault(setting.target, []).append(setting)
    lines: list[str] = []
    for target, group in by_target.items():
        head = CODE_FORMS[target]
        if target == MODEL:
            lines += [f"+ {MODEL_FORMS[s.key]}" for s in group]
        elif target == BACKEND:
            lines += [f"+ {head}.{s.key} = {s.value!r}" for s in group]
        elif target == THREADS:
            lines += [f"+ {head}({s.value!r})" for s in group]
        elif target == BATCH:
            lines += [f"+ {head}(..., batch_size={s.value} x yours)" for s in group]
        else:
            arguments = ", ".join(f"{s.key}={s.value!r}" for s in group)
            lines.append(f"+ {head}(..., {arguments})")
    return tuple(lines)
