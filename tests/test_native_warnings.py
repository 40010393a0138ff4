"""torch's C++ warnings (printed straight to file descriptor 2, not through Python's
``warnings``) become notes of the report where profsight holds the profiler, and a printed
table's pasted warning line is read as a note about the recording.

The live warning is a real one of torch 2.13's CPU build: a profiler stopped after another
profiler in the same thread ended the session prints ``[W... profiler_kineto.cpp:942]
disableProfiler called but no active profiling session found...`` when it stops.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import profsight  # noqa: E402
from profsight.loaders import load_text  # noqa: E402
from profsight.loaders.native_log import NativeLog  # noqa: E402
from profsight.model.diagnostics import Level  # noqa: E402

TABLE = Path(__file__).parent / "data/tables/flydsl-examples-1.txt"
_CPU = [torch.profiler.ProfilerActivity.CPU]
_NO_SESSION = "disableProfiler called but no active profiling session found"


def _stopped_twice(log: NativeLog) -> None:
    """A profsight profile whose session a nested torch profiler ends: its own stop warns."""
    outer = profsight.profile(schedule=None, activities=_CPU)
    outer.native_log = log
    x = torch.randn(32, 32)
    with outer, torch.profiler.profile(activities=_CPU):
        x @ x


def test_a_pasted_warning_line_is_a_note_about_the_recording() -> None:
    profile = load_text(TABLE.read_text(encoding="utf-8"), str(TABLE))
    notes = [d for d in profile.diagnostics if d.code == "profiler_warning"]
    assert len(notes) == 1
    assert notes[0].message == (
        "torch's profiler warned while recording: ROCTracer produced duplicate flow start: 1 "
        "(collection.cpp:1116)"
    )
    assert notes[0].level is Level.INFO and notes[0].count == 1


def test_the_live_profilers_cpp_warning_is_kept_not_printed(
    capfd: pytest.CaptureFixture[str],
) -> None:
    log = NativeLog()
    _stopped_twice(log)
    _stopped_twice(log)
    err = capfd.readouterr().err
    assert _NO_SESSION not in err  # torch printed it to descriptor 2 before
    assert [(m.where, n) for m, n in log.counts.items()] == [("profiler_kineto.cpp:942", 2)]
    (message,) = log.counts
    assert message.message.startswith(_NO_SESSION) and not message.error


def test_the_captured_warning_is_one_note_of_the_report_with_its_count() -> None:
    log = NativeLog()
    _stopped_twice(log)
    _stopped_twice(log)
    good = profsight.profile(schedule=None, activities=_CPU)
    good.native_log = log
    with good:
        torch.randn(32, 32) @ torch.randn(32, 32)
    report = good.report()
    notes = [d for d in report.diagnostics if d.code == "profiler_warning"]
    assert len(notes) == 1 and notes[0].count == 2
    assert notes[0].message.startswith(
        f"torch's profiler warned 2 times while recording: {_NO_SESSION}"
    )
    assert notes[0].message.endswith("(profiler_kineto.cpp:942)")


#: A Lightning fit under `ExplainingProfiler`, in a fresh process (torch warns from
#: collection.cpp:664 once per process: ``TORCH_WARN_ONCE`` in ``Result::endTimeNS``); prints
#: the fit report's notes as JSON.
_FIT = """
import json, sys, warnings
import lightning, torch
from profsight.lightning import ExplainingProfiler

class Net(lightning.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)
    def training_step(self, batch, _):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

data = torch.utils.data.TensorDataset(torch.randn(24, 4), torch.randn(24, 1))
profiler = ExplainingProfiler(dirpath=sys.argv[1], log_explanation=False)
trainer = lightning.Trainer(
    accelerator="cpu", max_epochs=1, limit_train_batches=6, profiler=profiler, logger=False,
    enable_checkpointing=False, enable_model_summary=False, enable_progress_bar=False,
    default_root_dir=sys.argv[1],
)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    trainer.fit(Net(), torch.utils.data.DataLoader(data, batch_size=4))
diagnostics = profiler.reports["fit"].report.diagnostics
print(json.dumps([d.message for d in diagnostics if d.code == "profiler_warning"]))
"""


def test_a_lightning_fit_keeps_torchs_warning_as_a_note(tmp_path: Path) -> None:
    """torch 2.13 warns from collection.cpp:664 while it stops a Lightning fit's profiler
    (naming ``Optimizer.step#SGD.step``): `ExplainingProfiler` keeps it as a note."""
    pytest.importorskip("lightning")
    done = subprocess.run(
        [sys.executable, "-c", _FIT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    notes = json.loads(done.stdout.strip().splitlines()[-1])
    assert [n for n in notes if "collection.cpp:664" in n] == [
        "torch's profiler warned while recording: Optimizer.step#SGD.step (collection.cpp:664)"
    ]
    assert "collection.cpp:664" not in done.stderr  # printed raw before
