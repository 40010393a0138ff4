"""What a row's name says about the layer it belongs to (Lightning, module, op, ...)."""

from __future__ import annotations

from typing import Final

#: Lightning's ``PyTorchProfiler(record_module_names=True)`` range around each module call:
#: ``[pl][module]torch.nn.modules.conv.Conv2d: feature_extractor.0``.
LIGHTNING_MODULE_PREFIX: Final = "[pl][module]"
#: torch's Python tracer frame for a module call (``with_stack=True``): ``nn.Module: Conv2d_0``.
PYTHON_MODULE_PREFIX: Final = "nn.Module: "
#: Lightning's ranges around loop actions and hooks: ``[pl][profile]run_training_batch``.
LIGHTNING_ACTION_PREFIX: Final = "[pl][profile]"


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
