"""Whether the traces given as a job are the ranks of one run.

A job is the ranks of one run: they share a world size (``distributedInfo``, which torch
>= 1.13 writes once ``torch.distributed`` is initialised: ``rank``, ``world_size``), hold
distinct ranks and meet at collectives. Traces of separate runs (three single-GPU runs of
different batch sizes in one directory) have none of that, and comparing their steps would
call the slowest run a straggler.
"""

from __future__ import annotations

from collections.abc import Sequence

from profsight.job.summary import RankSummary


def not_one_job(summaries: Sequence[RankSummary]) -> str:
    """Why these traces are not the ranks of one job, or "" when they may be."""
    if len(summaries) < 2:
        return ""
    sizes = sorted({s.world_size for s in summaries if s.world_size is not None})
    if len(sizes) > 1:
        return "their world sizes differ (" + ", ".join(map(str, sizes)) + ")"
    stated = [s for s in summaries if s.world_size is not None]
    if sizes == [1] and len(stated) == len(summaries):
        return "each is a single-process run (its distributedInfo says world_size 1)"
    unranked = not stated and all(s.rank is None for s in summaries)
    if unranked and not any(s.collectives for s in summaries):
        return (
            "none states a rank or world size (no distributedInfo) and none holds a "
            "collective, so they are separate runs"
        )
    return ""


def not_one_job_note(count: int, reason: str) -> str:
    """The warning that says so, first among the job's notes."""
    return (
        f"these {count} traces are not ranks of one job: {reason}; each is shown on its own "
        "and no rank is judged a straggler (explain each trace by itself)"
    )


__all__ = ["not_one_job", "not_one_job_note"]
