"""Jobs of many ranks: real 2-process DDP runs on the CPU (gloo), recorded in this session with
plain torch.distributed and with Lightning, one rank slowed on purpose; real NCCL traces of a
128-rank job; the same job through a process pool, serially, and on a real Dask cluster."""

from __future__ import annotations

import gzip
import json
import shutil
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import profsight
import profsight.model.rank_split
from profsight.analyses.step import intervals
from profsight.analyses.step.breakdown import breakdown
from profsight.analyses.step.comms import communication
from profsight.api import JobReport, explain_job
from profsight.cli.main import main
from profsight.job import executors
from profsight.job.discover import rank_from_name
from profsight.job.executors import run_all
from profsight.job.job_document import job_document
from profsight.knowledge.advice import STRAGGLER_PCT
from profsight.knowledge.collectives import bus_factor, operation_of
from profsight.loaders import load
from profsight.model.collectives_seen import ENQUEUE_ONLY, TIMED_ON_DEVICE, TIMED_ON_HOST

from conftest import DATA, DELAY_MS, SHARED_REAL, STEPS

REAL_JOB = DATA / "real" / "job"


def _traces(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.endswith((".json", ".json.gz")))


def _comparable(report: JobReport) -> dict[str, Any]:
    doc = job_document(report)
    doc.pop("run")
    for rank in doc["ranks"]:
        rank.pop("seconds")
    return doc


# ---- the planted straggler ---------------------------------------------------------------


@pytest.mark.parametrize("job", ["plain_job", "lightning_job"])
def test_names_the_slowed_rank_and_the_wait(job: str, request: pytest.FixtureRequest) -> None:
    folder: Path = request.getfixturevalue(job)
    report = explain_job(folder)
    assert [v.rank for v in report.ranks] == [0, 1]
    assert report.world_size == 2 and report.backend == "gloo"
    assert report.timed_on == TIMED_ON_HOST
    assert len(report.steps) == STEPS
    s = report.straggler
    assert s is not None and s.rank == 1
    assert s.last_at >= STEPS - 1  # the all-reduce of every step (gloo may drop the last)
    # rank 0 waits at the all-reduce for about the planted delay, every step
    fast, slow = report.ranks
    assert fast.wait_us is not None and 0.6 * DELAY_MS * 1000 <= fast.wait_us <= 2 * DELAY_MS * 1000
    assert slow.wait_us is not None and slow.wait_us < 0.25 * DELAY_MS * 1000
    assert fast.phases_us["communication"] >= 0.6 * DELAY_MS * 1000  # its breakdown shows it
    assert abs(fast.offset_us) < 5_000  # one host, one clock
    # the delay is a sleep: time outside any op (Lightning: inside the DDP forward's own code)
    assert s.cause == "untraced"
    top = report.findings[0]
    assert top.category == "straggler" and top.title.startswith("Rank 1 is a straggler")
    assert "rank 1" in report.summary
    all_reduce = next(o for o in report.operations if o.operation == "all_reduce")
    assert all_reduce.nbytes == 85_002 * 4  # the model's parameters, one fp32 bucket
    assert all_reduce.bus_gbps is not None and all_reduce.bus_gbps > 0


def test_lightning_names_and_distributed_info_agree(lightning_job: Path) -> None:
    names = [p.name for p in _traces(lightning_job)]
    assert [rank_from_name(n) for n in names] == [0, 1]
    assert all(n.startswith("fit-ddp-") for n in names)
    report = explain_job(lightning_job)
    assert report.diagnostics == () or all("collective" in d for d in report.diagnostics)
    # Lightning runs training_step (and its sleep) inside DDP's forward: the detail says so
    assert report.straggler is not None
    assert "DistributedDataParallel.forward's own code" in report.straggler.cause_detail
    assert [v.role for v in report.ranks] == ["waits for rank 1", "straggler"]
    assert [v.device for v in report.ranks] == ["CPU", "CPU"]


def test_without_a_slowed_rank_the_wait_is_small(even_job: Path, plain_job: Path) -> None:
    even = explain_job(even_job)
    slowed = explain_job(plain_job)
    even_wait = max(v.wait_us or 0.0 for v in even.ranks)
    slowed_wait = max(v.wait_us or 0.0 for v in slowed.ranks)
    # the slowed rank makes the others wait most of its delay; without it the ranks wait
    # for each other only as long as a loaded machine makes one lag (15 ms seen, 2 cores)
    assert slowed_wait > 0.25 * DELAY_MS * 1000
    assert even_wait < 0.5 * slowed_wait


def test_single_rank_sees_communication_not_fixed_cost(plain_job: Path) -> None:
    rank0 = next(p for p in _traces(plain_job) if load(p).meta.distributed.get("rank") == 0)
    report = profsight.explain(rank0)
    assert report.breakdown is not None
    average = report.breakdown.average()
    assert average.host_us["communication"] >= 0.6 * DELAY_MS * 1000
    top = report.findings[0]
    assert top.category == "communication"
    # priced by the replay with the waits hidden (gloo's wait lies outside any op): an upper
    # bound that holds most of its share, so a 2% start-up saving cannot rank before it
    assert top.priced == "upper_bound" and top.gain_pct is not None
    assert 0.6 * top.at_stake_pct <= top.gain_pct <= 100.0
    assert report.verdict is not None and report.verdict.bound == "communication"
    assert "profsight job" in report.findings[0].explanation
    doc = json.loads(report.json())
    assert doc["breakdown"]["average"]["host_us"]["communication"] > 0


# ---- executors ----------------------------------------------------------------------------


def test_pool_and_serial_agree(plain_job: Path) -> None:
    pooled = explain_job(plain_job, executor="process", workers=2)
    serial = explain_job(plain_job, executor="serial")
    assert pooled.run["executor"] == "process" and pooled.run["workers"] == 2
    assert _comparable(pooled) == _comparable(serial)


@pytest.mark.slow
def test_dask_cluster_gives_the_pool_result(plain_job: Path) -> None:
    distributed = pytest.importorskip("distributed")
    pooled = explain_job(plain_job, executor="process")
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        host="127.0.0.1",
    ) as cluster:
        remote = explain_job(plain_job, executor="dask", scheduler=cluster.scheduler_address)
        with distributed.Client(cluster) as client:
            workers = client.scheduler_info()["workers"]
            assert len(workers) == 2  # real worker processes behind the scheduler
        # a scheduler's workers are shared with other work: their allocator stays as it is
        tuned = partial(getattr, executors)
        address = cluster.scheduler_address
        assert run_all(tuned, ["_tuned"] * 2, "dask", scheduler=address) == [False, False]
    # the workers of profsight's own local cluster get the mmap threshold set
    assert run_all(tuned, ["_tuned"] * 2, "dask", workers=2) == [True, True]
    assert remote.run["scheduler"] == cluster.scheduler_address
    assert _comparable(remote) == _comparable(pooled)
    assert remote.straggler is not None and remote.straggler.rank == 1


# ---- real NCCL traces ---------------------------------------------------------------------


def test_real_nccl_ranks_of_a_128_rank_job() -> None:
    report = explain_job(REAL_JOB, executor="serial")
    assert [v.rank for v in report.ranks] == [0, 1]
    assert report.world_size == 128
    assert report.steps == (551, 552)
    assert report.timed_on == TIMED_ON_DEVICE
    assert any("2 of the job's 128 ranks" in d for d in report.diagnostics)
    ops = {o.operation: o for o in report.operations}
    assert set(ops) == {"all_to_all", "all_gather", "all_reduce"}
    # sizes from Input Dims: the all-gather's output (its c10d op), not the 16 MiB shard
    assert ops["all_gather"].nbytes == 1_073_741_824
    assert all(o.bus_gbps is not None and o.bus_gbps > 0 for o in ops.values())
    assert all(v.comm_busy_us > 0 and v.comm_exposed_us > 0 for v in report.ranks)
    assert report.straggler is not None
    top = report.findings[0]
    assert top.category == "straggler" and top.title.startswith("Of the 2 of 128 ranks here")
    assert "load them all" in report.summary


def test_real_nccl_kernel_args_give_sizes() -> None:
    profile = load(DATA / "real" / "nccl_data.json.gz")
    comms = communication(profile, breakdown(profile))
    assert comms is not None and comms.timed_on == TIMED_ON_DEVICE and comms.backend == "NCCL"
    ops = {o.operation: o for o in comms.operations()}
    assert set(ops) == {"all_reduce", "broadcast"}
    assert ops["all_reduce"].calls == 15 and ops["broadcast"].calls == 6
    # every all-reduce kernel states In msg nelems and dtype Float: 4 bytes each
    sizes = {c.nbytes for c in comms.collectives if c.operation == "all_reduce"}
    assert all(n > 0 and n % 4 == 0 for n in sizes)
    assert {c.group_size for c in comms.collectives} == {2}


# ---- finding the ranks -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "rank"),
    [
        ("fit-ddp-3-[Strategy]DDPStrategy.training_step.1795951007174103993.pt.trace.json", 3),
        ("fit-exp-7-2-[pl][profile]run_training_epoch.12.pt.trace.json", 2),
        ("rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 34),
        ("trace_8_rank_1.json", 1),
        ("bs_32_rank0.json.gz", 0),
        ("sampled_rank-1.json.gz", 1),
        ("vm_25063.1795950672446703541.pt.trace.json.gz", None),
        ("frank5.json", None),
    ],
)
def test_rank_from_name(name: str, rank: int | None) -> None:
    assert rank_from_name(name) == rank


def _without_rank(src: Path, dst: Path) -> Path:
    """A real recorded trace with its distributedInfo removed (as torch < 1.13 wrote them)."""
    opener = gzip.open if src.name.endswith(".gz") else open
    with opener(src, "rt") as fh:
        doc = json.load(fh)
    doc.pop("distributedInfo")
    dst.write_text(json.dumps(doc))
    return dst


def test_traces_without_a_rank(plain_job: Path, tmp_path: Path) -> None:
    first, second = _traces(plain_job)
    single = explain_job([str(_without_rank(first, tmp_path / "a.json"))], executor="serial")
    assert [v.rank for v in single.ranks] == [0] and single.diagnostics == ()
    _without_rank(second, tmp_path / "b.json")
    both = explain_job(tmp_path, executor="serial")
    assert [v.rank for v in both.ranks] == [0, 1]
    assert any("numbered in name order" in d and "b.json = rank 1" in d for d in both.diagnostics)


def test_a_rank_with_several_traces_uses_the_newest(plain_job: Path, tmp_path: Path) -> None:
    for p in _traces(plain_job):
        shutil.copy(p, tmp_path / p.name)
    older = _traces(plain_job)[0]
    stem = older.name.split(".")[0]
    shutil.copy(older, tmp_path / f"{stem}.1000000000000000000.pt.trace.json.gz")
    report = explain_job(tmp_path, executor="serial")
    assert [v.rank for v in report.ranks] == [0, 1]
    assert any("has 2 traces; using the newest" in d for d in report.diagnostics)


# ---- the command line ---------------------------------------------------------------------


def test_cli_job_formats(
    plain_job: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["job", str(plain_job), "--format", "json", "--workers", "2"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "profsight-job/1"
    assert doc["straggler"]["rank"] == 1
    assert [r["rank"] for r in doc["ranks"]] == [0, 1]
    assert main(["explain", str(plain_job), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("# profsight job report") and "| 1 (straggler) |" in md
    assert main(["job", *map(str, _traces(plain_job)), "-o", str(tmp_path / "job.html")]) == 0
    assert "profsight job report" in (tmp_path / "job.html").read_text()
    assert main(["job", str(plain_job)]) == 0
    text = capsys.readouterr().out
    assert "Rank 1 is a straggler" in text and "1 (straggler)" in text


def test_cli_job_errors(
    plain_job: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["job", str(tmp_path / "missing")]) == 1
    assert capsys.readouterr().err.strip().endswith("missing: no such file or directory")
    assert main(["job", str(tmp_path)]) == 1  # an empty directory
    assert "no trace files" in capsys.readouterr().err
    assert main(["job", str(plain_job), "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "--scheduler needs --executor dask" in capsys.readouterr().err
    dask = ["job", str(plain_job), "--executor", "dask", "--scheduler"]
    assert main([*dask, "notaurl"]) == 2
    assert "is not a Dask scheduler address" in capsys.readouterr().err
    assert main([*dask, "tcp://127.0.0.1:1"]) == 2  # nothing listens: at once, no traceback
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["job", str(plain_job), "--workers", "0"])
    capsys.readouterr()
    # one unreadable rank is left out with a warning; the job goes on
    for p in _traces(plain_job):
        shutil.copy(p, tmp_path / p.name)
    (tmp_path / "broken.json").write_text("not json at all")
    assert main(["job", str(tmp_path), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "broken.json" in captured.err and "left out of the job" in captured.err
    assert len(json.loads(captured.out)["ranks"]) == 2


# ---- pieces -------------------------------------------------------------------------------


@given(
    st.lists(st.tuples(st.integers(0, 200), st.integers(0, 60)), max_size=12),
    st.lists(st.tuples(st.integers(0, 200), st.integers(0, 60)), max_size=12),
)
def test_overlap_each_equals_pointwise_count(
    sets: list[tuple[int, int]], queries: list[tuple[int, int]]
) -> None:
    s = np.array([a for a, _ in sets], np.int64)
    e = np.array([a + d for a, d in sets], np.int64)
    disjoint = intervals.union(s, e)
    qs = np.array([a for a, _ in queries], np.int64)
    qe = np.array([a + d for a, d in queries], np.int64)
    got = intervals.overlap_each(qs, qe, disjoint)
    covered = np.zeros(400, bool)
    for a, b in zip(*disjoint, strict=True):
        covered[a:b] = True
    assert got.tolist() == [int(covered[a:b].sum()) for a, b in zip(qs, qe, strict=True)]


def test_collective_names() -> None:
    assert (
        operation_of("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long)")
        == "all_reduce"
    )
    assert (
        operation_of("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)")
        == "all_gather"
    )
    assert operation_of("nccl:_reduce_scatter_base") == "reduce_scatter"
    assert operation_of("gloo:all_reduce") == "all_reduce"
    assert operation_of("c10d::alltoall_base_") == "all_to_all"
    assert operation_of("record_param_comms", "allgather_into_tensor_coalesced") == "all_gather"
    assert bus_factor("all_reduce", 8) == pytest.approx(1.75)
    assert bus_factor("broadcast", 8) == 1.0 and bus_factor("barrier", 8) is None


SHARED_DISTRIBUTED = {
    # file in ../shared/data/real/traces -> (rank, how its collectives are timed, an operation)
    "hta/negative_queue_length_values_check/rank0.json.gz": (0, TIMED_ON_DEVICE, "all_gather"),
    "hta/trace_diff/control/control.json.gz": (3, TIMED_ON_DEVICE, "all_to_all"),
    "hta/df_index_resolver/df_index_resolver.json.gz": (1, TIMED_ON_DEVICE, "all_reduce"),
    "hta_history/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz": (
        34,
        TIMED_ON_HOST,
        "all_reduce",
    ),
    "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz": (
        0,
        ENQUEUE_ONLY,
        "broadcast",
    ),
}


@pytest.mark.parametrize("name", sorted(SHARED_DISTRIBUTED))
def test_shared_distributed_traces_show_their_collectives(name: str) -> None:
    path = SHARED_REAL / "traces" / name
    rank, timed_on, operation = SHARED_DISTRIBUTED[name]
    report = explain_job([path], executor="serial")
    assert [v.rank for v in report.ranks] == [rank]
    assert report.timed_on == timed_on
    assert operation in {o.operation for o in report.operations}
    if timed_on != ENQUEUE_ONLY:
        assert report.ranks[0].comm_busy_us > 0


def test_rocm_traces_name_rccl() -> None:
    from profsight.analyses.step.comms import _on_rocm

    assert _on_rocm(load(DATA / "real" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz"))
    assert not _on_rocm(load(DATA / "real" / "nccl_data.json.gz"))


# ---- regressions from the review of this work ---------------------------------------------


def _edit_job(src: Path, dst: Path, keep: Any) -> Path:
    """Copies of a recorded job's traces with only the events `keep(event, step)` accepts."""
    dst.mkdir()
    for p in _traces(src):
        opener = gzip.open if p.name.endswith(".gz") else open
        with opener(p, "rt") as fh:
            doc = json.load(fh)
        steps = [
            (e["ts"], e["ts"] + e["dur"], int(e["name"].split("#")[1]))
            for e in doc["traceEvents"]
            if str(e.get("name", "")).startswith("ProfilerStep#")
        ]

        def step_of(e: dict[str, Any], steps: list[tuple[float, float, int]] = steps) -> int | None:
            return next((n for a, b, n in steps if a <= e.get("ts", -1) < b), None)

        doc["traceEvents"] = [e for e in doc["traceEvents"] if keep(e, step_of(e))]
        (dst / p.name.replace(".gz", "")).write_text(json.dumps(doc))
    return dst


def test_waits_are_per_common_step_with_accumulation(plain_job: Path, tmp_path: Path) -> None:
    """Gradient accumulation: an all-reduce every 4th step only (edited from the real job; the
    last step is avoided, as the profiler may stop before its all-reduce finishes)."""
    accum = _edit_job(
        plain_job,
        tmp_path / "accum",
        lambda e, step: not str(e.get("name")).startswith("gloo:") or step in (4, 8),
    )
    report = explain_job(accum, executor="serial")
    full = explain_job(plain_job, executor="serial")
    assert report.straggler is not None and full.straggler is not None
    assert len(report.steps) == STEPS
    # two all-reduces over 8 steps: a quarter of the full job's wait per step (whose last
    # all-reduce may be cut off by the profiler's stop on one rank)
    per_collective = full.ranks[0].wait_us * STEPS / full.straggler.collectives  # type: ignore[operator]
    assert report.ranks[0].wait_us == pytest.approx(per_collective * 2 / STEPS, rel=0.3)
    assert report.straggler.share_pct < 40


def test_enqueue_only_traces_give_no_times(tmp_path: Path) -> None:
    """The real NCCL ranks without their kernels: sizes and counts only, no bandwidth."""
    job = _edit_job(REAL_JOB, tmp_path / "enqueue", lambda e, _: e.get("cat") != "kernel")
    report = explain_job(job, executor="serial")
    assert report.timed_on == ENQUEUE_ONLY
    assert report.operations and all(
        o.transfer_us is None and o.bus_gbps is None for o in report.operations
    )
    assert all(v.wait_us is None for v in report.ranks)
    assert not any(f.category == "communication" for f in report.findings)
    assert "cannot be measured" in report.summary


def test_unreadable_and_empty_ranks_are_left_out(plain_job: Path, tmp_path: Path) -> None:
    job = tmp_path / "job"
    shutil.copytree(plain_job, job / "logs")  # traces one level down, as rank folders are
    (job / "hparams.json").write_text('{"lr": 0.1}')
    doc = {"schemaVersion": 1, "traceEvents": [], "distributedInfo": {"rank": 3}}
    (job / "empty.json").write_text(json.dumps(doc))
    report = explain_job(job, executor="serial")
    assert [v.rank for v in report.ranks] == [0, 1]
    notes = " ".join(report.diagnostics)
    assert "hparams.json" in notes and "empty.json: the trace holds no events" in notes


def test_ranks_without_common_steps_are_not_compared(plain_job: Path, tmp_path: Path) -> None:
    first = _traces(plain_job)[0]
    job = _edit_job(
        plain_job,
        tmp_path / "nosteps",
        lambda e, _: (
            not str(e.get("name")).startswith("ProfilerStep#")
            or e.get("pid") != load(first).events.tracks[0].pid
        ),
    )
    report = explain_job(job, executor="serial")
    assert report.steps == ()
    assert report.straggler is None and report.findings == ()
    assert "cannot be compared" in report.summary


def test_wait_for_backward_is_not_a_collective_wait(tmp_path: Path) -> None:
    """Step thread idle 10-90 ms inside loss.backward(); backward runs on autograd's thread
    10-60 ms; gloo's all-reduce 30-90 ms: 50 ms backward, 30 ms communication."""
    from tracebuilder import TraceBuilder

    t = TraceBuilder()
    for k in range(2):
        base = k * 100_000
        t.step(k + 1, base, 100_000)
        t.host("aten::mm", base + 1_000, 9_000)
        t.host("autograd::engine::evaluate_function: MmBackward0", base + 10_000, 50_000, tid=2)
        t.host("gloo:all_reduce", base + 30_000, 60_000, cat="user_annotation", tid=3)
        t.host("aten::add_", base + 92_000, 3_000)
    profile = load(t.write(tmp_path / "waits.pt.trace.json"))
    host = breakdown(profile).average().host_us
    assert host["communication"] == pytest.approx(30_000)
    assert host["backward"] == pytest.approx(50_000)
    comms = communication(profile, breakdown(profile))
    assert comms is not None
    assert comms.average().exposed_us == pytest.approx(30_000)  # backward hides 30-60


def test_process_groups_are_read() -> None:
    profile = load(DATA / "real" / "nccl_data.json.gz")
    comms = communication(profile, breakdown(profile))
    assert comms is not None and {c.process_group for c in comms.collectives} == {"0"}


def test_lightning_straggler_alone_is_not_called_heavy(lightning_job: Path) -> None:
    """Rank 1's own trace: the sleep is Python inside DDP's forward, not model work.

    Which of the sleep and the wait at the collectives leads depends on how the two ranks
    were scheduled: on a loaded machine rank 0 can fall behind the sleeping rank, and rank 1
    then waits for it (a run beside two busy loops led with communication). What holds
    whatever the load: the sleep is read as DDP's forward's own Python, ahead of any model
    work, and the model is not called too heavy."""
    rank1 = next(p for p in _traces(lightning_job) if rank_from_name(p.name) == 1)
    report = profsight.explain(rank1)
    ranked = [f.category for f in report.findings]
    own = next(f for f in report.findings if f.category == "module_overhead")
    assert own.title.startswith("DistributedDataParallel.forward spends")
    assert "training_step" in own.explanation
    assert set(ranked[: ranked.index("module_overhead")]) <= {"communication", "straggler"}
    assert report.verdict is not None and report.verdict.judgement != "too_heavy_for_hardware"


# ---- one file holding several ranks ------------------------------------------------------


def _merge(traces: list[Path], out: Path, tagged: bool = False) -> Path:
    """The ranks' traces in one file, as merging tools write it: every rank's events, each
    rank's host process keeping its pid, the first rank's header. `tagged`: every event
    carries its rank in ``args.rank`` and every rank has the same pids (ranks on different
    hosts, or in containers, can)."""
    docs = []
    for k, path in enumerate(traces):
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rt") as f:
            docs.append(json.load(f))
        if tagged:
            pids: dict[object, int] = {}
            for e in docs[-1]["traceEvents"]:
                if "pid" in e:
                    e["pid"] = pids.setdefault(e["pid"], 100 + len(pids))
                e["args"] = {**e.get("args", {}), "rank": k}
    merged = dict(docs[0])
    merged["traceEvents"] = [e for d in docs for e in d["traceEvents"]]
    out.write_text(json.dumps(merged))
    return out


@pytest.mark.parametrize("tagged", [False, True], ids=["by-process", "by-args-rank"])
@pytest.mark.parametrize("job", ["plain_job", "real"])
def test_a_file_holding_several_ranks_is_explained_as_the_job(
    job: str, tagged: bool, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Two ranks merged into one file read as the two files do: the same ranks, steps,
    straggler and numbers (gloo ranks recorded here; two ranks of a real 128-rank NCCL job,
    whose GPUs are devices 0 and 1 of one host), told apart by their processes or, where
    their pids are the same, by each event's ``args.rank``."""
    folder: Path = REAL_JOB if job == "real" else request.getfixturevalue(job)
    merged = _merge(_traces(folder), tmp_path / "merged.json", tagged)
    parts = profsight.model.rank_split.rank_parts(load(str(merged)))
    assert [p.meta.distributed["rank"] for p in parts] == [0, 1]
    # each rank is made when asked for; its name is known without making it
    assert parts.sources == [p.source for p in parts] == [parts[-2].source, parts[-1].source]
    separate = explain_job(folder, executor="serial")
    together = explain_job(merged)
    assert together.straggler is not None and separate.straggler is not None
    assert together.straggler.rank == separate.straggler.rank
    assert together.steps == separate.steps
    for a, b in zip(together.ranks, separate.ranks, strict=True):
        assert a.step_us == pytest.approx(b.step_us, rel=1e-6)
        assert a.wait_us == pytest.approx(b.wait_us, rel=0.02, abs=1.0)
    assert any("holds 2 ranks" in d for d in together.diagnostics)
    # explain says the same, as a job
    out = tmp_path / "explained.json"
    assert main(["explain", str(merged), "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert [r["rank"] for r in doc["ranks"]] == [0, 1]


def test_a_single_rank_file_is_not_split() -> None:
    profile = load(str(REAL_JOB / "sampled_rank-0.json.gz"))
    assert len(profsight.model.rank_split.rank_parts(profile)) == 0


def test_ranks_with_the_same_correlation_ids_keep_their_own_gpu(tmp_path: Path) -> None:
    """A real rank merged with a copy of itself 50 µs later on the next pid and GPU: every
    correlation id appears twice, close in time. Each GPU goes whole to the rank whose
    launches explain all of its work, the closest first (event by event, a kernel would go to
    whichever launch came last: the copy's, 50 µs later)."""
    with gzip.open(REAL_JOB / "sampled_rank-0.json.gz", "rt") as f:
        first = json.load(f)
    second = json.loads(json.dumps(first))
    for e in second["traceEvents"]:
        if isinstance(e.get("pid"), int):
            e["pid"] += 1
        if "ts" in e:
            e["ts"] += 50
        args = e.get("args")
        if isinstance(args, dict) and isinstance(args.get("device"), int):
            args["device"] += 1
    merged = dict(first)
    merged["traceEvents"] = first["traceEvents"] + second["traceEvents"]
    path = tmp_path / "copies.json"
    path.write_text(json.dumps(merged))
    parts = profsight.model.rank_split.rank_parts(load(str(path)))
    kernels = [np.isin(p.events.kind, [6, 7, 8]) for p in parts]
    assert [int(k.sum()) for k in kernels] == [1204, 1204]
    assert [
        np.unique(p.events.device[k]).tolist() for p, k in zip(parts, kernels, strict=True)
    ] == [
        [0],
        [1],
    ]


def test_the_pool_is_sized_by_the_memory_available(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each rank's worker may take ~3x its trace decompressed (measured on four real traces,
    2.2-3.0x) plus the process: with 1 GB available, four 54 MB ranks get 3 workers, and
    the job says why."""
    rank = SHARED_REAL / "traces/hta/df_index_resolver/df_index_resolver.json.gz"
    assert executors._decoded_bytes(str(rank)) == 53_733_385  # the gzip member's own size
    paths = [str(rank)] * 4
    monkeypatch.setattr(executors, "_available_bytes", lambda: 1_000_000_000)
    n, why = executors.planned_workers(paths, "process", 4)
    assert n == 3
    assert why.startswith("3 worker(s), not 4: each may take ~254 MiB")
    monkeypatch.setattr(executors, "_available_bytes", lambda: 64_000_000_000)
    assert executors.planned_workers(paths, "process", 4) == (4, "")
    assert executors.planned_workers(paths, "serial", 4) == (1, "")
    # a budget per worker (--worker-memory) sizes the pool instead of the estimate, and a
    # budget below what the largest trace may need is said
    monkeypatch.setattr(executors, "_available_bytes", lambda: 10_000_000_000)
    n, why = executors.planned_workers(paths, "process", 4, worker_memory=4_000_000_000)
    assert (n, why.split(":")[0]) == (2, "2 worker(s), not 4")
    n, why = executors.planned_workers(paths, "process", 2, worker_memory=200_000_000)
    assert n == 2 and why.startswith("the largest trace may need ~254 MiB, more than")
    assert executors.planned_workers(paths, "dask", 4, 4_000_000_000, "tcp://h:8786")[0] == 4


@pytest.mark.parametrize(
    ("text", "size"), [("2GB", 2 * 10**9), ("500mb", 5 * 10**8), ("1.5G", 15 * 10**8)]
)
def test_worker_memory_sizes(text: str, size: int) -> None:
    from profsight.cli.common import byte_size

    assert byte_size(text) == size


def test_cli_job_worker_memory(plain_job: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:  # argparse's own usage error
        main(["job", str(plain_job), "--worker-memory", "lots"])
    assert stop.value.code == 2
    assert "must be a size such as 2GB" in capsys.readouterr().err
    code = main(["job", str(plain_job), "--worker-memory", "1MB", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0 and "more than --worker-memory 977 KiB" in err
    assert json.loads(out)["ranks"]


def test_each_rank_is_told_as_it_finishes(plain_job: Path, tmp_path: Path) -> None:
    """Partial results: every rank's summary reaches the listener as soon as it is ready,
    counted, with the failures; the report is the one without a listener."""
    folder = tmp_path / "job"
    shutil.copytree(plain_job, folder)
    (folder / "rank-9.pt.trace.json").write_text("{ not json")
    told: list[tuple[str, int, int]] = []

    def listen(result: object, finished: int, total: int) -> None:
        told.append((type(result).__name__, finished, total))

    report = explain_job(folder, executor="process", workers=2, on_rank=listen)
    assert [t[1:] for t in told] == [(1, 3), (2, 3), (3, 3)]
    assert sorted(t[0] for t in told) == ["RankFailure", "RankSummary", "RankSummary"]
    assert _comparable(report) == _comparable(explain_job(folder, executor="serial"))


def test_cli_job_progress_prints_each_rank(
    plain_job: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["job", str(plain_job), "--progress", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["straggler"]["rank"] == 1
    lines = [line for line in err.splitlines() if line.startswith("[")]
    assert [line[:5] for line in lines] == ["[1/2]", "[2/2]"]
    names = sorted(line[6:].split(" (")[0] for line in lines)
    assert names == ["rank 0", "rank 1"]
    assert all(f"/step over {STEPS} steps" in line and "-bound (" in line for line in lines)
    assert main(["job", str(plain_job), "--no-progress", "--format", "json"]) == 0
    # the job's own warnings (if the recording gives any) but no rank lines
    assert not [x for x in capsys.readouterr().err.splitlines() if x.startswith("[")]


# ---- traces that are not the ranks of one job ---------------------------------------------


def test_separate_runs_are_not_a_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Three single-process CPU runs of different batch sizes, recorded here: no
    distributedInfo, no collectives. The largest batch's steps are several times the others';
    that is not a straggler."""
    from recorders import record_plain

    runs = tmp_path / "runs"
    runs.mkdir()
    for batch in (4, 32, 512):
        record_plain(runs / f"bs{batch}.pt.trace.json", batch=batch, steps=3)
    report = explain_job(runs, executor="serial")
    assert len(report.ranks) == 3
    # what misled before: the largest batch's steps are longer than the rule for a straggler
    assert max(v.step_us for v in report.ranks) >= (1 + STRAGGLER_PCT / 100) * report.step_us
    assert report.straggler is None and report.findings == ()
    assert report.not_one_job.startswith("none states a rank")
    assert report.diagnostics[0].startswith("these 3 traces are not ranks of one job: ")
    assert not any("has no collectives" in d for d in report.diagnostics)
    assert report.summary.startswith("These 3 traces are not ranks of one job")
    assert main(["job", str(runs), "--format", "json", "--executor", "serial"]) == 0
    captured = capsys.readouterr()
    first = captured.err.splitlines()[0]
    assert first.startswith("profsight: warning: these 3 traces are not ranks of one job")
    doc = json.loads(captured.out)
    assert doc["straggler"] is None and doc["findings"] == []


def _with_world(src: Path, dst: Path, world: int, rank: int | None = None) -> Path:
    """A real recorded rank's trace with its distributedInfo's world size (and rank) edited."""
    opener = gzip.open if src.name.endswith(".gz") else open
    with opener(src, "rt") as fh:
        doc = json.load(fh)
    doc["distributedInfo"]["world_size"] = world
    if rank is not None:
        doc["distributedInfo"]["rank"] = rank
    dst.write_text(json.dumps(doc))
    return dst


def test_world_sizes_that_differ_or_are_one_are_not_a_job(plain_job: Path, tmp_path: Path) -> None:
    first, second = _traces(plain_job)
    differ = tmp_path / "differ"
    differ.mkdir()
    _with_world(first, differ / "a.json", 2)
    _with_world(second, differ / "b.json", 4)
    report = explain_job(differ, executor="serial")
    assert report.not_one_job == "their world sizes differ (2, 4)"
    assert report.straggler is None and report.findings == ()
    single = tmp_path / "single"
    single.mkdir()
    _with_world(first, single / "a.json", 1, rank=0)
    _with_world(second, single / "b.json", 1, rank=0)
    report = explain_job(single, executor="serial")
    assert report.not_one_job.startswith("each is a single-process run")
    assert len(report.ranks) == 2  # both shown, though both say rank 0
    assert report.straggler is None and report.findings == ()
    # the real job itself is one: its straggler is still found
    assert explain_job(plain_job, executor="serial").not_one_job == ""
