"""What ``tune`` trains: the user's `Training`, built by a factory it names as
``module:function`` or ``path/to/file.py:function``, in every trial's process anew."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profsight.errors import UsageError


@dataclass(frozen=True)
class Training:
    """One training loop, as factories ``tune`` can call with the settings of a fix.

    ``model()`` builds the model; ``optimizer(params, **settings)`` the optimizer (``fused``,
    ``foreach`` come as keywords); ``loader(**settings)`` the batches (a ``DataLoader``:
    ``num_workers``, ``pin_memory``, ``persistent_workers``, ``prefetch_factor``,
    ``batch_size`` come as keywords); ``step(model, optimizer, batch)`` runs one training
    step (forward, backward, optimizer step) and returns the loss."""

    model: Callable[[], Any]
    optimizer: Callable[..., Any]
    loader: Callable[..., Iterable[Any]]
    step: Callable[[Any, Any, Any], Any]
    device: str = "cpu"
    """Where the model and batches live (``"cuda"``): ``step`` moves each batch there."""
    batch_size: int | None = None
    """The loader's batch size as built without settings (a larger-batch fix scales it)."""


@dataclass(frozen=True)
class LightningTraining:
    """A Lightning setup, as factories ``tune`` can call with the settings of a fix.

    ``module(**settings)`` builds the ``LightningModule`` (optimizer settings such as
    ``fused`` come as keywords: its ``configure_optimizers`` passes them on);
    ``train_loader(**settings)`` and ``val_loader(**settings)`` build the loaders (the
    loader settings come as keywords); ``trainer`` holds your ``Trainer`` arguments
    (``precision``, ``log_every_n_steps``, ``val_check_interval``, ...)."""

    module: Callable[..., Any]
    train_loader: Callable[..., Iterable[Any]]
    val_loader: Callable[..., Iterable[Any]] | None = None
    trainer: dict[str, Any] = field(default_factory=dict)
    device: str = "cpu"
    """``Trainer(accelerator=...)``: ``"cpu"`` or ``"cuda"``."""
    batch_size: int | None = None


Setup = Training | LightningTraining


def load_factory(target: str) -> Callable[[], Setup]:
    """The factory ``target`` names; one clear line for a module that does not import or a
    name that is not a function returning a `Training`."""
    module_name, sep, attr = target.rpartition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"{target}: name the factory as MODULE:FUNCTION or FILE.py:FUNCTION")
    module = _import(module_name, target)
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise UsageError(f"{target}: {module_name} has no function {attr!r}")
    return factory  # type: ignore[no-any-return]


def build(target: str) -> Setup:
    """The `Training` or `LightningTraining` ``target``'s factory returns."""
    try:
        built = load_factory(target)()
    except UsageError:
        raise
    except Exception as exc:  # the user's factory raised: say what, in one line
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise UsageError(f"{target}: the factory raised {type(exc).__name__}: {first}") from None
    if not isinstance(built, (Training, LightningTraining)):
        raise UsageError(
            f"{target}: the factory returned {type(built).__name__}, not profsight.tune.Training"
            " or LightningTraining"
        )
    return built


def _import(name: str, target: str) -> Any:
    try:
        if name.endswith(".py"):
            path = Path(name)
            spec = importlib.util.spec_from_file_location(path.stem, path)
            if spec is None or spec.loader is None or not path.is_file():
                raise UsageError(f"{target}: no such file {name}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = module
            spec.loader.exec_module(module)
            return module
        return importlib.import_module(name)
    except UsageError:
        raise
    except Exception as exc:  # the user's module raised while importing: say what
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise UsageError(
            f"{target}: {name} does not import ({type(exc).__name__}: {first})"
        ) from None
