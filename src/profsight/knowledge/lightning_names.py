"""Lightning's names: the ranges its profilers record, and what each one times.

Lightning's ``PyTorchProfiler`` wraps loop actions and hooks in ``record_function`` ranges
named ``[pl][profile]<action>`` and, with ``record_module_names=True``, every module call in
``[pl][module]<class>: <path>``. ``SimpleProfiler``/``AdvancedProfiler`` report the same
action names without the ``[pl][profile]`` prefix.
"""

from __future__ import annotations

from typing import Final

from profsight.lazy import regex

LIGHTNING_ACTION_PREFIX: Final = "[pl][profile]"
LIGHTNING_MODULE_PREFIX: Final = "[pl][module]"
#: The row tags only Lightning writes (its actions, its modules, its strategy's hooks).
LIGHTNING_TAGS: Final = (LIGHTNING_ACTION_PREFIX, LIGHTNING_MODULE_PREFIX, "[Strategy]")
#: torch's Python tracer frame for a module call (``with_stack=True``): ``nn.Module: Conv2d_0``.
PYTHON_MODULE_PREFIX: Final = "nn.Module: "

#: ``[Strategy]SingleDeviceStrategy.training_step``: tag, owner, hook (the owner is empty in
#: ``[_TrainingEpochLoop].train_dataloader_next``).
ACTION_TAG = regex(r"^\[(?P<tag>[^\]]+)\](?P<owner>[^.]*)\.(?P<hook>.+)$")
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
    "training_step_and_backward": "optimizer_step_and_closure",
}
#: Lightning 1.x actions whose names begin as 2.x ones do (``training_step_and_backward``):
#: a cut name that could be either is the 2.x action.
LIGHTNING_1X_ACTIONS: Final = frozenset(
    {"training_step_and_backward", "optimizer_step_and_closure"}
)
#: The optimizer's index Lightning 1.x appends to its closure actions
#: (``optimizer_step_and_closure_0``): stripped to find the action's phase and holder.
OPTIMIZER_INDEX: Final = regex(r"(?<=closure)_\d+$")
#: The AdvancedProfiler's own ``stop`` (and its ``profile`` context) in each action's
#: listing: its calls are the action's calls.
ADVANCED_STOP: Final = regex(r"^advanced\.py:\d+\(stop\)$")
#: torchmetrics' Metric entry points in a cProfile listing (directories stripped): a metric
#: called inside an action (in training_step: self.acc(preds, y)) shows as these.
METRIC_ENTRY: Final = regex(
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

# ------------------------------------------------------------ AdvancedProfiler's nesting
#
# Where Lightning's loops wrap what in ``trainer.profiler.profile(...)``:
# Lightning 1.5 (github.com/Lightning-AI/pytorch-lightning, tag 1.5.0):
# ``loops/fit_loop.py`` ``profile("run_training_epoch")`` around the epoch loop;
# ``loops/epoch/training_epoch_loop.py`` ``profile("run_training_batch")`` around the batch
# loop, after the fetch (``utilities/fetching.py``: ``get_train_batch``) and
# ``training_batch_to_device``; ``core/optimizer.py`` ``profile("optimizer_step_with_closure_"
# + idx)`` around ``optimizer.step(closure)``; ``loops/optimization/optimizer_loop.py``
# ``profile("training_step_and_backward")`` in the closure, around ``model_forward`` (which
# holds ``training_step``), ``zero_grad`` and ``backward``. Lightning 1.3/1.4 name the optimizer
# action ``optimizer_step_and_closure_<idx>``. Lightning 2.x (tag 2.5.0): ``fit_loop.py``
# ``run_training_epoch``; ``training_epoch_loop.py`` ``[_TrainingEpochLoop].train_dataloader_next``,
# ``[Strategy]...batch_to_device``, the ``on_train_batch_start``/``_end`` hooks and
# ``run_training_batch`` inside the epoch, validation (``val_loop.run()``) too; the batch runs
# ``[LightningModule]<Model>.optimizer_step``, whose closure runs ``[Strategy]...training_step``,
# zero_grad and ``backward`` (``trainer/call.py`` names every hook ``[<Owner>]<class>.<hook>``).
#
# How the times nest depends on the version (``profilers/advanced.py``): up to Lightning 2.5
# ``start`` enables a new ``cProfile.Profile`` per action without stopping the one running;
# Python's profile hook then belongs to the inner one, the outer one sees no more calls, and
# when it is disabled it closes the calls still open (``_lsprof``'s ``flush_unmatched``) at
# that moment: the outer action's time *includes* every action inside it, charged to the
# inner profiler's ``enable`` call. From Lightning 2.6 (PR #20809, "Fix advanced profiler for
# python >=3.12": one profiler at a time under ``sys.monitoring``) ``start`` disables every
# profiler first: an outer action stops counting when an inner one starts and is not resumed,
# so outer actions read near zero and the times are close to exclusive.

#: Each action (as `advanced_action` names it) -> the actions that may hold it, innermost
#: first: the first of them present in a report is its holder.
ACTION_HOLDERS: Final[dict[str, tuple[str, ...]]] = {
    # the epoch
    "train_dataloader_next": ("run_training_epoch",),
    "get_train_batch": ("run_training_epoch",),
    "training_batch_to_device": ("run_training_epoch",),
    "batch_to_device": ("run_training_epoch",),
    "on_before_batch_transfer": ("run_training_epoch",),
    "transfer_batch_to_device": ("batch_to_device", "run_training_epoch"),
    "on_after_batch_transfer": ("batch_to_device", "run_training_epoch"),
    "on_batch_start": ("run_training_epoch",),
    "on_train_batch_start": ("run_training_epoch",),
    "on_train_batch_end": ("run_training_epoch",),
    "on_batch_end": ("run_training_epoch",),
    "run_training_batch": ("run_training_epoch",),
    "tbptt_split_batch": ("run_training_batch",),
    # validation runs inside the training epoch (2.x: the epoch loop's on_advance_end)
    "val_next": ("run_training_epoch",),
    "validation_step": ("evaluation_step_and_end", "run_training_epoch"),
    "evaluation_step_and_end": ("run_training_epoch",),
    "evaluation_batch_to_device": ("run_training_epoch",),
    "on_validation_batch_start": ("run_training_epoch",),
    "on_validation_batch_end": ("run_training_epoch",),
    "on_validation_start": ("run_training_epoch",),
    "on_validation_end": ("run_training_epoch",),
    "on_validation_epoch_start": ("run_training_epoch",),
    "on_validation_epoch_end": ("run_training_epoch",),
    "on_validation_model_eval": ("run_training_epoch",),
    "on_validation_model_train": ("run_training_epoch",),
    "on_validation_model_zero_grad": ("run_training_epoch",),
    # the batch: the optimizer step and its closure
    "optimizer_step": ("run_training_batch",),
    "optimizer_step_with_closure": ("run_training_batch",),
    "training_step_and_backward": ("optimizer_step_with_closure", "run_training_batch"),
    "model_forward": ("training_step_and_backward", "run_training_batch"),
    "training_step": ("model_forward", "training_step_and_backward", "optimizer_step"),
    "training_step_end": ("model_forward", "training_step_and_backward"),
    "zero_grad": ("training_step_and_backward", "optimizer_step"),
    "optimizer_zero_grad": ("zero_grad", "optimizer_step"),
    "on_before_zero_grad": ("zero_grad", "optimizer_step"),
    "backward": ("training_step_and_backward", "optimizer_step"),
    "model_backward": ("training_step_and_backward",),
    "on_before_backward": ("backward",),
    "on_after_backward": ("backward", "training_step_and_backward"),
    "on_before_optimizer_step": ("optimizer_step_with_closure", "optimizer_step"),
    "configure_gradient_clipping": ("optimizer_step",),
    "lr_scheduler_step": ("run_training_epoch",),
}
#: Lightning 1.x's optimizer action: ``optimizer_step_with_closure_0`` (1.5+),
#: ``optimizer_step_and_closure_0`` (1.3/1.4), ``optimizer_step_without_closure_0``.
CLOSURE_ACTION = regex(r"^optimizer_step_(?:with|without|and)_closure_\d+$")
CLOSURE_ACTION_NAME: Final = "optimizer_step_with_closure"
#: The actions that hold Lightning's optimizer closure (training_step, zero_grad, backward).
CLOSURE_HOLDERS: Final = frozenset(
    {"optimizer_step", CLOSURE_ACTION_NAME, "training_step_and_backward"}
)
#: Lightning's batch action (1.x and 2.x).
STEP_ACTION_NAME: Final = "run_training_batch"
#: In an outer action's listing (Lightning <= 2.5), the inner action's profiler taking over:
#: its ``enable`` never returns as the outer profiler sees it, so it holds the inner time.
INNER_PROFILER_START: Final = "{method 'enable' of '_lsprof.Profiler' objects}"
#: The profiler's own calls in a listing: never a hot function.
PROFILER_MACHINERY = regex(
    r"^(?:\{method '(?:enable|disable)' of '_lsprof\.Profiler' objects\}|"
    r"advanced\.py:\d+\((?:start|stop)\)|profiler\.py:\d+\(profile\))$"
)
#: Lightning's optimizer closure in a listing (directories stripped): ``closure.py``'s
#: ``Closure.__call__``/``closure`` (1.5+, 2.x ``loops/optimization/closure.py`` and
#: ``automatic.py``), the precision plugin's ``_wrap_closure``, 1.x's
#: ``train_step_and_backward_closure``: its cumulative time is training_step and backward.
LIGHTNING_CLOSURE = regex(
    r"^(?:closure|automatic|optimizer_loop|precision\w*)\.py:\d+\((?:__call__|closure|"
    r"_wrap_closure)\)$|^training_loop\.py:\d+\(train_step_and_backward_closure\)$"
)
#: torch calls that make the host wait for the device when their tensor is on it: a copy to
#: the host or to another dtype/device (``Tensor.to``, ``.cpu``, ``.cuda``), reading a value
#: (``.item``, ``.tolist``, ``.numpy``), an explicit synchronize. cProfile names them
#: ``{method 'to' of 'torch._C.TensorBase' objects}`` (``torch._C._TensorBase`` before torch
#: 2.1, torch/_C/__init__.pyi) and ``{built-in method torch._C._cuda_synchronize}``.
HOST_WAIT_CALL = regex(
    r"^\{method '(?P<method>to|item|cpu|cuda|tolist|numpy)' of 'torch\._C\._?TensorBase' "
    r"objects\}$|^\{built-in method torch\._C\._cuda_synchronize\}$"
)
#: torch's own calls in a cProfile listing (``{built-in method torch.conv2d}``,
#: ``{method 'backward' of 'torch._C.TensorBase' objects}``, ``run_backward``): the model's
#: compute, not Python overhead, whatever their self time (a host wait is `HOST_WAIT_CALL`).
TORCH_CALL = regex(
    r"^\{(?:built-in method torch\.|method '\w+' of 'torch\._C\.|"
    r"method 'run_backward' of )"
)
#: The actions whose listing is the training step's own code (1.x and 2.x).
STEP_CODE_ACTIONS: Final = frozenset(
    {"training_step", "model_forward", "training_step_and_backward", *CLOSURE_HOLDERS}
)


def advanced_action(name: str) -> str:
    """An AdvancedProfiler action as `ACTION_HOLDERS` names it: the hook without its owner
    (``[Strategy]DDPStrategy.training_step`` -> ``training_step``), a 1.x optimizer action
    without its index."""
    action = action_of(name)
    return CLOSURE_ACTION_NAME if CLOSURE_ACTION.match(action) else action
