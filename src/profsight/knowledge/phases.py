"""Phases of a training step, and which rows declare them.

A row *declares* a phase when its name says what part of the step it is (Lightning's
``training_step``, torch's ``Optimizer.step#``, a DataLoader fetch, autograd's backward
rows). Every other row inherits the phase of its nearest declaring ancestor; rows with none
fall back on their kind (a module call is forward work).
"""

from __future__ import annotations

import enum
import re
from typing import Final

from profsight.knowledge.lightning_names import LIGHTNING_ACTION_PREFIX, action_candidates
from profsight.knowledge.rows import RowKind
from profsight.lazy import regex


class Phase(enum.Enum):
    DATA_LOADING = "data_loading"
    FORWARD = "forward"
    BACKWARD = "backward"
    OPTIMIZER = "optimizer"
    ZERO_GRAD = "zero_grad"
    VALIDATION = "validation"
    METRICS = "metrics"
    CALLBACKS_LOGGING = "callbacks_logging"
    FRAMEWORK = "framework"
    COMMUNICATION = "communication"
    STARTUP = "startup"
    DEVICE_LAG = "device_lag"
    OTHER = "other"


PHASE_LABELS: Final[dict[Phase, str]] = {
    Phase.DATA_LOADING: "data loading (next batch, transfer to device)",
    Phase.FORWARD: "forward (your step: model and loss)",
    Phase.BACKWARD: "backward",
    Phase.OPTIMIZER: "optimizer step",
    Phase.ZERO_GRAD: "zero_grad",
    Phase.VALIDATION: "validation",
    Phase.METRICS: "metrics",
    Phase.CALLBACKS_LOGGING: "hooks, callbacks and logging",
    Phase.FRAMEWORK: "framework overhead (Lightning loop and strategy)",
    Phase.COMMUNICATION: "waiting for collectives (all-reduce, ...) to finish",
    Phase.STARTUP: "one-time start-up inside the window (lazy loading, autotuning, compilation)",
    Phase.DEVICE_LAG: "the device still running what the host launched (the host ran ahead: "
    "in steady state it waits here, in a sync or on a full launch queue)",
    Phase.OTHER: "no phase: Python between recorded ranges, or ranges that name no phase",
}

#: Lightning actions and hooks -> the phase they time (names as `action_of` gives them).
ACTION_PHASES: Final[dict[str, Phase]] = {
    "training_step": Phase.FORWARD,
    "backward": Phase.BACKWARD,
    "optimizer_step": Phase.OPTIMIZER,
    "optimizer_zero_grad": Phase.ZERO_GRAD,
    "on_before_zero_grad": Phase.ZERO_GRAD,
    "train_dataloader_next": Phase.DATA_LOADING,
    "batch_to_device": Phase.DATA_LOADING,
    "transfer_batch_to_device": Phase.DATA_LOADING,
    "on_before_batch_transfer": Phase.DATA_LOADING,
    "on_after_batch_transfer": Phase.DATA_LOADING,
    "validation_step": Phase.VALIDATION,
    "test_step": Phase.VALIDATION,
    "predict_step": Phase.VALIDATION,
    "run_validation_epoch": Phase.VALIDATION,
    "run_training_epoch": Phase.FRAMEWORK,
    "run_training_batch": Phase.FRAMEWORK,
    # Lightning 1.0 / 1.1 SimpleProfiler names
    "model_forward": Phase.FORWARD,
    "model_backward": Phase.BACKWARD,
    # Lightning 1.2-1.4: the closure's forward and backward in one action (the model's work)
    "training_step_and_backward": Phase.FORWARD,
    "get_train_batch": Phase.DATA_LOADING,
    "evaluation_step_and_end": Phase.VALIDATION,
    "on_train_batch_end": Phase.CALLBACKS_LOGGING,
}

#: Row kinds that declare a phase by themselves.
KIND_PHASES: Final[dict[RowKind, Phase]] = {
    RowKind.DATALOADER: Phase.DATA_LOADING,
    RowKind.BACKWARD: Phase.BACKWARD,
    RowKind.METRIC: Phase.METRICS,
    RowKind.CALLBACK: Phase.CALLBACKS_LOGGING,
}

#: Phases for rows with no declaring ancestor, by their own kind.
FALLBACK_PHASES: Final[dict[RowKind, Phase]] = {
    RowKind.MODULE: Phase.FORWARD,
    RowKind.ATEN: Phase.FORWARD,
    RowKind.RUNTIME: Phase.FORWARD,
    RowKind.SYNC: Phase.FORWARD,
    RowKind.USER: Phase.OTHER,
    RowKind.STEP: Phase.OTHER,
}


#: Words in your own record_function labels that name a phase (first match wins).
LABEL_PHASES: Final[tuple[tuple[re.Pattern[str], Phase], ...]] = tuple(
    (regex(p, re.IGNORECASE), phase)
    for p, phase in (
        (r"valid|\beval", Phase.VALIDATION),
        (r"metric|accuracy|\bauroc|\bf1\b", Phase.METRICS),
        (r"callback|logging|\blog\b|checkpoint", Phase.CALLBACKS_LOGGING),
        (r"data.?load|dataloader|\bbatch_fetch", Phase.DATA_LOADING),
        (r"backward", Phase.BACKWARD),
        (r"optimi[sz]er|\bzero_grad", Phase.OPTIMIZER),
        (r"forward", Phase.FORWARD),
    )
)


def declared_phase(name: str, kind: RowKind) -> Phase | None:
    """The phase a row declares by its name, if any."""
    if kind in KIND_PHASES:
        return KIND_PHASES[kind]
    if kind is RowKind.USER:
        for pattern, phase in LABEL_PHASES:
            if pattern.search(name):
                return phase
        return None
    if name.startswith("Optimizer.step#"):
        return Phase.OPTIMIZER
    if name.startswith("Optimizer.zero_grad#"):
        return Phase.ZERO_GRAD
    if kind in (RowKind.LIGHTNING, RowKind.STRATEGY, RowKind.OPTIMIZER):
        # a name the printed table cut may stand for several actions: a phase only when
        # all of them that have one agree
        candidates = action_candidates(name)
        named = [a for a in candidates if a in ACTION_PHASES] or candidates
        phases = {_action_phase(name, a) for a in named} - {None}
        return phases.pop() if len(phases) == 1 else None
    return None


def _action_phase(name: str, action: str) -> Phase | None:
    if action in ACTION_PHASES:
        return ACTION_PHASES[action]
    if name.startswith(LIGHTNING_ACTION_PREFIX):
        hook = action.rsplit(".", 1)[-1]
        if hook.startswith("on_") or hook == "configure_gradient_clipping":
            return Phase.CALLBACKS_LOGGING
        return Phase.FRAMEWORK
    return None
