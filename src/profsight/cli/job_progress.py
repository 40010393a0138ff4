"""``profsight job``'s progress: a bar of the ranks analysed, and each rank's result as it
comes (its step time and verdict), printed above the bar on standard error."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from profsight.cli.common import rich_bar
from profsight.job import RankListener
from profsight.job.summary import RankFailure, RankSummary
from profsight.model.step_windows import step_time
from profsight.units import short_time


def rank_line(result: RankSummary | RankFailure, finished: int, total: int) -> str:
    """One rank's partial result: ``rank 3 (rank-3.json): 812.3 ms/step, compute-bound``."""
    count = f"[{finished}/{total}]"
    name = os.path.basename(result.path)
    if isinstance(result, RankFailure):
        return f"{count} {name}: {result.message.split(': ', 1)[-1]} (left out of the job)"
    who = f"rank {result.rank} ({name})" if result.rank is not None else name
    steps = result.steps
    # the steady step, as the rank's explanation gives it
    steady = step_time([s.host for s in steps], [s.interval for s in steps])
    step = f"{short_time(steady)}/step over {len(steps)} steps" if steps else ""
    verdict = f"{result.verdict.bound}-bound" if result.verdict is not None else ""
    facts = ", ".join(part for part in (step, verdict) if part)
    return f"{count} {who}: {facts or 'no steps'} ({result.seconds:.1f} s)"


@contextmanager
def rank_progress(enabled: bool) -> Iterator[RankListener | None]:
    """A listener that draws the bar and prints each rank's line; None when not `enabled`."""
    if not enabled:
        yield None
        return
    from rich.progress import MofNCompleteColumn

    with rich_bar(MofNCompleteColumn()) as bar:
        task = bar.add_task("ranks analysed", total=None)

        def update(result: RankSummary | RankFailure, finished: int, total: int) -> None:
            bar.console.print(rank_line(result, finished, total), markup=False, soft_wrap=True)
            bar.update(task, completed=finished, total=total)
            bar.refresh()

        yield update
