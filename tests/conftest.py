from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
SHARED_REAL = Path(os.environ.get("PROFSIGHT_SHARED_DATA", REPO.parent / "shared/data/real"))


def real_traces() -> list[Path]:
    """Every trace of the shared collection of real third-party traces (empty if absent)."""
    root = SHARED_REAL / "traces"
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*") if p.is_file() and ".json" in p.name)


@pytest.fixture(scope="session")
def recorded_plain(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from recorders import record_plain

    return record_plain(tmp_path_factory.mktemp("plain") / "plain.pt.trace.json")


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
