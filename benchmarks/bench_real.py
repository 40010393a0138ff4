"""Speed and memory on the traces users bring, against typed decodes and against the peers.

    python benchmarks/bench_real.py [--repeat 5] [--skip-peers] [--skip-lightning]
                                    [--lightning-mb 1000] [--only NAME] [--trace PATH ...]

The traces: the largest real GPU, ROCm, NCCL and MTIA traces in ``tests/data`` (written by
others, on their hardware), any given with ``--trace``, and a Lightning ``PyTorchProfiler``
trace of about 1 GB that this script records itself on the CPU (``record_lightning.py``).
Each ``.json.gz`` is decompressed once into ``benchmarks/out/``, so every reader reads the
same plain JSON.

Every figure is a whole process, timed by this process from its start to its reaping
(`_measure`): the interpreter's start-up and teardown count. On each trace every task runs
once untimed (bytecode, page cache; its memory is sampled in that run), then the tasks
run in `--repeat` interleaved rounds (`_rounds`), and each keeps its median:

* ``read``: reading the file's bytes, nothing else;
* ``decode``: msgspec's typed decode of exactly the fields profsight reads, in a process
  that imports msgspec and nothing of profsight (`_schema`, a copy of its schema, held
  equal to it before anything is timed: `_schema_check`); the floor the targets read;
* ``decode2``: the same decode in two processes, the file split as profsight's loader
  splits it (it forks a second decoding process for files above 16 MB);
* ``table``: ``profsight table`` (load, nest, attribute, aggregate, print);
* ``explain``: ``profsight explain --format json -o ...`` (everything, the report written);
* ``hta``: Holistic Trace Analysis (``traceinsight``, its own venv): load, then its
  temporal, idle-time and kernel breakdowns; stopped after ``PEER_TIMEOUT_S`` (its ratio
  then a lower bound), timed once where its warm-up took over ``PEER_SLOW_S``;
* ``tracelens``: AMD's TraceLens (its own venv, from GitHub, or from the checkout that
  ``PROFSIGHT_TRACELENS_SRC`` names): its tree, GPU timeline and kernel-launcher summary.

And the start-up: ``explain`` of a 3-event trace against ``python -c "import numpy,
msgspec"``, both whole processes, interleaved, over 25 rounds (``--startup-repeat``: at 5 its
ratio moved by 0.2 between runs). Every other round runs its tasks in the reverse order.
Peak memory counts every process of a run
(the forked decoding worker too): PSS summed over the process tree, at least its
``ru_maxrss``. The targets (issue 39) are printed as held or missed; the table is written
as Markdown to ``benchmarks/out/bench_real.md``, to paste into the README as it is, and
every figure to ``benchmarks/out/bench_real.json``. The machines are noisy: read the
ratios of one run, not times from two.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _report import Row, header, markdown
from _rounds import Result, Task, measure
from _schema_check import check_schema_copy
from bench_load import OUT, PY, ensure_hta

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = ROOT / "tests" / "data"
TINY = DATA / "minimal" / "minimal.pt.trace.json"

#: (label, kind, path under tests/data): the largest trace of each kind there. Issue 39
#: asks for a held-back-style ROCm inference trace of about 60 MB besides: ../shared/data/real
#: holds none but this vLLM one (gpu_dev's copy); give one with ``--trace``.
_HTA = "shared/traces/hta"
TRACES = [
    ("HTA `df_index_resolver` (CUDA, NCCL)", "gpu",
     f"{_HTA}/df_index_resolver/df_index_resolver.json.gz"),
    ("vLLM on MI300X (ROCm, RCCL)", "gpu",
     "bench/hyukjlee__traceMap__1_mi300x_1000isl_10osl_32con.pt.trace.json.gz"),
    ("DDP ResNet-18 on MI300X (ROCm)", "gpu",
     "shared/traces/tracelens/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz"),
    ("HTA `nccl_data`", "gpu", "real/nccl_data.json.gz"),
    ("HTA MTIA trace", "gpu", f"{_HTA}/mtia_trace_single_rank/mtia_rank_0.json.gz"),
]  # fmt: skip

#: A peer's run on a trace: at most this long, and this much memory (of the machine's).
PEER_TIMEOUT_S = 900
PEER_MEMORY_SHARE = 0.8
#: A peer whose warm-up took longer than this is timed once on that trace, not `--repeat`.
PEER_SLOW_S = 120.0


def plain(source: Path) -> Path:
    """The trace as plain JSON under benchmarks/out (decompressed once)."""
    if source.suffix != ".gz":
        return source
    target = OUT / source.name[: -len(".gz")]
    if not target.exists():
        OUT.mkdir(exist_ok=True)
        with gzip.open(source, "rb") as src, target.open("wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    return target


def lightning_trace(size_mb: float) -> Path:
    trace = OUT / f"lightning_{int(size_mb)}mb.pt.trace.json"
    if not trace.exists() or trace.stat().st_size < size_mb * 0.9e6:
        OUT.mkdir(exist_ok=True)
        print(f"recording a {size_mb:.0f} MB Lightning trace with torch ...", flush=True)
        recorder = HERE / "record_lightning.py"
        subprocess.run(
            [PY, str(recorder), str(trace), "--size-mb", str(size_mb)],
            check=True,
            env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
        )
    return trace


def ensure_tracelens() -> str | None:
    """TraceLens in its own venv (it is not on PyPI: GitHub, or a local checkout)."""
    venv = OUT / "tracelens-venv"
    python = venv / "bin/python"
    if python.exists():
        return str(python)
    source = os.environ.get(
        "PROFSIGHT_TRACELENS_SRC", "git+https://github.com/AMD-AGI/TraceLens.git"
    )
    print(f"installing TraceLens from {source} in its own venv ...", flush=True)
    subprocess.run([PY, "-m", "venv", str(venv)], check=True)
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", source], capture_output=True, text=True
    )
    if done.returncode != 0:
        shutil.rmtree(venv, ignore_errors=True)
        print("  TraceLens did not install here; its column is left out", flush=True)
        return None
    return str(python)


def _limit_memory() -> None:
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    limit = int(total * PEER_MEMORY_SHARE)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def task_env() -> dict[str, str]:
    """Every task's environment: BLAS on one thread (as the console script sets it), and
    bytecode cached, as an installed package has it (pip compiles on install)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(ROOT / "src")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(OUT / "pycache")
    return env


def profsight_command() -> list[str]:
    """What a user runs: the console script beside this interpreter, else ``-m``."""
    script = Path(PY).parent / "profsight"
    return [str(script)] if script.exists() else [PY, "-m", "profsight"]


class Tasks:
    """The argv of each task, on a trace."""

    def __init__(self, peers: dict[str, str | None], scratch: Path) -> None:
        self.peers = peers
        self.env = task_env()
        self.report = str(scratch / "report.json")
        self.profsight = profsight_command()

    def _yardstick(self, name: str, task: str, trace: Path) -> Task:
        return Task(name, [PY, str(HERE / "_task.py"), task, str(trace)], self.env)

    def explain(self, name: str, trace: Path) -> Task:
        argv = ["explain", str(trace), "--format", "json", "-o", self.report, "--force"]
        argv.append("--no-progress")
        return Task(name, [*self.profsight, *argv], self.env)

    def on(self, trace: Path) -> list[Task]:
        table = ["table", str(trace), "--limit", "20", "--no-progress"]
        tasks = [
            self._yardstick("read", "read", trace),
            self._yardstick("decode", "schema", trace),
            self._yardstick("decode2", "schema2", trace),
            Task("table", [*self.profsight, *table], self.env),
            self.explain("explain", trace),
        ]
        for name, python in self.peers.items():
            if python is not None:
                task = "hta_analyses" if name == "hta" else name
                argv = [python, str(HERE / "_task.py"), task, str(trace)]
                tasks.append(
                    Task(name, argv, self.env, True, PEER_TIMEOUT_S, preexec=_limit_memory)
                )
        return tasks

    def startup(self) -> list[Task]:
        imports = Task("imports", [PY, "-c", "import numpy, msgspec"], self.env)
        return [imports, self.explain("explain3", TINY)]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--startup-repeat",
        type=int,
        default=25,
        help="rounds of the start-up pair (0.1-0.2 s each: five moved its ratio by 0.2)",
    )
    parser.add_argument("--skip-peers", action="store_true")
    parser.add_argument("--skip-lightning", action="store_true")
    parser.add_argument("--lightning-mb", type=float, default=1000.0)
    parser.add_argument("--only", default="", help="only the traces whose file name holds this")
    parser.add_argument(
        "--trace", type=Path, action="append", default=[], help="another trace (repeatable)"
    )
    return parser.parse_args()


def traces(args: argparse.Namespace) -> list[Row]:
    chosen = [(label, kind, DATA / rel) for label, kind, rel in TRACES]
    chosen += [(f"`{path.name.removesuffix('.gz')}`", "gpu", path.resolve()) for path in args.trace]
    only = args.only.lower()
    rows = [
        Row(label, kind, plain(path)) for label, kind, path in chosen if only in path.name.lower()
    ]
    if not args.skip_lightning and only in "lightning":
        trace = lightning_trace(args.lightning_mb)
        rows.append(Row("Lightning `PyTorchProfiler`, the seed's model on CPU", "lightning", trace))
    for row in rows:
        row.size = row.path.stat().st_size
    return rows


def main() -> int:
    args = parse_args()
    check_schema_copy()  # before anything is timed: the yardstick decodes what profsight does
    rows = traces(args)
    peers: dict[str, str | None] = {}
    if not args.skip_peers:
        peers = {"hta": ensure_hta(), "tracelens": ensure_tracelens()}
    with tempfile.TemporaryDirectory() as scratch:
        tasks = Tasks(peers, Path(scratch))
        print("start-up (a 3-event trace) ...", flush=True)
        startup = measure(tasks.startup(), args.startup_repeat, PEER_SLOW_S)
        for row in rows:
            print(f"measuring {row.label}, {row.size / 1e6:.0f} MB ...", flush=True)
            row.results = measure(tasks.on(row.path), args.repeat, PEER_SLOW_S)
    text = markdown(header(ROOT, args.repeat), rows, startup, args.startup_repeat)
    print("\n" + text)
    OUT.mkdir(exist_ok=True)
    (OUT / "bench_real.md").write_text(text)
    (OUT / "bench_real.json").write_text(json.dumps(dump(rows, startup), indent=1))
    return 0


def dump(rows: list[Row], startup: dict[str, Result]) -> dict[str, object]:
    return {
        "startup": {name: r.as_json() for name, r in startup.items()},
        "traces": [
            {
                "label": row.label,
                "path": str(row.path),
                "size": row.size,
                "results": {name: r.as_json() for name, r in row.results.items()},
            }
            for row in rows
        ],
    }


if __name__ == "__main__":
    sys.exit(main())
