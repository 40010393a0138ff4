"""Which trace is which rank: the trace's ``distributedInfo``, else its file name, else an
order; one trace per rank (the newest when a rank wrote several)."""

from __future__ import annotations

import os

from profsight.job.discover import TraceFile
from profsight.job.summary import RankSummary


def assign_ranks(
    traces: list[tuple[TraceFile, RankSummary]], diagnostics: list[str], separate: bool = False
) -> tuple[dict[int, RankSummary], int | None]:
    """Rank -> summary, and the job's world size (the largest any trace states).

    `separate`: the traces are separate runs (`one_job.not_one_job`), not ranks: each keeps
    its own place, numbered in name order, and the ranks they state are not used."""
    if separate:
        ordered = sorted(traces, key=lambda fs: fs[0].path)
        diagnostics.append(
            "numbered in name order: "
            + ", ".join(f"{_name(f)} = {i}" for i, (f, _) in enumerate(ordered))
        )
        return {i: s for i, (_, s) in enumerate(ordered)}, None
    claimed: dict[int, list[tuple[TraceFile, RankSummary]]] = {}
    unranked: list[tuple[TraceFile, RankSummary]] = []
    for file, summary in traces:
        rank = summary.rank if summary.rank is not None else file.name_rank
        if summary.rank is not None and file.name_rank not in (None, summary.rank):
            diagnostics.append(
                f"{_name(file)}: its name says rank {file.name_rank}, its distributedInfo "
                f"rank {summary.rank}; using {summary.rank}"
            )
        if rank is None:
            unranked.append((file, summary))
        else:
            claimed.setdefault(rank, []).append((file, summary))
    if unranked:
        free = (r for r in range(len(traces) + len(claimed)) if r not in claimed)
        for (file, summary), rank in zip(unranked, free, strict=False):
            claimed[rank] = [(file, summary)]
        if len(traces) > 1:
            diagnostics.append(
                f"{len(unranked)} trace(s) state no rank (no distributedInfo, no rank in the "
                "name): numbered in name order: "
                + ", ".join(
                    f"{_name(f)} = rank {r}"
                    for r, group in sorted(claimed.items())
                    for f, _ in group
                    if (f, _) in unranked
                )
            )
    ranks: dict[int, RankSummary] = {}
    for rank, group in sorted(claimed.items()):
        group.sort(key=lambda fs: fs[0].written)
        ranks[rank] = group[-1][1]
        if len(group) > 1:
            diagnostics.append(
                f"rank {rank} has {len(group)} traces; using the newest, {_name(group[-1][0])} "
                f"(left out: {', '.join(_name(f) for f, _ in group[:-1])}); name the files to "
                "choose others"
            )
    sizes = [s.world_size for _, s in traces if s.world_size]
    world = max(sizes) if sizes else None
    if world is not None and len(ranks) < world:
        diagnostics.append(
            f"{len(ranks)} of the job's {world} ranks "
            + ("is" if len(ranks) == 1 else "are")
            + " here: the comparison covers those only"
        )
    return ranks, world


def _name(file: TraceFile) -> str:
    return os.path.basename(file.path)
