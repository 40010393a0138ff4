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
import os
import sys
from collections.abc import Sequence

from profsight.cli.threads import one_blas_thread


def run(argv: Sequence[str] | None = None) -> int:
    one_blas_thread()
    from profsight.cli.main import main

    return main(argv)


def entry() -> None:
    code = run()
    # a reader gone (`| head`) or a stream closed: nothing more can be said to it
    with contextlib.suppress(BrokenPipeError, ValueError):
        sys.stdout.flush()
    with contextlib.suppress(BrokenPipeError, ValueError):
        sys.stderr.flush()
    os._exit(code)
