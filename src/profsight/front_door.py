"""One front door: whatever the profiler (or profsight) wrote, to the report it calls for.

The Python API (`profsight.explain`), the CLI (``profsight explain``) and the MCP server's
``explain`` tool all call `open_input`, so that every entry reads every kind the same way:

* a directory of per-rank traces: a job (`JobData`);
* a memory snapshot (``torch.cuda.memory._dump_snapshot``'s pickle): its peaks
  (`SnapshotReport`);
* a report profsight saved (``--format json``): the document as saved (`SavedReport`);
* a trace that holds several ranks: a job, each rank explained in turn;
* a trace, a printed table or Lightning report (a file, or the text itself), a loaded profile,
  a finished ``torch.profiler.profile``: its report (`ReportData`).

What each entry adds stays its own: the CLI's progress bar and warnings (`Loader`), the
executor a job's ranks run on (`JobOptions`), the renderings.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import msgspec

from profsight.compare.saved_report import load_saved, saved_schema
from profsight.lazy import resolve
from profsight.loaders import is_snapshot, load, load_text
from profsight.loaders.live import is_profiler, load_live
from profsight.model.profile import Profile
from profsight.model.rank_split import rank_parts
from profsight.model.text_profile import TextProfile
from profsight.report.build import build_report

if TYPE_CHECKING:
    from profsight.compare.saved_report import SavedReport
    from profsight.job import RankListener
    from profsight.job.views import JobData
    from profsight.report.build import ReportData
    from profsight.report.snapshot import SnapshotReport

    #: What an input is explained into.
    Explained: TypeAlias = ReportData | JobData | SnapshotReport | SavedReport

#: The explainers of the kinds a trace's start-up does without (a job's and a snapshot's
#: modules, ~40 ms of imports), imported when their kind is met (`profsight.lazy`).
EXPLAINERS: Final = {
    "job": "profsight.job:explain_job",
    "ranks": "profsight.job:explain_ranks",
    "snapshot": "profsight.report.snapshot:explain_snapshot",
}
#: Reads a profile file (the CLI's shows a progress bar and prints the loader's warnings).
Loader: TypeAlias = Callable[[str], Profile | TextProfile]


class JobOptions(msgspec.Struct, frozen=True):
    """Where a job's ranks are analysed (`profsight.job.explain_job`)."""

    executor: str = "process"
    workers: int | None = None
    scheduler: str | None = None
    worker_memory: int | None = None
    on_rank: RankListener | None = None


class Opened(msgspec.Struct, frozen=True):
    """An input explained: the report, and the profile it was built from (None for a job,
    a snapshot or a saved report), whose warnings the analysis may have added to."""

    report: Explained
    kind: str
    """``profile``, ``job``, ``snapshot`` or ``saved``."""
    sources: tuple[str, ...] = ()
    """The files it was read from (an output may overwrite none of them)."""
    profile: Profile | TextProfile | None = None


def open_input(source: Any, job: JobOptions | None = None, loader: Loader | None = None) -> Opened:
    """`source` explained, whatever its kind (the module's docstring lists them).

    Raises `InputError` naming the file when it cannot be read, `TypeError` for a Python
    object that is no input."""
    if isinstance(source, (Profile, TextProfile)):
        return _profile(source, "")
    if is_profiler(source):
        return _profile(load_live(source), "")
    if isinstance(source, str) and "\n" in source and not os.path.exists(source):
        return _profile(load_text(source), "")
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(
            "explain() takes a path, the text of a printed table, a profsight profile or a "
            f"torch profiler, not {type(source).__name__}"
        )
    path = os.fspath(source)
    if os.path.isdir(path):
        options = job or JobOptions()
        job_report = resolve(EXPLAINERS["job"])(
            path,
            options.executor,
            options.workers,
            options.scheduler,
            options.worker_memory,
            options.on_rank,
        )
        return Opened(job_report, "job", tuple(job_report.sources))
    if is_snapshot(path):
        return Opened(resolve(EXPLAINERS["snapshot"])(path), "snapshot", (path,))
    if saved_schema(path) is not None:
        return Opened(load_saved(path), "saved", (path,))
    return _profile((loader or load)(path), path)


def _profile(profile: Profile | TextProfile, path: str) -> Opened:
    """A profile's report; a trace holding several ranks is a job."""
    if not isinstance(profile, TextProfile) and (parts := rank_parts(profile)):
        jobs = resolve(EXPLAINERS["ranks"])(parts, path or profile.source)
        return Opened(jobs, "job", (path,) if path else ())
    return Opened(build_report(profile), "profile", (path,) if path else (), profile)


__all__ = ["EXPLAINERS", "JobOptions", "Loader", "Opened", "open_input"]
