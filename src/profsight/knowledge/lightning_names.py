"""Lightning's names: the ranges its profilers record, and what each one times.

Lightning's ``PyTorchProfiler`` wraps loop actions and hooks in ``record_function`` ranges
named ``[pl][profile]<action>`` and, with ``record_module_names=True``, every module call in
``[pl][module]<class>: <path>``. ``SimpleProfiler``/``AdvancedProfiler`` report the same
action names without the ``[pl][profile]`` prefix.
"""

from __future__ import annotations

import re
from typing import Final

LIGHTNING_ACTION_PREFIX: Final = "[pl][profile]"
LIGHTNING_MODULE_PREFIX: Final = "[pl][module]"
#: The row tags only Lightning writes (its actions, its modules, its strategy's hooks).
LIGHTNING_TAGS: Final = (LIGHTNING_ACTION_PREFIX, LIGHTNING_MODULE_PREFIX, "[Strategy]")
#: torch's Python tracer frame for a module call (``with_stack=True``): ``nn.Module: Conv2d_0``.
PYTHON_MODULE_PREFIX: Final = "nn.Module: "

#: ``[Strategy]SingleDeviceStrategy.training_step``: tag, owner, hook (the owner is empty in
#: ``[_TrainingEpochLoop].train_dataloader_next``).
ACTION_TAG = re.compile(r"^\[(?P<tag>[^\]]+)\](?P<owner>[^.]*)\.(?P<hook>.+)$")
#: torch's printed table cuts a name of this many characters or more to its first this many
#: characters plus ``...`` (``max_name_column_width=55`` minus 3): so a visible part of this
#: length may be the whole name.
CUT_NAME_CHARS: Final = 52
CUT_MARK: Final = "..."

#: What the loop actions time (SimpleProfiler names, also found after ``[pl][profile]``).
LOOP_ACTIONS: Final[dict[str, str]] = {
    "run_training_epoch": "one whole training epoch: every batch, and validation run inside it",
    "run_training_batch": "one training batch from the loop's side: optimizer step (with the "
    "closure that runs forward and backward), hooks",
    "train_dataloader_next": "waiting for the next training batch from the DataLoader "
    "(loading, collating, worker hand-off)",
    "val_next": "waiting for the next validation batch from the DataLoader",
    "test_next": "waiting for the next test batch from the DataLoader",
    "predict_next": "waiting for the next prediction batch from the DataLoader",
    "run_validation_epoch": "one whole validation epoch",
    "run_test_epoch": "one whole test epoch",
    "run_predict_epoch": "one whole prediction epoch",
    # Lightning 1.0 / 1.1 names
    "get_train_batch": "fetching the next training batch from the DataLoader",
    "model_forward": "the forward pass of your training_step",
    "model_backward": "the backward pass",
    "training_step_and_backward": "training_step and backward together (Lightning 1.x)",
    "evaluation_step_and_end": "a validation step and its step_end",
    "on_train_batch_start": "hook at the start of each training batch",
}

#: What the strategy's and the LightningModule's methods time.
HOOKS: Final[dict[str, str]] = {
    "training_step": "your training_step: the forward pass and the loss",
    "validation_step": "your validation_step: forward pass and metrics on a validation batch",
    "test_step": "your test_step",
    "predict_step": "your predict_step",
    "backward": "the backward pass (loss.backward()), autograd's kernels included",
    "optimizer_step": "the optimizer step, and, inside it, the closure that runs training_step "
    "and backward (so its total holds forward and backward too)",
    "optimizer_zero_grad": "clearing gradients before the next step",
    "batch_to_device": "moving the batch to the device (host-to-device copies)",
    "transfer_batch_to_device": "moving the batch to the device (host-to-device copies)",
    "on_before_batch_transfer": "your hook before the batch moves to the device",
    "on_after_batch_transfer": "your hook after the batch moved to the device",
    "configure_gradient_clipping": "gradient clipping (a no-op unless gradient_clip_val is set)",
    "on_before_optimizer_step": "hook before the optimizer step (gradient inspection, logging)",
    "on_before_zero_grad": "hook before gradients are cleared",
    "on_before_backward": "hook before backward",
    "on_after_backward": "hook after backward",
    "on_train_batch_start": "hook at the start of each training batch",
    "on_train_batch_end": "hook at the end of each training batch (logging, callbacks)",
    "on_validation_batch_start": "hook at the start of each validation batch",
    "on_validation_batch_end": "hook at the end of each validation batch (metric updates)",
    "on_train_epoch_start": "hook at the start of each training epoch",
    "on_train_epoch_end": "hook at the end of each training epoch (epoch-level metrics)",
    "on_validation_epoch_end": "hook at the end of each validation epoch (metric compute)",
    "on_fit_start": "hook at the start of fit",
    "on_train_start": "hook when training starts",
    "on_validation_start": "hook when a validation run starts",
    "on_validation_end": "hook when a validation run ends",
    "setup": "setting up the model and data for a stage",
}


def is_module_name(name: str) -> bool:
    return name.startswith((LIGHTNING_MODULE_PREFIX, PYTHON_MODULE_PREFIX))


def module_label(name: str) -> str:
    """A module row's display name: ``feature_extractor.0 (Conv2d)``, or the name as is."""
    if name.startswith(LIGHTNING_MODULE_PREFIX):
        body = name[len(LIGHTNING_MODULE_PREFIX) :]
        cls, _, path = body.partition(": ")
        short = cls.rsplit(".", 1)[-1]
        return f"{path} ({short})" if path else short
    if name.startswith(PYTHON_MODULE_PREFIX):
        return name[len(PYTHON_MODULE_PREFIX) :]
    return name


def module_class(name: str) -> str:
    """``torch.nn.modules.conv.Conv2d`` of ``[pl][module]torch.nn.modules.conv.Conv2d: x``."""
    body = name.removeprefix(LIGHTNING_MODULE_PREFIX).removeprefix(PYTHON_MODULE_PREFIX)
    return body.partition(": ")[0]


def action_of(name: str) -> str:
    """The action or hook a Lightning range names, without prefix and owner."""
    body = name.removeprefix(LIGHTNING_ACTION_PREFIX)
    match = ACTION_TAG.match(body)
    if match:
        return match.group("hook")
    return body.rsplit(".", 1)[-1] if body.startswith("[") else body


def action_candidates(name: str) -> tuple[str, ...]:
    """The actions a Lightning range may name: its own, or for a name the printed table cut
    (``[pl][profile][Strategy]SingleDeviceStrategy.training...``) every known action that
    starts with what is left; empty when the cut took the action's name entirely."""
    if not name.endswith(CUT_MARK):
        return (action_of(name),)
    visible = name[: -len(CUT_MARK)]
    body = visible.removeprefix(LIGHTNING_ACTION_PREFIX)
    match = ACTION_TAG.match(body)
    if match:
        stem = match.group("hook")
    elif body.startswith("["):
        return ()  # cut inside the owner: the action is gone
    else:
        stem = body
    # a visible part of CUT_NAME_CHARS may be the whole name: startswith keeps it then
    return tuple(sorted(a for a in KNOWN_ACTIONS if a.startswith(stem)))


#: torch.nn layers: their own time is their computation, not overhead (containers aside).
TORCH_LAYERS: Final = frozenset(
    {
        "Conv1d",
        "Conv2d",
        "Conv3d",
        "ConvTranspose1d",
        "ConvTranspose2d",
        "ConvTranspose3d",
        "Linear",
        "Bilinear",
        "LazyLinear",
        "BatchNorm1d",
        "BatchNorm2d",
        "BatchNorm3d",
        "SyncBatchNorm",
        "LayerNorm",
        "GroupNorm",
        "InstanceNorm1d",
        "InstanceNorm2d",
        "RMSNorm",
        "Embedding",
        "EmbeddingBag",
        "ReLU",
        "ReLU6",
        "GELU",
        "SiLU",
        "Sigmoid",
        "Tanh",
        "Softmax",
        "LogSoftmax",
        "LeakyReLU",
        "Mish",
        "Hardswish",
        "Dropout",
        "Dropout2d",
        "MaxPool1d",
        "MaxPool2d",
        "MaxPool3d",
        "AvgPool1d",
        "AvgPool2d",
        "AdaptiveAvgPool1d",
        "AdaptiveAvgPool2d",
        "AdaptiveMaxPool2d",
        "Flatten",
        "Identity",
        "Upsample",
        "MultiheadAttention",
        "LSTM",
        "GRU",
        "RNN",
        "CrossEntropyLoss",
        "MSELoss",
        "NLLLoss",
        "BCEWithLogitsLoss",
        "L1Loss",
    }
)

#: What the modules seen most in profiles do (by class name), for module rows.
MODULE_CLASSES: Final[dict[str, str]] = {
    "Conv2d": "a 2-D convolution layer: its time is its aten::conv2d chain",
    "Conv1d": "a 1-D convolution layer",
    "Conv3d": "a 3-D convolution layer",
    "ConvTranspose2d": "a transposed (up-sampling) 2-D convolution",
    "BatchNorm2d": "batch normalisation: mean and variance of each channel, then scale and shift",
    "BatchNorm1d": "batch normalisation over features",
    "LayerNorm": "layer normalisation over the last dimensions",
    "GroupNorm": "group normalisation",
    "Linear": "a fully connected layer: one matrix multiply plus bias (aten::addmm/linear)",
    "ReLU": "the ReLU activation: cheap, memory-bound",
    "GELU": "the GELU activation",
    "SiLU": "the SiLU (swish) activation",
    "Dropout": "dropout: random mask in training, a no-op in eval",
    "MaxPool2d": "2-D max pooling",
    "AvgPool2d": "2-D average pooling",
    "AdaptiveAvgPool2d": "global (adaptive) average pooling",
    "Flatten": "reshapes to 2-D: a view, nearly free",
    "Embedding": "a lookup table of embeddings",
    "MultiheadAttention": "multi-head attention: projections, attention, output projection",
    "Sequential": "a container running its children in order: its total is theirs, its self "
    "time is only the Python loop between them",
    "ModuleList": "a container of modules",
    "BasicBlock": "a ResNet basic block: two 3x3 convolutions with batch norm and ReLU, plus "
    "the skip connection x + F(x)",
    "Bottleneck": "a ResNet bottleneck block: 1x1, 3x3, 1x1 convolutions plus the skip connection",
    "TransformerEncoderLayer": "a transformer encoder layer: self-attention and a feed-forward "
    "block",
    "CrossEntropyLoss": "cross-entropy loss: log-softmax and negative log-likelihood",
    "MSELoss": "mean squared error loss",
}


#: Every action and hook name Lightning's profilers record (for names the table cut).
KNOWN_ACTIONS: Final = frozenset(
    {
        *LOOP_ACTIONS,
        *HOOKS,
        "lr_scheduler_step",
        "on_train_batch_start",
        "on_validation_model_eval",
        "on_validation_model_train",
        "on_before_optimizer_step",
    }
)

#: How Lightning's ranges nest (measured on the Lightning 2.6 traces of tests/scenarios.py,
#: each action against the smallest range around it, and Lightning's loop code): the action
#: -> the action whose range holds it. A printed table shows totals only; this says which
#: totals hold which.
NESTED_IN: Final[dict[str, str]] = {
    # automatic optimisation: optimizer.step(closure), the closure runs these
    "training_step": "optimizer_step",
    "optimizer_zero_grad": "optimizer_step",
    "on_before_zero_grad": "optimizer_step",
    "backward": "optimizer_step",
    "on_before_optimizer_step": "optimizer_step",
    "configure_gradient_clipping": "optimizer_step",
    # the strategy's backward calls the precision plugin's pre/post hooks
    "on_before_backward": "backward",
    "on_after_backward": "backward",
    # the strategy's batch_to_device calls the module's transfer hook and the one after it
    "transfer_batch_to_device": "batch_to_device",
    "on_after_batch_transfer": "batch_to_device",
    # Lightning 1.x
    "model_forward": "training_step_and_backward",
    "model_backward": "training_step_and_backward",
}
#: The AdvancedProfiler's own ``stop`` (and its ``profile`` context) in each action's
#: listing: its calls are the action's calls.
ADVANCED_STOP: Final = re.compile(r"^advanced\.py:\d+\(stop\)$")
#: torchmetrics' Metric entry points in a cProfile listing (directories stripped): a metric
#: called inside an action (in training_step: self.acc(preds, y)) shows as these.
METRIC_ENTRY: Final = re.compile(
    r"^metric\.py:\d+\((?:forward|update|compute|_forward_reduce_state_update|"
    r"_forward_full_state_update)\)$"
)
#: The evaluation loops' step actions (a metric updated in one of them ran inside it).
EVALUATION_ACTIONS: Final = ("validation_step", "test_step", "predict_step")
#: The evaluation and prediction loops' batch fetches (``[_EvaluationLoop].val_next``): their
#: calls count validation, test or prediction batches, not training steps.
EVALUATION_FETCHES: Final = frozenset({"val_next", "test_next", "predict_next"})
#: Hooks that run once per stage or run, not once per batch: never part of a step.
ONCE_PER_RUN: Final = frozenset(
    {
        "setup",
        "teardown",
        "prepare_data",
        "configure_callbacks",
        "configure_optimizers",
        "configure_model",
        "on_fit_start",
        "on_fit_end",
        "on_train_start",
        "on_train_end",
        "on_validation_start",
        "on_validation_end",
        "on_test_start",
        "on_test_end",
        "on_predict_start",
        "on_predict_end",
        "on_sanity_check_start",
        "on_sanity_check_end",
    }
)
#: Lightning's fetch ranges hold the DataLoader's own ``enumerate(DataLoader)#...__next__``.
FETCH_ACTIONS: Final = frozenset({"train_dataloader_next", "get_train_batch"})
