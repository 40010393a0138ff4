"""The ``profsight`` console script: configure the process, then run `main`.

The command line uses no BLAS, and a BLAS thread pool started by numpy would keep the loader
from forking a second decoding process (see `profsight.loaders.parallel`); so, for this
process only and unless the user set them, BLAS libraries are told to use one thread.
This must happen before numpy is imported, which is why this module imports nothing else.

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

_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def run(argv: Sequence[str] | None = None) -> int:
    for var in _BLAS_THREADS:
        os.environ.setdefault(var, "1")
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
