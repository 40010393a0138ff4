"""Record the committed recordings of tests/data/recorded/ (its README says which test reads
each, and why a live recording would not do): each is recorded once, as it comes, and
gzipped; run it on a quiet machine (nothing else busy on its cores).

    .venv/bin/python scripts/record_test_data.py          # a few seconds
    .venv/bin/python scripts/record_test_data.py tiny_batch   # or first_step: only those
    .venv/bin/python scripts/record_test_data.py twins        # every other twin pair (1 min)
    .venv/bin/python scripts/record_test_data.py same_run     # one run recorded twice
    .venv/bin/python scripts/record_test_data.py tables       # planted runs' tables, reports
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from scenarios import SCENARIOS, table_path

from recorders import record_first_step, record_plain

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "recorded"


def _gzipped(trace: Path, name: str) -> Path:
    target = OUT / name
    with trace.open("rb") as src, gzip.GzipFile(target, "wb", mtime=0) as dst:
        shutil.copyfileobj(src, dst)
    return target


def main(which: str = "all") -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    if which in ("all", "first_step"):
        for warmup in (0, 1):
            print(record_first_step(warmup, OUT / f"first_step_warmup{warmup}.pt.trace.json.gz"))
    if which in ("all", "twins"):
        _twins()
    if which in ("all", "same_run"):
        _same_run()
    if which.startswith("same_run_"):
        _same_run_side(which.removeprefix("same_run_"))
        return
    if which in ("all", "tables"):
        _tables()
    if which not in ("all", "tiny_batch"):
        return
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tiny = SCENARIOS["tiny_batch"]
        for how, fixed in (("plain", tiny.fixed), ("lightning", tiny.fixed_lightning)):
            assert fixed is not None
            trace = getattr(tiny, how)(Path(tmp) / how)
            print(_gzipped(trace, f"tiny_batch.{how}.pt.trace.json.gz"))
            table = OUT / f"tiny_batch.{how}.full.txt"  # its full printed table
            print(shutil.copyfile(table_path(trace, "full"), table))
            trace = fixed(Path(tmp) / f"{how}-fixed")
            print(_gzipped(trace, f"tiny_batch_fixed.{how}.pt.trace.json.gz"))


def _tables() -> None:
    """Every planted run's full printed table (plain and Lightning) and every Lightning
    Simple/Advanced report (`test_printed_diagnosis.py` reads them): a loaded machine moved
    the top finding of several (tests/data/recorded/README.md). Each is recorded once: a file
    already here is kept."""
    from agreement import REPORTS, RUNS

    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, how in RUNS:
            target = OUT / f"{name}.{how}.full.txt"
            if target.exists():
                continue
            trace = getattr(SCENARIOS[name], how)(Path(tmp) / f"{name}-{how}")
            print(shutil.copyfile(table_path(trace, "full"), target))
        for name, kind in REPORTS:
            target = OUT / f"{name}.{kind}.txt"
            if target.exists():
                continue
            report = SCENARIOS[name].lightning(Path(tmp) / f"{name}-{kind}", profiler=kind)
            print(shutil.copyfile(report, target))


def _same_run() -> None:
    """One training loop recorded twice, eight steps each, each in a process of its own (as
    two runs of one script are): what `diff` must call alike, and its step's change within
    the noise or not (`test_diff_noise.py`)."""
    for side in ("a", "b"):
        subprocess.run([sys.executable, __file__, f"same_run_{side}"], check=True)


def _same_run_side(side: str) -> None:
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        recorded = record_plain(Path(tmp) / f"same_run_{side}.pt.trace.json", steps=8)
        print(_gzipped(recorded.trace, f"same_run_{side}.pt.trace.json.gz"))


def _twins() -> None:
    """Each planted run with a fixed twin (tiny_batch aside: above), plain and Lightning, and
    its twin: the pairs `test_replay.py` predicts from and measures with."""
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, s in SCENARIOS.items():
            if s.fixed is None or name == "tiny_batch":
                continue
            for how, fixed in (("plain", s.fixed), ("lightning", s.fixed_lightning)):
                assert fixed is not None
                trace = getattr(s, how)(Path(tmp) / f"{name}-{how}")
                print(_gzipped(trace, f"{name}.{how}.pt.trace.json.gz"))
                trace = fixed(Path(tmp) / f"{name}-{how}-fixed")
                print(_gzipped(trace, f"{name}_fixed.{how}.pt.trace.json.gz"))


if __name__ == "__main__":
    main(*sys.argv[1:2])
