"""Property-based fuzzing: real traces and tables, mutated, never break profsight.

The promise checked on every example: loading either gives a profile whose table, tree and
reports render, or raises `InputError` (one line naming the file). Any other exception is a
bug. The suite runs a bounded number of examples; a longer run is
``PROFSIGHT_FUZZ_EXAMPLES=2000 .venv/bin/python -m pytest -q tests/test_fuzz.py`` (its last
result is in the README).
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import profsight
from profsight.renderers.explained import render_explained
from profsight.report.build import build_report

from conftest import DATA

EXAMPLES = int(os.environ.get("PROFSIGHT_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=EXAMPLES <= 40,  # the suite's run is reproducible; long runs explore
)
TRACES = [
    (DATA / "minimal/minimal.pt.trace.json").read_bytes(),
    (DATA / "real/before_fix_trace.json").read_bytes(),
    gzip.decompress((DATA / "real/mi250_minitoy_train_ROCm6_2_kineto.json.gz").read_bytes()),
]
TABLES = [
    (DATA / "tables/triton_practice-1.txt").read_bytes(),
    (DATA / "tables/lightning-ai-chess-bot-1.txt").read_bytes(),
    (DATA / "tables/ngfp-bottleneck-1.txt").read_bytes(),
]
ODD_VALUES: list[Any] = [None, "", "N/A", -1, 0, 2**70, -(2**70), 1e308, [], {}, "0x0", True, "☃"]


def _exercise(path: Path) -> None:
    """Everything a user can ask of one input; only `InputError` may escape."""
    try:
        profile = profsight.load(path)
    except profsight.InputError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
        return
    profile.table()
    if isinstance(profile, profsight.Profile):
        assert profile.tree().root.check(tolerance_us=1.0) == []
    report = build_report(profile)
    for fmt in ("json", "markdown", "html"):
        assert render_explained(report, "profile", fmt)


@st.composite
def byte_mutations(draw: st.DrawFn, sources: list[bytes]) -> bytes:
    data = bytearray(draw(st.sampled_from(sources)))
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, len(data) - 1))
        kind = draw(st.sampled_from(["flip", "cut", "insert", "delete"]))
        if kind == "flip":
            data[at] = draw(st.integers(0, 255))
        elif kind == "cut":
            del data[at:]
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        else:
            del data[at : at + draw(st.integers(1, 64))]
        if not data:
            break
    return bytes(data)


@st.composite
def field_mutations(draw: st.DrawFn) -> bytes:
    doc = json.loads(draw(st.sampled_from(TRACES)))
    events = doc["traceEvents"]
    for _ in range(draw(st.integers(1, 6))):
        if not events:
            break
        event = events[draw(st.integers(0, len(events) - 1))]
        target = event
        if isinstance(event.get("args"), dict) and event["args"] and draw(st.booleans()):
            target = event["args"]
        if not target:
            continue
        key = draw(st.sampled_from(sorted(target)))
        if draw(st.booleans()):
            del target[key]
        else:
            target[key] = draw(st.sampled_from(ODD_VALUES))
    return json.dumps(doc).encode()


@FUZZ
@given(data=byte_mutations(TRACES))
def test_byte_mutated_traces(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_bytes(data)
    _exercise(path)


@FUZZ
@given(data=field_mutations())
def test_field_mutated_traces(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_bytes(data)
    _exercise(path)


@FUZZ
@given(data=byte_mutations(TABLES))
def test_byte_mutated_tables(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "table.txt"
    path.write_bytes(data)
    _exercise(path)


@FUZZ
@given(data=byte_mutations([gzip.compress(t, mtime=0) for t in TRACES[:2]]))
def test_byte_mutated_gzip(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "trace.json.gz"
    path.write_bytes(data)
    _exercise(path)


@pytest.mark.parametrize("value", ODD_VALUES)
def test_every_odd_value_in_every_field(value: Any, tmp_path: Path) -> None:
    """Each odd value in each field of the minimal trace's events, all at once."""
    doc = json.loads(TRACES[0])
    for event in doc["traceEvents"]:
        for key in ("ts", "dur", "pid", "tid", "name", "cat", "ph", "id"):
            if key in event:
                event[key] = value
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(doc))
    _exercise(path)
