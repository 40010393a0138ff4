from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
#: The collection of real third-party traces (a copy of ../shared/data/real/traces, with its
#: MANIFEST.md giving each file's source and licence); PROFSIGHT_SHARED_DATA points elsewhere.
SHARED_REAL = Path(os.environ.get("PROFSIGHT_SHARED_DATA", DATA / "shared"))


class KnownMiss(AssertionError):
    """A known miss reading exactly its known wrong answer. Its test is marked
    ``xfail(strict=True, raises=KnownMiss)`` (`known_miss`): that wrong answer xfails, any
    other wrong answer fails, and a fixed reading passes, which strict makes a failure that
    asks for the case to move to the expectations."""


def known_miss(name: str, found: str | None, accepted: set[str], wrong: str) -> None:
    """Assert `found` (a top finding) is in `accepted`; raise `KnownMiss` when it is the known
    wrong reading `wrong`, and fail on any other."""
    if found == wrong:
        raise KnownMiss(f"{name}: reads {wrong}, as known")
    assert found in accepted, f"{name}: known to read {wrong}, now reads {found}"


def real_traces() -> list[Path]:
    """Every trace of the collection of real third-party traces."""
    root = SHARED_REAL / "traces"
    assert root.is_dir(), f"{root}: the real-trace collection is missing"
    return sorted(p for p in root.rglob("*") if p.is_file() and ".json" in p.name)


@pytest.fixture(scope="session")
def scenario_traces(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    """Every run of tests/scenarios.py (plain torch and Lightning), recorded once per
    session, with its printed tables beside each trace (`scenarios.table_path`)."""
    import warnings

    from agreement import RUNS
    from scenarios import SCENARIOS

    traces = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, how in RUNS:
            record = getattr(SCENARIOS[name], how)
            traces[(name, how)] = record(tmp_path_factory.mktemp(f"{name}-{how}"))
    return traces


@pytest.fixture(scope="session")
def scenario_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    """Lightning SimpleProfiler / AdvancedProfiler reports of the scenarios they suit."""
    import warnings

    from agreement import REPORTS
    from scenarios import SCENARIOS

    reports = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, kind in REPORTS:
            out = tmp_path_factory.mktemp(f"{name}-{kind}")
            reports[(name, kind)] = SCENARIOS[name].lightning(out, profiler=kind)
    return reports


@pytest.fixture(scope="session")
def recorded_plain(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from recorders import record_plain

    return record_plain(tmp_path_factory.mktemp("plain") / "plain.pt.trace.json")


@pytest.fixture(scope="session")
def recorded_verbose(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A run recorded with call stacks (``with_stack`` under ``verbose=True``), and torch's
    own groupings by its frames."""
    from recorders import record_plain

    return record_plain(
        tmp_path_factory.mktemp("verbose") / "verbose.pt.trace.json", with_stack=True, verbose=True
    )


@pytest.fixture(scope="session")
def recorded_stack(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from recorders import record_plain

    return record_plain(
        tmp_path_factory.mktemp("stack") / "stack.pt.trace.json", with_stack=True, side_thread=True
    )


@pytest.fixture(scope="session")
def recorded_lightning(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from recorders import record_lightning

    return record_lightning(tmp_path_factory.mktemp("lightning"))


# ---- distributed jobs: 2-process DDP on the CPU (gloo), rank 1 slowed (tests/ddp_job.py) ----

DDP_SCRIPT = REPO / "tests" / "ddp_job.py"
DELAY_MS = 40.0
STEPS = 8


def _record(mode: str, out: Path, delay_ms: float = DELAY_MS) -> Path:
    cmd = [sys.executable, str(DDP_SCRIPT), mode, str(out), "--delay-ms", str(delay_ms)]
    cmd += ["--steps", str(STEPS), "--slow-rank", "1"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=out.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


@pytest.fixture(scope="session")
def plain_job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _record("plain", tmp_path_factory.mktemp("ddp") / "plain")


@pytest.fixture(scope="session")
def lightning_job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _record("lightning", tmp_path_factory.mktemp("ddp") / "lightning")


@pytest.fixture(scope="session")
def even_job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _record("plain", tmp_path_factory.mktemp("ddp") / "even", delay_ms=0.0)
