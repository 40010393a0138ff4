"""One trial: the user's training with one set of settings, in a process of its own, from a
fixed seed: warm-up steps, then measured steps, each timed on the wall clock (the device
synchronised after each step on a GPU, so a step's time is what the run waits for).

`run_isolated` starts a fresh spawned process per trial: a trial that raises, runs out of
memory or kills its process is that trial's result, and the next starts clean (no cuDNN
autotuning, compiled graph or allocator state carried over).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any

import msgspec
import torch
from torch.profiler import ProfilerActivity, schedule

from profsight.errors import UsageError
from profsight.integrations.native_capture import CapturingProfile
from profsight.knowledge.tuning import (
    BACKEND,
    BATCH,
    LOADER,
    MODEL,
    OPTIMIZER,
    THREADS,
    TRAINER,
    Setting,
)
from profsight.lazy import resolve
from profsight.tune.handover import HandOver, probe
from profsight.tune.loop import LightningTraining, Training, build
from profsight.tune.phase_clock import OptimizerClock
from profsight.tune.stack_pass import stack_trace

SEED = 0
#: A `LightningTraining`'s trial (`lazy.resolve`: a plain loop's runs without Lightning).
LIGHTNING_TRIAL = "profsight.tune.lightning_trial:run_lightning"
#: Steps of the profiled pass after the baseline's timing: torch.profiler's schedule of one
#: wait, one warm-up and three recorded steps, and one more to end the cycle.
PROFILED_STEPS = 6


class Steps(msgspec.Struct, frozen=True):
    warmup: int = 3
    """Steps run before timing: loader workers start, allocators and caches settle."""
    measured: int = 20
    """Steps timed, each on its own (`measure` reads five blocks of them: fewer steps, and
    a stretched step or two on a busy machine moves a block)."""
    min_s: float = 2.0
    """Each run times steps beyond `measured` until they add up to this (its loss stays the
    `measured`-th step's): 30 steps of 5 ms measure the machine's moment more than the fix
    (issue 40: two runs of one loop in two processes, 5.0 and 6.3 ms over 30 steps)."""

    def timed(self, done: int, seconds: float) -> bool:
        """Whether `done` measured steps taking `seconds` are enough."""
        return done >= self.measured and (seconds >= self.min_s or done >= MAX_MEASURED)


#: How far back a trial's error is followed to the error it was raised while handling.
CAUSES_FOLLOWED = 8
#: The most steps a run times to reach `Steps.min_s`.
MAX_MEASURED = 2000


class TrialResult(msgspec.Struct, frozen=True):
    seconds: tuple[float, ...] = ()
    """Each measured step's wall time, batch fetch included."""
    loss: float | None = None
    """The loss of the last measured step."""
    early: tuple[float, ...] = ()
    """The warm-up steps' losses, in order (NaN where a step gave none): the first before
    any update, the next after one, before rounding differences have grown (a deep net's
    losses part exponentially over steps)."""
    batch_size: int | None = None
    """The batch the trial trained on (a larger-batch fix changes it)."""
    steps_per_epoch: int | None = None
    """``len(loader)`` where the loader has a length."""
    failed: str = ""
    """Why the trial has no figures (one line); "" when it ran."""
    trace: str = ""
    """The profiled pass's trace (the baseline's)."""
    device: str = ""
    """Where it trained (`Training.device`)."""
    handover: HandOver | None = None
    """The loader with background workers, measured after the baseline (`handover`)."""
    cpu_s: float | None = None
    """The process's CPU time over the measured steps, all its threads (a thread pool that
    spins between ops counts)."""
    threads: int | None = None
    """torch's intra-op threads the steps ran on."""
    optimizer_s: float | None = None
    """The optimizer's step per timed step, timed without the profiler (`OptimizerClock`)."""
    ended_with: str = ""
    """What the training raised after its steps were timed (`failure_line`), "" if nothing:
    the figures stand."""


def run_isolated(
    target: str,
    settings: tuple[Setting, ...],
    steps: Steps,
    timeout_s: float,
    trace: str = "",
    probe_workers: int = 0,
) -> TrialResult:
    """`run_trial` in a fresh spawned process; a crash, a timeout or an error is the result.
    `probe_workers`: after the steps, measure the loader with that many workers (`handover`)."""
    context = get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        future = pool.submit(run_trial, target, settings, steps, trace, probe_workers)
        try:
            return future.result(timeout=timeout_s)
        except BrokenProcessPool:
            return TrialResult(failed="its process died (killed, or out of memory)")
        except FutureTimeout:  # (not the builtin TimeoutError before Python 3.11)
            for process in list(getattr(pool, "_processes", {}).values()):
                process.kill()  # a hung trial: the budget goes on without it
            return TrialResult(failed=f"it ran past its {timeout_s:.0f} s")


def run_trial(
    target: str, settings: tuple[Setting, ...], steps: Steps, trace: str, probe_workers: int = 0
) -> TrialResult:
    """The trial itself, in the process it runs in."""
    try:
        return _run(target, settings, steps, trace, probe_workers)
    except UsageError as exc:
        return TrialResult(failed=str(exc))
    except torch.cuda.OutOfMemoryError:
        return TrialResult(failed="out of memory on the device")
    except Exception as exc:  # the user's training raised under these settings: say what
        return TrialResult(failed=failure_line(exc))


def failure_line(exc: BaseException) -> str:
    """One line for a trial's error, and the error it was raised while handling where there
    is one (Lightning's teardown after a loader's error raises an error of its own, which
    would otherwise hide the cause)."""
    first = exc
    for _ in range(CAUSES_FOLLOWED):  # (back to the first error raised)
        earlier = first.__cause__ or first.__context__
        if earlier is None:
            break
        first = earlier
    line = _first_line(exc)
    return (line if first is exc else f"{_first_line(first)} (then {line})")[:300]


def _first_line(exc: BaseException) -> str:
    first = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {first}"


def _run(
    target: str, settings: tuple[Setting, ...], steps: Steps, trace: str, probe_workers: int
) -> TrialResult:
    _seed()
    training = build(target)
    by_target = _by_target(settings)
    for key, value in by_target[BACKEND].items():
        _set_backend(key, value)
    if "num_threads" in by_target[THREADS]:
        torch.set_num_threads(int(str(by_target[THREADS]["num_threads"])))
    if isinstance(training, LightningTraining):
        run_lightning = resolve(LIGHTNING_TRIAL)  # Lightning imported by its trials only
        fit = run_lightning(training, by_target, steps, trace, probe_workers)
        return TrialResult(
            fit.seconds,
            fit.loss,
            fit.early,
            fit.batch_size,
            fit.steps_per_epoch,
            trace=trace,
            device=training.device,
            cpu_s=fit.cpu_s,
            handover=fit.handover,
            threads=torch.get_num_threads(),
            ended_with=fit.ended_with,
            optimizer_s=fit.optimizer_s,
        )
    model = training.model()
    if hasattr(model, "to"):
        model = model.to(training.device)
    model = with_model_settings(model, by_target[MODEL])
    optimizer = training.optimizer(model.parameters(), **by_target[OPTIMIZER])
    loader_settings = dict(by_target[LOADER])
    batch_size = training.batch_size
    if BATCH_SIZE in by_target[BATCH]:
        if batch_size is None:
            raise UsageError("a larger batch needs Training.batch_size")
        batch_size *= int(str(by_target[BATCH][BATCH_SIZE]))
        loader_settings[BATCH_SIZE] = batch_size
    loader = training.loader(**loader_settings)
    batches = _cycle(loader)
    sync = _synchronize(training.device)
    step = _stepper(training, model, optimizer, batches, sync)
    early = tuple(_as_float(step()) for _ in range(steps.warmup))
    seconds: list[float] = []
    loss = None
    cpu = time.process_time()
    with OptimizerClock() as clock:
        clock.on = True
        while not steps.timed(len(seconds), sum(seconds)):
            start = time.perf_counter()
            last = step()
            seconds.append(time.perf_counter() - start)
            loss = last if len(seconds) <= steps.measured else loss
    cpu = time.process_time() - cpu
    # the workers forked before the profiler ran: a process forked after Kineto's threads
    # started can abort in the child
    handover = probe(training.loader, probe_workers) if probe_workers else None
    if trace:
        _profile(step, training.device, trace)
    return TrialResult(
        seconds=tuple(seconds),
        loss=_as_float(loss),
        early=tuple(math.nan if x is None else x for x in early),
        batch_size=batch_size,
        steps_per_epoch=len(loader) if hasattr(loader, "__len__") else None,  # type: ignore[arg-type]
        trace=trace,
        device=training.device,
        cpu_s=cpu,
        handover=handover,
        threads=torch.get_num_threads(),
        optimizer_s=clock.per_step(len(seconds)),
    )


BATCH_SIZE = "batch_size"


def with_model_settings(model: Any, settings: dict[str, object]) -> Any:
    """The model in channels-last memory format, then compiled (with CUDA graphs: the
    reduce-overhead mode), as `settings` ask."""
    if settings.get("channels_last"):
        model = model.to(memory_format=torch.channels_last)
    if settings.get("cuda_graphs"):
        return torch.compile(model, mode="reduce-overhead")
    if settings.get("compile"):
        model = torch.compile(model)
    return model


def _seed() -> None:
    random.seed(SEED)
    torch.manual_seed(SEED)
    try:
        import numpy as np

        np.random.seed(SEED)
    except ImportError:  # pragma: no cover (numpy is a dependency of profsight)
        pass


def _by_target(settings: tuple[Setting, ...]) -> dict[str, dict[str, object]]:
    grouped: dict[str, dict[str, object]] = {
        t: {} for t in (LOADER, OPTIMIZER, BACKEND, MODEL, BATCH, TRAINER, THREADS)
    }
    for setting in settings:
        grouped[setting.target][setting.key] = setting.value
    return grouped


def _set_backend(key: str, value: object) -> None:
    """``cudnn.benchmark`` -> ``torch.backends.cudnn.benchmark = value``."""
    *path, name = key.split(".")
    owner: Any = torch.backends
    for part in path:
        owner = getattr(owner, part)
    setattr(owner, name, value)


def _cycle(loader: Any) -> Iterator[Any]:
    """The loader's batches, epoch after epoch."""
    while True:
        empty = True
        for batch in loader:
            empty = False
            yield batch
        if empty:
            raise UsageError("the loader gave no batch")


def _synchronize(device: str) -> Callable[[], None]:
    if device.startswith("cuda"):
        return torch.cuda.synchronize
    return lambda: None


def _stepper(
    training: Training, model: Any, optimizer: Any, batches: Iterator[Any], sync: Callable[[], None]
) -> Callable[[], Any]:
    def step() -> Any:
        loss = training.step(model, optimizer, next(batches))
        sync()
        return loss

    return step


def _profile(step: Callable[[], Any], device: str, trace: str) -> None:
    """The profiled passes: torch.profiler's schedule, one cycle, exported to `trace`; then
    the same with the Python stack, to `stack_trace(trace)` (its tracer's cost per call
    would distort the first's shares, which price the fixes)."""
    activities = [ProfilerActivity.CPU]
    if device.startswith("cuda"):
        activities.append(ProfilerActivity.CUDA)
    for path, stack in ((trace, False), (stack_trace(trace), True)):
        with CapturingProfile(  # torch's native start and stop lines kept off the terminal
            activities=activities,
            schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
            record_shapes=not stack,
            with_stack=stack,
            on_trace_ready=lambda p, path=path: p.export_chrome_trace(path),
        ) as prof:
            for _ in range(PROFILED_STEPS):
                step()
                prof.step()


def _as_float(loss: Any) -> float | None:
    if loss is None:
        return None
    try:
        return float(loss.detach() if hasattr(loss, "detach") else loss)
    except (TypeError, ValueError, RuntimeError):
        return None
