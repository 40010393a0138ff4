"""The ``profsight`` console script: configure the process, then run `main`.

The command line uses no BLAS, and a BLAS thread pool started by numpy would keep the loader
from forking a second decoding process (see `profsight.loaders.parallel`); so, for this
process only and unless the user set them, BLAS libraries are told to use one thread.
This must happen before numpy is imported, which is why this module imports nothing else.
"""

from __future__ import annotations

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
    sys.exit(run())
