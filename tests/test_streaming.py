"""The event array is decoded as it is read: a window of about one chunk, never the whole text.

Every test here shrinks the chunk, the block read from disk and the tail kept for the
array's end to a few KB, so that the bundled sample (6.8 MB of JSON) goes through hundreds
of windows, and compares the result with a load in one window.
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

import pytest

import profsight
from profsight.loaders import input_files, json_split, kineto, kineto_stream
from profsight.model.profile import Profile
from profsight.samples import sample_trace

SMALL = 16 << 10


@pytest.fixture(scope="module")
def sample_json() -> bytes:
    return gzip.decompress(sample_trace().read_bytes())


@pytest.fixture(scope="module")
def whole() -> Profile:
    profile = profsight.load(sample_trace())
    assert isinstance(profile, Profile)
    return profile


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Small chunks, blocks and tail; yields the sizes the window had, as they were read."""
    monkeypatch.setattr(kineto, "CHUNK_BYTES", SMALL)
    monkeypatch.setattr(input_files, "BLOCK", SMALL)
    monkeypatch.setattr(input_files, "GZIP_BLOCK", 4 << 10)
    monkeypatch.setattr(kineto_stream, "BLOCK", SMALL)
    monkeypatch.setattr(json_split, "TAIL_LIMIT", SMALL)
    monkeypatch.setenv("PROFSIGHT_SEQUENTIAL", "1")
    sizes: list[int] = []
    fill = kineto_stream.Window.fill

    def spy(self: kineto_stream.Window, size: int) -> None:
        fill(self, size)
        sizes.append(len(self.data))

    monkeypatch.setattr(kineto_stream.Window, "fill", spy)
    return sizes


def _same_events(a: Profile, b: Profile) -> None:
    n = len(b.events)
    assert len(a.events) == n
    assert a.events.names(range(n)) == b.events.names(range(n))
    assert (a.events.start == b.events.start).all()
    assert (a.events.dur == b.events.dur).all()
    assert a.meta.header == b.meta.header


@pytest.mark.parametrize("compressed", [False, True])
def test_a_trace_is_read_through_a_small_window(
    compressed: bool, sample_json: bytes, whole: Profile, windows: list[int], tmp_path: Path
) -> None:
    path = tmp_path / ("t.json.gz" if compressed else "t.json")
    path.write_bytes(gzip.compress(sample_json) if compressed else sample_json)
    profile = profsight.load(path)
    assert isinstance(profile, Profile)
    _same_events(profile, whole)
    assert profile.load_stats.chunks > 300
    assert profile.load_stats.size == len(sample_json)
    # past the first read (the head, up to the event array), the window never held more
    # than a chunk, the tail and one block read from disk
    assert len(windows) > 300
    assert windows[0] <= 64 << 10
    assert max(windows[1:]) <= 3 * SMALL
    assert not profile.diagnostics


def test_concatenated_gzip_members_split_inside_an_event(
    sample_json: bytes, whole: Profile, windows: list[int], tmp_path: Path
) -> None:
    """``cat a.gz b.gz`` is one stream to gzip; the members may split an event."""
    cut = sample_json.index(b'"name"', len(sample_json) // 3) + 3
    path = tmp_path / "two.json.gz"
    path.write_bytes(gzip.compress(sample_json[:cut]) + gzip.compress(sample_json[cut:]))
    profile = profsight.load(path)
    assert isinstance(profile, Profile)
    _same_events(profile, whole)
    assert not profile.diagnostics


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_a_cut_gzip_stream_keeps_every_whole_event_before_it(
    fraction: float, sample_json: bytes, whole: Profile, windows: list[int], tmp_path: Path
) -> None:
    packed = zlib.compressobj(6, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    data = packed.compress(sample_json) + packed.flush()
    path = tmp_path / "cut.json.gz"
    path.write_bytes(data[: int(len(data) * fraction)])
    profile = profsight.load(path)
    assert isinstance(profile, Profile)
    [cut] = [d for d in profile.diagnostics if d.code == "truncated"]
    assert "the gzip stream ends" in cut.message
    n = len(profile.events)
    assert 0 < n < len(whole.events)
    assert profile.events.names(range(n)) == whole.events.names(range(n))


def test_damage_in_an_early_window_is_salvaged_as_in_one_window(
    sample_json: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Invalid JSON at a third of the file: read event by event there, whatever the window."""
    doc = sample_json.decode()
    first = doc.index('"name": "', len(doc) // 3) + len('"name": "')
    broken = doc[:first] + 'say "hi" ' + doc[first:]
    path = tmp_path / "broken.json"
    path.write_text(broken)
    one = profsight.load(path)
    monkeypatch.setattr(kineto, "CHUNK_BYTES", SMALL)
    monkeypatch.setattr(json_split, "TAIL_LIMIT", SMALL)
    monkeypatch.setattr(kineto_stream, "BLOCK", SMALL)
    many = profsight.load(path)
    assert isinstance(one, Profile) and isinstance(many, Profile)
    _same_events(many, one)
    assert [d.message for d in many.diagnostics] == [d.message for d in one.diagnostics]
    [diag] = many.diagnostics
    assert "1 event was repaired" in diag.message


def _brace_trace(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """A real torch trace whose range names hold the bytes of an event boundary."""
    import torch
    from torch.profiler import profile, record_function

    x = torch.ones(8, 8)
    with profile() as prof:
        for i in range(400):
            with record_function(f"batch}}, {{{i}"):
                x = x.add(1)
    path = tmp_path / "braces.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_bytes())["traceEvents"]
    return path, [e for e in events if e.get("ph") in ("X", "i")]


@pytest.mark.parametrize("chunk", [1024, 3000, 7919])
def test_a_boundary_inside_a_name_loses_no_event(
    chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``}, {`` inside a string looks like the end of an event: a chunk cut there fails to
    decode and is joined with what follows, and every event is kept with its name."""
    path, timed = _brace_trace(tmp_path)
    monkeypatch.setattr(kineto, "CHUNK_BYTES", chunk)
    monkeypatch.setattr(json_split, "TAIL_LIMIT", 2048)
    monkeypatch.setattr(kineto_stream, "BLOCK", 4096)
    profile = profsight.load(path)
    assert isinstance(profile, Profile)
    names = profile.events.names(range(len(profile.events)))
    assert len(names) == len(timed)
    assert sum(n.startswith("batch}, {") for n in names) == 400
    assert not profile.diagnostics


def _explain(path: Path, sequential: bool) -> dict[str, Any]:
    import os
    import subprocess
    import sys

    env = {**os.environ, "PROFSIGHT_CHUNK_BYTES": "65536", "PROFSIGHT_PARALLEL_BYTES": "1"}
    env |= {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env.pop("PROFSIGHT_SEQUENTIAL", None)
    if sequential:
        env["PROFSIGHT_SEQUENTIAL"] = "1"
    out = subprocess.run(
        [sys.executable, "-m", "profsight", "explain", str(path), "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("where", "processes"), [(0.2, 1), (0.8, 2)])
def test_two_processes_with_damage_in_either_half(
    where: float, processes: int, sample_json: bytes, tmp_path: Path
) -> None:
    """Each process reads its own half of a plain file. Damage in the first half sends the
    worker's half back to the parent, which salvages it; either way the result is that of
    one process."""
    doc = sample_json.decode()
    first = doc.index('"name": "', int(len(doc) * where)) + len('"name": "')
    path = tmp_path / "broken.json"
    path.write_text(doc[:first] + 'say "hi" ' + doc[first:])
    both = _explain(path, sequential=False)
    one = _explain(path, sequential=True)
    assert both["source"]["decoding_processes"] == processes
    assert one["source"]["decoding_processes"] == 1
    assert _rounded(both["table"]) == _rounded(one["table"])  # sums may differ in the last bit
    assert both["diagnostics"] == one["diagnostics"]
    assert any("1 event was repaired" in d["message"] for d in both["diagnostics"])


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def test_a_slice_is_cut_through_the_same_small_window(
    sample_json: bytes, windows: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`slice` passes over the trace chunk by chunk too: the same slice, in the same order,
    from a window of a few KB as from one window holding the whole file."""
    from profsight.loaders import event_chunks
    from profsight.slicing.window import slice_trace

    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(sample_json))
    monkeypatch.setattr(event_chunks, "CHUNK_BYTES", SMALL)
    small = slice_trace(str(path), (2, 3))
    # four passes, each starting from the head (up to the event array, 64 KB read)
    assert max(windows) <= max(3 * SMALL, kineto_stream.HEAD_BLOCK) and len(windows) > 1000
    monkeypatch.undo()
    monkeypatch.setattr(event_chunks, "CHUNK_BYTES", 1 << 30)
    whole = slice_trace(str(path), (2, 3))
    assert small.document == whole.document
    assert small.kept == whole.kept > 1000
    assert small.dropped == whole.dropped > 0
    assert small.window_us == whole.window_us


def _inside_by_scan(doc: bytes) -> list[bool]:
    """For each byte of `doc`, whether a JSON string is open there (a scan, byte by byte)."""
    inside, escaped, out = False, False, []
    for byte in doc:
        out.append(inside)
        if escaped:
            escaped = False
        elif byte == 0x5C and inside:  # backslash
            escaped = True
        elif byte == 0x22:  # quote
            inside = not inside
    return out


def test_outside_strings_agrees_with_a_scan() -> None:
    """Quote parity, with quotes escaped by runs of backslashes of every length, against a
    scan of real JSON (names with ``}, {``, quotes and backslashes in them)."""
    names = ["a}, {b", 'q"uote', "back\\slash", 'run\\\\"x', '\\\\\\"}, {', "}, {\\\\", "plain"]
    doc = json.dumps([{"name": n, "args": {"k": n * i}} for i, n in enumerate(names * 3)])
    data = doc.encode()
    truth = _inside_by_scan(data)
    for p in range(len(data)):
        assert json_split.outside_strings(data, 0, p) is not truth[p], (p, data[p - 5 : p + 5])
    assert sum(truth) > len(data) // 3  # the strings are most of the document
