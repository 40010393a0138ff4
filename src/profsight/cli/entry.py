"""The ``profsight`` console script: configure the process, then run `main`.

BLAS libraries are told to use one thread (`cli.threads`) before numpy is imported, which is
why this module imports nothing that loads numpy.

Once the command has returned and its output is flushed, the process ends at once
(`os._exit`): the interpreter's teardown (freeing every module, numpy's included) took
~25 ms, a tenth of a small input's run, and nothing is left to do by then: files are
written and closed, pools and clusters shut down by the commands themselves.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Sequence

from profsight.cli.threads import one_blas_thread

#: Commands that read their inputs, write their output and end: the console script runs them
#: with Python's cyclic garbage collector off. Their start-up (about 160 of the package's
#: modules, with numpy's and msgspec's) set off ~70 collections that found nothing to free,
#: ~4 ms of a 3-event ``explain``, and a whole ``explain`` of a 55-87 MB trace leaves under
#: 1,000 objects in cycles for the collector to find (a job's folder, read by ``explain``,
#: none per rank). The others keep it: they run long or repeat their work (tune's trials,
#: the MCP server, the demo's training), or hand it to a Dask cluster (``job``).
BOUNDED: frozenset[str] = frozenset({"explain", "table", "tree", "diff", "check", "slice"})


def run(argv: Sequence[str] | None = None) -> int:
    one_blas_thread()
    from profsight.cli.main import main

    return main(argv)


def entry() -> None:
    if sys.argv[1:2] and sys.argv[1] in BOUNDED:
        gc.disable()
    code = run()
    # a reader gone (`| head`) or a stream closed: nothing more can be said to it
    with contextlib.suppress(BrokenPipeError, ValueError):
        sys.stdout.flush()
    with contextlib.suppress(BrokenPipeError, ValueError):
        sys.stderr.flush()
    os._exit(code)
