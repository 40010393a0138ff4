"""The fixes `profsight tune` can apply without the user's code changing: for each finding
category, the settings that its catalogue rule (`catalogue.RULES_BY_CATEGORY`) recommends and
that live in a constructor argument or a process-wide switch.

A candidate is one fix: the settings it changes together, where each goes (the loader's or
the optimizer's arguments, the model, torch's backend switches), whether it needs a GPU to
help, and whether it changes the numerics (a precision change is measured and reported with
its loss, never applied unasked). Categories whose fix needs the user's code (a ``.item()``
in the loop, a Python loop in ``forward``) have no candidate: `tune` gives their advice.

This module is knowledge: it imports the stdlib and msgspec (its records are Structs) only.
"""

from __future__ import annotations

from typing import Final

import msgspec

from profsight.knowledge.phases import Phase

#: Where a setting goes.
LOADER: Final = "loader"
"""A keyword argument of the user's loader factory (``DataLoader(...)``'s)."""
OPTIMIZER: Final = "optimizer"
"""A keyword argument of the user's optimizer factory (``Adam(params, ...)``'s)."""
BACKEND: Final = "backend"
"""A process-wide torch switch, set before the model is built."""
MODEL: Final = "model"
"""A change to the built model (``torch.compile``)."""
BATCH: Final = "batch"
"""The loader's batch size, scaled: compared per sample."""
TRAINER: Final = "trainer"
"""A keyword argument of Lightning's ``Trainer`` (a plain loop has none: not tried there)."""
THREADS: Final = "threads"
"""torch's intra-op threads in the training's process (``torch.set_num_threads``)."""

#: Values computed when the plan is made: the cores a loader's workers may use, and the
#: cores they leave the training's own threads (at least one).
WORKERS: Final = "workers"
CORES_LEFT: Final = "cores left"

#: How much a trial's final loss may differ from the baseline's, relative, for a fix that
#: should leave the arithmetic alone (a fused optimizer reorders its float operations).
LOSS_TOLERANCE: Final = 0.01
#: How much the warm-up steps' losses may differ, relative. Reordered float sums move a
#: loss by about 1e-7 after one update; a deep net then parts them exponentially (ResNet-18
#: under Adam, fused against one tensor at a time: 1e-7 for seven steps, 1e-3 at the ninth,
#: 1.3e-2 at the twelfth), so a final loss off by more than `LOSS_TOLERANCE` with the early
#: ones within this is the same arithmetic, rounded apart.
EARLY_LOSS_TOLERANCE: Final = 1e-4
#: The most a final loss may be off, relative, and still be read as rounding grown apart
#: when the warm-up losses agree: beyond it (a loss that blew up, a NaN) the run diverged.
ROUNDED_APART_MAX: Final = 0.5


class Setting(msgspec.Struct, frozen=True):
    key: str
    """The argument's or switch's name: ``num_workers``, ``fused``, ``cudnn.benchmark``."""
    value: object
    """Its value; `WORKERS` is replaced by the cores the plan may use."""
    target: str
    """`LOADER`, `OPTIMIZER`, `BACKEND`, `MODEL` or `BATCH`."""


class Candidate(msgspec.Struct, frozen=True):
    name: str
    """What the fix is, for the report: "background loader workers"."""
    settings: tuple[Setting, ...]
    needs_gpu: bool = False
    """It helps only with a GPU (pinned memory, cuDNN's autotuner, TF32): not tried on CPU."""
    changes_numerics: bool = False
    """A precision change: its loss is reported beside its time, and it is never combined."""
    note: str = ""
    """What the user must know before taking it (the learning rate of a larger batch)."""
    reorders_after_first_epoch: bool = False
    """A shuffled loader gives other batches from its second epoch on (persistent workers
    keep their own sampler state): a loss after the first epoch is not comparable."""
    frees_cores: bool = False
    """It gives the loader's workers cores of their own by taking them from the training's
    threads: tried on a CPU run only, where the workers' prediction is cut by the cores."""
    cpu_fallback_for: str = ""
    """On a CPU, the fix whose fallback this is: tried only where that one did not help,
    and not priced (`CPU_FALLBACK`)."""
    priced_by: tuple[str, ...] = ()
    """The finding categories whose replay is this fix (the data loading gone is what
    workers aim at), so that the finding's saving prices it; under any other (pinned memory
    for a loading finding, ``torch.compile`` for any: the replay does not model what it
    fuses) it is tried and not priced (`NOT_PRICED`)."""
    keeps: float = 0.0
    """The share of its finding's time the fix leaves in the step: a quarter of the
    validation batches keeps a quarter of the validation. Its prediction is the replay's
    saving (the finding's time gone whole) times one less this."""
    saves_in: str = ""
    """The phase its saving lies in, where a trial times that phase without the profiler
    (``optimizer``: `tune.phase_clock`): on a CPU run the replay's saving is taken as its
    share of that phase, at the phase's timed length ("": the replay's share of the step)."""


_WORKERS = Candidate(
    "background loader workers",
    # persistent: without, each epoch's end shuts the workers down and starts new ones (4 s
    # for two workers in a measured trial on this repository's CPU machine)
    (
        Setting("num_workers", WORKERS, LOADER),
        Setting("persistent_workers", True, LOADER),
        Setting("prefetch_factor", 2, LOADER),
    ),
    reorders_after_first_epoch=True,
    priced_by=("data_loading", "host_lead_in"),
)
_WORKERS_OWN_CORES = Candidate(
    "background loader workers, fewer training threads",
    (*_WORKERS.settings, Setting("num_threads", CORES_LEFT, THREADS)),
    frees_cores=True,
    reorders_after_first_epoch=True,
    priced_by=("data_loading",),
    note="torch's ops in the step then run on fewer threads",
)
_PINNED = Candidate(
    "pinned host memory",
    (Setting("pin_memory", True, LOADER),),
    needs_gpu=True,
    priced_by=("memcpy",),
)
_FUSED = Candidate(
    "fused optimizer",
    # foreach off with it: torch refuses both on, and a factory may turn foreach on itself
    (Setting("fused", True, OPTIMIZER), Setting("foreach", False, OPTIMIZER)),
    priced_by=("optimizer",),
    saves_in=Phase.OPTIMIZER.value,
)
_FOREACH = Candidate(
    "multi-tensor optimizer",
    (Setting("foreach", True, OPTIMIZER),),
    cpu_fallback_for=_FUSED.name,
    priced_by=("optimizer",),
)

#: Why the multi-tensor form is a CPU's fallback. Measured on three loops (issue 40): the
#: fused form saved 70%, 10% and -1% of the step, the multi-tensor one 42%, 0% and -17%.
CPU_FALLBACK: Final = (
    "on a CPU the multi-tensor form runs the same per-tensor kernels in a loop: it saves the"
    " Python between them only, which the fused form saves too; the replay cannot tell that"
    " Python from the profiler's own cost per op, so it is not priced"
)
CPU_FALLBACK_SKIPPED: Final = (
    "on a CPU the multi-tensor form is tried only where {fix} did not help; it measured"
    " faster than the baseline's first run"
)
#: A fix whose prediction is a slower step is not tried (its time is the user's budget).
PREDICTED_SLOWER: Final = "predicted slower ({pct:+.0f}%): not tried"
#: Below this predicted saving (%, negative) a fix counts as predicted slower.
SLOWER_BELOW_PCT: Final = -1.0
#: A fix predicted to save less than this (%), or less than the baseline's own spread where
#: that is below `MAX_SPREAD_PCT`, is not tried: its trial could not tell the saving from
#: none (two runs of one loop in two processes differ by more: `tune`'s drift, 1-23% on the
#: planted CPU loops). A larger prediction is always tried: on a noisy baseline (± 16% of
#: Lightning's tiny batch) the fused optimizer, predicted 16%, measured 14%.
MIN_RESOLVED_PCT: Final = 2.0
MAX_SPREAD_PCT: Final = 5.0
PREDICTED_WITHIN_NOISE: Final = (
    "predicted {pct:+.0f}%, within the baseline's own spread (± {noise:.0f}%): not tried"
)
#: Why the fewer-threads form of the workers is not tried, and its prediction's basis.
CORES_NOT_LIMITING: Final = "the cores do not limit the workers here"
WORKERS_NOT_MEASURED: Final = "the workers could not be measured beside the baseline"
THREADS_NOT_FEWER: Final = "torch already runs on no more threads than the workers leave"
NOT_ON_GPU_RUN: Final = "a CPU run's fix"
OWN_CORES_BASIS: Final = (
    "the training on one thread taking the rest of the step's CPU and no more, the rest of"
    " the step as it ran (on fewer threads its ops may take longer)"
)
#: Advice for a fix in the user's code, and the function its evidence was called from (the
#: baseline's pass with the Python stack: ``path(line): function``).
ADVICE_FROM: Final = "{advice} (in your code: {frame})"
#: A fix tried under a finding whose replay is another fix (`Candidate.priced_by`).
NOT_PRICED: Final = "the replay of this finding is not this fix: tried, not priced"
#: A trial whose training raised after its steps were timed (a Trainer's teardown): its
#: figures stand, and what it raised is said.
ENDED_WITH: Final = "the training raised after its steps were timed: {error}"
#: The replay's basis where the profiled step held only part of the timed one.
SEEN_BASIS: Final = "{basis}, of the {seen:.0f}% of the timed step the profile saw"
#: The replay's basis where its saving was taken at its phase's unprofiled length.
PHASE_TIMED_BASIS: Final = (
    "{basis}, {saved:.0f}% of the {phase} phase, which took {timed} a step unprofiled"
    " ({profiled} profiled)"
)
#: A fix that keeps part of its finding's time (`Candidate.keeps`), beside the replay's basis.
KEPT_BASIS: Final = "{kept:.0f}% of it kept"
#: The workers' prediction, beside the replay's basis.
WORKERS_BASIS: Final = (
    "loading / {workers} workers, a batch every {interval} from them, {take} to receive one"
)
_CHANNELS_LAST = Candidate(
    "channels-last memory format",
    (Setting("channels_last", True, MODEL),),
    note=(
        "the model's weights in NHWC; a convolution with channels-last weights gives"
        " channels-last outputs, so your inputs need no change"
    ),
)
_CUDNN = Candidate("cuDNN autotuner", (Setting("cudnn.benchmark", True, BACKEND),), needs_gpu=True)
_TF32 = Candidate(
    "TF32 matmuls",
    (Setting("cuda.matmul.allow_tf32", True, BACKEND), Setting("cudnn.allow_tf32", True, BACKEND)),
    needs_gpu=True,
    changes_numerics=True,
    priced_by=("low_precision",),
)
_BF16 = Candidate(
    "bf16 mixed precision",
    (Setting("precision", "bf16-mixed", TRAINER),),
    needs_gpu=True,
    changes_numerics=True,
    priced_by=("low_precision",),
    note="on an Ampere GPU or newer; its loss is reported beside its time",
)
_CUDA_GRAPHS = Candidate(
    "CUDA graphs",
    (Setting("cuda_graphs", True, MODEL),),
    needs_gpu=True,
    priced_by=("launch_overhead",),
    note=(
        "torch.compile's reduce-overhead mode: a step with a sync or with inputs of changing"
        " shape keeps parts eager, which the trial measures"
    ),
)
_COMPILE = Candidate(
    "torch.compile",
    (Setting("compile", True, MODEL),),
    note="its first steps compile (tens of seconds); the measured steps come after",
)
_LESS_VALIDATION = Candidate(
    "fewer validation batches",
    (Setting("limit_val_batches", 0.25, TRAINER),),
    keeps=0.25,
    priced_by=("validation",),
    note="validation then reads a quarter of its batches: a noisier validation metric",
)
_LESS_LOGGING = Candidate("logging every 50 steps", (Setting("log_every_n_steps", 50, TRAINER),))
_LARGER_BATCH = Candidate(
    "a 4x larger batch",
    (Setting("batch_size", 4, BATCH),),
    changes_numerics=True,
    priced_by=("per_step_overhead",),
    note="the learning rate is yours to scale (linearly, or by the square root, with warm-up)",
)

#: The candidates each finding category's rule recommends, first the likeliest to help.
CANDIDATES: Final[dict[str, tuple[Candidate, ...]]] = {
    "data_loading": (_WORKERS, _WORKERS_OWN_CORES, _PINNED),
    "host_lead_in": (_WORKERS,),
    "memcpy": (_PINNED,),
    "optimizer": (_FUSED, _FOREACH),
    "compute_conv": (_CHANNELS_LAST, _CUDNN),
    "compute_matmul": (_TF32,),
    "compute_other": (_COMPILE,),
    "launch_overhead": (_CUDA_GRAPHS, _COMPILE),
    "low_precision": (_TF32, _BF16),
    "per_step_overhead": (_LARGER_BATCH, _COMPILE),
    "validation": (_LESS_VALIDATION,),
    "callbacks_logging": (_LESS_LOGGING,),
}
"""(``model_complexity`` has none: its finding says "too small" or "too heavy", and only the
first asks for a larger batch, which `per_step_overhead` already tries.)"""

#: A `MODEL` setting's line in the user's code, by its key.
MODEL_FORMS: Final[dict[str, str]] = {
    "compile": "model = torch.compile(model)",
    "channels_last": "model = model.to(memory_format=torch.channels_last)",
    "cuda_graphs": 'model = torch.compile(model, mode="reduce-overhead")',
}

#: What the change looks like in the user's code, by target: the constructor whose arguments
#: change, the switches' module, the model's line.
CODE_FORMS: Final[dict[str, str]] = {
    LOADER: "DataLoader",
    OPTIMIZER: "torch.optim.<your optimizer>",
    BACKEND: "torch.backends",
    MODEL: "model",
    BATCH: "DataLoader",
    TRAINER: "Trainer",
    THREADS: "torch.set_num_threads",
}

__all__ = [
    "ADVICE_FROM",
    "BACKEND",
    "BATCH",
    "CANDIDATES",
    "CODE_FORMS",
    "CORES_LEFT",
    "CORES_NOT_LIMITING",
    "CPU_FALLBACK",
    "CPU_FALLBACK_SKIPPED",
    "EARLY_LOSS_TOLERANCE",
    "KEPT_BASIS",
    "LOADER",
    "LOSS_TOLERANCE",
    "MAX_SPREAD_PCT",
    "MIN_RESOLVED_PCT",
    "MODEL",
    "MODEL_FORMS",
    "NOT_ON_GPU_RUN",
    "NOT_PRICED",
    "OPTIMIZER",
    "OWN_CORES_BASIS",
    "PREDICTED_SLOWER",
    "PREDICTED_WITHIN_NOISE",
    "ROUNDED_APART_MAX",
    "SEEN_BASIS",
    "SLOWER_BELOW_PCT",
    "THREADS",
    "THREADS_NOT_FEWER",
    "TRAINER",
    "WORKERS",
    "WORKERS_BASIS",
    "WORKERS_NOT_MEASURED",
    "Candidate",
    "Setting",
]
