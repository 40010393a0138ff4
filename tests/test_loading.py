"""Reading inputs: every schema era, and damaged or wrong files (one clear error, or salvage)."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import profsight
from profsight.loaders import kineto
from profsight.model.profile import Profile
from profsight.samples import sample_trace

from conftest import DATA


@pytest.fixture(scope="module")
def sample_json(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return gzip.decompress(sample_trace().read_bytes())


def test_sample_trace_loads_whole(sample_json: bytes) -> None:
    profile = profsight.load(sample_trace())
    doc = json.loads(sample_json)
    timed = [e for e in doc["traceEvents"] if e.get("ph") in ("X", "i")]
    assert len(profile.events) == len(timed)
    assert not [d for d in profile.diagnostics if d.code == "truncated"]
    assert profile.meta.flag("record_shapes") is True
    assert profile.meta.trace_name != ""


@pytest.mark.parametrize("fraction", [0.05, 0.33, 0.5, 0.77, 0.999])
def test_truncated_trace_keeps_every_complete_event(
    sample_json: bytes, fraction: float, tmp_path: Path
) -> None:
    cut = int(len(sample_json) * fraction)
    path = tmp_path / "cut.json"
    path.write_bytes(sample_json[:cut])
    profile = profsight.load(path)
    truncated = [d for d in profile.diagnostics if d.code == "truncated"]
    assert len(truncated) == 1
    assert f"byte {cut}" in truncated[0].message
    # the salvaged events are exactly the complete ones before the cut
    whole = profsight.load(sample_trace())
    n = len(profile.events)
    assert 0 < n < len(whole.events)
    assert profile.events.names(range(n)) == whole.events.names(range(n))
    assert profile.table().self_cpu_total_us <= whole.table().self_cpu_total_us


def test_truncated_between_events(sample_json: bytes, tmp_path: Path) -> None:
    cut = sample_json.index(b"},", len(sample_json) // 2) + 2  # right after "},"
    path = tmp_path / "cut.json"
    path.write_bytes(sample_json[:cut])
    profile = profsight.load(path)
    assert [d.code for d in profile.diagnostics].count("truncated") == 1


def test_truncated_gzip_stream(tmp_path: Path) -> None:
    data = sample_trace().read_bytes()
    path = tmp_path / "cut.json.gz"
    path.write_bytes(data[: len(data) // 2])
    profile = profsight.load(path)
    assert any(d.code == "truncated" and "gzip" in d.message for d in profile.diagnostics)
    assert len(profile.events) > 1000


def test_small_chunks_give_the_same_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = profsight.load(sample_trace())
    monkeypatch.setattr(kineto, "CHUNK_BYTES", 4096)
    chunked = profsight.load(sample_trace())
    assert len(chunked.events) == len(whole.events)
    ours, theirs = chunked.table().rows, whole.table().rows
    assert [(r.name, r.calls, r.cpu_mem) for r in ours] == [
        (r.name, r.calls, r.cpu_mem) for r in theirs
    ]
    for a, b in zip(ours, theirs, strict=True):  # sums may differ in their last bit
        assert a.self_cpu_us == pytest.approx(b.self_cpu_us)
        assert a.self_cpu_pct == pytest.approx(b.self_cpu_pct)


@pytest.mark.parametrize("gz", [False, True])
def test_a_chunk_is_the_size_asked_for(
    gz: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The decoder's chunks are as large as `CHUNK_BYTES`, not as large as what the reader
    read ahead (it read 8 MB blocks, and a chunk took a whole block, until issue 25): the
    structs of one chunk are what loading holds beyond the columns."""
    data = zlib.decompress(sample_trace().read_bytes(), zlib.MAX_WBITS | 16)
    path = tmp_path / ("t.json.gz" if gz else "t.json")
    path.write_bytes(gzip.compress(data) if gz else data)
    monkeypatch.setattr(kineto, "CHUNK_BYTES", 64 << 10)
    monkeypatch.setattr(kineto, "PARALLEL_BYTES", 1 << 40)
    profile = profsight.load(path)
    assert isinstance(profile, Profile)
    assert len(data) // (64 << 10) <= profile.load_stats.chunks <= len(data) // (64 << 10) + 3


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "is empty"),
        (b"   \n", "is empty"),
        (b"\x00\x01\x02\x03binary\xff\xfe" * 20, "binary file"),
        (b"Name  Self CPU %\n-----\n", "is text but neither a profiler trace"),
        (b'{"schemaVersion": 1, "nodes": []}', 'no "traceEvents" array'),
        (b"[1, 2, 3]", "holds no events"),
        (b'{"traceEvents": [{"ph": "X", "name": "a" "ts": 1}]}', "invalid JSON"),
        (b"\x1f\x8b\x08\x00garbage-after-gzip-magic", "not a valid gzip file"),
    ],
)
def test_unreadable_input_is_one_clear_error(content: bytes, reason: str, tmp_path: Path) -> None:
    path = tmp_path / "input.json"
    path.write_bytes(content)
    with pytest.raises(profsight.InputError) as info:
        profsight.load(path)
    assert str(path) in str(info.value)
    assert reason in info.value.reason


def test_directory_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(profsight.InputError, match="is a directory"):
        profsight.load(tmp_path)
    with pytest.raises(profsight.InputError, match="no such file"):
        profsight.load(tmp_path / "nope.json")


def test_loading_never_changes_the_input() -> None:
    path = DATA / "real/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    profsight.load(path).table()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_rocm_string_streams_and_bare_arrays(tmp_path: Path) -> None:
    """ROCm writes "stream": "0x0"; the legacy exporter writes a bare event array."""
    rocm = profsight.load(DATA / "real/mi250_minitoy_train_ROCm6_2_kineto.json.gz")
    doc = json.loads(
        gzip.decompress(path_bytes(DATA / "real/mi250_minitoy_train_ROCm6_2_kineto.json.gz"))
    )
    timed = [e for e in doc["traceEvents"] if e.get("ph") in ("X", "i")]
    assert len(rocm.events) == len(timed) == 115  # none dropped for odd field types
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": "7", "ts": 10, "dur": 5},
        {"ph": "X", "cat": "cpu_op", "name": "aten::t", "pid": 1, "tid": 7, "ts": 11, "dur": 1},
    ]
    path = tmp_path / "legacy.json"
    path.write_text(json.dumps(events))
    profile = profsight.load(path)
    assert len(profile.events.tracks) == 1  # "7" and 7 are one thread
    row = profile.table().row("aten::mm")
    assert (row.self_cpu_us, row.cpu_total_us) == (4.0, 5.0)


def test_trace_events_key_after_other_arrays(tmp_path: Path) -> None:
    doc = (
        b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1,'
        b' "ts": 1.5, "dur": 2.25}], "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}],'
        b' "distributedInfo": {"rank": 3, "world_size": 8}}'
    )
    path = tmp_path / "t.json"
    path.write_bytes(doc)
    profile = profsight.load(path)
    assert profile.meta.devices[0]["name"] == "NVIDIA H200"
    assert profile.meta.distributed["rank"] == 3
    assert profile.table().row("a").cpu_total_us == pytest.approx(2.25)
    assert not profile.diagnostics


def path_bytes(path: Path) -> bytes:
    return path.read_bytes()


def _cli_json(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "profsight", *args, "--format", "json"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_two_decoding_processes_give_the_same_table(sample_json: bytes, tmp_path: Path) -> None:
    """A forked worker decodes the first half of the chunks; the result is the same."""
    path = tmp_path / "sample.json"
    path.write_bytes(sample_json)
    parallel = {"PROFSIGHT_CHUNK_BYTES": "65536", "PROFSIGHT_PARALLEL_BYTES": "1"}
    both = _cli_json(["explain", str(path)], parallel)
    assert both["source"]["decoding_processes"] == 2
    assert both["source"]["decoded_in_chunks"] > 10
    one = _cli_json(["explain", str(path)], {**parallel, "PROFSIGHT_SEQUENTIAL": "1"})
    assert one["source"]["decoding_processes"] == 1
    assert both["table"] == one["table"]
    assert both["tree"] == one["tree"]


@pytest.mark.parametrize("chunk", [None, 64 << 10])
def test_invalid_json_in_the_middle_is_salvaged_event_by_event(
    chunk: int | None, sample_json: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exporter bug spoils one event, not the run: repairable events are repaired (an
    unescaped quote on torch's one-field-per-line layout, a control character), an event that
    can't be repaired is skipped, and the loss is reported, once for all the chunks it
    spoiled."""
    if chunk is not None:
        monkeypatch.setattr(kineto, "CHUNK_BYTES", chunk)
    doc = sample_json.decode()
    first = doc.index('"name": "', len(doc) // 3) + len('"name": "')
    second = doc.index('"name": "', 2 * len(doc) // 3) + len('"name": "')
    third = doc.index("{", doc.index('"ph": "X"', second)) + 1  # inside an event, mid-line
    broken = (
        doc[:first]
        + 'say "hi" '
        + doc[first:second]
        + "tab\x01"
        + doc[second:third]
        + ' "x": "a"b", '
        + doc[third:]
    )
    path = tmp_path / "broken.json"
    path.write_text(broken)
    before = path.read_bytes()
    profile = profsight.load(path)
    whole = profsight.load(sample_trace())
    [diag] = [d for d in profile.diagnostics if d.code == "malformed_events"]
    assert "1 event was skipped (unreadable)" in diag.message
    assert "2 events were repaired" in diag.message
    if chunk is not None:  # the three places lie in two chunks at least
        assert "more place" in diag.message
    assert len(profile.events) == len(whole.events) - 1
    assert (
        sum(n.startswith('say "hi" ') for n in profile.events.names(range(len(profile.events))))
        == 1
    )
    assert path.read_bytes() == before


def test_torch_export_with_a_quote_in_a_range_name(tmp_path: Path) -> None:
    """torch's own export_chrome_trace writes a record_function name with ``"`` unescaped
    (and ``\\`` as ``/``); the range is repaired and kept, with its time."""
    import torch
    from torch.profiler import profile, record_function

    with profile() as prof, record_function('load "batch" \\ 1'):
        torch.ones(64, 64).matmul(torch.ones(64, 64))
    path = tmp_path / "quote.json"
    prof.export_chrome_trace(str(path))
    assert b'"load "batch" / 1"' in path.read_bytes()  # invalid JSON, as torch writes it
    loaded = profsight.load(path)
    [diag] = [d for d in loaded.diagnostics if d.code == "malformed_events"]
    assert "1 event was repaired" in diag.message and "skipped" not in diag.message
    row = loaded.table().row('load "batch" / 1')
    [torch_row] = [e for e in prof.key_averages() if e.key.startswith('load "batch"')]
    assert row.calls == 1
    assert row.cpu_total_us == pytest.approx(torch_row.cpu_time_total, abs=0.01)
    assert row.self_cpu_us == pytest.approx(torch_row.self_cpu_time_total, abs=0.01)


def test_unreadable_last_event_keeps_the_header_and_is_no_truncation(
    sample_json: bytes, tmp_path: Path
) -> None:
    """The last event unreadable: the fields after the event array (traceName) are still
    read and no truncation is reported; N/A inside a name is left as written."""
    doc = sample_json.decode()
    end = doc.rindex("}", 0, doc.rindex("]")) + 1  # the last event's closing brace
    last_open = doc.rindex("{", 0, doc.rindex('"ph"', 0, end))
    broken = doc[:last_open] + '{"ph": "X", "name": "loss N/A", oops}' + doc[end:]
    first = broken.index('"name": "', len(broken) // 2) + len('"name": "')
    broken = broken[:first] + "eval N/A " + broken[first:] + ""
    path = tmp_path / "last.json"
    path.write_text(broken.replace('"dur": ', '"dur": N/A, "x": ', 1))
    profile = profsight.load(path)
    codes = [d.code for d in profile.diagnostics]
    assert "truncated" not in codes and "malformed_events" in codes
    assert profile.meta.trace_name == profsight.load(sample_trace()).meta.trace_name != ""
    names = profile.events.names(range(len(profile.events)))
    assert any(n.startswith("eval N/A ") for n in names)  # not rewritten to "N/A"


_CHILDREN = """
import os, sys
import profsight
from profsight.loaders import kineto

decode = kineto.decode_stream


def failing(window, builder, plan, final):
    if not plan.worker:  # the parent's half
        raise profsight.InputError(plan.source, "the parent's half failed")
    return decode(window, builder, plan, final)


kineto.decode_stream = failing
assert kineto.parallel.can_fork()
try:
    profsight.load(sys.argv[1])
    print("loaded")
except profsight.InputError as exc:
    print("error:", exc)
children = open(f"/proc/self/task/{os.getpid()}/children").read().split()
print("children:", len(children))
"""


def test_the_decoding_worker_is_reaped_when_the_parent_fails(
    sample_json: bytes, tmp_path: Path
) -> None:
    """The parent's half fails (an error for the user) while a forked worker decodes the
    first half: the worker is killed and reaped, not left behind (it was never waited for)."""
    path = tmp_path / "sample.json"
    path.write_bytes(sample_json)
    env = {**os.environ, "PROFSIGHT_CHUNK_BYTES": "65536", "PROFSIGHT_PARALLEL_BYTES": "1"}
    env.pop("PROFSIGHT_SEQUENTIAL", None)
    # one BLAS thread, as the console script sets: a single-threaded process may fork
    env |= {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "-c", _CHILDREN, str(path)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out == [f"error: {path}: the parent's half failed", "children: 0"]


def test_a_worker_surfaces_its_errors_and_falls_back_when_asked() -> None:
    from profsight.loaders.parallel import Worker, WorkerError

    def fails() -> int:
        raise ValueError("a bug in the worker")

    def falls_back() -> int:
        raise KeyError("handled by the caller")

    with Worker(lambda: 7) as ok:
        assert ok.result() == 7
    with Worker(falls_back, fallback=(KeyError,)) as back:
        assert back.result() is None
    with pytest.raises(WorkerError, match="ValueError: a bug in the worker"), Worker(fails) as bad:
        bad.result()


def _memory_files() -> int:
    """The in-memory files this process holds open, counted by descriptor."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("/memfd:")
        except OSError:
            continue
    return count


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork and /proc")
def test_a_workers_arrays_come_back_whole_and_writable_and_its_own() -> None:
    """The worker's result comes back through an in-memory file: every array equal, of its
    dtype and shape, writable, none sharing memory with another."""
    from profsight.loaders.parallel import Worker

    rng = np.random.default_rng(3)
    sent = {
        "ints": rng.integers(0, 2**40, 300_000),
        "floats": rng.random((1000, 7)),
        "empty": np.zeros(0, np.int32),
        "flags": rng.random(5) > 0.5,
        "text": ["a", "b"] * 3,
    }
    with Worker(lambda: sent) as worker:
        got = worker.result()
    assert got is not None and got.keys() == sent.keys() and got["text"] == sent["text"]
    for k in ("ints", "floats", "empty", "flags"):
        assert got[k].dtype == sent[k].dtype and np.array_equal(got[k], sent[k])
        assert got[k].flags.writeable
    got["ints"][0] = -1  # its own memory
    assert not np.shares_memory(got["ints"], got["floats"])


def _killed() -> int:
    os.kill(os.getpid(), 9)
    return 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork and /proc")
@pytest.mark.parametrize("ending", ["result", "fallback", "error", "killed", "close only"])
def test_a_workers_file_is_closed_however_it_ends(ending: str) -> None:
    from profsight.loaders.parallel import Worker, WorkerError

    def falls_back() -> int:
        raise KeyError("handled by the caller")

    def fails() -> int:
        raise ValueError("a bug")

    work = {"fallback": falls_back, "error": fails, "killed": _killed}.get(ending, lambda: 7)
    before = _memory_files()
    with Worker(work, fallback=(KeyError,)) as worker:
        assert _memory_files() == before + 1
        if ending == "error":
            with pytest.raises(WorkerError):
                worker.result()
        elif ending != "close only":
            assert worker.result() == (7 if ending == "result" else None)
    assert _memory_files() == before


@pytest.mark.parametrize("first_id", [1, 2**40])
def test_ids_past_int32_keep_their_links(tmp_path: Path, first_id: int) -> None:
    """Id columns are stored as int32 when every id fits (memory of a huge trace), as int64
    when one does not: a kernel still goes to the op whose External id it carries."""
    from tracebuilder import TraceBuilder

    tb = TraceBuilder(_ext=first_id, _corr=first_id + 10**6)
    tb.step(1, 0.0, 100.0)
    mm = tb.host("aten::mm", 10.0, 50.0)
    tb.kernel("ampere_sgemm_128x64_nn", launch_ts=20.0, ts=30.0, dur=40.0)
    tb.events[-1]["args"]["External id"] = mm  # as torch writes it: the op's id
    profile = profsight.load(str(tb.write(tmp_path / "ids.json")))
    wide = first_id > 2**31
    assert profile.events.external_id.dtype.itemsize == (8 if wide else 4)
    assert profile.events.correlation.dtype.itemsize == (8 if wide else 4)
    # linked by External id (the table) and by the launch's correlation (the analyses)
    assert profile.table().row("aten::mm").self_device_us == pytest.approx(40.0)
    at, names = profile.attribution, profile.events.names(range(len(profile.events)))
    assert names[at.owner[names.index("ampere_sgemm_128x64_nn")]] == "aten::mm"
    assert names[at.launcher[names.index("ampere_sgemm_128x64_nn")]] == "cudaLaunchKernel"
    assert profile.events.track.dtype.itemsize == 1  # two tracks: the smallest type
