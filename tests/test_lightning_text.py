"""Reading Lightning's SimpleProfiler and AdvancedProfiler reports: the real ones, reports
written by a tiny ``Trainer.fit`` of Lightning 2.6, and text that is not a report."""

from __future__ import annotations

from pathlib import Path

import pytest

from profsight.errors import InputError
from profsight.loaders.lightning_text import (
    ActionRow,
    looks_like_lightning_report,
    parse_lightning_report,
    parse_lightning_reports,
)
from profsight.loaders.table_text import parse_tables

from conftest import DATA
from recorders import fit_on_cpu

TABLES = DATA / "tables"


def read(name: str) -> str:
    return (TABLES / name).read_bytes().decode("utf-8")


# ---- real reports ----------------------------------------------------------------------------


def test_lightning_2x_simple_report_fragment() -> None:
    report = parse_lightning_report(read("lightning-ai-chess-bot-1.txt"), "chess-bot")
    assert (report.kind, report.stage, report.total_s) == ("simple", "fit", 5712.5)
    assert report.advanced == {}
    assert report.actions == (
        ActionRow("run_training_epoch", 570.49, 10, 5704.9, 99.868),
        ActionRow("run_training_batch", 0.28607, 19540, 5589.7, 97.85),
        ActionRow("[LightningModule]EvaluationModel.optimizer_step", 0.286, 19540, 5588.4, 97.828),
        ActionRow("[Strategy]DDPStrategy.backward", 0.28382, 19540, 5545.8, 97.082),
        ActionRow(
            "[LightningModule]EvaluationModel.on_after_backward", 0.282, 19540, 5510.4, 96.461
        ),
    )
    # the author pasted the first rows only: no closing rule
    assert [d.code for d in report.diagnostics] == ["fragment"]
    assert "without its closing rule" in report.diagnostics[0].message


def test_lightning_1x_three_column_report_cut_mid_row() -> None:
    report = parse_lightning_report(read("issue-lightning-4937-1.txt"), "issue-4937")
    assert (report.kind, report.stage, report.total_s) == ("simple", "", None)
    assert len(report.actions) == 10
    assert report.actions[0] == ActionRow("on_fit_start", 0.0002028, None, 0.0002028, None)
    assert report.actions[3] == ActionRow("on_train_epoch_start", 2.099e-05, None, 2.099e-05, None)
    assert report.actions[4] == ActionRow("get_train_batch", 0.039579, None, 1.0686, None)
    assert report.actions[-1] == ActionRow("model_backward", 0.17356, None, 4.6862, None)
    assert [d.code for d in report.diagnostics] == ["fragment"]
    assert "'on_after_backwar'" in report.diagnostics[0].message


def test_real_reports_are_recognised() -> None:
    assert looks_like_lightning_report(read("lightning-ai-chess-bot-1.txt"))
    assert looks_like_lightning_report(read("issue-lightning-4937-1.txt"))
    assert not looks_like_lightning_report(read("triton_practice-1.txt"))


# ---- hand-made variants ----------------------------------------------------------------------

PL_1_5 = """TEST Profiler Report

Action                             \t|  Mean duration (s)\t|Num calls      \t|  Total time (s) \t|  Percentage %   \t|
--------------------------------------------------------------------------------------------------------------------------------------
Total                              \t|  _              \t|_              \t|  2.5            \t|  100 %          \t|
--------------------------------------------------------------------------------------------------------------------------------------
run_test_evaluation                \t|  2.0            \t|1              \t|  2.0            \t|  80.0           \t|
[Callback]Printer{'a|b': 1}.on_test\t|  0.25           \t|2              \t|  0.5            \t|  20.0           \t|
[21/77]
--------------------------------------------------------------------------------------------------------------------------------------
"""  # noqa: E501


def test_pl_1_x_five_columns_with_pipe_in_name_and_junk_line() -> None:
    report = parse_lightning_report(PL_1_5, "pl15")
    assert (report.stage, report.total_s) == ("test", 2.5)
    assert report.actions == (
        ActionRow("run_test_evaluation", 2.0, 1, 2.0, 80.0),
        ActionRow("[Callback]Printer{'a|b': 1}.on_test", 0.25, 2, 0.5, 20.0),
    )
    assert [(d.code, d.count) for d in report.diagnostics] == [("unreadable_row", 1)]


def test_quoted_report_and_several_reports() -> None:
    fit = read("lightning-ai-chess-bot-1.txt")
    quoted = "\n".join("> " + line for line in fit.splitlines())
    assert parse_lightning_report(quoted, "q").actions == parse_lightning_report(fit, "f").actions
    both = fit + "\n" + PL_1_5
    reports = parse_lightning_reports(both, "both")
    assert [(r.stage, len(r.actions)) for r in reports] == [("fit", 5), ("test", 2)]
    first = parse_lightning_report(both, "both")
    assert first.diagnostics[-1].code == "several_reports"


# ---- malformed input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "is empty"),
        ("Training went fine. Profiler Report follows tomorrow.\n", "not a Lightning"),
        ("FIT Profiler Report\n", "not a Lightning"),
        ("FIT Profiler Report\nProfile stats for: run_training_epoch\nnothing here\n",
         "not a Lightning"),
    ],
    ids=["empty", "prose", "title_only", "stats_without_cprofile"],
)  # fmt: skip
def test_not_a_report(text: str, reason: str) -> None:
    with pytest.raises(InputError, match=reason) as err:
        parse_lightning_report(text, "bad.txt")
    assert err.value.source == "bad.txt"
    assert not looks_like_lightning_report(text)


def test_simple_header_without_rows() -> None:
    header = read("lightning-ai-chess-bot-1.txt").splitlines()[:5]
    with pytest.raises(InputError, match="SimpleProfiler header but no rows"):
        parse_lightning_report("\n".join(header), "header")


# ---- reports written by Lightning 2.6 --------------------------------------------------------

L = pytest.importorskip("lightning")
torch = pytest.importorskip("torch")

TRAIN_BATCHES = 3
TRAINING_STEP = "[Strategy]SingleDeviceStrategy.training_step"


class _TinyModule(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):  # type: ignore[no-untyped-def]
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):  # type: ignore[no-untyped-def]
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _fit(profiler: object) -> None:
    fit_on_cpu(_TinyModule(), profiler, TRAIN_BATCHES)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from lightning.pytorch.profilers import AdvancedProfiler, PyTorchProfiler, SimpleProfiler

    out = tmp_path_factory.mktemp("lightning_reports")
    _fit(SimpleProfiler(dirpath=out, filename="simple"))
    _fit(AdvancedProfiler(dirpath=out, filename="advanced"))
    _fit(PyTorchProfiler(dirpath=out, filename="pytorch"))
    return {kind: _text(out / f"fit-{kind}.txt") for kind in ("simple", "advanced", "pytorch")}


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_written_simple_report(written: dict[str, str]) -> None:
    text = written["simple"]
    assert looks_like_lightning_report(text)
    report = parse_lightning_report(text, "fit-simple.txt")
    assert (report.kind, report.stage, report.diagnostics) == ("simple", "fit", ())
    actions = {a.action: a for a in report.actions}
    assert actions["run_training_epoch"].calls == 1
    assert actions[TRAINING_STEP].calls == TRAIN_BATCHES
    assert report.total_s is not None and report.total_s > 0
    for action in report.actions:
        assert action.total_s > 0 and action.calls and action.mean_s and action.percent
        # printed with 5 significant digits
        assert action.mean_s * action.calls == pytest.approx(action.total_s, rel=2e-4)
        assert action.total_s <= report.total_s
    assert actions["run_training_epoch"].total_s >= actions[TRAINING_STEP].total_s
    percents = [a.percent for a in report.actions]
    assert percents == sorted(percents, reverse=True)


def test_written_advanced_report(written: dict[str, str]) -> None:
    text = written["advanced"]
    assert looks_like_lightning_report(text)
    report = parse_lightning_report(text, "fit-advanced.txt")
    assert (report.kind, report.stage, report.actions, report.total_s) == (
        "advanced",
        "fit",
        (),
        None,
    )
    simple = {a.action for a in parse_lightning_report(written["simple"], "s").actions}
    assert {"run_training_epoch", TRAINING_STEP} <= set(report.advanced)
    assert set(report.advanced) == simple
    for listing in report.advanced.values():
        assert "function calls" in listing and "Ordered by: cumulative time" in listing
        assert "Profile stats for" not in listing
    assert "(training_step)" in report.advanced[TRAINING_STEP]


def test_written_pytorch_profiler_report(written: dict[str, str]) -> None:
    text = written["pytorch"]
    assert not looks_like_lightning_report(text)
    with pytest.raises(InputError, match="PyTorchProfiler"):
        parse_lightning_report(text, "fit-pytorch.txt")
    (table,) = parse_tables(text, "fit-pytorch.txt")
    assert table.title == "Profile stats for: records"
    assert table.layout == "modern" and table.diagnostics == ()
    names = [r.name for r in table.table]
    assert "ProfilerStep*" in names
    assert any(n.startswith("[pl][profile]run_training_batch") for n in names)
    assert all(r.calls > 0 and r.cpu_total_us >= 0 for r in table.table)
